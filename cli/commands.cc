#include "cli/commands.h"

#include "cli/apply_patch_cmd.h"
#include "cli/compact_cmd.h"
#include "cli/completion_cmd.h"
#include "cli/exec_cmd.h"
#include "cli/interactive/interactive_cmd.h"
#include "cli/mcp_cmd.h"
#include "cli/sandbox_cmd.h"
#include "cli/sessions_cmd.h"
#include "core/version.h"

namespace codex::cli {

// Each family's registration function, defined in its own file.
// (Add one line per family here and in RegisterAllCommands.)

void RegisterAllCommands(CLI::App& app, GlobalOptions& global, int* exit_code) {
  app.require_subcommand(0, 1);
  app.add_option("-c,--config", global.dash_c,
                 "Override a config.toml value: key=value (value parsed as TOML)")
      ->take_all()
      ->allow_extra_args(false);  // one key=value each, so `codex -c k=v PROMPT` keeps its prompt
  app.add_option("-p,--profile", global.profile,
                 "Apply [profiles.NAME] of config.toml (or $CODEX_HOME/NAME.config.toml)");
  app.add_flag("--strict-config", global.strict_config,
               "Make unsupported config.toml keys an error instead of a warning");
  app.set_version_flag("-V,--version", std::string("codex ") + core::kCodexVersion);
  RegisterExecCommand(app, global, exit_code);
  RegisterInteractiveCommands(app, global, exit_code);  // codex [PROMPT], codex resume
  RegisterCompletionCommand(app, global, exit_code);
  RegisterSandboxCommand(app, global, exit_code);
  RegisterApplyPatchCommand(app, global, exit_code);
  RegisterSessionsCommands(app, global, exit_code);
  RegisterCompactCommand(app, global, exit_code);
  RegisterMcpCommands(app, global, exit_code);
}

}  // namespace codex::cli
