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

#include "core/command_runner.h"
#include "sandbox/confinement.h"
#include "sandbox/process.h"
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

// The translation SandboxedRunner::Run uses, also for `codex sandbox`.
// Errors as for Run (before anything is spawned).
// `exec_in_place`: the command will replace this process (`codex sandbox`),
// so nothing is left for the Confinement to clean up (no writable /dev/shm).
Result<PreparedCommand> PrepareCommand(const CommandSpec& spec, bool exec_in_place = false);

class SandboxedRunner : public CommandRunner {
 public:
  SandboxedRunner() = default;
  Result<CommandResult> Run(const CommandSpec& spec, const CancelToken& cancel) override;
};

}  // namespace codex::core
