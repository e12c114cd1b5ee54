#include "cli/compat_args.h"

#include <algorithm>
#include <array>
#include <string_view>

namespace codex::cli {

namespace {

// Global options that take a value as the next argument.
constexpr std::array<std::string_view, 4> kValueOptions = {"-c", "--config", "-p", "--profile"};
// Global flags without a value.
constexpr std::array<std::string_view, 3> kFlags = {"--strict-config", "-V", "--version"};
// "--name=value" forms of the value options.
constexpr std::array<std::string_view, 2> kJoined = {"--config=", "--profile="};

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

// Subcommands whose arguments are another program's command line (as in
// Codex, where `codex sandbox` takes a trailing command): nothing after them
// is moved, so `codex sandbox bash -c 'echo hi'` keeps its -c.
constexpr std::array<std::string_view, 1> kCommandRunners = {"sandbox"};

// Codex 0.169 subcommands this codex does not have. (`mcp` is implemented.)
constexpr std::array<std::string_view, 5> kMissing = {"apply", "login", "logout", "cloud",
                                                      "features"};

}  // namespace

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

std::optional<std::string> MissingCodexSubcommand(const std::vector<std::string>& argv) {
  size_t i = 1;
  while (i < argv.size()) {
    const size_t n = GlobalOptionLength(argv, i);
    if (n == 0) break;
    i += n;
  }
  if (i < argv.size() && Contains(kMissing, argv[i])) return argv[i];
  return std::nullopt;
}

}  // namespace codex::cli
