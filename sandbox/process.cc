#include "sandbox/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "sandbox/output_buffer.h"

namespace codex::sandbox {
namespace {

constexpr const char* kDefaultPath = "/usr/local/bin:/usr/bin:/bin";
constexpr int64_t kPollSliceMs = 100;           // cancellation latency bound
constexpr int64_t kPipeGraceAfterExitMs = 250;  // output from lingering children
constexpr int64_t kCancelGraceMs = 200;         // SIGTERM -> SIGKILL after a cancel
constexpr int64_t kFinalDrainMs = 100;          // after the group was killed
constexpr int64_t kAwaitDescendantsMs = 2'000;  // for a killed launcher's children

using internal::ChildReport;
using internal::kCloseRangeCloexec;
using internal::MakePipe;
using internal::Pipe;
using internal::SetNonBlocking;

// Everything the child needs, prepared by the parent (the child allocates nothing).
struct ChildPlan {
  char* const* argv = nullptr;
  char* const* envp = nullptr;
  const char* const* candidates = nullptr;
  size_t candidate_count = 0;
  const char* cwd = nullptr;  // nullptr = stay
  bool new_group = true;
  bool redirect_stdio = true;
  int stdio[3] = {-1, -1, -1};
  int error_fd = -1;
  bool pass_error_fd = false;    // the exec'd launcher reports for the command
  bool controlling_tty = false;  // stdin (a terminal) becomes the session's
  const ChildSetup* setup = nullptr;
};

using Clock = std::chrono::steady_clock;

int64_t MsSince(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
}

// --- Child side: async-signal-safe only. ---

void CopyWhat(ChildReport* report, const char* what) {
  if (what == nullptr) return;
  size_t i = 0;
  for (; i + 1 < sizeof(report->what) && what[i] != '\0'; ++i) report->what[i] = what[i];
  report->what[i] = '\0';
}

void Fail(ChildReport* report, ChildStage stage, int err, const char* what) {
  report->stage = static_cast<int>(stage);
  report->err = err;
  CopyWhat(report, what);
}

[[noreturn]] void WriteReportAndExit(int error_fd, const ChildReport& report) {
  const char* p = reinterpret_cast<const char*>(&report);
  size_t left = sizeof(report);
  while (left > 0) {
    ssize_t n = ::write(error_fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    p += n;
    left -= static_cast<size_t>(n);
  }
  ::_exit(127);
}

// Marks every descriptor from 3 up close-on-exec (the error pipe and the
// Landlock ruleset must survive until execve, so they are not closed here).
void CloexecFrom3() {
  if (::syscall(SYS_close_range, 3U, ~0U, kCloseRangeCloexec) == 0) return;
  long max_fd = ::sysconf(_SC_OPEN_MAX);
  if (max_fd < 0 || max_fd > 65536) max_fd = 65536;
  for (int fd = 3; fd < max_fd; ++fd) {
    int flags = ::fcntl(fd, F_GETFD);
    if (flags >= 0) ::fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
  }
}

// Prepares the process and execs; returns only on failure, with `report` set.
void ChildRun(const ChildPlan& plan, ChildReport* report) noexcept {
  // A new session is also a new process group, and leaves the controlling
  // terminal behind: the command cannot open /dev/tty to reach the user.
  if (plan.new_group && ::setsid() < 0) {
    Fail(report, ChildStage::kSetup, errno, "setsid");
    return;
  }

  // Ignored signals survive execve; the command must start with defaults.
  struct sigaction dfl;
  std::memset(&dfl, 0, sizeof(dfl));
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig == SIGKILL || sig == SIGSTOP) continue;
    ::sigaction(sig, &dfl, nullptr);
  }
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);

  if (plan.redirect_stdio) {
    int src[3];
    for (int i = 0; i < 3; ++i) {
      src[i] = plan.stdio[i];
      // Move sources out of 0..2 first so one dup2 cannot clobber another.
      if (src[i] < 3) {
        src[i] = ::fcntl(src[i], F_DUPFD_CLOEXEC, 3);
        if (src[i] < 0) {
          Fail(report, ChildStage::kSetup, errno, "fcntl(F_DUPFD)");
          return;
        }
      }
    }
    for (int i = 0; i < 3; ++i) {
      if (::dup2(src[i], i) < 0) {
        Fail(report, ChildStage::kSetup, errno, "dup2");
        return;
      }
    }
  }
  if (plan.controlling_tty && ::ioctl(0, TIOCSCTTY, 0) != 0) {
    Fail(report, ChildStage::kSetup, errno, "ioctl(TIOCSCTTY)");
    return;
  }
  if (plan.cwd != nullptr && ::chdir(plan.cwd) != 0) {
    Fail(report, ChildStage::kChdir, errno, "chdir");
    return;
  }
  CloexecFrom3();
  if (plan.pass_error_fd && ::fcntl(plan.error_fd, F_SETFD, 0) != 0) {
    Fail(report, ChildStage::kSetup, errno, "fcntl(F_SETFD)");
    return;
  }

  if (plan.setup != nullptr) {
    const char* what = nullptr;
    int err = plan.setup->ApplyInChild(&what);
    if (err != 0) {
      Fail(report, ChildStage::kConfine, err, what);
      return;
    }
  }

  // execvp semantics: ENOENT/ENOTDIR/EACCES move on to the next candidate;
  // EACCES is reported if nothing better was found.
  int saved = ENOENT;
  for (size_t i = 0; i < plan.candidate_count; ++i) {
    ::execve(plan.candidates[i], plan.argv, plan.envp);
    int err = errno;
    if (err == EACCES) {
      saved = EACCES;
    } else if (err != ENOENT && err != ENOTDIR) {
      saved = err;
      break;
    }
  }
  Fail(report, ChildStage::kExec, saved, "execve");
}

[[noreturn]] void ChildMain(const ChildPlan& plan) noexcept {
  ChildReport report;
  ChildRun(plan, &report);
  WriteReportAndExit(plan.error_fd, report);
}

// --- Parent side. ---

// Owns the strings and pointer arrays a ChildPlan points into.
struct ExecStrings {
  std::vector<std::string> env;
  std::vector<std::string> candidates;
  std::vector<char*> argv_ptrs;
  std::vector<char*> env_ptrs;
  std::vector<const char*> candidate_ptrs;

  // `argv_copy` is options.argv, or the launcher's argv when the child setup
  // has one (then it is exec'd by its absolute path).
  ExecStrings(const SpawnOptions& options, std::vector<std::string>& argv_copy, bool launcher) {
    env = BuildEnvironment(options.env, CurrentEnvironment());
    if (launcher) {
      candidates = {argv_copy[0]};
    } else {
      candidates = ExecCandidates(argv_copy[0], LookupEnv(env, "PATH", kDefaultPath));
    }
    for (std::string& a : argv_copy) argv_ptrs.push_back(a.data());
    argv_ptrs.push_back(nullptr);
    for (std::string& e : env) env_ptrs.push_back(e.data());
    env_ptrs.push_back(nullptr);
    for (const std::string& c : candidates) candidate_ptrs.push_back(c.c_str());
  }

  // A plan for these strings (which must outlive it); the rest as defaults.
  ChildPlan Plan() {
    ChildPlan plan;
    plan.argv = argv_ptrs.data();
    plan.envp = env_ptrs.data();
    plan.candidates = candidate_ptrs.data();
    plan.candidate_count = candidate_ptrs.size();
    return plan;
  }
};

}  // namespace

Status internal::StartError(const ChildReport& report, const SpawnOptions& options) {
  const std::string& program = options.argv[0];
  const std::string detail = report.what[0] != '\0' ? std::string(report.what) : std::string();
  switch (static_cast<ChildStage>(report.stage)) {
    case ChildStage::kChdir:
      return Status(
          StatusCode::kInvalidArgument,
          ErrnoMessage("cannot change to working directory '" + options.cwd + "'", report.err) +
              "; pass an existing directory");
    case ChildStage::kConfine:
      return Status(report.err == ENOSYS || report.err == EOPNOTSUPP
                        ? StatusCode::kFailedPrecondition
                        : StatusCode::kInternal,
                    ErrnoMessage("cannot apply the sandbox (" + detail + ")", report.err));
    case ChildStage::kExec:
      if (report.err == ENOENT || report.err == ENOTDIR) {
        if (program.find('/') == std::string::npos) {
          return Status(StatusCode::kNotFound,
                        "cannot run '" + program + "': command not found in PATH");
        }
        return Status(StatusCode::kNotFound, "cannot run '" + program + "': no such file");
      }
      if (report.err == EACCES) {
        return Status(StatusCode::kPermissionDenied,
                      "cannot run '" + program + "': permission denied (not executable?)");
      }
      return Status(StatusCode::kInternal,
                    ErrnoMessage("cannot run '" + program + "'", report.err));
    case ChildStage::kSetup:
    default:
      return Status(StatusCode::kInternal,
                    ErrnoMessage("cannot start '" + program + "' (" + detail + ")", report.err));
  }
}

namespace {

Result<UniqueFd> OpenDevNull() {
  int fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status(StatusCode::kInternal, ErrnoMessage("open /dev/null", errno));
  return UniqueFd(fd);
}

// Reads the child's report; false when the pipe closed empty (exec succeeded).
bool ReadReport(int fd, ChildReport* report) {
  char* p = reinterpret_cast<char*>(report);
  size_t got = 0;
  while (got < sizeof(*report)) {
    ssize_t n = ::read(fd, p + got, sizeof(*report) - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  return got == sizeof(*report);
}

// Forks and runs ChildMain; returns the pid once execve succeeded (of the
// command, or of the launcher and then the command: the pipe closes only when
// every holder exec'd or exited). By then the child's session exists, so its
// group can be signalled.
Result<pid_t> ForkExec(const SpawnOptions& options, ChildPlan plan, Pipe report_pipe) {
  plan.error_fd = report_pipe.write.get();
  pid_t pid = ::fork();
  if (pid < 0) return Status(StatusCode::kInternal, ErrnoMessage("fork", errno));
  if (pid == 0) ChildMain(plan);
  report_pipe.write.Reset();
  ChildReport report;
  if (ReadReport(report_pipe.read.get(), &report)) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return internal::StartError(report, options);
  }
  return pid;
}

// The three bounded captures of one run (see output_buffer.h): each keeps
// the first half of the cap and a ring of the last half.
struct Captures {
  explicit Captures(size_t cap)
      : out(cap / 2, cap - cap / 2), err(cap / 2, cap - cap / 2), both(cap / 2, cap - cap / 2) {}
  HeadTailBuffer out;
  HeadTailBuffer err;
  HeadTailBuffer both;  // interleaved in arrival order

  void MoveInto(ProcessResult* result) const {
    result->stdout_text = out.head() + out.tail();
    result->stdout_dropped = out.omitted_bytes();
    result->stderr_text = err.head() + err.tail();
    result->stderr_dropped = err.omitted_bytes();
    result->output = both.head() + both.tail();
    result->output_dropped = both.omitted_bytes();
    result->output_dropped_lines = both.omitted_lines();
    result->output_gap_offset = both.head().size();
  }
};

// Reads what is available on `fd` into `stream` and `captures->both`,
// handing each chunk to `on_output` (may be empty); returns false at EOF or
// on error.
bool Drain(int fd, HeadTailBuffer* stream, Captures* captures,
           const std::function<void(std::string_view)>& on_output) {
  std::array<char, 65536> buf;
  for (;;) {
    ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n > 0) {
      const std::string_view chunk(buf.data(), static_cast<size_t>(n));
      if (on_output) on_output(chunk);
      stream->Append(chunk);
      captures->both.Append(chunk);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    return false;  // EOF or a real error: stop reading this pipe
  }
}

// Adds pidfds for the direct children of `leader` (from /proc; nothing when
// the kernel lacks CONFIG_PROC_CHILDREN). Taken before the group is killed:
// a launcher's child (the sandbox's PID 1) outlives the leader by the time
// the kernel needs to kill what is left in its namespace.
void AddDirectChildren(pid_t leader, std::vector<UniqueFd>* out) {
  const std::string path =
      "/proc/" + std::to_string(leader) + "/task/" + std::to_string(leader) + "/children";
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return;
  std::array<char, 512> buf;
  ssize_t n = ::read(fd.get(), buf.data(), buf.size() - 1);
  if (n <= 0) return;
  std::string_view text(buf.data(), static_cast<size_t>(n));
  while (!text.empty()) {
    size_t space = text.find(' ');
    std::string word(text.substr(0, space));
    text = space == std::string_view::npos ? std::string_view() : text.substr(space + 1);
    char* end = nullptr;
    long pid = std::strtol(word.c_str(), &end, 10);
    if (pid <= 0 || end == word.c_str()) continue;
    UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, static_cast<pid_t>(pid), 0)));
    if (pidfd) out->push_back(std::move(pidfd));
  }
}

// Waits (bounded) until every process behind `pidfds` has exited, so that
// RunProcess returns only when nothing of the command is left.
void AwaitExits(const std::vector<UniqueFd>& pidfds) {
  const auto start = Clock::now();
  for (const UniqueFd& fd : pidfds) {
    pollfd p{fd.get(), POLLIN, 0};
    int64_t left = kAwaitDescendantsMs - MsSince(start);
    if (left <= 0) break;
    while (::poll(&p, 1, static_cast<int>(left)) < 0 && errno == EINTR) {
    }
  }
}

}  // namespace

namespace internal {

Result<Pipe> MakePipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    return Status(StatusCode::kInternal, ErrnoMessage("pipe", errno));
  }
  return Pipe{UniqueFd(fds[0]), UniqueFd(fds[1])};
}

void SetNonBlocking(int fd) {
  int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

}  // namespace internal

std::string ErrnoMessage(const std::string& what, int err) {
  return what + ": " + std::strerror(err);
}

std::vector<std::string> ExecCandidates(const std::string& program, const std::string& path_var) {
  if (program.find('/') != std::string::npos) return {program};
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    size_t colon = path_var.find(':', start);
    std::string_view dir = std::string_view(path_var).substr(
        start, colon == std::string::npos ? std::string::npos : colon - start);
    std::string candidate(dir.empty() ? std::string_view(".") : dir);
    candidate += '/';
    candidate += program;
    out.push_back(std::move(candidate));
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  return out;
}

// --- ChildProcess ---

Result<ChildProcess> ChildProcess::Spawn(const SpawnOptions& options) {
  if (options.argv.empty() || options.argv[0].empty()) {
    return Status(StatusCode::kInvalidArgument, "no command given: argv is empty");
  }
  ASSIGN_OR_RETURN(Pipe report_pipe, MakePipe());
  std::vector<std::string> argv_copy = options.argv;
  bool launcher = false;
  if (options.child_setup != nullptr) {
    std::vector<std::string> launch =
        options.child_setup->LaunchArgv(options.argv, report_pipe.write.get());
    if (!launch.empty()) {
      argv_copy = std::move(launch);
      launcher = true;
    }
  }
  ExecStrings strings(options, argv_copy, launcher);
  ASSIGN_OR_RETURN(UniqueFd dev_null, OpenDevNull());
  ASSIGN_OR_RETURN(Pipe out, MakePipe());
  ASSIGN_OR_RETURN(Pipe err, MakePipe());

  ChildPlan plan = strings.Plan();
  plan.cwd = options.cwd.empty() ? nullptr : options.cwd.c_str();
  plan.stdio[0] = dev_null.get();
  plan.stdio[1] = out.write.get();
  plan.stdio[2] = err.write.get();
  plan.setup = options.child_setup;
  plan.pass_error_fd = launcher;
  ASSIGN_OR_RETURN(pid_t pid, ForkExec(options, plan, std::move(report_pipe)));

  UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  SetNonBlocking(out.read.get());
  SetNonBlocking(err.read.get());
  return ChildProcess(pid, std::move(pidfd), std::move(out.read), std::move(err.read));
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      pidfd_(std::move(other.pidfd_)),
      stdout_(std::move(other.stdout_)),
      stderr_(std::move(other.stderr_)) {}

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
  if (this != &other) {
    if (pid_ > 0) {
      SignalGroup(SIGKILL);
      Reap();
    }
    pid_ = std::exchange(other.pid_, -1);
    pidfd_ = std::move(other.pidfd_);
    stdout_ = std::move(other.stdout_);
    stderr_ = std::move(other.stderr_);
  }
  return *this;
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0) {
    SignalGroup(SIGKILL);
    Reap();
  }
}

void ChildProcess::SignalGroup(int sig) const {
  if (pid_ > 0) ::kill(-pid_, sig);
}

bool ChildProcess::HasExited() const {
  if (pid_ <= 0) return true;
  siginfo_t info;
  std::memset(&info, 0, sizeof(info));
  if (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) != 0) {
    return errno == ECHILD;
  }
  return info.si_pid == pid_;
}

int ChildProcess::Reap() {
  int status = 0;
  if (pid_ <= 0) return status;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
  pidfd_.Reset();
  return status;
}

// --- RunProcess ---

namespace {

// A local ChildProcess as Supervise sees it.
class LocalChild final : public internal::Supervised {
 public:
  LocalChild(ChildProcess child, bool launched) : child_(std::move(child)), launched_(launched) {}
  int stdout_fd() const override { return child_.stdout_fd(); }
  int stderr_fd() const override { return child_.stderr_fd(); }
  int exit_fd() const override { return child_.exit_fd(); }
  bool HasExited() override { return child_.HasExited(); }
  void CloseStdout() override { child_.CloseStdout(); }
  void CloseStderr() override { child_.CloseStderr(); }
  void SignalGroup(int sig) override { child_.SignalGroup(sig); }
  void KillAll() override {
    // The leader is not reaped yet, so the group id cannot have been reused.
    if (launched_) AddDirectChildren(child_.pid(), &descendants_);
    child_.SignalGroup(SIGKILL);
  }
  Result<int> Reap() override {
    const int status = child_.Reap();
    AwaitExits(descendants_);
    return status;
  }

 private:
  ChildProcess child_;
  bool launched_;                      // started through a launcher (the sandbox)
  std::vector<UniqueFd> descendants_;  // pidfds of the leader's children, see AwaitExits
};

}  // namespace

Result<ProcessResult> RunProcess(const SpawnOptions& options) {
  const auto start = Clock::now();
  if (options.should_cancel && options.should_cancel()) {
    return Status(StatusCode::kCancelled, "the command was cancelled before it started");
  }
  ASSIGN_OR_RETURN(ChildProcess child, ChildProcess::Spawn(options));
  LocalChild local(std::move(child), options.child_setup != nullptr);
  return internal::Supervise(local, options, start);
}

namespace internal {

Result<ProcessResult> Supervise(Supervised& child, const SpawnOptions& options,
                                std::chrono::steady_clock::time_point start) {
  ProcessResult result;
  Captures captures(options.output_cap_bytes);
  bool out_open = child.stdout_fd() >= 0;
  bool err_open = child.stderr_fd() >= 0;
  bool exited = false;
  bool term_sent = false;
  bool kill_sent = false;
  bool cancelled = false;
  Clock::time_point exit_time{};
  Clock::time_point kill_time{};
  const bool has_deadline = options.timeout_ms > 0;
  const auto deadline = start + std::chrono::milliseconds(options.timeout_ms);

  for (;;) {
    if (!exited && child.HasExited()) {
      exited = true;
      exit_time = Clock::now();
    }
    if (exited && !out_open && !err_open) break;
    if (exited && MsSince(exit_time) >= kPipeGraceAfterExitMs) break;
    // A cancel ends the command as a timeout does, SIGTERM first, with a
    // shorter grace: its EXIT traps run (a login script's lock file is
    // removed, not left to stall every later shell).
    if (cancelled && (exited || kill_sent)) break;
    if (!cancelled && options.should_cancel && options.should_cancel()) {
      cancelled = true;
      if (exited) break;
      const auto grace =
          std::min<int64_t>(std::max<int64_t>(options.kill_grace_ms, 0), kCancelGraceMs);
      if (!term_sent) {
        term_sent = true;
        kill_time = Clock::now() + std::chrono::milliseconds(grace);
        child.SignalGroup(SIGTERM);
        child.SignalGroup(SIGCONT);
      } else {
        kill_time = std::min(kill_time, Clock::now() + std::chrono::milliseconds(grace));
      }
    }
    const auto now = Clock::now();
    if (has_deadline && !term_sent && now >= deadline) {
      result.timed_out = true;
      term_sent = true;
      kill_time = now + std::chrono::milliseconds(std::max<int64_t>(options.kill_grace_ms, 0));
      child.SignalGroup(SIGTERM);
      // A stopped process cannot act on SIGTERM until it is continued.
      child.SignalGroup(SIGCONT);
    }
    if (term_sent && !kill_sent && Clock::now() >= kill_time) {
      kill_sent = true;
      child.KillAll();
    }

    int64_t wait_ms = kPollSliceMs;
    auto until = [&](Clock::time_point t) {
      auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(t - Clock::now()).count();
      wait_ms = std::clamp<int64_t>(ms + 1, 0, wait_ms);
    };
    if (has_deadline && !term_sent) until(deadline);
    if (term_sent && !kill_sent) until(kill_time);
    if (exited) until(exit_time + std::chrono::milliseconds(kPipeGraceAfterExitMs));

    std::array<pollfd, 4> fds{};
    nfds_t n = 0;
    int out_index = -1;
    int err_index = -1;
    if (out_open) {
      out_index = static_cast<int>(n);
      fds[n++] = {child.stdout_fd(), POLLIN, 0};
    }
    if (err_open) {
      err_index = static_cast<int>(n);
      fds[n++] = {child.stderr_fd(), POLLIN, 0};
    }
    bool poll_exit = !exited && child.exit_fd() >= 0;
    if (poll_exit) fds[n++] = {child.exit_fd(), POLLIN, 0};
    // Readable once the caller cancels: the loop's next turn sees should_cancel.
    if (options.cancel_fd >= 0 && !cancelled) fds[n++] = {options.cancel_fd, POLLIN, 0};
    if (!poll_exit && !exited) {
      // Without a pidfd the exit is only noticed by polling waitid.
      wait_ms = std::min<int64_t>(wait_ms, 10);
    }
    int ready = ::poll(fds.data(), n, static_cast<int>(wait_ms));
    if (ready < 0 && errno != EINTR) {
      return Status(StatusCode::kInternal, ErrnoMessage("poll", errno));
    }
    if (ready <= 0) continue;
    if (out_index >= 0 && fds[static_cast<size_t>(out_index)].revents != 0) {
      out_open = Drain(child.stdout_fd(), &captures.out, &captures, options.on_output);
      if (!out_open) child.CloseStdout();
    }
    if (err_index >= 0 && fds[static_cast<size_t>(err_index)].revents != 0) {
      err_open = Drain(child.stderr_fd(), &captures.err, &captures, options.on_output);
      if (!err_open) child.CloseStderr();
    }
  }

  // Nothing of the command may outlive it.
  child.KillAll();
  if (cancelled) {
    (void)child.Reap();
    return Status(StatusCode::kCancelled, "the command was cancelled");
  }
  const auto drain_start = Clock::now();
  while ((out_open || err_open) && MsSince(drain_start) < kFinalDrainMs) {
    std::array<pollfd, 2> fds{};
    nfds_t n = 0;
    if (out_open) fds[n++] = {child.stdout_fd(), POLLIN, 0};
    if (err_open) fds[n++] = {child.stderr_fd(), POLLIN, 0};
    if (::poll(fds.data(), n, 10) <= 0) continue;
    if (out_open) {
      out_open = Drain(child.stdout_fd(), &captures.out, &captures, options.on_output);
    }
    if (err_open) {
      err_open = Drain(child.stderr_fd(), &captures.err, &captures, options.on_output);
    }
  }
  ASSIGN_OR_RETURN(const int status, child.Reap());
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
    result.exit_code = 128 + result.signal;
  }
  if (result.timed_out) result.exit_code = kTimeoutExitCode;
  captures.MoveInto(&result);
  result.wall_ms = MsSince(start);
  return result;
}

}  // namespace internal

Status ExecInPlace(const SpawnOptions& options) {
  if (options.argv.empty() || options.argv[0].empty()) {
    return Status(StatusCode::kInvalidArgument, "no command given: argv is empty");
  }
  std::vector<std::string> argv_copy = options.argv;
  bool launcher = false;
  if (options.child_setup != nullptr) {
    std::vector<std::string> launch = options.child_setup->LaunchArgv(options.argv, -1);
    if (!launch.empty()) {
      argv_copy = std::move(launch);
      launcher = true;
    }
  }
  ExecStrings strings(options, argv_copy, launcher);
  ChildPlan plan = strings.Plan();
  plan.cwd = options.cwd.empty() ? nullptr : options.cwd.c_str();
  plan.new_group = false;
  plan.redirect_stdio = false;
  plan.setup = options.child_setup;
  ChildReport report;
  ChildRun(plan, &report);
  return internal::StartError(report, options);
}

int ExitCodeForStartError(StatusCode code) {
  switch (code) {
    case StatusCode::kNotFound:
      return 127;
    case StatusCode::kPermissionDenied:
      return 126;
    case StatusCode::kInvalidArgument:
      return 2;
    default:
      return 1;
  }
}

namespace internal {

void ExecInPlaceOrReport(const SpawnOptions& options, int report_fd) {
  std::vector<std::string> argv_copy = options.argv;
  if (argv_copy.empty()) argv_copy.push_back("");
  ExecStrings strings(options, argv_copy, false);
  ChildPlan plan = strings.Plan();
  plan.new_group = false;
  plan.redirect_stdio = false;
  plan.error_fd = report_fd;
  ChildReport report;
  ChildRun(plan, &report);
  WriteReportAndExit(report_fd, report);
}

pid_t VforkCommand(const SpawnOptions& options, const int stdio[3], bool controlling_tty,
                   ChildReport* report) {
  std::vector<std::string> argv_copy = options.argv;
  if (argv_copy.empty()) argv_copy.push_back("");
  ExecStrings strings(options, argv_copy, false);
  ChildPlan plan = strings.Plan();
  plan.cwd = options.cwd.empty() ? nullptr : options.cwd.c_str();
  plan.new_group = true;
  plan.redirect_stdio = true;
  for (int i = 0; i < 3; ++i) plan.stdio[i] = stdio[i];
  plan.controlling_tty = controlling_tty;
  // A failure comes back on a close-on-exec pipe (end of file: the command
  // runs), which does not depend on the child sharing this memory (a runtime
  // may turn vfork into fork). The child has its own descriptor table, signal
  // handlers and mask and allocates nothing (ChildRun); this process sleeps
  // until it has exec'd or exited.
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    Fail(report, ChildStage::kSetup, errno, "pipe");
    return -1;
  }
  const pid_t pid = ::vfork();
  if (pid == 0) {
    ChildReport failed;
    ChildRun(plan, &failed);
    WriteReportAndExit(fds[1], failed);
  }
  const int vfork_errno = errno;
  ::close(fds[1]);
  if (pid < 0) {
    ::close(fds[0]);
    Fail(report, ChildStage::kSetup, vfork_errno, "vfork");
    return -1;
  }
  ChildReport failed;
  size_t got = 0;
  while (got < sizeof(failed)) {
    const ssize_t n = ::read(fds[0], reinterpret_cast<char*>(&failed) + got, sizeof(failed) - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  ::close(fds[0]);
  if (got == sizeof(failed)) {
    *report = failed;
    while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    return -1;
  }
  return pid;
}

void ReportConfineFailure(int report_fd, int err, const char* what) {
  ChildReport report;
  Fail(&report, ChildStage::kConfine, err, what);
  WriteReportAndExit(report_fd, report);
}

}  // namespace internal

}  // namespace codex::sandbox
