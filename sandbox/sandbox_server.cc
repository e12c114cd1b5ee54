// The client side of the sandbox server (see sandbox_server.h).
#include "sandbox/sandbox_server.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

#include "sandbox/launcher.h"
#include "sandbox/sandbox_server_protocol.h"

namespace codex::sandbox {
namespace {

namespace sp = server_protocol;
using Clock = std::chrono::steady_clock;

constexpr int64_t kStartTimeoutMs = 10'000;
constexpr int64_t kTreeGoneTimeoutMs = 2'000;      // after KillAll, for the keeper to finish
constexpr int64_t kStartReportTimeoutMs = 30'000;  // from the spawn request to the keeper's report
constexpr int64_t kLostGraceMs = 500;  // for a server whose command was lost to show it died
using internal::kCloseRangeCloexec;
using internal::MakePipe;
using internal::Pipe;
using internal::SetNonBlocking;

// Reads up to 4 KiB of what the server wrote on stderr (non-blocking), as
// one line.
std::string ReadDiagnostics(int fd) {
  if (fd < 0) return "";
  SetNonBlocking(fd);
  char buf[4096];
  ssize_t n = ::read(fd, buf, sizeof(buf) - 1);
  if (n <= 0) return "";
  std::string text(buf, static_cast<size_t>(n));
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  size_t nl = text.rfind('\n');
  return nl == std::string::npos ? text : text.substr(nl + 1);
}

bool WaitReadable(int fd, int64_t timeout_ms) {
  pollfd p{fd, POLLIN, 0};
  const auto start = Clock::now();
  for (;;) {
    const int64_t left =
        timeout_ms -
        std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
    if (left <= 0) return false;
    int r = ::poll(&p, 1, static_cast<int>(left));
    if (r < 0 && errno == EINTR) continue;
    return r > 0;
  }
}

}  // namespace

// --- SandboxServer ---

Result<std::shared_ptr<SandboxServer>> SandboxServer::Start(const Confinement& confinement) {
  std::shared_ptr<SandboxServer> server(new SandboxServer());
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
    return Status(StatusCode::kInternal, ErrnoMessage("socketpair", errno));
  }
  UniqueFd mine(pair[0]);
  UniqueFd theirs(pair[1]);
  ASSIGN_OR_RETURN(Pipe diag, MakePipe());
  UniqueFd dev_null(::open("/dev/null", O_RDWR | O_CLOEXEC));
  if (!dev_null) return Status(StatusCode::kInternal, ErrnoMessage("open /dev/null", errno));

  const std::string exe = ExecutableBesideSelf(kServerExecutable);
  UniqueFd exe_fd(::open(exe.c_str(), O_PATH | O_CLOEXEC));
  if (!exe_fd) return Status(StatusCode::kInternal, ErrnoMessage("open " + exe, errno));

  const bool namespaces = confinement.mode() != Mode::kFullAccess && confinement.uses_namespaces();
  std::vector<std::string> argv;
  std::vector<int> keep = {theirs.get()};
  if (namespaces) {
    for (const std::string& a : confinement.bwrap_argv()) {
      // The server ends itself when codex closes the channel; bubblewrap's
      // parent-death signal would fire when the *thread* that started it
      // ends, which is not the session's end.
      if (a != "--die-with-parent") argv.push_back(a);
    }
    argv.push_back("/proc/self/fd/" + std::to_string(exe_fd.get()));
    argv.push_back(kServerArg);
    argv.push_back(std::to_string(confinement.ruleset_fd()));
    argv.push_back(std::to_string(confinement.seccomp_program_fd()));
    argv.push_back(std::to_string(confinement.seccomp_length()));
    keep.push_back(exe_fd.get());
    if (confinement.ruleset_fd() >= 0) keep.push_back(confinement.ruleset_fd());
    keep.push_back(confinement.seccomp_program_fd());
  } else {
    argv = {exe, kServerArg, "-1", "-1", "0"};
  }
  argv.push_back(std::to_string(theirs.get()));
  std::vector<char*> argv_ptrs;
  for (std::string& a : argv) argv_ptrs.push_back(a.data());
  argv_ptrs.push_back(nullptr);
  const ChildSetup* setup = namespaces || confinement.mode() == Mode::kFullAccess
                                ? nullptr
                                : static_cast<const ChildSetup*>(&confinement);
  int exec_pipe[2];
  if (::pipe2(exec_pipe, O_CLOEXEC) != 0) {
    return Status(StatusCode::kInternal, ErrnoMessage("pipe", errno));
  }
  UniqueFd exec_read(exec_pipe[0]);
  UniqueFd exec_write(exec_pipe[1]);

  // The child only calls async-signal-safe functions: codex is multi-threaded.
  const pid_t pid = ::fork();
  if (pid < 0) return Status(StatusCode::kInternal, ErrnoMessage("fork", errno));
  if (pid == 0) {
    const char* what = "setup";
    int err = 0;
    ::setsid();
    struct sigaction dfl;
    std::memset(&dfl, 0, sizeof(dfl));
    dfl.sa_handler = SIG_DFL;
    for (int sig = 1; sig < NSIG; ++sig) {
      if (sig != SIGKILL && sig != SIGSTOP) ::sigaction(sig, &dfl, nullptr);
    }
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    if (::dup2(dev_null.get(), 0) < 0 || ::dup2(dev_null.get(), 1) < 0 ||
        ::dup2(diag.write.get(), 2) < 0) {
      err = errno;
      what = "dup2";
    }
    if (err == 0) {
      ::syscall(SYS_close_range, 3U, ~0U, kCloseRangeCloexec);
      for (int fd : keep) {
        if (::fcntl(fd, F_SETFD, 0) != 0) {
          err = errno;
          what = "fcntl(F_SETFD)";
        }
      }
    }
    if (err == 0 && setup != nullptr) err = setup->ApplyInChild(&what);
    if (err == 0) {
      ::execv(argv_ptrs[0], argv_ptrs.data());
      err = errno;
      what = "execv";
    }
    internal::ChildReport report;
    report.stage = static_cast<int>(ChildStage::kConfine);
    report.err = err;
    for (size_t i = 0; i + 1 < sizeof(report.what) && what[i] != '\0'; ++i) {
      report.what[i] = what[i];
    }
    (void)!::write(exec_write.get(), &report, sizeof(report));
    ::_exit(127);
  }
  server->pid_ = pid;
  server->pidfd_ = UniqueFd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  exec_write.Reset();
  theirs.Reset();
  diag.write.Reset();
  server->diag_ = std::move(diag.read);
  server->control_ = std::move(mine);

  auto fail = [&](Status status) -> Status {
    ::kill(pid, SIGKILL);
    while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    server->pid_ = -1;
    server->dead_ = true;
    return status;
  };
  internal::ChildReport report;
  ssize_t got = 0;
  do {
    got = ::read(exec_read.get(), &report, sizeof(report));
  } while (got < 0 && errno == EINTR);
  if (got == static_cast<ssize_t>(sizeof(report))) {
    return fail(Status(StatusCode::kInternal, ErrnoMessage("cannot start the sandbox server (" +
                                                               std::string(report.what) + ")",
                                                           report.err)));
  }
  char ready = 0;
  if (!WaitReadable(server->control_.get(), kStartTimeoutMs) ||
      ::read(server->control_.get(), &ready, 1) != 1 || ready != sp::kReady) {
    std::string why = ReadDiagnostics(server->diag_.get());
    if (why.empty()) why = "it exited before it was ready";
    return fail(Status(StatusCode::kUnavailable, "cannot start the sandbox server: " + why));
  }
  server->server_pid_ = pid;
  if (namespaces) {
    // bubblewrap's only child.
    const std::string children =
        "/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children";
    if (FILE* f = std::fopen(children.c_str(), "re")) {
      long child = 0;
      if (std::fscanf(f, "%ld", &child) == 1) server->server_pid_ = static_cast<pid_t>(child);
      std::fclose(f);
    }
  }
  return server;
}

SandboxServer::~SandboxServer() {
  if (pid_ <= 0) return;
  control_.Reset();  // the server kills every command it runs and exits
  if (pidfd_ && !WaitReadable(pidfd_.get(), kTreeGoneTimeoutMs)) ::kill(pid_, SIGKILL);
  while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
  }
}

bool SandboxServer::Alive() {
  std::lock_guard<std::mutex> lock(mu_);
  if (dead_) return false;
  pollfd p[2] = {{pidfd_.get(), POLLIN, 0}, {control_.get(), POLLIN, 0}};
  if (::poll(p, 2, 0) <= 0) return true;
  // Exited, or closed the channel (which it only does when exiting).
  dead_ = true;
  std::string why = ReadDiagnostics(diag_.get());
  int status = 0;
  if (!WaitReadable(pidfd_.get(), 1'000)) ::kill(pid_, SIGKILL);
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
  if (why.empty()) {
    why = WIFSIGNALED(status) ? "killed by signal " + std::to_string(WTERMSIG(status))
                              : "exit status " + std::to_string(WEXITSTATUS(status));
  }
  died_reason_ = "the sandbox server stopped (" + why + ")";
  return false;
}

bool SandboxServer::DiedWithin(int64_t timeout_ms) {
  // The descriptors live as long as the server object; only the
  // bookkeeping needs the lock (Alive takes it).
  pollfd p[2] = {{pidfd_.get(), POLLIN, 0}, {control_.get(), POLLIN, 0}};
  while (::poll(p, 2, static_cast<int>(timeout_ms)) < 0 && errno == EINTR) {
  }
  return !Alive();
}

std::string SandboxServer::died_reason() {
  std::lock_guard<std::mutex> lock(mu_);
  return died_reason_;
}

Status SandboxServer::DeadError() {
  (void)Alive();
  std::string why = died_reason();
  if (why.empty()) why = "the sandbox server stopped";
  return Status(StatusCode::kUnavailable, why + "; the next command starts a new one");
}

bool SandboxServer::Send(const std::string& message, const std::vector<int>& fds) {
  std::lock_guard<std::mutex> lock(mu_);
  if (dead_) return false;
  const char* p = message.data();
  size_t left = message.size();
  bool first = true;
  while (left > 0) {
    iovec iov{const_cast<char*>(p), left};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    alignas(cmsghdr) char cbuf[CMSG_SPACE(sizeof(int) * 4)];
    if (first && !fds.empty()) {
      msg.msg_control = cbuf;
      msg.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
      cmsghdr* c = CMSG_FIRSTHDR(&msg);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
      std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
    }
    ssize_t n = ::sendmsg(control_.get(), &msg, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    first = false;
    p += n;
    left -= static_cast<size_t>(n);
  }
  return true;
}

void SandboxServer::SendSignal(uint64_t id, int sig) {
  sp::RequestHeader h;
  h.type = static_cast<uint32_t>(sp::RequestType::kSignal);
  h.id = id;
  h.sig = sig;
  (void)Send(std::string(reinterpret_cast<const char*>(&h), sizeof(h)), {});
}

Result<std::unique_ptr<RemoteProcess>> SandboxServer::Spawn(const SpawnOptions& options,
                                                            const RemoteSpawnOptions& remote) {
  if (options.argv.empty() || options.argv[0].empty()) {
    return Status(StatusCode::kInvalidArgument, "no command given: argv is empty");
  }
  std::unique_ptr<RemoteProcess> proc(new RemoteProcess());
  proc->server_ = shared_from_this();
  proc->stdio_ = remote.stdio;
  UniqueFd child_in, child_out, child_err;
  if (remote.stdio == RemoteStdio::kPty) {
    // The server opens the terminal inside the sandbox and sends its master.
    child_in = UniqueFd(::open("/dev/null", O_RDWR | O_CLOEXEC));
    child_out = UniqueFd(::fcntl(child_in.get(), F_DUPFD_CLOEXEC, 0));
    child_err = UniqueFd(::fcntl(child_in.get(), F_DUPFD_CLOEXEC, 0));
  } else {
    if (remote.stdin_pipe) {
      ASSIGN_OR_RETURN(Pipe in, MakePipe());
      child_in = std::move(in.read);
      proc->input_ = std::move(in.write);
    } else {
      child_in = UniqueFd(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    }
    ASSIGN_OR_RETURN(Pipe out, MakePipe());
    ASSIGN_OR_RETURN(Pipe err, MakePipe());
    SetNonBlocking(out.read.get());
    SetNonBlocking(err.read.get());
    proc->out_ = std::move(out.read);
    proc->err_ = std::move(err.read);
    child_out = std::move(out.write);
    child_err = std::move(err.write);
  }
  if (!child_in || !child_out || !child_err) {
    return Status(StatusCode::kInternal, ErrnoMessage("preparing the command's streams", errno));
  }
  // The status channel: a socket, so that the terminal's master can come back.
  int status_pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, status_pair) != 0) {
    return Status(StatusCode::kInternal, ErrnoMessage("socketpair", errno));
  }
  Pipe status{UniqueFd(status_pair[0]), UniqueFd(status_pair[1])};

  std::string payload = options.cwd;
  payload.push_back('\0');
  payload += std::to_string(options.argv.size());
  payload.push_back('\0');
  for (const std::string& a : options.argv) {
    payload += a;
    payload.push_back('\0');
  }
  for (const std::string& e : BuildEnvironment(options.env, CurrentEnvironment())) {
    payload += e;
    payload.push_back('\0');
  }
  sp::RequestHeader h;
  h.type = static_cast<uint32_t>(sp::RequestType::kSpawn);
  h.flags = remote.stdio == RemoteStdio::kPty ? sp::kFlagPty : 0;
  h.payload = static_cast<uint32_t>(payload.size());
  h.rows = remote.rows;
  h.cols = remote.cols;
  {
    std::lock_guard<std::mutex> lock(mu_);
    h.id = next_id_++;
  }
  proc->id_ = h.id;
  std::string message(reinterpret_cast<const char*>(&h), sizeof(h));
  message += payload;
  if (!Send(message, {child_in.get(), child_out.get(), child_err.get(), status.write.get()})) {
    return DeadError();
  }
  child_in.Reset();
  child_out.Reset();
  child_err.Reset();
  status.write.Reset();
  proc->status_ = std::move(status.read);

  sp::StatusMessage m;
  iovec iov{&m, sizeof(m)};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char cbuf[CMSG_SPACE(sizeof(int))];
  msg.msg_control = cbuf;
  msg.msg_controllen = sizeof(cbuf);
  // The keeper reports once the command passed execve; a command can stop
  // its keeper (its parent) before that. Never wait for ever: past the
  // bound the server is asked to end it, and kills it if it cannot.
  if (!WaitReadable(proc->status_.get(), kStartReportTimeoutMs)) SendSignal(h.id, SIGKILL);
  ssize_t got = 0;
  do {
    got = ::recvmsg(proc->status_.get(), &msg, MSG_WAITALL | MSG_CMSG_CLOEXEC);
  } while (got < 0 && errno == EINTR);
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
      int fd = -1;
      std::memcpy(&fd, CMSG_DATA(c), sizeof(int));
      if (remote.stdio == RemoteStdio::kPty && !proc->out_) {
        proc->out_ = UniqueFd(fd);
      } else {
        ::close(fd);
      }
    }
  }
  if (got != static_cast<ssize_t>(sizeof(m))) {
    proc->gone_ = true;
    return proc->LostError();
  }
  if (m.type == static_cast<uint32_t>(sp::StatusType::kStartFailed)) {
    proc->gone_ = true;
    return internal::StartError(m.report, options);
  }
  proc->pid_ = m.value;
  SetNonBlocking(proc->status_.get());
  if (remote.stdio == RemoteStdio::kPty) {
    if (!proc->out_) {
      return Status(StatusCode::kInternal, "the sandbox server sent no terminal");
    }
    proc->input_ = UniqueFd(::fcntl(proc->out_.get(), F_DUPFD_CLOEXEC, 0));
    SetNonBlocking(proc->out_.get());
  }
  return proc;
}

Result<ProcessResult> SandboxServer::Run(const SpawnOptions& options) {
  const auto start = Clock::now();
  if (options.should_cancel && options.should_cancel()) {
    return Status(StatusCode::kCancelled, "the command was cancelled before it started");
  }
  ASSIGN_OR_RETURN(std::unique_ptr<RemoteProcess> proc, Spawn(options, RemoteSpawnOptions{}));
  return internal::Supervise(*proc, options, start);
}

// --- RemoteProcess ---

RemoteProcess::~RemoteProcess() {
  if (server_ == nullptr || gone_ || !status_) return;
  KillAll();
  (void)Reap();
}

bool RemoteProcess::ReadStatus(bool block) {
  while (!gone_) {
    if (block && !exited_) {
      pollfd p{status_.get(), POLLIN, 0};
      if (::poll(&p, 1, -1) < 0 && errno == EINTR) continue;
    }
    sp::StatusMessage m;
    ssize_t n = ::read(status_.get(), &m, sizeof(m));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return true;
    if (n <= 0) {
      gone_ = true;
      return false;
    }
    if (static_cast<size_t>(n) < sizeof(m)) {
      // Messages are written whole and are smaller than PIPE_BUF.
      gone_ = true;
      return false;
    }
    if (m.type == static_cast<uint32_t>(sp::StatusType::kExited)) {
      exited_ = true;
      wait_status_ = m.value;
      if (block) return true;
    }
  }
  return false;
}

bool RemoteProcess::HasExited() {
  if (!exited_ && !gone_) ReadStatus(false);
  return exited_ || gone_;
}

void RemoteProcess::SignalGroup(int sig) {
  if (!gone_) server_->SendSignal(id_, sig == SIGKILL ? SIGKILL : sig);
}

void RemoteProcess::KillAll() {
  if (gone_ || killed_) return;
  killed_ = true;
  server_->SendSignal(id_, SIGKILL);
}

Result<int> RemoteProcess::Reap() {
  if (!exited_ && !gone_) {
    // Blocks until the exit status (or end of file: the server died).
    ReadStatus(true);
  }
  if (!gone_) {
    // The keeper closes the pipe once nothing of the command is left.
    const auto start = Clock::now();
    while (!gone_) {
      const int64_t left =
          kTreeGoneTimeoutMs -
          std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
      if (left <= 0 || !WaitReadable(status_.get(), left)) break;
      ReadStatus(false);
    }
  }
  if (!exited_) return LostError();
  return wait_status_;
}

Status RemoteProcess::LostError() {
  if (server_ == nullptr) return Status(StatusCode::kUnavailable, "the command was never started");
  // A server that died is seen by its channel or its pid a moment after
  // the command's status pipe closed (bubblewrap, codex's child, outlives
  // it briefly): give it that moment before blaming the keeper.
  if (server_->DiedWithin(kLostGraceMs)) return server_->DeadError();
  return Status(StatusCode::kUnavailable,
                "the command ended without an exit status: its keeper in the sandbox server was "
                "killed, and everything it ran was ended with it");
}

}  // namespace codex::sandbox
