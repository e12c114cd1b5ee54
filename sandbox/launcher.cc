#include "sandbox/launcher.h"

#include <linux/filter.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "sandbox/capabilities.h"
#include "sandbox/host_path.h"
#include "sandbox/landlock.h"
#include "sandbox/process.h"
#include "sandbox/sandbox_server.h"
#include "sandbox/seccomp_filter.h"

namespace codex::sandbox {
namespace {

std::mutex g_probe_mutex;
std::optional<BwrapAvailability> g_probe;     // guarded by g_probe_mutex
std::optional<std::string> g_bwrap_override;  // guarded by g_probe_mutex

bool IsExecutable(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

std::string FindBwrap() {
  if (IsExecutable("/usr/bin/bwrap")) return "/usr/bin/bwrap";
  WritableRootsSpec here;
  if (char* cwd = ::getcwd(nullptr, 0)) {
    here.workspace = cwd;
    ::free(cwd);
  }
  return FindHostProgram("bwrap", std::getenv("PATH"), ModelWritableRoots(here));
}

BwrapAvailability Probe(const std::string& bwrap) {
  BwrapAvailability out;
  out.path = bwrap;
  if (bwrap.empty()) {
    out.reason = "bubblewrap (bwrap) is not installed";
    return out;
  }
  SpawnOptions options;
  options.argv = {bwrap,
                  "--unshare-user",
                  "--unshare-pid",
                  "--unshare-net",
                  "--unshare-ipc",
                  "--die-with-parent",
                  "--ro-bind",
                  "/",
                  "/",
                  "--dev",
                  "/dev",
                  "--proc",
                  "/proc",
                  "--",
                  "true"};
  options.env.inherit = EnvInherit::kAll;
  options.timeout_ms = 10'000;
  options.kill_grace_ms = 100;
  auto r = RunProcess(options);
  if (!r.ok()) {
    out.reason = r.status().message();
  } else if (r->exit_code != 0) {
    std::string err = r->stderr_text.substr(0, r->stderr_text.find('\n'));
    out.reason = "bubblewrap cannot create namespaces here (" +
                 (err.empty() ? "exit " + std::to_string(r->exit_code) : err) + ")";
  } else {
    out.usable = true;
  }
  return out;
}

// --- The helper, inside the namespaces. ---

bool g_interactive = false;

void Forward(int sig) {
  // PID 1 of the namespace: -1 reaches every other process in it.
  int saved = errno;
  ::kill(-1, sig);
  errno = saved;
}

int g_report_fd = -1;

// Before the command runs: through the report pipe when there is one (the
// caller then gets "cannot apply the sandbox (...)"), else on stderr.
[[noreturn]] void HelperFail(const char* what, int err) {
  if (g_report_fd >= 0) internal::ReportConfineFailure(g_report_fd, err, what);
  std::fprintf(stderr, "error: cannot apply the sandbox (%s): %s\n", what, std::strerror(err));
  std::_Exit(1);
}

bool ParseFd(const char* text, int* out) {
  char* end = nullptr;
  errno = 0;
  long v = std::strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || v < -1 || v > 1 << 20) return false;
  *out = static_cast<int>(v);
  return true;
}

}  // namespace

int ApplyLayersFromFds(int ruleset_fd, int seccomp_fd, int seccomp_length, const char** what) {
  ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    *what = "no_new_privs";
    return errno;
  }
  if (ruleset_fd >= 0) {
    if (int err = landlock::RestrictSelf(ruleset_fd); err != 0) {
      *what = "landlock_restrict_self";
      return err;
    }
    ::close(ruleset_fd);
  }
  if (int err = DropAllCapabilities(); err != 0) {
    *what = "dropping capabilities";
    return err;
  }
  if (seccomp_fd < 0) return 0;
  std::vector<sock_filter> program(static_cast<size_t>(seccomp_length));
  const auto bytes = static_cast<ssize_t>(program.size() * sizeof(sock_filter));
  if (::pread(seccomp_fd, program.data(), static_cast<size_t>(bytes), 0) != bytes) {
    *what = "reading the seccomp filter";
    return errno != 0 ? errno : EIO;
  }
  ::close(seccomp_fd);
  if (int err = InstallSeccompFilter(program.data(), program.size()); err != 0) {
    *what = "seccomp";
    return err;
  }
  return 0;
}

// argv: exe kHelperArg mode ruleset seccomp length report -- command...
void RunHelper(int argc, char** argv) {
  int ruleset_fd = -1;
  int seccomp_fd = -1;
  int length = 0;
  int report_fd = -1;
  if (argc < 9 || std::strcmp(argv[7], "--") != 0 || !ParseFd(argv[3], &ruleset_fd) ||
      !ParseFd(argv[4], &seccomp_fd) || !ParseFd(argv[5], &length) ||
      !ParseFd(argv[6], &report_fd) || seccomp_fd < 0 || length <= 0) {
    std::fprintf(stderr, "error: %s is internal to the codex sandbox\n", kHelperArg);
    std::_Exit(2);
  }
  g_interactive = std::strcmp(argv[2], "interactive") == 0;
  g_report_fd = report_fd;

  // The command must not read or trace this process (it holds the report pipe).
  const char* what = nullptr;
  if (int err = ApplyLayersFromFds(ruleset_fd, seccomp_fd, length, &what); err != 0) {
    HelperFail(what, err);
  }

  struct sigaction forward;
  std::memset(&forward, 0, sizeof(forward));
  forward.sa_handler = Forward;
  sigemptyset(&forward.sa_mask);
  ::sigaction(SIGTERM, &forward, nullptr);
  ::sigaction(SIGHUP, &forward, nullptr);
  if (!g_interactive) {
    // On a terminal, Ctrl-C and Ctrl-\ reach the command's group directly.
    ::sigaction(SIGINT, &forward, nullptr);
    ::sigaction(SIGQUIT, &forward, nullptr);
  }

  SpawnOptions options;
  for (int i = 8; i < argc; ++i) options.argv.emplace_back(argv[i]);
  options.env.inherit = EnvInherit::kAll;
  options.env.secrets = SecretFilter::kKeep;  // filtered already by the parent

  pid_t child = ::fork();
  if (child < 0) HelperFail("fork", errno);
  if (child == 0) {
    if (!g_interactive) ::setsid();
    if (report_fd >= 0) internal::ExecInPlaceOrReport(options, report_fd);
    Status error = ExecInPlace(options);
    std::fprintf(stderr, "error: %s\n", error.message().c_str());
    std::_Exit(ExitCodeForStartError(error.code()));
  }
  if (report_fd >= 0) ::close(report_fd);
  g_report_fd = -1;
  for (;;) {
    int status = 0;
    pid_t pid = ::wait(&status);
    if (pid < 0 && errno == EINTR) continue;
    if (pid < 0) HelperFail("wait", errno);
    if (pid != child) continue;  // an orphan reparented to us
    // Exiting ends the PID namespace: the kernel kills what is left.
    if (WIFSIGNALED(status)) std::_Exit(128 + WTERMSIG(status));
    std::_Exit(WEXITSTATUS(status));
  }
}

namespace {

// glibc passes (argc, argv, envp) to ELF constructors; priority 101 runs this
// before the executable's own static initialisers.
__attribute__((constructor(101))) void EnterHelperIfAsked(int argc, char** argv, char**) {
  if (argc >= 2 && argv != nullptr && argv[1] != nullptr && std::strcmp(argv[1], kHelperArg) == 0) {
    RunHelper(argc, argv);
  }
  if (argc >= 2 && argv != nullptr && argv[1] != nullptr && std::strcmp(argv[1], kServerArg) == 0) {
    RunSandboxServer(argc, argv);
  }
}

}  // namespace

namespace {

// `name` in this program's directory, "" when /proc/self/exe cannot be read
// or names this program itself.
std::string PathBesideSelf(const std::string& name) {
  char buf[4096];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return "";
  std::string self(buf, static_cast<size_t>(n));
  size_t slash = self.find_last_of('/');
  if (slash == std::string::npos) return "";
  std::string beside = self.substr(0, slash + 1) + name;
  return beside == self ? "" : beside;
}

}  // namespace

std::string ExecutableBesideSelf(const std::string& name) {
  const std::string beside = PathBesideSelf(name);
  if (!beside.empty() && IsExecutable(beside)) return beside;
  return "/proc/self/exe";
}

std::string FileBesideSelf(const std::string& name) {
  const std::string beside = PathBesideSelf(name);
  if (beside.empty() || ::access(beside.c_str(), R_OK) != 0) return "";
  return beside;
}

std::string HelperExecutablePath() { return ExecutableBesideSelf(kHelperExecutable); }

BwrapAvailability ProbeBwrap() {
  std::lock_guard<std::mutex> lock(g_probe_mutex);
  if (g_bwrap_override) return Probe(*g_bwrap_override);
  if (!g_probe) {
    const char* chosen = std::getenv(kBwrapEnv);
    if (chosen == nullptr || *chosen == '\0') {
      g_probe = Probe(FindBwrap());
    } else if (IsExecutable(chosen)) {
      g_probe = Probe(chosen);
    } else {
      BwrapAvailability missing;
      missing.reason = std::string("bubblewrap (bwrap) not found at ") + kBwrapEnv + "=" + chosen;
      g_probe = missing;
    }
  }
  return *g_probe;
}

void TEST_SetBwrapOverride(std::optional<std::string> path) {
  std::lock_guard<std::mutex> lock(g_probe_mutex);
  g_bwrap_override = std::move(path);
}

std::vector<std::string> HelperArgv(int exe_fd, HelperMode mode, int ruleset_fd, int seccomp_fd,
                                    size_t seccomp_length, int report_fd,
                                    const std::vector<std::string>& argv) {
  std::vector<std::string> out = {"/proc/self/fd/" + std::to_string(exe_fd),
                                  kHelperArg,
                                  mode == HelperMode::kInteractive ? "interactive" : "captured",
                                  std::to_string(ruleset_fd),
                                  std::to_string(seccomp_fd),
                                  std::to_string(seccomp_length),
                                  std::to_string(report_fd),
                                  "--"};
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

}  // namespace codex::sandbox
