// The per-session sandbox server: one confined process that starts every
// command of a session (and policy) from inside its sandbox.
//
// Starting bubblewrap and a helper for each command costs milliseconds; the
// server pays it once. SandboxServer::Start launches
//   bwrap <the Confinement's namespaces and mounts> -- <server> __codex-sandbox-server ...
// (or, without namespaces, forks a child that applies Landlock + seccomp and
// execs the server). The server is codex-sandbox-server from beside the
// running executable (a small binary: libc, libstdc++ and this library's
// process code), or else the running executable itself (entered through the
// ELF constructor in launcher.cc, as the helper is). Inside the namespaces it
// is PID 1; it applies no_new_privs, Landlock, drops every capability and
// installs seccomp (ApplyLayersFromFds), so every command it forks inherits
// the whole confinement, and its death ends the PID namespace and with it
// every command.
//
// The channel: a private socketpair, inherited by the server as its only
// extra descriptor (not a named socket: nothing in the filesystem or the
// abstract namespace to connect to). The server marks it close-on-exec, is
// not dumpable (its /proc/<pid>/fd cannot be read by the commands) and, as
// PID 1, ignores every signal a command sends it. Requests (client to
// server): spawn (argv, cwd, environment, with the command's stdin, stdout,
// stderr and a status pipe passed with SCM_RIGHTS: output never goes through
// the server) and signal (a signal for the command's process group; SIGKILL
// ends its whole process tree). Per command, the server forks a keeper (a
// child subreaper) that starts the command with vfork (its memory is not
// copied for a process that execs at once) in a new session and reports on
// the status pipe: started (or why it could not start, as RunProcess
// reports it), the leader's wait status, and, by closing the pipe, that no
// process of the command is left. End of file on the status pipe before the
// exit status means the server died: the call fails with one line saying so,
// and the owner starts a new server for the next command.
//
// Thread-safe: one SandboxServer may serve concurrent Run and Spawn calls.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/status.h"
#include "sandbox/confinement.h"
#include "sandbox/process.h"
#include "sandbox/unique_fd.h"

namespace codex::sandbox {

inline constexpr const char* kServerArg = "__codex-sandbox-server";
inline constexpr const char* kServerExecutable = "codex-sandbox-server";

// The server's main (argv[1] == kServerArg); never returns.
[[noreturn]] void RunSandboxServer(int argc, char** argv);

// How a command's standard streams are connected.
enum class RemoteStdio {
  kPipes,  // stdin from /dev/null or a pipe, stdout and stderr on two pipes
  kPty,    // stdin, stdout and stderr on one pseudo-terminal, its controlling terminal
};

struct RemoteSpawnOptions {
  RemoteStdio stdio = RemoteStdio::kPipes;
  bool stdin_pipe = false;  // kPipes: a pipe the caller writes (else /dev/null)
  uint16_t rows = 24;       // kPty: the terminal's size
  uint16_t cols = 80;
};

class SandboxServer;

// A command the server runs. Destroying it kills what is left of it.
class RemoteProcess final : public internal::Supervised {
 public:
  ~RemoteProcess() override;

  // The command's pid inside the server's PID namespace (or the host's).
  pid_t pid() const { return pid_; }
  // Where to write the command's input: the stdin pipe or the terminal; -1.
  int input_fd() const { return input_.get(); }
  void CloseInput() { input_.Reset(); }
  // The terminal (kPty), also stdout_fd(); -1 otherwise.
  int pty_fd() const { return stdio_ == RemoteStdio::kPty ? out_.get() : -1; }

  int stdout_fd() const override { return out_.get(); }
  int stderr_fd() const override { return err_.get(); }
  int exit_fd() const override { return exited_ ? -1 : status_.get(); }
  bool HasExited() override;
  void CloseStdout() override { out_.Reset(); }
  void CloseStderr() override { err_.Reset(); }
  void SignalGroup(int sig) override;
  void KillAll() override;
  Result<int> Reap() override;

  // The leader's wait status once HasExited() (else 0).
  int wait_status() const { return wait_status_; }
  // True once HasExited() although no exit status came: the command's keeper
  // or the whole server died first (see LostError()).
  bool lost() const { return gone_ && !exited_; }
  // Why a lost() command ended, in one line: the server's death, or, while
  // the server runs, its keeper killed (by a process of the session) and
  // everything it ran ended by the server.
  Status LostError();

 private:
  friend class SandboxServer;
  RemoteProcess() = default;
  // Reads what the keeper sent; false at end of file.
  bool ReadStatus(bool block);

  std::shared_ptr<SandboxServer> server_;
  uint64_t id_ = 0;
  pid_t pid_ = -1;
  RemoteStdio stdio_ = RemoteStdio::kPipes;
  UniqueFd input_;
  UniqueFd out_;
  UniqueFd err_;
  UniqueFd status_;
  bool exited_ = false;  // the leader's status arrived
  bool gone_ = false;    // the status pipe closed: nothing of the command is left
  bool killed_ = false;
  int wait_status_ = 0;
};

class SandboxServer : public std::enable_shared_from_this<SandboxServer> {
 public:
  // Launches a server confined by `confinement` (borrowed during the call).
  // Errors: kUnavailable / kInternal with one line (e.g. "cannot apply the
  // sandbox (landlock_restrict_self): ...").
  static Result<std::shared_ptr<SandboxServer>> Start(const Confinement& confinement);

  // Ends the server: it kills every command it still runs.
  ~SandboxServer();
  SandboxServer(const SandboxServer&) = delete;
  SandboxServer& operator=(const SandboxServer&) = delete;

  // RunProcess through the server: the same contract (timeout, caps,
  // cancellation, nothing of the command left afterwards);
  // options.child_setup is ignored (the server's confinement applies).
  // kUnavailable when the server died (before or during the command).
  Result<ProcessResult> Run(const SpawnOptions& options);

  // Starts `options.argv` (cwd, env) and returns once it passed execve;
  // start errors as RunProcess reports them. Timeout, caps and cancellation
  // are the caller's business.
  Result<std::unique_ptr<RemoteProcess>> Spawn(const SpawnOptions& options,
                                               const RemoteSpawnOptions& remote);

  // False once the server died (it is then reaped; see died_reason()).
  bool Alive();
  // Waits up to `timeout_ms` for the server to die; false if it still runs.
  bool DiedWithin(int64_t timeout_ms);
  // One line: why the server is gone ("" while it runs).
  std::string died_reason();
  // The pid codex started (bubblewrap's with namespaces), and the server's
  // own (bubblewrap's child); for tests.
  pid_t pid() const { return pid_; }
  pid_t server_pid() const { return server_pid_; }

 private:
  friend class RemoteProcess;
  SandboxServer() = default;
  // Sends one request with `fds`; false when the server is gone.
  bool Send(const std::string& message, const std::vector<int>& fds);
  void SendSignal(uint64_t id, int sig);
  Status DeadError();

  std::mutex mu_;  // guards the socket's writes, next_id_ and the death bookkeeping
  UniqueFd control_;
  UniqueFd pidfd_;
  UniqueFd diag_;  // the server's stderr
  pid_t pid_ = -1;
  pid_t server_pid_ = -1;
  uint64_t next_id_ = 1;
  bool dead_ = false;
  std::string died_reason_;
};

}  // namespace codex::sandbox
