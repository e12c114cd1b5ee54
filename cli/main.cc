// codex: the command-line entry point and the registry of its commands. Each
// command family lives in its own file (exec_cmd.h, sessions_cmd.h, ...) and
// is registered here, the one place that knows them all; a command's callback
// stores its exit code in `exit_code` and never calls exit(). Only cli/ writes
// to stdout.
#include <sys/prctl.h>

#include <cstdio>
#include <string>
#include <vector>

#include "cli/apply_patch_cmd.h"
#include "cli/compact_cmd.h"
#include "cli/compat_args.h"
#include "cli/completion_cmd.h"
#include "cli/exec_cmd.h"
#include "cli/exit_codes.h"
#include "cli/global_options.h"
#include "cli/interactive/interactive_cmd.h"
#include "cli/mcp_cmd.h"
#include "cli/sandbox_cmd.h"
#include "cli/sessions_cmd.h"
#include "core/version.h"

int main(int argc, char** argv) {
  // Not dumpable: other processes of the same user (a command run outside a
  // PID namespace, or anything else) cannot read this process's environ,
  // cmdline, maps or memory through /proc, nor ptrace it. The sandbox's
  // private /proc is the first layer; this is the second.
  ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  CLI::App app{"codex: a coding agent with a stateless wire, SQLite sessions and compaction"};
  // The program is `codex` in usage lines, however it was started (CLI11
  // would otherwise show argv[0], e.g. the binary's full path).
  app.name("codex");
  app.set_help_all_flag("--help-all", "Show help for every subcommand");
  codex::cli::GlobalOptions global;
  int exit_code = codex::cli::kExitOk;
  app.require_subcommand(0, 1);
  codex::cli::AddGlobalOptions(app, global);
  app.set_version_flag("-V,--version", std::string("codex ") + codex::core::kCodexVersion);
  // The commands, in the order `codex --help` lists them.
  codex::cli::RegisterExecCommand(app, global, &exit_code);
  codex::cli::RegisterInteractiveCommands(app, global, &exit_code);  // codex [PROMPT], codex resume
  codex::cli::RegisterCompletionCommand(app, global, &exit_code);
  codex::cli::RegisterSandboxCommand(app, global, &exit_code);
  codex::cli::RegisterApplyPatchCommand(app, global, &exit_code);
  codex::cli::RegisterSessionsCommands(app, global, &exit_code);
  codex::cli::RegisterCompactCommand(app, global, &exit_code);
  codex::cli::RegisterMcpCommands(app, global, &exit_code);
  std::vector<std::string> args =
      codex::cli::HoistGlobalOptions(std::vector<std::string>(argv, argv + argc));
  if (auto missing = codex::cli::MissingCodexSubcommand(args)) {
    std::fprintf(stderr,
                 "error: 'codex %s' is a Codex CLI subcommand that this codex does not have; "
                 "run 'codex --help' for the commands it has\n",
                 missing->c_str());
    return codex::cli::kExitUsage;
  }
  std::vector<char*> hoisted;
  for (auto& a : args) hoisted.push_back(a.data());
  try {
    app.parse(static_cast<int>(hoisted.size()), hoisted.data());
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "error: %s; run 'codex --help' for usage\n", e.what());
    return codex::cli::kExitUsage;
  }
  return exit_code;
}
