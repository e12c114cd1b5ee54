#include "sandbox/safe_command.h"

#include <algorithm>
#include <initializer_list>
#include <string_view>

#include "sandbox/shell_lexer.h"

namespace codex::sandbox {
namespace {

using Args = std::vector<std::string>;

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && s.compare(0, prefix.size(), prefix) == 0;
}

bool OneOf(std::string_view s, std::initializer_list<std::string_view> set) {
  return std::find(set.begin(), set.end(), s) != set.end();
}

// The command name when argv[0] is a bare name or lives in /bin or /usr/bin.
std::string_view ProgramName(std::string_view argv0) {
  for (std::string_view dir : {"/usr/bin/", "/bin/"}) {
    if (StartsWith(argv0, dir)) {
      argv0.remove_prefix(dir.size());
      break;
    }
  }
  if (argv0.empty() || argv0.find('/') != std::string_view::npos) return {};
  return argv0;
}

// True when some argument equals one of `exact` or starts with one of
// `prefixes` (for --long=value spellings).
bool HasArg(const Args& argv, std::initializer_list<std::string_view> exact,
            std::initializer_list<std::string_view> prefixes = {}) {
  for (size_t i = 1; i < argv.size(); ++i) {
    if (OneOf(argv[i], exact)) return true;
    for (std::string_view p : prefixes) {
      if (StartsWith(argv[i], p)) return true;
    }
  }
  return false;
}

// True when a bundle of short options ("-abc", not "--x") holds `letter`.
bool HasShortFlag(const Args& argv, char letter) {
  for (size_t i = 1; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a == "--") break;
    if (a.size() >= 2 && a[0] == '-' && a[1] != '-' && a.find(letter, 1) != std::string::npos) {
      return true;
    }
  }
  return false;
}

bool AllDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// "Np" or "N,Mp" with decimal N and M.
bool IsLinePrintScript(std::string_view script) {
  if (script.size() < 2 || script.back() != 'p') return false;
  script.remove_suffix(1);
  size_t comma = script.find(',');
  if (comma == std::string_view::npos) return AllDigits(script);
  return AllDigits(script.substr(0, comma)) && AllDigits(script.substr(comma + 1));
}

bool IsSafeSed(const Args& argv) {
  // sed -n 'Np' / 'N,Mp', then file operands only.
  if (argv.size() < 3 || argv[1] != "-n" || !IsLinePrintScript(argv[2])) return false;
  for (size_t i = 3; i < argv.size(); ++i) {
    if (StartsWith(argv[i], "-")) return false;
  }
  return true;
}

bool IsSafeUniq(const Args& argv) {
  // uniq [OPTION]... [INPUT [OUTPUT]]: a second operand is written to.
  size_t operands = 0;
  for (size_t i = 1; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a == "--") {
      operands += argv.size() - i - 1;
      break;
    }
    if (OneOf(a, {"-f", "-s", "-w"})) {
      ++i;  // the option's value
    } else if (!StartsWith(a, "-") || a == "-") {
      ++operands;
    }
  }
  return operands <= 1;
}

bool IsSafeGitBranch(const Args& argv, size_t first) {
  bool listing = false;
  for (size_t i = first; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (OneOf(a, {"-l", "--list"})) {
      listing = true;
    } else if (OneOf(a, {"-a", "--all", "-r", "--remotes", "-v", "-vv", "--verbose",
                         "--show-current", "--no-color", "--color", "--no-column", "--merged",
                         "--no-merged", "--contains", "--no-contains"}) ||
               StartsWith(a, "--sort=") || StartsWith(a, "--format=") ||
               StartsWith(a, "--color=") || StartsWith(a, "--merged=") ||
               StartsWith(a, "--contains=")) {
      continue;
    } else if (!StartsWith(a, "-") &&
               (listing || (i > first && OneOf(argv[i - 1], {"--merged", "--no-merged",
                                                             "--contains", "--no-contains"})))) {
      continue;  // a pattern after --list, or a commit after --merged/--contains
    } else {
      return false;  // would create, delete, rename, copy or configure a branch
    }
  }
  return true;
}

bool IsSafeGit(const Args& argv) {
  if (argv.size() < 2) return false;
  const std::string& sub = argv[1];  // no global options such as -c or --git-dir
  if (HasArg(argv, {"--ext-diff", "--textconv", "-O"},
             {"--output", "--exec", "--open-files-in-pager"})) {
    return false;
  }
  if (OneOf(sub, {"status", "log", "diff", "show", "rev-parse", "ls-files", "blame"})) return true;
  if (sub == "branch") return IsSafeGitBranch(argv, 2);
  return false;
}

bool IsSafeFind(const Args& argv) {
  return !HasArg(argv, {"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fls", "-fprint",
                        "-fprint0", "-fprintf"});
}

bool IsSafeRg(const Args& argv) {
  if (HasArg(argv, {"--pre", "--pre-glob", "-z", "--search-zip", "--hostname-bin"},
             {"--pre=", "--pre-glob=", "--hostname-bin="})) {
    return false;
  }
  return !HasShortFlag(argv, 'z');
}

bool IsSafeSort(const Args& argv) {
  if (HasArg(argv, {"--output", "--compress-program", "--temporary-directory"},
             {"--output=", "--compress-program=", "--temporary-directory="})) {
    return false;
  }
  return !HasShortFlag(argv, 'o') && !HasShortFlag(argv, 'T');
}

// One simple command (no shell wrapper).
bool IsSafeSimpleCommand(const Args& argv) {
  if (argv.empty()) return false;
  if (argv[0].find('=') != std::string::npos) return false;  // VAR=value prefix
  const std::string_view name = ProgramName(argv[0]);
  if (name.empty()) return false;
  if (OneOf(name, {"cat",      "head",   "tail",    "wc",        "nl",        "tac",     "rev",
                   "cut",      "tr",     "paste",   "fold",      "column",    "comm",    "join",
                   "diff",     "cmp",    "grep",    "egrep",     "fgrep",     "ls",      "stat",
                   "du",       "df",     "pwd",     "echo",      "printf",    "true",    "false",
                   "which",    "whoami", "id",      "uname",     "basename",  "dirname", "realpath",
                   "readlink", "md5sum", "sha1sum", "sha256sum", "sha512sum", "seq"})) {
    return true;
  }
  if (name == "cd") return argv.size() <= 2;
  if (name == "date") return !HasArg(argv, {"-s", "--set"}, {"--set="}) && !HasShortFlag(argv, 's');
  if (name == "file") return !HasArg(argv, {"-C", "--compile"}) && !HasShortFlag(argv, 'C');
  if (name == "tree") return !HasShortFlag(argv, 'o') && !HasShortFlag(argv, 'R');
  if (name == "sort") return IsSafeSort(argv);
  if (name == "uniq") return IsSafeUniq(argv);
  if (name == "rg") return IsSafeRg(argv);
  if (name == "find") return IsSafeFind(argv);
  if (name == "sed") return IsSafeSed(argv);
  if (name == "git") return IsSafeGit(argv);
  return false;
}

// `bash -lc SCRIPT` and friends: the script, or nothing.
const std::string* ShellScript(const Args& argv) {
  if (argv.size() != 3) return nullptr;
  const std::string_view shell = ProgramName(argv[0]);
  if (!OneOf(shell, {"bash", "sh", "zsh", "dash"})) return nullptr;
  if (!OneOf(argv[1], {"-c", "-lc", "-cl"})) return nullptr;
  return &argv[2];
}

}  // namespace

bool IsKnownSafeCommand(const std::vector<std::string>& argv) {
  if (const std::string* script = ShellScript(argv)) {
    auto list = ParseCommandList(*script);
    if (!list.ok()) return false;
    return std::all_of(list->commands.begin(), list->commands.end(), IsSafeSimpleCommand);
  }
  return IsSafeSimpleCommand(argv);
}

}  // namespace codex::sandbox
