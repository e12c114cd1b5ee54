// Command-line compatibility with the Codex CLI 0.169, applied to argv before
// CLI11 parses (docs/codex-compat.md lists every flag and subcommand):
//  - Codex accepts its global options (-c/--config, -p/--profile,
//    --strict-config, --enable/--disable FEATURE, --search, -V/--version) in
//    any position, before or after the subcommand: they are moved in front.
//  - Codex's run options (-m, -s, -C, -a, --add-dir, -i, --oss, --full-auto,
//    --dangerously-bypass-approvals-and-sandbox, --skip-git-repo-check)
//    given BEFORE `exec`, `resume` or `fork` apply to that subcommand: they
//    are moved right after its word.
//  - Codex words with a home here are renamed (`help` → --help, `archive`,
//    `unarchive`, `delete` → `sessions ...`).
//  - Codex subcommands this codex does not have are refused by name instead
//    of being sent to the model as a prompt.
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

// For argv as HoistGlobalOptions returns it: run options placed before the
// first subcommand word move to right after it when that word is exec (e),
// resume or fork; Codex words with a home here are renamed (help, archive,
// unarchive, delete). Anything else is returned unchanged.
std::vector<std::string> LowerRunOptions(const std::vector<std::string>& argv);

// For argv as LowerRunOptions returns it: the Codex 0.169 subcommand this
// codex does not implement ("review", "login", ..., or "exec review") when it
// is the first word (or `exec`'s first word), else nullopt.
std::optional<std::string> MissingCodexSubcommand(const std::vector<std::string>& argv);

// For argv as LowerRunOptions returns it: the first word that is neither a
// global nor a run option (nor their values), the subcommand when there is
// one ("exec", "sessions", or a prompt); nullopt when there is none or it
// comes after "--".
std::optional<std::string> FirstCommandWord(const std::vector<std::string>& argv);

// The -c overrides Codex derives from --enable F / --disable F (features.F =
// true/false) and --search (web_search = "live"), in order.
std::vector<std::string> FeatureOverrides(const std::vector<std::string>& enable,
                                          const std::vector<std::string>& disable, bool search);

}  // namespace codex::cli
