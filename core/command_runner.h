// CommandRunner: the seam through which tools run processes.
//
// The real implementation (core/sandboxed_runner.h) spawns through sandbox/
// with the session's sandbox policy; tests may pass fakes. The calls of one
// response that run together (core/tool_router.h, RunsInParallel) call Run
// and Start from several threads at once: the runner a session uses must
// allow that (SandboxedRunner does). Run() blocks until
// the process ends, times out, or `cancel` is set (then the whole process
// group is killed and kCancelled returned).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "core/cancel.h"
#include "sandbox/environment.h"

namespace codex::core {

enum class SandboxMode { kReadOnly, kWorkspaceWrite, kDangerFullAccess };

std::string_view SandboxModeName(SandboxMode mode);
// "read-only" | "workspace-write" | "danger-full-access"; nullopt otherwise.
std::optional<SandboxMode> ParseSandboxMode(std::string_view name);

struct SandboxPolicy {
  SandboxMode mode = SandboxMode::kReadOnly;
  // The session's workspace (workspace-write makes it writable); "" = the
  // command's cwd. A command's own working directory never widens the roots.
  std::string workspace_root;
  std::vector<std::string> writable_roots;  // extra roots (--add-dir)
  bool network = false;                     // only meaningful with workspace-write
  // [sandbox_workspace_write] exclude_slash_tmp / exclude_tmpdir_env_var:
  // /tmp and $TMPDIR are writable roots unless excluded.
  bool exclude_slash_tmp = false;
  bool exclude_tmpdir_env_var = false;
  // codex's own state no command may touch (e.g. the --ephemeral store).
  std::vector<std::string> private_paths;
  // codex's own files commands may read but never write (the shell
  // snapshots, core/shell_snapshot.h).
  std::vector<std::string> read_only_paths;
};

struct CommandSpec {
  std::vector<std::string> argv;  // argv[0] is looked up in PATH
  std::string cwd;                // "" = the current directory
  // The environment: [shell_environment_policy] (the default filters secrets),
  // then env_overrides on top (see sandbox/environment.h).
  sandbox::EnvPolicy env_policy;
  std::map<std::string, std::string> env_overrides;
  int64_t timeout_ms = 10'000;
  SandboxPolicy sandbox;
  // Called with each chunk of output (stdout and stderr as they arrive) while
  // the command runs, on the thread calling Run; may be empty. For live
  // display only: the CommandResult holds the captured output either way.
  std::function<void(std::string_view)> on_output;
  // Run only: a descriptor (borrowed) that becomes readable once `cancel` is
  // set, so that the run stops at once instead of at its next poll; -1: none.
  int cancel_fd = -1;
};

struct CommandResult {
  int exit_code = 0;  // 124 on timeout; 128+N when killed by signal N
  int signal = 0;     // the terminating signal, 0 if it exited
  bool timed_out = false;
  // Each text is the output's head then its tail (1 MiB at most in all);
  // `dropped_bytes` (holding `dropped_lines` newlines) were between them in
  // `output`, at `gap_offset`.
  std::string output;  // stdout and stderr interleaved
  std::string stdout_text;
  std::string stderr_text;
  int64_t dropped_bytes = 0;
  int64_t dropped_lines = 0;
  size_t gap_offset = 0;
  int64_t wall_ms = 0;
};

// A command that outlives the call that started it (unified exec's
// exec_command / write_stdin): it keeps running in the session's sandbox
// while the model reads from and writes to it across calls. Destroying it
// kills every process it started. Not thread-safe.
class LiveProcess {
 public:
  virtual ~LiveProcess() = default;
  // Writes `bytes` to the command's stdin (its terminal with a tty).
  virtual Status Write(std::string_view bytes) = 0;

  struct Chunk {
    std::string output;   // what arrived, head + tail when longer than the cap
    int64_t dropped = 0;  // bytes left out between head and tail
    bool exited = false;  // the command ended (its output drained)
    int exit_code = 0;    // 128+N for signal N
    // With `exited`: non-empty when the command's end was seen but not its
    // exit status (the sandbox server died, or the command's keeper there
    // was killed): why, in one line; `exit_code` then means nothing.
    std::string lost;
  };
  // Collects output for up to `wait_ms`, returning early once the command
  // ended or `cancel` fired; keeps at most `cap_bytes` (head + tail). A
  // non-null `on_output` is also given the output as it arrives (for a live
  // view; called on this thread, with no lock held).
  virtual Chunk Collect(int64_t wait_ms, size_t cap_bytes, const CancelToken& cancel,
                        const std::function<void(std::string_view)>& on_output) = 0;
  // True once the command ended (its output may wait for Collect); for the
  // session limit, which ends such processes first. Thread-safe.
  virtual bool Exited() { return false; }
};

class CommandRunner {
 public:
  virtual ~CommandRunner() = default;
  virtual Result<CommandResult> Run(const CommandSpec& spec, const CancelToken& cancel) = 0;
  // Starts `spec` (argv, cwd, environment, sandbox; no timeout) as a live
  // process, on a pseudo-terminal with `tty`, else on pipes.
  // kFailedPrecondition where the runner cannot.
  // Starts in the background what a first command of `spec`'s sandbox
  // policy needs (the real runner: its sandbox server), so that it is ready
  // when the model asks for one; its errors are left for that command to
  // meet. Nothing by default.
  virtual void Warm(const CommandSpec& spec) { (void)spec; }
  virtual Result<std::unique_ptr<LiveProcess>> Start(const CommandSpec& spec, bool tty) {
    (void)spec;
    (void)tty;
    return Status(StatusCode::kFailedPrecondition, "this runner cannot keep processes running");
  }
};

}  // namespace codex::core
