// The flags of the commands that run the model: `codex exec` (and its resume
// and fork), `codex` (interactive) and `codex resume`. What they mean for the
// config is config_overrides.h's business; this header only declares them.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace codex::cli {

struct RunFlags {
  std::string model;
  std::string cd;
  std::string sandbox;
  std::string approval;
  std::vector<std::string> add_dirs;
  bool oss = false;
  bool full_auto = false;
  bool bypass = false;  // --dangerously-bypass-approvals-and-sandbox
  bool json = false;
  bool skip_git_repo_check = false;  // accepted for Codex compatibility; never required
  // `codex exec` only (AddExecFlags in exec_cmd.cc):
  bool ephemeral = false;           // --ephemeral: the session lives in a temporary store
  std::string output_schema_file;   // --output-schema FILE
  bool ignore_user_config = false;  // --ignore-user-config: do not read config.toml
  bool review = false;              // `exec review`: a review session (core/review.h)
  // Not a flag: the session may run commands (exec, the interactive UI; not
  // `codex compact`), so Engine::Open starts what the first one needs
  // (core::StartSessionWork).
  bool runs_commands = false;
};

// Adds the RunFlags options to `cmd`, storing into `flags` (which must outlive the parse).
void AddRunFlags(CLI::App* cmd, RunFlags& flags);

}  // namespace codex::cli
