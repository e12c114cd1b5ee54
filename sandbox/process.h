// Spawning a command without a shell, with a timeout, output caps, and
// cancellation.
//
// RunProcess() is the whole contract in one call:
//   * argv[0] is looked up in the child's PATH like execvp (no shell, no
//     globbing); the lookup list is computed in the parent so the forked child
//     only calls execve.
//   * The child gets its own session and process group (so no controlling
//     terminal), stdin from /dev/null, stdout and
//     stderr on pipes, every other descriptor closed, signal dispositions reset
//     and the signal mask cleared; then `child_setup` (the sandbox) runs, then
//     execve. A failure in the child is reported through a close-on-exec pipe
//     and becomes an Error here (e.g. "cannot run 'foo': not found in PATH").
//   * stdout and stderr are each kept up to `output_cap_bytes`: the first
//     half of the cap (the head) and the last half (the tail, in a ring
//     buffer), however long the output; `output` interleaves both in arrival
//     order the same way. The bytes between head and tail are counted, not
//     kept, and the pipes keep being drained so the child never blocks on a
//     full pipe. Memory stays bounded by the caps.
//   * On timeout the whole group gets SIGTERM, then SIGKILL after
//     `kill_grace_ms`; the result has timed_out and exit code 124.
//   * `should_cancel` is polled at least every 100 ms (and at once when
//     `cancel_fd` becomes readable); when it returns true the group gets
//     SIGTERM, then SIGKILL after at most 200 ms (its EXIT traps run), and
//     RunProcess returns StatusCode::kCancelled.
//   * With a child_setup (the sandbox), RunProcess returns only once the
//     leader's direct children are gone too (up to 2 s after a kill): the
//     sandbox's PID 1 ends its namespace after the leader was killed.
//   * When the direct child exits, output still arriving from processes that
//     inherited the pipes is collected for up to 250 ms; then every process
//     left in the group is killed (a command cannot leave daemons behind).
//
// Thread-safe: RunProcess may be called from several threads at once.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "sandbox/environment.h"
#include "sandbox/unique_fd.h"

namespace codex::sandbox {

inline constexpr size_t kDefaultOutputCapBytes = 1 << 20;  // 1 MiB
inline constexpr int kTimeoutExitCode = 124;

// The step in the child that failed, reported through the error pipe.
enum class ChildStage : int {
  kSetup = 0,  // process group, signals, stdio, descriptors
  kChdir,      // changing into the working directory
  kConfine,    // applying the sandbox (ChildSetup)
  kExec,       // execve
};

// Work done in the forked child after stdio and cwd are in place and before
// execve. Implementations must be async-signal-safe: no allocation, no locks,
// no exceptions. Prepare everything in the parent.
class ChildSetup {
 public:
  virtual ~ChildSetup() = default;
  // Returns 0 on success or an errno value; `*what` may be set to a static
  // string naming the step that failed (e.g. "landlock_restrict_self").
  virtual int ApplyInChild(const char** what) const noexcept = 0;

  // Parent side, before fork: the program to exec instead of `argv` when the
  // setup launches the command through another program (the sandbox runs it
  // under bubblewrap and a helper); empty (the default) execs `argv` itself.
  // The first element must be an absolute path. `report_fd` is the child's
  // report pipe (-1 for ExecInPlace): the launched program inherits it (it is
  // not close-on-exec then) and must write a failure to exec `argv` there, in
  // the format internal::ExecInPlaceOrReport writes, or just close it.
  virtual std::vector<std::string> LaunchArgv(const std::vector<std::string>& argv,
                                              int report_fd) const {
    (void)argv;
    (void)report_fd;
    return {};
  }
};

struct SpawnOptions {
  std::vector<std::string> argv;  // argv[0] is looked up in PATH
  std::string cwd;                // "" = the current directory
  EnvPolicy env;                  // see environment.h
  int64_t timeout_ms = 10'000;    // <= 0: no timeout
  int64_t kill_grace_ms = 2'000;  // SIGTERM -> SIGKILL delay after a timeout
  size_t output_cap_bytes = kDefaultOutputCapBytes;
  // Polled at least every 100 ms while the command runs; may be empty.
  std::function<bool()> should_cancel;
  // A descriptor (borrowed) that becomes readable when the command is to be
  // cancelled, waited on with the output so that cancellation is immediate;
  // then should_cancel decides. -1: none.
  int cancel_fd = -1;
  // Called with each chunk of output as it is read (stdout and stderr in
  // arrival order, as in ProcessResult::output), on the thread running
  // RunProcess, before it is captured; may be empty. The captures do not
  // depend on it. A slow callback delays reading, never loses output.
  std::function<void(std::string_view)> on_output;
  // Applied in the child before execve; borrowed for the duration of the call.
  const ChildSetup* child_setup = nullptr;
};

struct ProcessResult {
  int exit_code = 0;  // 124 on timeout; 128+N when killed by signal N
  int signal = 0;     // the terminating signal, 0 if it exited normally
  bool timed_out = false;
  // Each text is its head followed by its tail; *_dropped counts the bytes
  // left out between them (0 when the text is the whole output).
  std::string output;  // stdout and stderr interleaved
  std::string stdout_text;
  std::string stderr_text;
  int64_t stdout_dropped = 0;
  int64_t stderr_dropped = 0;
  int64_t output_dropped = 0;
  int64_t output_dropped_lines = 0;  // newlines among output's dropped bytes
  size_t output_gap_offset = 0;      // where in `output` the dropped bytes were
  int64_t wall_ms = 0;
};

// A spawned child that owns its process group. Destroying a ChildProcess that
// was not reaped kills the whole group with SIGKILL and reaps the leader.
// Move-only; not thread-safe.
class ChildProcess {
 public:
  // Forks and execs according to `options` (argv, cwd, env, child_setup);
  // timeout, caps and cancellation are RunProcess's business. The returned
  // process has already passed execve successfully.
  static Result<ChildProcess> Spawn(const SpawnOptions& options);

  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&& other) noexcept;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess();

  pid_t pid() const { return pid_; }
  int stdout_fd() const { return stdout_.get(); }
  int stderr_fd() const { return stderr_.get(); }
  // Readable once the leader has exited (not reaped); -1 where pidfd_open is
  // unsupported.
  int exit_fd() const { return pidfd_.get(); }

  void CloseStdout() { stdout_.Reset(); }
  void CloseStderr() { stderr_.Reset(); }

  // Sends `sig` to every process in the group. Safe to call after the leader
  // exited as long as it was not reaped (the zombie keeps the group id).
  void SignalGroup(int sig) const;

  // True once the leader has exited; does not reap it.
  bool HasExited() const;

  // Reaps the leader (blocking) and returns its wait status.
  int Reap();

 private:
  ChildProcess(pid_t pid, UniqueFd pidfd, UniqueFd out, UniqueFd err)
      : pid_(pid), pidfd_(std::move(pidfd)), stdout_(std::move(out)), stderr_(std::move(err)) {}

  pid_t pid_ = -1;  // -1 once reaped or moved from
  UniqueFd pidfd_;
  UniqueFd stdout_;
  UniqueFd stderr_;
};

// Runs the command to completion (see the file comment). Errors: kInvalidArgument
// (empty argv), kNotFound / kPermissionDenied (exec), kUnavailable or
// kInternal (child setup, e.g. the sandbox could not be applied),
// kCancelled.
Result<ProcessResult> RunProcess(const SpawnOptions& options);

// The candidate paths execve is tried on for `program`, in order: `program`
// itself when it contains '/', else each PATH entry joined with it (an empty
// entry means the working directory). Exposed for tests and the CLI.
std::vector<std::string> ExecCandidates(const std::string& program, const std::string& path_var);

}  // namespace codex::sandbox

namespace codex::sandbox {

// Replaces the current process with the command: applies `options.child_setup`
// and execs with `options.env` in `options.cwd`, keeping this process's stdio,
// process group and pid (for `codex sandbox`, where a human watches the
// command). Timeout, caps and cancellation do not apply. Returns only on
// failure.
Status ExecInPlace(const SpawnOptions& options);

// The exit status `codex sandbox` and the sandbox helper use when a command
// could not be started: 127 not found, 126 not executable, 2 bad argument, else 1.
int ExitCodeForStartError(StatusCode code);

namespace internal {

// CLOSE_RANGE_CLOEXEC (Linux 5.11), for close_range(2).
inline constexpr unsigned kCloseRangeCloexec = 1U << 2;

// A close-on-exec pipe; the spawners' (process.cc, sandbox_server.cc) one.
struct Pipe {
  UniqueFd read;
  UniqueFd write;
};
Result<Pipe> MakePipe();
void SetNonBlocking(int fd);

// What a child writes to its report pipe when it cannot start the command.
struct ChildReport {
  int stage = 0;  // a ChildStage
  int err = 0;
  char what[64] = {};
};

// The error RunProcess returns for `report` (the command is options.argv).
Status StartError(const ChildReport& report, const SpawnOptions& options);

// A started command as RunProcess watches it: a local ChildProcess, or a
// process the sandbox server (sandbox_server.h) started. Not thread-safe.
class Supervised {
 public:
  virtual ~Supervised() = default;
  virtual int stdout_fd() const = 0;  // -1: none
  virtual int stderr_fd() const = 0;  // -1: none
  // Readable once the command's leader exited; -1 = poll HasExited.
  virtual int exit_fd() const = 0;
  virtual bool HasExited() = 0;
  virtual void CloseStdout() = 0;
  virtual void CloseStderr() = 0;
  // Sends `sig` to the command's process group.
  virtual void SignalGroup(int sig) = 0;
  // SIGKILL to every process the command left (its group, or its whole tree).
  virtual void KillAll() = 0;
  // Waits for the leader and what KillAll ended; the leader's wait status, or
  // an error when whatever ran it died (the sandbox server).
  virtual Result<int> Reap() = 0;
};

// RunProcess's loop after the start (timeout, caps, cancellation, the grace
// for lingering output, the final kill), for `child` started at `start`.
Result<ProcessResult> Supervise(Supervised& child, const SpawnOptions& options,
                                std::chrono::steady_clock::time_point start);

// For the sandbox helper that runs inside the namespaces (sandbox/launcher.h):
// like ExecInPlace (options.child_setup is ignored), but a failure is written
// to `report_fd` as the report ChildProcess::Spawn reads, and the process
// exits 127.
[[noreturn]] void ExecInPlaceOrReport(const SpawnOptions& options, int report_fd);

// For the sandbox server's keeper (sandbox_server_loop.cc): starts
// options.argv (searched in options' environment's PATH) as the leader of a
// new session, with `stdio` as fds 0..2 (fd 0, a terminal, as its
// controlling terminal when `controlling_tty`), in options.cwd, every other
// descriptor closed at exec. vfork: the caller's memory is not copied, and
// the caller sleeps until the command runs or its start failed. Returns its
// pid, or -1 with `report` saying what failed (the child already reaped).
pid_t VforkCommand(const SpawnOptions& options, const int stdio[3], bool controlling_tty,
                   ChildReport* report);

// For the same helper: reports that the sandbox could not be applied (`what`
// failed with `err`) as ChildStage::kConfine on `report_fd`, and exits 127.
[[noreturn]] void ReportConfineFailure(int report_fd, int err, const char* what);

}  // namespace internal
}  // namespace codex::sandbox
