// codex: the command-line entry point. Parses the command line and hands off
// to the registered subcommands (commands.h). Only cli/ writes to stdout.
#include <sys/prctl.h>

#include <cstdio>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/compat_args.h"
#include "cli/exit_codes.h"

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
  codex::cli::RegisterAllCommands(app, global, &exit_code);
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
