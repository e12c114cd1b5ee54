#include "cli/sandbox_cmd.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/config_overrides.h"
#include "cli/exit_codes.h"
#include "cli/terminal_text.h"
#include "core/config.h"
#include "core/sandboxed_runner.h"

namespace codex::cli {
namespace {

struct SandboxArgs {
  std::string mode;  // "" = workspace-write
  std::vector<std::string> add_dirs;
  bool network = false;
  std::string cwd;
  bool explain = false;
  std::vector<std::string> command;
};

// `--explain`: which layers hold the command in this mode here, and why.
void Explain(const core::CommandSpec& spec, const sandbox::Confinement& c) {
  const char* mode = spec.sandbox.mode == core::SandboxMode::kReadOnly ? "read-only"
                     : spec.sandbox.mode == core::SandboxMode::kWorkspaceWrite
                         ? "workspace-write"
                         : "danger-full-access";
  PrintF(stdout, "mode: %s, network %s\n", mode,
         c.network() == sandbox::Network::kDenied ? "off" : "on");
  for (const sandbox::LayerReport& layer : c.layers()) {
    PrintF(stdout, "%-13s %-4s %s\n", layer.name.c_str(), layer.active ? "on" : "off",
           layer.detail.c_str());
  }
  for (const std::string& root : c.writable_roots())
    PrintF(stdout, "writable:     %s\n", root.c_str());
  for (const std::string& path : c.protected_paths()) {
    PrintF(stdout, "read-only:    %s\n", path.c_str());
  }
}

// The command's own exit status once it runs (128 + N for a signal), so
// a failure before that is a Status and a command that cannot start is
// 127/126 as in a shell.
Result<int> RunSandbox(const GlobalOptions& global, const SandboxArgs& args) {
  auto mode = core::ParseSandboxMode(args.mode.empty() ? "workspace-write" : args.mode);
  if (!mode) {
    return InvalidArgumentError("unknown sandbox mode '" + args.mode +
                                "'; use read-only, workspace-write or danger-full-access");
  }
  if (args.command.empty() && !args.explain) {
    return InvalidArgumentError(
        "no command given; usage: codex sandbox [-s MODE] -- CMD [ARGS...]");
  }
  if (args.network && *mode != core::SandboxMode::kWorkspaceWrite) {
    return InvalidArgumentError(
        "--network only applies to workspace-write (read-only never has network access, "
        "danger-full-access always has)");
  }
  if (!args.add_dirs.empty() && *mode != core::SandboxMode::kWorkspaceWrite) {
    return InvalidArgumentError(
        "--add-dir only applies to workspace-write; add -s workspace-write");
  }

  // config.toml (with -c / -p) as for the model's commands:
  // [shell_environment_policy] shapes the environment and, in workspace-write,
  // [sandbox_workspace_write] adds writable roots and network access.
  core::ConfigOverrides overrides = GlobalOverrides(global);
  if (!args.cwd.empty()) overrides.cwd = args.cwd;
  overrides.sandbox_mode = *mode;
  overrides.add_dirs = args.add_dirs;
  ASSIGN_OR_RETURN(const core::Config config,
                   core::LoadConfig(core::DefaultCodexHome(), overrides));
  for (const std::string& w : config.warnings) PrintF(stderr, "warning: %s\n", w.c_str());

  core::CommandSpec spec;
  spec.argv = args.command.empty() ? std::vector<std::string>{"true"} : args.command;
  spec.cwd = config.cwd;
  spec.sandbox = core::SandboxPolicyFor(config);
  spec.sandbox.mode = *mode;
  spec.env_policy = config.shell_environment_policy;
  if (*mode == core::SandboxMode::kWorkspaceWrite) {
    spec.sandbox.network = args.network || config.sandbox_network_access;
  }
  ASSIGN_OR_RETURN(core::PreparedCommand prepared, core::PrepareCommand(spec));
  if (args.explain) {
    Explain(spec, *prepared.confinement);
    return kExitOk;
  }

  // The command runs in a child on this terminal (same process group, so
  // the terminal's Ctrl-C and Ctrl-Z reach it), and codex waits: what the
  // confinement made on the host (the mount points of absent protected
  // paths, the sandbox's /dev/shm) is removed when the command ends, which
  // replacing this process with it could not do.
  std::fflush(nullptr);
  const pid_t child = ::fork();
  if (child < 0) return InternalError(ErrnoMessage("fork", errno));
  if (child == 0) {
    Status error = sandbox::ExecInPlace(prepared.options);
    // Only reached when the command could not be started.
    PrintError(error);
    std::fflush(nullptr);
    ::_exit(sandbox::ExitCodeForStartError(error.code()));
  }
  // The terminal's signals go to the command (it is in the foreground
  // group too); a SIGTERM or SIGHUP sent to codex alone is passed on.
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  struct sigaction old_int {
  }, old_quit{};
  ::sigaction(SIGINT, &ignore, &old_int);
  ::sigaction(SIGQUIT, &ignore, &old_quit);
  static pid_t forward_to = 0;
  forward_to = child;
  struct sigaction forward {};
  forward.sa_handler = [](int sig) {
    if (forward_to > 0) ::kill(forward_to, sig);
  };
  for (int sig : {SIGTERM, SIGHUP}) ::sigaction(sig, &forward, nullptr);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  ::sigaction(SIGINT, &old_int, nullptr);
  ::sigaction(SIGQUIT, &old_quit, nullptr);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

}  // namespace

void RegisterSandboxCommand(CLI::App& app, const GlobalOptions& global, CommandOutcome& result) {
  auto args = std::make_shared<SandboxArgs>();
  CLI::App* cmd = app.add_subcommand(
      "sandbox",
      "Run a command under the agent's sandbox (namespaces + Landlock + seccomp), with the "
      "terminal attached");
  cmd->add_option("-s,--sandbox", args->mode,
                  "read-only | workspace-write | danger-full-access (default: workspace-write)");
  cmd->add_option("--add-dir", args->add_dirs,
                  "Another writable directory (workspace-write; repeatable)")
      ->allow_extra_args(false);
  cmd->add_flag("--network", args->network, "Allow network access (workspace-write only)");
  cmd->add_option("-C,--cd", args->cwd, "Run the command in DIR (default: the current directory)");
  cmd->add_flag("--explain", args->explain,
                "Print which sandbox layers are active for this mode and why; run nothing");
  // After "--" every argument lands here, options included.
  cmd->add_option("command", args->command, "The command and its arguments (after --)");
  cmd->footer(
      "Usage: codex sandbox [-s MODE] [--add-dir DIR]... [--network] [-C DIR] -- CMD [ARGS...]\n"
      "       codex sandbox [-s MODE] [--add-dir DIR]... [--network] --explain\n"
      "Writable in workspace-write: the working directory, /tmp, $TMPDIR, --add-dir roots and\n"
      "[sandbox_workspace_write] writable_roots; the .git of each root stays read-only.\n"
      "The environment follows [shell_environment_policy] in config.toml (by default\n"
      "secret-looking names with KEY, TOKEN, SECRET, PASSWORD, ... are not passed on).\n"
      "Example: codex sandbox -s read-only -- sh -c 'touch x'   # fails: read-only");
  cmd->callback([&global, args, &result] { result.Set(RunSandbox(global, *args)); });
}

}  // namespace codex::cli
