// Command-line compatibility with the Codex CLI: Codex accepts its global
// options (-c/--config, -p/--profile, --strict-config, -V/--version) in any
// position, before or after the subcommand, so they are moved in front of
// the subcommand before CLI11 parses; and Codex subcommands this codex does
// not have are refused instead of being sent to the model as a prompt.
// Pure functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace codex::cli {

// argv with every global option (and its value) moved right after argv[0],
// in the order given. Nothing after a "--" is moved, nor anything after
// `sandbox` (its arguments are a command line of their own).
std::vector<std::string> HoistGlobalOptions(const std::vector<std::string>& argv);

// For argv as HoistGlobalOptions returns it: the Codex subcommand word
// (apply, login, logout, cloud, features) this codex does not implement when
// it is the first word after the global options, else nullopt.
std::optional<std::string> MissingCodexSubcommand(const std::vector<std::string>& argv);

}  // namespace codex::cli
