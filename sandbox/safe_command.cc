#include "sandbox/safe_command.h"

#include <algorithm>
#include <initializer_list>
#include <span>
#include <string_view>

#include "base/shell.h"
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

// The name of a long option argument: "--out=f" -> "out"; "" for anything
// that is not a long option (including "--" itself).
std::string_view LongOptionName(std::string_view arg) {
  if (!StartsWith(arg, "--") || arg.size() == 2) return {};
  arg.remove_prefix(2);
  return arg.substr(0, arg.find('='));
}

// Deny-list check with GNU getopt_long semantics: a long option may be
// abbreviated to any unique prefix, so `--out` means `--output`. Every
// argument before "--" that is a long option whose name is a prefix of one of
// `bad_long` (abbreviated, exact, or with =value), or a short-option bundle
// holding one of `bad_short`, makes the command unsafe. Scanning every
// letter of a bundle may see an option's value as a flag: that only errs
// towards asking. GNU tools permute arguments, so options after operands
// count too.
bool HasDeniedOption(const Args& argv, std::initializer_list<std::string_view> bad_long,
                     std::string_view bad_short) {
  for (size_t i = 1; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a == "--") break;
    if (std::string_view name = LongOptionName(a); !name.empty()) {
      for (std::string_view bad : bad_long) {
        if (StartsWith(bad, name)) return true;
      }
      continue;
    }
    if (a.size() >= 2 && a[0] == '-' && a[1] != '-' &&
        a.find_first_of(bad_short, 1) != std::string::npos) {
      return true;
    }
  }
  return false;
}

// --- Allow-list option scanning (for commands safe only in some forms) ---

enum class ArgKind { kNone, kRequired, kOptional };

struct LongOption {
  std::string_view name;
  ArgKind arg;
};

// The options a command may be given and stay safe. `shorts` is in getopt
// syntax ("d:f:I::Ru": ':' = takes a value, '::' = an optional attached
// value). Anything else, including an option a newer version of the tool
// might add, makes the command unsafe.
struct AllowedOptions {
  std::string_view shorts;
  std::span<const LongOption> longs;
};

ArgKind ShortArgKind(std::string_view spec, char c, bool* known) {
  *known = false;
  for (size_t i = 0; i < spec.size(); ++i) {
    if (spec[i] == ':' || spec[i] != c) continue;
    *known = true;
    if (i + 1 < spec.size() && spec[i + 1] == ':') {
      return (i + 2 < spec.size() && spec[i + 2] == ':') ? ArgKind::kOptional : ArgKind::kRequired;
    }
    return ArgKind::kNone;
  }
  return ArgKind::kNone;
}

// Resolves a long option as getopt_long does: an exact name wins, else the
// unique option the name is a prefix of. nullptr when unknown or ambiguous.
const LongOption* ResolveLong(std::span<const LongOption> longs, std::string_view name) {
  const LongOption* found = nullptr;
  for (const LongOption& o : longs) {
    if (o.name == name) return &o;
    if (StartsWith(o.name, name)) {
      if (found != nullptr) return nullptr;  // ambiguous: getopt refuses it
      found = &o;
    }
  }
  return found;
}

// Scans argv[1..] with `allowed`; collects operands. False when an option is
// not allowed (or malformed).
bool ScanAllowed(const Args& argv, const AllowedOptions& allowed,
                 std::vector<std::string>* operands) {
  for (size_t i = 1; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a == "--") {
      operands->insert(operands->end(), argv.begin() + static_cast<std::ptrdiff_t>(i) + 1,
                       argv.end());
      return true;
    }
    if (StartsWith(a, "--")) {
      const size_t eq = a.find('=');
      const LongOption* o = ResolveLong(allowed.longs, LongOptionName(a));
      if (o == nullptr) return false;
      if (eq != std::string::npos && o->arg == ArgKind::kNone) return false;
      if (eq == std::string::npos && o->arg == ArgKind::kRequired) ++i;  // value is next
      continue;
    }
    if (a.size() < 2 || a[0] != '-') {
      operands->push_back(a);
      continue;
    }
    for (size_t j = 1; j < a.size(); ++j) {
      bool known = false;
      const ArgKind kind = ShortArgKind(allowed.shorts, a[j], &known);
      if (!known) return false;
      if (kind == ArgKind::kNone) continue;
      if (kind == ArgKind::kRequired && j + 1 == a.size()) ++i;  // value is next
      break;  // the rest of the bundle is the value
    }
  }
  return true;
}

// date: only the printing forms. A date operand not starting with '+' (e.g.
// `date 010100002030`) sets the clock, as do -s / --set.
bool IsSafeDate(const Args& argv) {
  static constexpr LongOption kLongs[] = {
      {"date", ArgKind::kRequired},     {"debug", ArgKind::kNone},
      {"file", ArgKind::kRequired},     {"iso-8601", ArgKind::kOptional},
      {"resolution", ArgKind::kNone},   {"rfc-email", ArgKind::kNone},
      {"rfc-3339", ArgKind::kRequired}, {"reference", ArgKind::kRequired},
      {"utc", ArgKind::kNone},          {"universal", ArgKind::kNone},
      {"help", ArgKind::kNone},         {"version", ArgKind::kNone},
  };
  std::vector<std::string> operands;
  if (!ScanAllowed(argv, {"d:f:I::r:Ru", kLongs}, &operands)) return false;
  return std::all_of(operands.begin(), operands.end(),
                     [](const std::string& op) { return StartsWith(op, "+"); });
}

// printf: only `printf FORMAT [ARG...]`. The shell builtin's `-v VAR`
// assigns a variable (`printf -v PATH ...` redirects every later command).
bool IsSafePrintf(const Args& argv) { return argv.size() >= 2 && !StartsWith(argv[1], "-"); }

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
  // uniq [OPTION]... [INPUT [OUTPUT]]: a second operand is written to. An
  // option value miscounted as an operand only errs towards asking.
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

bool IsSafeFind(const Args& argv) {
  // find's primaries are matched exactly (no abbreviations).
  for (size_t i = 1; i < argv.size(); ++i) {
    if (OneOf(argv[i], {"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fls", "-fprint",
                        "-fprint0", "-fprintf"})) {
      return false;
    }
  }
  return true;
}

// One simple command (no shell wrapper).
bool IsSafeSimpleCommand(const Args& argv) {
  if (argv.empty()) return false;
  if (argv[0].find('=') != std::string::npos) return false;  // VAR=value prefix
  const std::string_view name = ProgramName(argv[0]);
  if (name.empty()) return false;
  if (OneOf(name, {"cat",    "head",    "tail",      "wc",        "nl",      "tac",      "rev",
                   "cut",    "tr",      "paste",     "fold",      "column",  "comm",     "join",
                   "diff",   "cmp",     "grep",      "egrep",     "fgrep",   "ls",       "stat",
                   "du",     "df",      "pwd",       "echo",      "true",    "false",    "which",
                   "whoami", "id",      "uname",     "basename",  "dirname", "realpath", "readlink",
                   "md5sum", "sha1sum", "sha256sum", "sha512sum", "seq"})) {
    return true;
  }
  if (name == "cd") return argv.size() <= 2 && (argv.size() == 1 || !StartsWith(argv[1], "-"));
  if (name == "printf") return IsSafePrintf(argv);
  if (name == "date") return IsSafeDate(argv);
  if (name == "file") return !HasDeniedOption(argv, {"compile"}, "C");
  if (name == "tree") return !HasDeniedOption(argv, {"output"}, "oR");
  if (name == "sort") {
    return !HasDeniedOption(argv, {"output", "compress-program", "temporary-directory"}, "oT");
  }
  if (name == "uniq") return IsSafeUniq(argv);
  if (name == "rg") {
    return !HasDeniedOption(argv, {"pre", "pre-glob", "search-zip", "hostname-bin"}, "z");
  }
  if (name == "find") return IsSafeFind(argv);
  if (name == "sed") return IsSafeSed(argv);
  return false;
}

}  // namespace

bool IsKnownSafeCommand(const std::vector<std::string>& argv) {
  // The wrapper's form is Codex's rule (base/shell.h); the shell itself must
  // be one the classifier trusts (a bare name or in /bin, /usr/bin), as any
  // program it lets run.
  const std::optional<std::string_view> script = ShellScriptOf(argv);
  if (script && !ProgramName(argv[0]).empty()) {
    auto list = ParseCommandList(*script);
    if (!list.ok()) return false;
    return std::all_of(list->commands.begin(), list->commands.end(), IsSafeSimpleCommand);
  }
  return IsSafeSimpleCommand(argv);
}

bool IsTrustedSearchPath(std::string_view path_var) {
  if (path_var.empty()) return false;  // an empty PATH means the working directory
  size_t start = 0;
  for (;;) {
    const size_t colon = path_var.find(':', start);
    const std::string_view dir = path_var.substr(
        start, colon == std::string_view::npos ? std::string_view::npos : colon - start);
    if (dir.empty() || dir[0] != '/') return false;
    if (colon == std::string_view::npos) return true;
    start = colon + 1;
  }
}

bool IsKnownSafeCommand(const std::vector<std::string>& argv, std::string_view path_var) {
  return IsTrustedSearchPath(path_var) && IsKnownSafeCommand(argv);
}

}  // namespace codex::sandbox
