// The sandbox server's side (see sandbox_server.h): runs inside the sandbox,
// single-threaded, so its forked keepers may allocate.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "sandbox/landlock.h"
#include "sandbox/launcher.h"
#include "sandbox/process.h"
#include "sandbox/sandbox_server.h"
#include "sandbox/sandbox_server_protocol.h"

extern char** environ;

namespace codex::sandbox {
namespace {

namespace sp = server_protocol;

// The Landlock ruleset each keeper applies to itself (-1: the server is
// confined already, or Landlock is missing).
int g_ruleset_fd = -1;
// How long a keeper asked to end its command may take before it is killed.
constexpr int kKeeperGraceMs = 1'000;
pid_t g_server_pid = -1;

bool ParseInt(const char* text, long* out) {
  char* end = nullptr;
  errno = 0;
  long v = std::strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0') return false;
  *out = v;
  return true;
}

bool WriteAll(int fd, const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = ::write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

bool ReadAll(int fd, void* data, size_t size) {
  char* p = static_cast<char*>(data);
  while (size > 0) {
    ssize_t n = ::read(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

// Writes a status message; `pass_fd` (>= 0) travels with it (SCM_RIGHTS).
void SendStatus(int fd, sp::StatusType type, int value, const internal::ChildReport* report,
                int pass_fd = -1) {
  sp::StatusMessage m;
  m.type = static_cast<uint32_t>(type);
  m.value = value;
  if (report != nullptr) m.report = *report;
  if (pass_fd < 0) {
    (void)WriteAll(fd, &m, sizeof(m));
    return;
  }
  iovec iov{&m, sizeof(m)};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char cbuf[CMSG_SPACE(sizeof(int))];
  msg.msg_control = cbuf;
  msg.msg_controllen = sizeof(cbuf);
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &pass_fd, sizeof(int));
  while (::sendmsg(fd, &msg, MSG_NOSIGNAL) < 0 && errno == EINTR) {
  }
}

void FailStart(int status_fd, int err, const char* what) {
  internal::ChildReport r;
  r.stage = static_cast<int>(ChildStage::kSetup);
  r.err = err;
  std::snprintf(r.what, sizeof(r.what), "%s", what);
  SendStatus(status_fd, sp::StatusType::kStartFailed, 0, &r);
  std::_Exit(0);
}

// The pids of this process's children (the keeper is single-threaded).
std::vector<pid_t> Children() {
  std::vector<pid_t> out;
  const std::string path = "/proc/self/task/" + std::to_string(::getpid()) + "/children";
  FILE* f = std::fopen(path.c_str(), "re");
  if (f == nullptr) return out;
  long pid = 0;
  while (std::fscanf(f, "%ld", &pid) == 1) out.push_back(static_cast<pid_t>(pid));
  std::fclose(f);
  return out;
}

struct SpawnRequest {
  sp::RequestHeader header;
  int fds[4] = {-1, -1, -1, -1};  // stdin, stdout, stderr, status
  std::string cwd;
  std::vector<std::string> argv;
  std::vector<std::string> env;
};

// A pseudo-terminal of the sandbox's own /dev/pts (so that ttyname() and
// /dev/tty work for the command): the master, and the slave in fds[0..2].
int OpenPty(SpawnRequest* req) {
  const int status_fd = req->fds[3];
  int master = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (master < 0) FailStart(status_fd, errno, "posix_openpt");
  char name[128];
  if (::grantpt(master) != 0 || ::unlockpt(master) != 0 ||
      ::ptsname_r(master, name, sizeof(name)) != 0) {
    FailStart(status_fd, errno, "unlockpt");
  }
  winsize ws{};
  ws.ws_row = req->header.rows;
  ws.ws_col = req->header.cols;
  ::ioctl(master, TIOCSWINSZ, &ws);
  int slave = ::open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (slave < 0) FailStart(status_fd, errno, "open the terminal");
  for (int i = 0; i < 3; ++i) {
    ::close(req->fds[i]);
    req->fds[i] = i == 0 ? slave : ::fcntl(slave, F_DUPFD_CLOEXEC, 3);
  }
  return master;
}

// Kills every process below the keeper: each round SIGKILLs the current
// children, then reaps one; orphans are reparented to the keeper (a
// subreaper) before their parent can be reaped, so the next round sees them.
void KillTree(pid_t leader, int status_fd, bool* leader_done) {
  ::kill(-leader, SIGKILL);
  for (;;) {
    for (pid_t pid : Children()) ::kill(pid, SIGKILL);
    int status = 0;
    pid_t pid = ::waitpid(-1, &status, __WALL);
    if (pid < 0 && errno == EINTR) continue;
    if (pid < 0) break;  // ECHILD: nothing left
    if (pid == leader && !*leader_done) {
      *leader_done = true;
      SendStatus(status_fd, sp::StatusType::kExited, status, nullptr);
    }
  }
}

// One command: forks it, reports on the status pipe, waits for signals from
// the server; exits when nothing of the command is left.
[[noreturn]] void Keeper(SpawnRequest& req) {
  ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
  // The server gone (it never exits while commands run, unless killed):
  // end the command's tree too.
  ::prctl(PR_SET_PDEATHSIG, SIGUSR2, 0, 0, 0);
  const pid_t server = g_server_pid;
  if (::getppid() != server) std::_Exit(0);  // it died before PDEATHSIG was set
  const int status_fd = req.fds[3];
  const int master = (req.header.flags & sp::kFlagPty) != 0 ? OpenPty(&req) : -1;
  if (g_ruleset_fd >= 0) {
    if (int err = landlock::RestrictSelf(g_ruleset_fd); err != 0) {
      FailStart(status_fd, err, "landlock_restrict_self");
    }
    ::close(g_ruleset_fd);
  }
  // The command: started with vfork (internal::VforkCommand), so that this
  // keeper's memory is not copied for a process that execs at once.
  std::vector<char*> env;
  for (const std::string& e : req.env) env.push_back(const_cast<char*>(e.c_str()));
  env.push_back(nullptr);
  environ = env.data();
  SpawnOptions options;
  options.argv = req.argv;
  options.cwd = req.cwd;
  options.env.inherit = EnvInherit::kAll;
  options.env.secrets = SecretFilter::kKeep;  // the client built the environment
  internal::ChildReport r;
  const pid_t child = internal::VforkCommand(options, req.fds, master >= 0, &r);
  for (int i = 0; i < 3; ++i) ::close(req.fds[i]);
  if (child < 0) {
    SendStatus(status_fd, sp::StatusType::kStartFailed, 0, &r);
    std::_Exit(0);
  }
  SendStatus(status_fd, sp::StatusType::kStarted, child, nullptr, master);
  if (master >= 0) ::close(master);

  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGCHLD);
  sigaddset(&set, SIGUSR1);
  sigaddset(&set, SIGUSR2);
  bool leader_done = false;
  for (;;) {
    siginfo_t info;
    std::memset(&info, 0, sizeof(info));
    int sig = ::sigwaitinfo(&set, &info);
    if (sig < 0) continue;
    if (sig == SIGUSR2) {
      // From the server (end the command), or the parent-death signal: then
      // the command is ended without an exit status, so that the call sees
      // the server's death rather than a command killed by signal 9.
      bool server_gone = ::getppid() != server;
      if (server_gone) leader_done = true;
      KillTree(child, status_fd, &leader_done);
      std::_Exit(0);
    }
    if (sig == SIGUSR1) {
      // Only the server may ask (the command could send SIGUSR1 too: its
      // only power is over its own group, which it has anyway).
      ::kill(-child, info.si_value.sival_int);
      continue;
    }
    for (;;) {
      int status = 0;
      pid_t pid = ::waitpid(-1, &status, WNOHANG | __WALL);
      if (pid == 0) break;
      if (pid < 0) {
        if (errno == EINTR) continue;
        if (leader_done) std::_Exit(0);  // nothing of the command is left
        break;
      }
      if (pid == child && !leader_done) {
        leader_done = true;
        SendStatus(status_fd, sp::StatusType::kExited, status, nullptr);
      }
    }
  }
}

// Reads one request from `control`; false at end of file or on a malformed
// request (the client is codex itself: either means it is gone).
bool ReadRequest(int control, SpawnRequest* req) {
  char cbuf[CMSG_SPACE(sizeof(int) * 4)];
  iovec iov{&req->header, sizeof(req->header)};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = cbuf;
  msg.msg_controllen = sizeof(cbuf);
  ssize_t n;
  do {
    n = ::recvmsg(control, &msg, MSG_CMSG_CLOEXEC | MSG_WAITALL);
  } while (n < 0 && errno == EINTR);
  if (n != static_cast<ssize_t>(sizeof(req->header))) return false;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < count && i < 4; ++i) {
      std::memcpy(&req->fds[i], CMSG_DATA(c) + i * sizeof(int), sizeof(int));
    }
  }
  if (req->header.magic != sp::kMagic || req->header.payload > sp::kMaxPayload) return false;
  std::string payload(req->header.payload, '\0');
  if (!payload.empty() && !ReadAll(control, payload.data(), payload.size())) return false;
  if (req->header.type != static_cast<uint32_t>(sp::RequestType::kSpawn)) return true;
  std::vector<std::string> parts;
  size_t start = 0;
  while (start < payload.size()) {
    size_t nul = payload.find('\0', start);
    if (nul == std::string::npos) return false;
    parts.push_back(payload.substr(start, nul - start));
    start = nul + 1;
  }
  long argc = 0;
  if (parts.size() < 2 || !ParseInt(parts[1].c_str(), &argc) || argc < 1 ||
      static_cast<size_t>(argc) + 2 > parts.size()) {
    return false;
  }
  req->cwd = parts[0];
  req->argv.assign(parts.begin() + 2, parts.begin() + 2 + argc);
  req->env.assign(parts.begin() + 2 + argc, parts.end());
  for (int fd : req->fds) {
    if (fd < 0) return false;
  }
  return true;
}

void CloseFds(SpawnRequest* req) {
  for (int& fd : req->fds) {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
}

}  // namespace

// argv: exe kServerArg <ruleset fd> <seccomp fd> <seccomp length> <control fd>
void RunSandboxServer(int argc, char** argv) {
  long ruleset = -1, seccomp = -1, length = 0, control = -1;
  if (argc != 6 || !ParseInt(argv[2], &ruleset) || !ParseInt(argv[3], &seccomp) ||
      !ParseInt(argv[4], &length) || !ParseInt(argv[5], &control) || control < 0) {
    std::fprintf(stderr, "error: %s is internal to the codex sandbox\n", kServerArg);
    std::_Exit(2);
  }
  if (seccomp >= 0) {
    // Landlock is applied by each keeper before it forks its command, after
    // it opened the command's terminal: the sandbox's own /dev/pts is a new
    // mount that the ruleset (built from the host's paths) does not grant.
    if (ruleset >= 0) {
      g_ruleset_fd = static_cast<int>(ruleset);
      ::fcntl(g_ruleset_fd, F_SETFD, FD_CLOEXEC);
    }
    const char* what = nullptr;
    if (int err =
            ApplyLayersFromFds(-1, static_cast<int>(seccomp), static_cast<int>(length), &what);
        err != 0) {
      std::fprintf(stderr, "cannot apply the sandbox (%s): %s\n", what, std::strerror(err));
      std::_Exit(1);
    }
  }
  ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
  g_server_pid = ::getpid();
  const int fd = static_cast<int>(control);
  ::fcntl(fd, F_SETFD, FD_CLOEXEC);
  struct sigaction ignore;
  std::memset(&ignore, 0, sizeof(ignore));
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &ignore, nullptr);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGCHLD);
  sigaddset(&set, SIGUSR1);
  sigaddset(&set, SIGUSR2);
  ::sigprocmask(SIG_BLOCK, &set, nullptr);
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  const int sfd = ::signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sfd < 0) {
    std::fprintf(stderr, "cannot start the sandbox server (signalfd): %s\n", std::strerror(errno));
    std::_Exit(1);
  }
  if (!WriteAll(fd, &sp::kReady, 1)) std::_Exit(1);

  std::map<uint64_t, pid_t> keepers;
  auto is_keeper = [&](pid_t pid) {
    for (const auto& [id, keeper] : keepers) {
      if (keeper == pid) return true;
    }
    return false;
  };
  // Reaps what ended, then kills every child that is no keeper: the
  // server's only children are keepers, unless a keeper died before its
  // command (a command of the session can SIGKILL its keeper, its parent):
  // then what it ran was reparented here (PID 1, or a subreaper without
  // namespaces) and nothing would ever end it, not even the session's end.
  // Their own children come here as they die, and go the same way.
  auto reap = [&] {
    for (;;) {
      for (;;) {
        int status = 0;
        pid_t pid = ::waitpid(-1, &status, WNOHANG | WUNTRACED | __WALL);
        if (pid <= 0) break;
        if (WIFSTOPPED(status)) {
          // A command stopped its keeper (its parent, in its Landlock
          // domain): it goes on at once, so that it reports the start and
          // ends the command when asked (found: a keeper stopped before its
          // start report held the call for as long as Spawn waits).
          if (is_keeper(pid)) ::kill(pid, SIGCONT);
          continue;
        }
        for (auto it = keepers.begin(); it != keepers.end(); ++it) {
          if (it->second == pid) {
            keepers.erase(it);
            break;
          }
        }
      }
      bool killed = false;
      for (pid_t pid : Children()) {
        if (!is_keeper(pid)) killed = ::kill(pid, SIGKILL) == 0 || killed;
      }
      if (!killed) break;
      // Wait for one of them, so that the next round sees its orphans.
      int status = 0;
      pid_t pid;
      do {
        pid = ::waitpid(-1, &status, __WALL);
      } while (pid < 0 && errno == EINTR);
      if (pid < 0) break;
      for (auto it = keepers.begin(); it != keepers.end(); ++it) {
        if (it->second == pid) {
          keepers.erase(it);
          break;
        }
      }
    }
  };
  // Keepers asked to end their command, and when they are killed if they
  // have not by then: a command can stop its keeper (SIGSTOP, again after
  // each SIGCONT), and the call that waits for its end must not wait for
  // ever. Killed, the keeper leaves its command to reap() above.
  std::map<uint64_t, std::chrono::steady_clock::time_point> kill_by;  // by command id
  for (;;) {
    int timeout_ms = -1;
    const auto now = std::chrono::steady_clock::now();
    for (auto it = kill_by.begin(); it != kill_by.end();) {
      const auto keeper = keepers.find(it->first);
      if (keeper == keepers.end()) {  // reaped: done
        it = kill_by.erase(it);
        continue;
      }
      if (it->second <= now) {
        ::kill(keeper->second, SIGKILL);
        it = kill_by.erase(it);
        continue;
      }
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(it->second - now).count() + 1;
      if (timeout_ms < 0 || left < timeout_ms) timeout_ms = static_cast<int>(left);
      ++it;
    }
    pollfd fds[2] = {{fd, POLLIN, 0}, {sfd, POLLIN, 0}};
    if (::poll(fds, 2, timeout_ms) <= 0) continue;
    if (fds[1].revents != 0) {
      signalfd_siginfo info;
      while (::read(sfd, &info, sizeof(info)) > 0) {
      }
      reap();
    }
    if (fds[0].revents == 0) continue;
    SpawnRequest req;
    if (!ReadRequest(fd, &req)) {
      // codex closed the channel (or died): end every command, then exit.
      // Each round kills every child left (a keeper, or what a killed or
      // stopped keeper left behind) and reaps one; orphans come here, so
      // the next round sees them. Waiting for the keepers alone hung here
      // for ever once a command had killed its keeper, and kept the whole
      // sandbox (and, without namespaces, those processes) after codex.
      CloseFds(&req);
      // Each keeper is told first, as before: it ends its command's whole
      // tree itself, which is all that happens on a kernel without
      // /proc/PID/task/TID/children (Children() then finds nothing).
      for (const auto& [id, keeper] : keepers) ::kill(keeper, SIGUSR2);
      for (;;) {
        for (pid_t pid : Children()) ::kill(pid, SIGKILL);
        pid_t pid = ::waitpid(-1, nullptr, __WALL);
        if (pid < 0 && errno == EINTR) continue;
        if (pid < 0) break;  // ECHILD: nothing left
      }
      std::_Exit(0);
    }
    if (req.header.type == static_cast<uint32_t>(sp::RequestType::kSignal)) {
      auto it = keepers.find(req.header.id);
      if (it != keepers.end()) {
        if (req.header.sig == SIGKILL) {
          ::kill(it->second, SIGUSR2);
          ::kill(it->second, SIGCONT);  // a keeper its command stopped
          kill_by.emplace(it->first, std::chrono::steady_clock::now() +
                                         std::chrono::milliseconds(kKeeperGraceMs));
        } else {
          sigval value;
          value.sival_int = req.header.sig;
          ::sigqueue(it->second, SIGUSR1, value);
        }
      }
      CloseFds(&req);
      continue;
    }
    const pid_t keeper = ::fork();
    if (keeper == 0) {
      ::close(fd);
      ::close(sfd);
      Keeper(req);
    }
    if (keeper > 0) {
      keepers[req.header.id] = keeper;
    } else {
      internal::ChildReport r;
      r.stage = static_cast<int>(ChildStage::kSetup);
      r.err = errno;
      std::snprintf(r.what, sizeof(r.what), "fork");
      SendStatus(req.fds[3], sp::StatusType::kStartFailed, 0, &r);
    }
    CloseFds(&req);
  }
}

}  // namespace codex::sandbox
