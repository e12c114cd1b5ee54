// codex: the command-line entry point and the registry of its commands. Each
// command family lives in its own file (exec_cmd.h, sessions_cmd.h, ...) and
// is registered here, the one place that knows them all. A command's callback
// leaves what it returned (a Status, or an exit code of its own) in the
// CommandOutcome and never calls exit(); main() turns it into the exit code and
// the one `error:` line (exit_codes.h). Only cli/ writes to stdout.
#include <fcntl.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cli/apply_patch_cmd.h"
#include "cli/compact_cmd.h"
#include "cli/compat_args.h"
#include "cli/completion_cmd.h"
#include "cli/exec_cmd.h"
#include "cli/exit_codes.h"
#include "cli/features_cmd.h"
#include "cli/fork_cmd.h"
#include "cli/global_options.h"
#include "cli/interactive/interactive_cmd.h"
#include "cli/mcp_cmd.h"
#include "cli/sandbox_cmd.h"
#include "cli/sessions_cmd.h"
#include "core/store_location.h"
#include "core/version.h"

namespace {

// Overwrites, in the process's own argument memory, every password of a store
// URL (`-c session_store="postgresql://user:PW@host/db"`, `--to ...`) with
// what RedactSecrets leaves, so /proc/PID/cmdline and ps never show it while
// codex runs. The arguments were copied first; only the shown bytes change.
void ScrubPasswordsFromArgv(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const size_t n = std::strlen(argv[i]);
    const std::string redacted = codex::core::RedactSecrets(std::string_view(argv[i], n));
    if (redacted == std::string_view(argv[i], n)) continue;
    const size_t keep = std::min(redacted.size(), n);
    std::memcpy(argv[i], redacted.data(), keep);
    std::memset(argv[i] + keep, ' ', n - keep);
    if (redacted.size() > n) {  // (cannot happen with "***" for a password of 3+ bytes)
      std::memset(argv[i], '*', n);
    }
  }
}

// A SIGPIPE (stdout's reader went away: `codex exec --json | head -1`) is
// not fatal: the write fails with EPIPE, the command sees it, stops what it
// was doing as Ctrl-C would (the turn is recorded, the session stays
// resumable) and exits 1 with its line (terminal_text.h StdoutWritten). A
// handler rather than SIG_IGN: every program codex starts gets SIGPIPE's
// default back at exec, as it expects.
void OnSigpipe(int) {}

// A standard descriptor the caller closed (`codex exec >&-`) is held by
// /dev/null opened the wrong way round, so writes to it still fail (EBADF:
// the lost output is reported) and no file codex opens later (a shell
// snapshot, a store, a socket) becomes fd 1 or 2 and receives its output.
void HoldClosedStandardDescriptors() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    const int held = ::open("/dev/null", fd == 0 ? O_WRONLY : O_RDONLY);
    if (held >= 0 && held != fd) {
      ::dup2(held, fd);
      ::close(held);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  HoldClosedStandardDescriptors();
  struct sigaction on_pipe {};
  on_pipe.sa_handler = OnSigpipe;
  sigemptyset(&on_pipe.sa_mask);
  on_pipe.sa_flags = SA_RESTART;
  ::sigaction(SIGPIPE, &on_pipe, nullptr);
  // Not dumpable: other processes of the same user (a command run outside a
  // PID namespace, or anything else) cannot read this process's environ,
  // cmdline, maps or memory through /proc, nor ptrace it. The sandbox's
  // private /proc is the first layer; this is the second.
  ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  // cmdline stays world-readable: store passwords go from it before anything else runs.
  std::vector<std::string> raw_args(argv, argv + argc);
  ScrubPasswordsFromArgv(argc, argv);
  CLI::App app{"codex: a coding agent with a stateless wire, SQLite sessions and compaction"};
  // The program is `codex` in usage lines, however it was started (CLI11
  // would otherwise show argv[0], e.g. the binary's full path).
  app.name("codex");
  app.set_help_all_flag("--help-all", "Show help for every subcommand");
  codex::cli::GlobalOptions global;
  codex::cli::CommandOutcome outcome;
  app.require_subcommand(0, 1);
  codex::cli::AddGlobalOptions(app, global);
  app.set_version_flag("-V,--version", std::string("codex ") + codex::core::kCodexVersion);
  // `codex --version` (or -V) alone needs no command: building the tree of
  // every command and option is a quarter of that run's CPU and page faults
  // (issue 24: docs/performance.md). CLI11 prints the version as ever.
  const bool version_only =
      argc == 2 && (std::strcmp(argv[1], "--version") == 0 || std::strcmp(argv[1], "-V") == 0);
  if (version_only) {
    try {
      app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
      outcome.Set(codex::Result<int>(app.exit(e)));  // the version, checked as it reached stdout
      return outcome.Finish();
    }
  }
  std::vector<std::string> args =
      codex::cli::LowerRunOptions(codex::cli::HoistGlobalOptions(std::move(raw_args)));
  // The commands, in the order `codex --help` lists them. `codex exec` (and
  // its resume, fork, review) needs only its own: registering every command
  // and option costs a run ~0.6 ms of CPU and 60 page faults before it starts
  // (perf stat of `codex -V -V` against `codex -V`), on a one-turn exec's
  // critical path (docs/performance.md).
  const std::optional<std::string> word = codex::cli::FirstCommandWord(args);
  codex::cli::RegisterExecCommand(app, global, outcome);
  if (word != "exec" && word != "e") {
    codex::cli::RegisterInteractiveCommands(app, global, outcome);  // codex [PROMPT], codex resume
    codex::cli::RegisterCompletionCommand(app, global, outcome);
    codex::cli::RegisterSandboxCommand(app, global, outcome);
    codex::cli::RegisterApplyPatchCommand(app, global, outcome);
    codex::cli::RegisterSessionsCommands(app, global, outcome);
    codex::cli::RegisterForkCommand(app, global, outcome);
    codex::cli::RegisterCompactCommand(app, global, outcome);
    codex::cli::RegisterMcpCommands(app, global, outcome);
    codex::cli::RegisterFeaturesCommand(app, global, outcome);
  }
  if (auto missing = codex::cli::MissingCodexSubcommand(args)) {
    outcome.Set(codex::InvalidArgumentError(
        "'codex " + *missing +
        "' is a Codex CLI subcommand that this codex does not have (docs/codex-compat.md); run "
        "'codex --help' for the commands it has"));
    return outcome.Finish();
  }
  std::vector<char*> hoisted;
  for (auto& a : args) hoisted.push_back(a.data());
  // Help and the version go through the outcome too: checked as they reached stdout.
  try {
    app.parse(static_cast<int>(hoisted.size()), hoisted.data());
  } catch (const CLI::CallForHelp& e) {
    outcome.Set(codex::Result<int>(app.exit(e)));
  } catch (const CLI::CallForAllHelp& e) {
    outcome.Set(codex::Result<int>(app.exit(e)));
  } catch (const CLI::CallForVersion& e) {
    outcome.Set(codex::Result<int>(app.exit(e)));
  } catch (const CLI::ParseError& e) {
    outcome.Set(
        codex::InvalidArgumentError(std::string(e.what()) + "; run 'codex --help' for usage"));
  }
  return outcome.Finish();
}
