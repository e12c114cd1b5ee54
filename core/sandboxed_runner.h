// SandboxedRunner: the real CommandRunner, running commands through sandbox/.
//
// Translates a CommandSpec into sandbox::SpawnOptions:
//   * environment: spec.env_policy ([shell_environment_policy]; by default
//     the inherited environment minus names matching *KEY*, *SECRET*,
//     *TOKEN*, *PASSWORD*, *PASSWD*, *CREDENTIAL*), then spec.env_overrides
//     (see sandbox/environment.h);
//   * sandbox: spec.sandbox.mode; for workspace-write the writable roots and
//     protected paths are the workspace policy's (WritableRootsFor below:
//     the workspace, /tmp and $TMPDIR unless excluded, the extra roots; `.git`
//     and `.codex` stay read-only); the network is
//     off except in danger-full-access or workspace-write with
//     spec.sandbox.network (see sandbox/confinement.h);
//   * cancellation: `cancel` is polled every 100 ms; when set, the process
//     group is killed and kCancelled returned.
//   * streaming: spec.on_output sees the output as it is read (before the
//     head + tail capture, which it does not change).
// Errors: kInvalidArgument (empty argv, missing working directory),
// kNotFound (program not found), kFailedPrecondition (not executable, or
// neither Landlock nor user namespaces are available for a sandboxed mode:
// the message says to use danger-full-access), kCancelled, kInternal. A command that runs and fails
// is not an error: its exit code is in the CommandResult. `dropped_bytes`
// counts the bytes left out of `output` (the interleaved text the model sees).
// Thread-safe: one instance may serve concurrent Run calls.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/command_runner.h"
#include "sandbox/confinement.h"
#include "sandbox/process.h"
#include "sandbox/sandbox_server.h"
#include "sandbox/workspace_policy.h"

namespace codex::core {

// A CommandSpec translated for sandbox/: spawn options (argv, cwd,
// environment, timeout; no cancellation hook) and the confinement that
// `options.child_setup` points to (heap-allocated, so moving is safe).
struct PreparedCommand {
  sandbox::SpawnOptions options;
  std::unique_ptr<sandbox::Confinement> confinement;
};

// The inputs of the workspace policy (sandbox/workspace_policy.h) for a
// session's sandbox: its workspace (or `cwd` when it names none), extra roots,
// /tmp and $TMPDIR unless excluded, private paths. The shell tool, `!cmd`,
// `codex sandbox` and apply_patch all derive their policy from this.
sandbox::WritableRootsSpec WritableRootsFor(const SandboxPolicy& policy, const std::string& cwd);

// The directories a sandboxed command of a session with `policy` in `cwd`
// may write, in any mode (sandbox::ModelWritableRoots of WritableRootsFor):
// what the lookups of the programs codex starts on the host skip
// (sandbox/host_path.h).
std::vector<std::string> ModelWritableRootsFor(const SandboxPolicy& policy, const std::string& cwd);

// The translation SandboxedRunner::Run uses, also for `codex sandbox`.
// Errors as for Run (before anything is spawned).
Result<PreparedCommand> PrepareCommand(const CommandSpec& spec);

// Runs each command through the session's sandbox server
// (sandbox/sandbox_server.h), started at session start (Warm) or on first use
// for the command's sandbox policy and kept for the runner's lifetime (the
// session): the first command
// of a policy pays for bubblewrap, the others about a fork. A different
// policy (mode, network, writable roots, or a `.git` / `.codex` appearing at
// the top of a root) starts another server. When a server died, the call
// that saw it fails with kUnavailable ("the sandbox server stopped (...);
// the next command starts a new one") and the next call starts a new one.
// Destroying the runner ends its servers and everything they still run.
class SandboxedRunner : public CommandRunner {
 public:
  SandboxedRunner() = default;
  ~SandboxedRunner() override;
  Result<CommandResult> Run(const CommandSpec& spec, const CancelToken& cancel) override;
  // Starts the command in the policy's server (unified exec); its processes
  // stay inside that server's sandbox for as long as they run.
  Result<std::unique_ptr<LiveProcess>> Start(const CommandSpec& spec, bool tty) override;
  // Starts `spec`'s server on a thread of its own (once a runner); a command
  // meanwhile waits for it rather than starting a second one. The runner's
  // destruction waits for a start under way (bubblewrap's, a few ms).
  void Warm(const CommandSpec& spec) override;

  // A live server for `spec`'s policy and its confinement (started if need be).
  struct Server {
    std::string key;
    std::string names;  // without namespaces: the roots' top-level names granted
    // Declared before the server, so destroyed after it: the confinement
    // holds the mount points of the server's sandbox (sandbox/mount_point.h).
    std::shared_ptr<const sandbox::Confinement> confinement;
    std::shared_ptr<sandbox::SandboxServer> server;
  };
  Result<Server> ServerFor(const CommandSpec& spec);

  // The spawn options for `spec` (argv, cwd, environment, timeout) as the
  // server runs them, network marker included.
  static Result<sandbox::SpawnOptions> OptionsFor(const CommandSpec& spec, const Server& server);

 private:
  static constexpr size_t kMaxServers = 4;
  std::mutex mu_;  // guards servers_ and retired_
  // The confinements of replaced servers, whose live exec sessions may still
  // run: their mount points stay until the session ends. Declared before
  // servers_, so destroyed after every server.
  std::vector<std::shared_ptr<const sandbox::Confinement>> retired_;
  std::vector<Server> servers_;
  std::thread warm_;  // Warm's; joined before the servers go
};

}  // namespace codex::core
