#include "cli/sandbox_cmd.h"

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/exit_codes.h"
#include "core/sandboxed_runner.h"

namespace codex::cli {
namespace {

constexpr int kExitCannotExecute = 126;
constexpr int kExitCommandNotFound = 127;

struct SandboxArgs {
  std::string mode = "workspace-write";
  std::vector<std::string> add_dirs;
  bool network = false;
  std::string cwd;
  std::vector<std::string> command;
};

int RunSandbox(const SandboxArgs& args) {
  auto mode = core::ParseSandboxMode(args.mode);
  if (!mode) {
    return ReportError(
        InvalidArgumentError("unknown sandbox mode '" + args.mode +
                             "'; use read-only, workspace-write or danger-full-access"));
  }
  if (args.command.empty()) {
    return ReportError(
        InvalidArgumentError("no command given; usage: codex sandbox [-s MODE] -- CMD [ARGS...]"));
  }
  if (args.network && *mode != core::SandboxMode::kWorkspaceWrite) {
    return ReportError(InvalidArgumentError(
        "--network only applies to workspace-write (read-only never has network access, "
        "danger-full-access always has)"));
  }
  if (!args.add_dirs.empty() && *mode != core::SandboxMode::kWorkspaceWrite) {
    return ReportError(
        InvalidArgumentError("--add-dir only applies to workspace-write; add -s workspace-write"));
  }

  core::CommandSpec spec;
  spec.argv = args.command;
  spec.cwd = args.cwd;
  spec.sandbox.mode = *mode;
  spec.sandbox.writable_roots = args.add_dirs;
  spec.sandbox.network = args.network;
  auto prepared = core::PrepareCommand(spec);
  if (!prepared.ok()) return ReportError(prepared.status());

  std::fflush(nullptr);
  sandbox::Error error = sandbox::ExecInPlace(prepared->options);
  // Only reached when the command could not be started.
  std::fprintf(stderr, "error: %s\n", error.message().c_str());
  switch (error.kind()) {
    case sandbox::ErrorKind::kNotFound:
      return kExitCommandNotFound;
    case sandbox::ErrorKind::kPermissionDenied:
      return kExitCannotExecute;
    case sandbox::ErrorKind::kInvalidArgument:
      return kExitUsage;
    default:
      return kExitError;
  }
}

}  // namespace

void RegisterSandboxCommand(CLI::App& app, GlobalOptions& global, int* exit_code) {
  (void)global;
  auto args = std::make_shared<SandboxArgs>();
  CLI::App* cmd = app.add_subcommand(
      "sandbox",
      "Run a command under the agent's sandbox (Landlock + seccomp), with the terminal attached");
  cmd->add_option("-s,--sandbox", args->mode,
                  "read-only | workspace-write | danger-full-access (default: workspace-write)");
  cmd->add_option("--add-dir", args->add_dirs,
                  "Another writable directory (workspace-write; repeatable)")
      ->allow_extra_args(false);
  cmd->add_flag("--network", args->network, "Allow network access (workspace-write only)");
  cmd->add_option("-C,--cd", args->cwd, "Run the command in DIR (default: the current directory)");
  // After "--" every argument lands here, options included.
  cmd->add_option("command", args->command, "The command and its arguments (after --)");
  cmd->footer(
      "Usage: codex sandbox [-s MODE] [--add-dir DIR]... [--network] [-C DIR] -- CMD [ARGS...]\n"
      "Writable in workspace-write: the working directory, /tmp, $TMPDIR and --add-dir roots;\n"
      "a .git at the top of a root stays read-only. Secret-looking environment variables\n"
      "(names with KEY, TOKEN, SECRET, PASSWORD, ...) are not passed on.\n"
      "Example: codex sandbox -s read-only -- sh -c 'touch x'   # fails: read-only");
  cmd->callback([args, exit_code] { *exit_code = RunSandbox(*args); });
}

}  // namespace codex::cli
