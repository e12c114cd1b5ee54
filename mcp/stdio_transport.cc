#include <fcntl.h>
#include <linux/close_range.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>

#include "base/time.h"
#include "mcp/transport.h"
#include "sandbox/host_path.h"

namespace codex::mcp {

namespace {

constexpr size_t kMaxMessageBytes = 64u << 20;  // one JSON-RPC line

// The program to exec: `command` when it has a '/' (relative to the server's
// cwd), else the first executable match in the PATH entries no sandboxed
// command can write (sandbox/host_path.h: not relative, not inside a
// writable root such as the workspace's virtualenv).
std::string ResolveProgram(const std::string& command, const std::string& path_list,
                           const std::string& cwd, const std::vector<std::string>& writable) {
  if (command.find('/') != std::string::npos) {
    return command[0] == '/' ? command : cwd + "/" + command;
  }
  return sandbox::FindHostProgram(command, path_list.c_str(), writable);
}

}  // namespace

ServerLog::ServerLog(const std::string& path) : path_(path) {
  fd_ = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
}

ServerLog::~ServerLog() {
  if (fd_ >= 0) close(fd_);
}

void ServerLog::Note(const std::string& line) {
  if (fd_ < 0) return;
  std::string record = "[codex " + FormatRfc3339(NowMs()) + "] " + line + "\n";
  // One write with O_APPEND: records from several threads do not interleave.
  (void)!write(fd_, record.data(), record.size());
}

StdioTransport::StdioTransport(StdioOptions options) : options_(std::move(options)) {}

StdioTransport::~StdioTransport() { Close(); }

Status StdioTransport::Start(MessageFn on_message, ClosedFn on_closed) {
  on_message_ = std::move(on_message);
  on_closed_ = std::move(on_closed);
  const core::McpServerConfig& c = options_.config;
  sandbox::EnvPolicy policy = options_.env_policy;
  for (const auto& name : c.env_vars) {
    if (const char* v = std::getenv(name.c_str())) policy.overrides[name] = v;
  }
  for (const auto& [k, v] : c.env) policy.overrides[k] = v;
  const std::vector<std::string> env =
      sandbox::BuildEnvironment(policy, sandbox::CurrentEnvironment());
  const std::string cwd = c.cwd.empty() ? options_.default_cwd : c.cwd;
  const std::string program =
      ResolveProgram(c.command, sandbox::LookupEnv(env, "PATH", "/usr/local/bin:/usr/bin:/bin"),
                     cwd, options_.writable_roots);
  if (program.empty()) {
    return NotFoundError("cannot run '" + c.command + "': not found in PATH");
  }
  std::vector<std::string> argv_s = {c.command};
  argv_s.insert(argv_s.end(), c.args.begin(), c.args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_s = env;
  std::vector<char*> envp;
  for (auto& e : env_s) envp.push_back(e.data());
  envp.push_back(nullptr);

  int in_pipe[2];
  int out_pipe[2];
  int err_pipe[2];  // reports a failed exec
  if (pipe2(in_pipe, O_CLOEXEC) != 0) return InternalError("pipe: " + std::string(strerror(errno)));
  if (pipe2(out_pipe, O_CLOEXEC) != 0) {
    close(in_pipe[0]);
    close(in_pipe[1]);
    return InternalError("pipe: " + std::string(strerror(errno)));
  }
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    for (int fd : {in_pipe[0], in_pipe[1], out_pipe[0], out_pipe[1]}) close(fd);
    return InternalError("pipe: " + std::string(strerror(errno)));
  }
  const int log_fd = options_.log != nullptr ? options_.log->fd() : -1;
  const int null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
  const pid_t pid = fork();
  if (pid == 0) {
    // Child: only async-signal-safe calls from here on.
    setpgid(0, 0);
    const int stderr_target = log_fd >= 0 ? log_fd : null_fd;
    if (dup2(in_pipe[0], 0) < 0 || dup2(out_pipe[1], 1) < 0 ||
        (stderr_target >= 0 && dup2(stderr_target, 2) < 0)) {
      int e = errno;
      (void)!write(err_pipe[1], &e, sizeof e);
      _exit(127);
    }
    // Nothing of codex's (the session database, sockets) leaks into the
    // server: every descriptor above stderr closes at exec.
    (void)close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    signal(SIGPIPE, SIG_DFL);
    signal(SIGINT, SIG_DFL);
    if (chdir(cwd.c_str()) != 0) {
      int e = errno;
      (void)!write(err_pipe[1], &e, sizeof e);
      _exit(127);
    }
    execve(program.c_str(), argv.data(), envp.data());
    int e = errno;
    (void)!write(err_pipe[1], &e, sizeof e);
    _exit(127);
  }
  if (null_fd >= 0) close(null_fd);
  close(in_pipe[0]);
  close(out_pipe[1]);
  close(err_pipe[1]);
  if (pid < 0) {
    close(in_pipe[1]);
    close(out_pipe[0]);
    close(err_pipe[0]);
    return InternalError("fork: " + std::string(strerror(errno)));
  }
  setpgid(pid, pid);  // also from here, so the group exists before any kill
  pid_ = pid;
  int child_errno = 0;
  ssize_t n;
  do {
    n = read(err_pipe[0], &child_errno, sizeof child_errno);
  } while (n < 0 && errno == EINTR);
  close(err_pipe[0]);
  stdin_fd_ = in_pipe[1];
  stdout_fd_ = out_pipe[0];
  if (n == static_cast<ssize_t>(sizeof child_errno)) {
    Close();
    return UnavailableError("cannot run '" + c.command + "' (in " + cwd +
                            "): " + strerror(child_errno));
  }
  fcntl(stdin_fd_, F_SETFL, fcntl(stdin_fd_, F_GETFL) | O_NONBLOCK);
  reader_ = std::thread([this] { ReadLoop(); });
  return OkStatus();
}

std::string StdioTransport::ExitDescription() {
  std::lock_guard<std::mutex> lock(reap_mu_);
  if (!reaped_ && pid_ > 0) {
    // Give a dying child a moment to be reapable.
    for (int i = 0; i < 50 && !reaped_; ++i) {
      pid_t r = waitpid(pid_, &wait_status_, WNOHANG);
      if (r == pid_) {
        reaped_ = true;
        break;
      }
      if (r < 0) break;
      usleep(20'000);
    }
  }
  if (!reaped_) return "closed its stdout";
  if (WIFEXITED(wait_status_)) {
    return "exited with code " + std::to_string(WEXITSTATUS(wait_status_));
  }
  if (WIFSIGNALED(wait_status_)) {
    return std::string("was killed by signal ") + std::to_string(WTERMSIG(wait_status_)) + " (" +
           strsignal(WTERMSIG(wait_status_)) + ")";
  }
  return "stopped";
}

void StdioTransport::ReadLoop() {
  std::string buffer;
  char chunk[65536];
  bool overflow = false;
  while (!stopping_.load()) {
    pollfd pfd{stdout_fd_, POLLIN, 0};
    int r = poll(&pfd, 1, 100);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;
    ssize_t n = read(stdout_fd_, chunk, sizeof chunk);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) break;
    size_t start = buffer.size();
    buffer.append(chunk, static_cast<size_t>(n));
    size_t line_start = 0;
    for (size_t i = start; i < buffer.size(); ++i) {
      if (buffer[i] != '\n') continue;
      std::string line = buffer.substr(line_start, i - line_start);
      line_start = i + 1;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (overflow) {
        overflow = false;  // the tail of a dropped message
        continue;
      }
      if (!line.empty()) on_message_(std::move(line));
    }
    buffer.erase(0, line_start);
    if (buffer.size() > kMaxMessageBytes) {
      if (options_.log != nullptr) {
        options_.log->Note("dropped a message over " + std::to_string(kMaxMessageBytes >> 20) +
                           " MiB from the server");
      }
      buffer.clear();
      overflow = true;
    }
  }
  if (!stopping_.load()) on_closed_("the server " + ExitDescription());
}

Status StdioTransport::Send(const std::string& message, int64_t timeout_ms,
                            const std::function<bool()>& should_abort) {
  std::lock_guard<std::mutex> lock(write_mu_);
  if (stdin_fd_ < 0) return UnavailableError("the server is not running");
  std::string data = message + "\n";
  // A server that exited leaves a broken pipe: block SIGPIPE for this thread
  // and swallow the one the write raises, instead of dying of it.
  sigset_t pipe_set;
  sigset_t old_set;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old_set);
  Status status = OkStatus();
  size_t off = 0;
  const int64_t deadline = SteadyNowMs() + (timeout_ms > 0 ? timeout_ms : 60'000);
  while (off < data.size()) {
    ssize_t n = write(stdin_fd_, data.data() + off, data.size() - off);
    if (n > 0) {
      off += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) {
      if (SteadyNowMs() > deadline) {
        status = DeadlineExceededError("the server does not read its input");
        break;
      }
      if (should_abort && should_abort()) {
        status = CancelledError("interrupted");
        break;
      }
      pollfd pfd{stdin_fd_, POLLOUT, 0};
      poll(&pfd, 1, 100);
      continue;
    }
    status = UnavailableError("the server closed its input (" + std::string(strerror(errno)) + ")");
    break;
  }
  timespec zero{0, 0};
  while (sigtimedwait(&pipe_set, nullptr, &zero) > 0) {
  }
  pthread_sigmask(SIG_SETMASK, &old_set, nullptr);
  return status;
}

void StdioTransport::Close() {
  if (stopping_.exchange(true)) {
    if (reader_.joinable()) reader_.join();
    return;
  }
  {
    std::lock_guard<std::mutex> lock(write_mu_);
    if (stdin_fd_ >= 0) close(stdin_fd_);
    stdin_fd_ = -1;
  }
  if (pid_ > 0) {
    std::lock_guard<std::mutex> lock(reap_mu_);
    auto wait_ms = [&](int ms) {
      for (int waited = 0; !reaped_ && waited <= ms; waited += 20) {
        pid_t r = waitpid(pid_, &wait_status_, WNOHANG);
        if (r == pid_ || r < 0) {
          reaped_ = true;
          break;
        }
        usleep(20'000);
      }
    };
    wait_ms(200);  // a well-behaved server exits when its stdin closes
    if (!reaped_) {
      kill(-pid_, SIGTERM);
      wait_ms(500);
    }
    if (!reaped_) {
      kill(-pid_, SIGKILL);
      waitpid(pid_, &wait_status_, 0);
      reaped_ = true;
    }
    kill(-pid_, SIGKILL);  // whatever the server left behind in its group
  }
  if (reader_.joinable()) reader_.join();
  if (stdout_fd_ >= 0) close(stdout_fd_);
  stdout_fd_ = -1;
}

}  // namespace codex::mcp
