#include "cli/interactive/local_shell.h"

#include "core/transcript.h"
#include "sandbox/truncate.h"

namespace codex::cli {

core::CommandSpec LocalShellSpec(const core::Config& config, const std::string& command) {
  core::CommandSpec spec;
  spec.argv = {"bash", "-c", command};  // not a login shell: no profile noise in the output
  spec.cwd = config.cwd;
  spec.timeout_ms = 10 * 60 * 1000;  // the user's own command: Esc or Ctrl-C stop it sooner
  // What the user typed runs as the user, as in Codex: `!make` and
  // `!git commit` work whatever the model's sandbox is. (Planted git config
  // cannot turn it against them: the workspace policy keeps .git and .codex
  // read-only for the model's commands; docs/interactive.md.)
  spec.sandbox.mode = core::SandboxMode::kDangerFullAccess;
  spec.sandbox.workspace_root = config.cwd;
  spec.sandbox.network = true;
  spec.env_policy = config.shell_environment_policy;
  return spec;
}

std::string LocalShellRecord(const std::string& command, const core::CommandResult& result) {
  return std::string(core::kUserShellRecordPrefix) + "\n<command>\n" + command +
         "\n</command>\n<result>\nExit code: " + std::to_string(result.exit_code) + "\nOutput:\n" +
         sandbox::TruncateHeadTail(result.output, sandbox::kModelOutputBytes,
                                   result.dropped_bytes) +
         "\n</result>\n</user_shell_command>";
}

}  // namespace codex::cli
