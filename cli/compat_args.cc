#include "cli/compat_args.h"

#include <algorithm>
#include <array>
#include <string_view>

namespace codex::cli {

namespace {

// Global options that take a value as the next argument.
constexpr std::array<std::string_view, 6> kValueOptions = {"-c",        "--config", "-p",
                                                           "--profile", "--enable", "--disable"};
// Global flags without a value.
constexpr std::array<std::string_view, 4> kFlags = {"--strict-config", "-V", "--version",
                                                    "--search"};
// "--name=value" forms of the value options.
constexpr std::array<std::string_view, 4> kJoined = {
    "--config=", "--profile=", "--enable=", "--disable="};

// Subcommands whose arguments are another program's command line (as in
// Codex, where `codex sandbox` takes a trailing command): nothing after them
// is moved, so `codex sandbox bash -c 'echo hi'` keeps its -c.
constexpr std::array<std::string_view, 1> kCommandRunners = {"sandbox"};

// Run options (cli/run_flags.h and exec's -i) that take one value.
constexpr std::array<std::string_view, 9> kRunValueOptions = {
    "-m", "--model", "-C", "--cd", "-s", "--sandbox", "-a", "--ask-for-approval", "--add-dir"};
// Run options that take one or more values (Codex's `-i, --image <FILE>...`).
constexpr std::array<std::string_view, 2> kRunMultiOptions = {"-i", "--image"};
// Run flags without a value.
constexpr std::array<std::string_view, 4> kRunFlags = {
    "--oss", "--full-auto", "--dangerously-bypass-approvals-and-sandbox", "--skip-git-repo-check"};
// Subcommands that take the run options.
constexpr std::array<std::string_view, 4> kRunCommands = {"exec", "e", "resume", "fork"};

// Every subcommand word of this codex (the ones main.cc registers).
constexpr std::array<std::string_view, 12> kOurCommands = {
    "exec",     "e",       "resume", "completion", "sandbox", "apply-patch",
    "sessions", "compact", "mcp",    "fork",       "help",    "review"};

// Codex 0.169 subcommands this codex does not have (`codex --help` of 0.169,
// plus mcp-server from earlier releases). `archive`, `unarchive`, `delete`
// and `help` are renamed instead (kRenamed).
constexpr std::array<std::string_view, 17> kMissing = {
    "agents",           "login",          "logout", "plugin",      "app-server", "remote-control",
    "update",           "doctor",         "debug",  "apply",       "a",          "queue",
    "migrate-rollouts", "migrate-nfs-db", "cloud",  "exec-server", "mcp-server"};
// Codex subcommands of `exec`, `mcp` and `sandbox` this codex does not have.
constexpr std::array<std::string_view, 0> kMissingExec = {};
constexpr std::array<std::string_view, 2> kMissingMcp = {"login", "logout"};
constexpr std::array<std::string_view, 1> kMissingSandbox = {"uninstall"};

struct Renamed {
  std::string_view codex;
  std::array<std::string_view, 2> ours;
};
// Codex words whose meaning lives under another name here (`codex review` is
// Codex's `codex exec review`, and so it is here).
constexpr std::array<Renamed, 4> kRenamed = {{{"archive", {"sessions", "archive"}},
                                              {"unarchive", {"sessions", "unarchive"}},
                                              {"delete", {"sessions", "rm"}},
                                              {"review", {"exec", "review"}}}};

bool Contains(auto const& list, std::string_view arg) {
  return std::find(list.begin(), list.end(), arg) != list.end();
}

// How many arguments starting at argv[i] form one global option (0: none).
size_t GlobalOptionLength(const std::vector<std::string>& argv, size_t i) {
  const std::string_view arg = argv[i];
  if (Contains(kValueOptions, arg)) return i + 1 < argv.size() ? 2 : 1;
  if (Contains(kFlags, arg)) return 1;
  for (std::string_view prefix : kJoined) {
    if (arg.starts_with(prefix)) return 1;
  }
  // -ckey=value and -pNAME, as CLI11 and clap accept them.
  if (arg.size() > 2 && (arg.starts_with("-c") || arg.starts_with("-p")) && arg[2] != '-') {
    return 1;
  }
  return 0;
}

// How many arguments starting at argv[i] form one run option (0: none).
// A multi-value option takes the words after it up to the next option or
// subcommand word.
size_t RunOptionLength(const std::vector<std::string>& argv, size_t i) {
  const std::string_view arg = argv[i];
  if (Contains(kRunFlags, arg)) return 1;
  if (arg.starts_with("--") && arg.find('=') != std::string_view::npos) {
    const std::string_view name = arg.substr(0, arg.find('='));
    return Contains(kRunValueOptions, name) || Contains(kRunMultiOptions, name) ? 1 : 0;
  }
  if (Contains(kRunValueOptions, arg)) return i + 1 < argv.size() ? 2 : 1;
  if (Contains(kRunMultiOptions, arg)) {
    size_t n = 1;
    while (i + n < argv.size() && !argv[i + n].starts_with("-") &&
           !Contains(kOurCommands, argv[i + n]) && !Contains(kMissing, argv[i + n])) {
      ++n;
    }
    return n;
  }
  // -mMODEL, -sMODE, -CDIR, -aPOLICY (one-letter options with the value joined).
  if (arg.size() > 2 && arg[0] == '-' && arg[1] != '-' && arg[2] != '=' &&
      std::string_view("msCai").find(arg[1]) != std::string_view::npos) {
    return 1;
  }
  return 0;
}

// The index of the first word that is neither a global nor a run option (nor
// their values); argv.size() when there is none.
size_t FirstWord(const std::vector<std::string>& argv) {
  size_t i = 1;
  while (i < argv.size() && argv[i] != "--") {
    size_t n = GlobalOptionLength(argv, i);
    if (n == 0) n = RunOptionLength(argv, i);
    if (n == 0) return i;
    i += n;
  }
  return argv.size();
}

}  // namespace

std::optional<std::string> FirstCommandWord(const std::vector<std::string>& argv) {
  const size_t i = FirstWord(argv);
  if (i >= argv.size()) return std::nullopt;
  return argv[i];
}

std::vector<std::string> HoistGlobalOptions(const std::vector<std::string>& argv) {
  if (argv.empty()) return argv;
  std::vector<std::string> globals;
  std::vector<std::string> rest;
  size_t i = 1;
  bool seen_word = false;
  while (i < argv.size()) {
    if (argv[i] == "--") break;
    const size_t n = GlobalOptionLength(argv, i);
    if (n == 0) {
      const bool runner = !seen_word && Contains(kCommandRunners, argv[i]);
      if (!argv[i].starts_with("-")) seen_word = true;
      rest.push_back(argv[i++]);
      if (runner) break;
      continue;
    }
    for (size_t k = 0; k < n; ++k) globals.push_back(argv[i + k]);
    i += n;
  }
  for (; i < argv.size(); ++i) rest.push_back(argv[i]);
  std::vector<std::string> out{argv[0]};
  out.insert(out.end(), globals.begin(), globals.end());
  out.insert(out.end(), rest.begin(), rest.end());
  return out;
}

std::vector<std::string> LowerRunOptions(const std::vector<std::string>& argv) {
  const size_t word = FirstWord(argv);
  if (word >= argv.size()) return argv;
  const std::string& w = argv[word];
  std::vector<std::string> out(argv.begin(), argv.begin() + 1);
  std::vector<std::string> run;  // run options before `word`
  for (size_t i = 1; i < word;) {
    size_t n = GlobalOptionLength(argv, i);
    std::vector<std::string>& to = n == 0 ? run : out;
    if (n == 0) n = RunOptionLength(argv, i);
    for (size_t k = 0; k < n; ++k) to.push_back(argv[i + k]);
    i += n;
  }
  if (w == "help") {
    // codex help [SUBCOMMAND...] is codex [SUBCOMMAND...] --help.
    out.insert(out.end(), run.begin(), run.end());
    out.insert(out.end(), argv.begin() + static_cast<long>(word) + 1, argv.end());
    out.push_back("--help");
    return out;
  }
  for (const Renamed& r : kRenamed) {
    if (w == r.codex) {
      // Run options given before `review` apply to it (after `exec review`).
      if (w != "review") out.insert(out.end(), run.begin(), run.end());
      out.insert(out.end(), r.ours.begin(), r.ours.end());
      if (w == "review") out.insert(out.end(), run.begin(), run.end());
      out.insert(out.end(), argv.begin() + static_cast<long>(word) + 1, argv.end());
      return out;
    }
  }
  if (!Contains(kRunCommands, w) || run.empty()) return argv;
  out.push_back(w);
  out.insert(out.end(), run.begin(), run.end());
  out.insert(out.end(), argv.begin() + static_cast<long>(word) + 1, argv.end());
  return out;
}

std::optional<std::string> MissingCodexSubcommand(const std::vector<std::string>& argv) {
  const size_t i = FirstWord(argv);
  if (i >= argv.size()) return std::nullopt;
  if (Contains(kMissing, argv[i])) return argv[i];
  if (argv[i] == "exec" || argv[i] == "e") {
    // exec's own first word: skip its options (run flags and exec's value options).
    size_t j = i + 1;
    while (j < argv.size() && argv[j] != "--" && argv[j].starts_with("-")) {
      size_t n = GlobalOptionLength(argv, j);
      if (n == 0) n = RunOptionLength(argv, j);
      if (n == 0) {
        const std::string_view a = argv[j];
        n = (a == "-o" || a == "--output-last-message" || a == "--output-schema" || a == "--color")
                ? 2
                : 1;
      }
      j += n;
    }
    if (j < argv.size() && Contains(kMissingExec, argv[j])) return "exec " + argv[j];
  }
  if (i + 1 < argv.size() && ((argv[i] == "mcp" && Contains(kMissingMcp, argv[i + 1])) ||
                              (argv[i] == "sandbox" && Contains(kMissingSandbox, argv[i + 1])))) {
    return argv[i] + " " + argv[i + 1];
  }
  return std::nullopt;
}

std::vector<std::string> FeatureOverrides(const std::vector<std::string>& enable,
                                          const std::vector<std::string>& disable, bool search) {
  std::vector<std::string> out;
  for (const std::string& f : enable) out.push_back("features." + f + "=true");
  for (const std::string& f : disable) out.push_back("features." + f + "=false");
  if (search) out.push_back("web_search=\"live\"");
  return out;
}

}  // namespace codex::cli
