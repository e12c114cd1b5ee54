#include "sandbox/confinement.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "sandbox/capabilities.h"
#include "sandbox/landlock.h"

namespace codex::sandbox {
namespace {

namespace ll = landlock;

constexpr uint64_t kReadRights = ll::kExecute | ll::kReadFile | ll::kReadDir;
constexpr uint64_t kDeviceRights = ll::kWriteFile | ll::kTruncate | ll::kIoctlDev;
// Everything a writable tree needs, except creating device nodes.
constexpr uint64_t kWriteRights = ll::kWriteFile | ll::kRemoveDir | ll::kRemoveFile | ll::kMakeDir |
                                  ll::kMakeReg | ll::kMakeSock | ll::kMakeFifo | ll::kMakeSym |
                                  ll::kRefer | ll::kTruncate;

constexpr const char* kWritableDevices[] = {"/dev/null",    "/dev/zero", "/dev/full", "/dev/random",
                                            "/dev/urandom", "/dev/tty",  "/dev/ptmx", "/dev/pts"};

// Signals the outer bubblewrap process ignores, so that a timeout's SIGTERM
// to the process group reaches the command through the helper (which forwards
// it) instead of killing bubblewrap and with it, at once, the whole sandbox.
constexpr int kLauncherIgnores[] = {SIGTERM, SIGINT, SIGQUIT, SIGHUP};

Result<std::string> Canonical(const std::string& path) {
  char buf[PATH_MAX];
  if (::realpath(path.c_str(), buf) == nullptr) {
    int err = errno;
    return Status(StatusCode::kInvalidArgument,
                  ErrnoMessage("writable root '" + path + "' cannot be used", err) +
                      "; create it or remove it from the writable roots");
  }
  struct stat st;
  if (::stat(buf, &st) != 0 || !S_ISDIR(st.st_mode)) {
    return Status(StatusCode::kInvalidArgument,
                  "writable root '" + path + "' is not a directory; pass a directory");
  }
  return std::string(buf);
}

std::string Join(const std::string& dir, const std::string& name) {
  return dir == "/" ? "/" + name : dir + "/" + name;
}

// Entries at the top of a writable root that stay read-only: git's
// repository (hooks, config) and Codex's project settings.
constexpr const char* kProtectedNames[] = {".git", ".codex"};

bool IsProtectedName(const std::string& name) {
  for (const char* p : kProtectedNames) {
    if (name == p) return true;
  }
  return false;
}

// Grants write access beneath `root`; with `split`, each entry of the root
// but the protected names is granted separately instead (Landlock alone
// cannot subtract a subtree).
Status GrantRoot(ll::Ruleset& ruleset, const std::string& root, bool split) {
  if (!split) return ruleset.AddPathRule(root, kWriteRights);

  UniqueFd dir_fd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir_fd) return Status(StatusCode::kInternal, ErrnoMessage("open '" + root + "'", errno));
  DIR* d = ::fdopendir(dir_fd.get());
  if (d == nullptr)
    return Status(StatusCode::kInternal, ErrnoMessage("list '" + root + "'", errno));
  dir_fd.Release();  // owned by `d` now
  std::vector<std::string> names;
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name != "." && name != ".." && !IsProtectedName(name)) names.push_back(std::move(name));
  }
  ::closedir(d);

  for (const std::string& name : names) {
    std::string path = Join(root, name);
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0) continue;  // vanished meanwhile
    // Symlinks, sockets and device nodes get nothing.
    if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode)) continue;
    Status err = ruleset.AddPathRule(path, kWriteRights);
    if (!err.ok() && err.code() != StatusCode::kNotFound) return err;
  }
  return OkStatus();
}

std::string FirstLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  return line;
}

// `target` resolved against `base` when relative, then canonical; "" when it
// does not exist or is not a directory.
std::string ResolveDir(const std::string& base, const std::string& target) {
  if (target.empty()) return "";
  std::string path = target[0] == '/' ? target : Join(base, target);
  auto canonical = Canonical(path);
  return canonical.ok() ? *canonical : "";
}

// What must stay read-only under `root`: its .git (directory or worktree
// file); for a worktree file also the gitdir it names and that gitdir's
// common dir (config and hooks live there); for a symlinked .git its target.
std::vector<std::string> GitPaths(const std::string& root) {
  std::vector<std::string> out;
  const std::string git = Join(root, ".git");
  struct stat st;
  if (::lstat(git.c_str(), &st) != 0) return out;
  if (S_ISLNK(st.st_mode)) {
    if (std::string target = ResolveDir(root, ".git"); !target.empty()) out.push_back(target);
    return out;
  }
  out.push_back(git);
  if (!S_ISREG(st.st_mode)) return out;
  const std::string line = FirstLine(git);
  constexpr std::string_view kPrefix = "gitdir:";
  if (line.compare(0, kPrefix.size(), kPrefix) != 0) return out;
  std::string target = line.substr(kPrefix.size());
  target.erase(0, target.find_first_not_of(' '));
  const std::string gitdir = ResolveDir(root, target);
  if (gitdir.empty()) return out;
  out.push_back(gitdir);
  const std::string common = ResolveDir(gitdir, FirstLine(Join(gitdir, "commondir")));
  if (!common.empty()) out.push_back(common);
  return out;
}

// The seccomp program in a sealed memfd, for the helper to read.
Result<UniqueFd> ProgramFd(const std::vector<sock_filter>& program) {
  UniqueFd fd(::memfd_create("codex-seccomp", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (!fd) return Status(StatusCode::kInternal, ErrnoMessage("memfd_create", errno));
  const auto bytes = static_cast<ssize_t>(program.size() * sizeof(sock_filter));
  if (::write(fd.get(), program.data(), static_cast<size_t>(bytes)) != bytes) {
    return Status(StatusCode::kInternal, ErrnoMessage("writing the seccomp filter", errno));
  }
  ::fcntl(fd.get(), F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
  return fd;
}

std::string ModeName(Mode mode) {
  return mode == Mode::kReadOnly ? "read-only" : "workspace-write";
}

}  // namespace

Result<std::unique_ptr<Confinement>> Confinement::Prepare(const SandboxSpec& spec) {
  std::unique_ptr<Confinement> c(new Confinement());
  c->mode_ = spec.mode;
  if (spec.mode == Mode::kFullAccess) {
    c->network_ = Network::kAllowed;
    c->layers_ = {{"sandbox", false, "danger-full-access: no confinement"}};
    return c;
  }
  c->network_ = spec.mode == Mode::kWorkspaceWrite ? spec.network : Network::kDenied;
  c->abi_ = ll::AbiVersion();
  const BwrapAvailability bwrap = ProbeBwrap();
  c->use_ns_ = bwrap.usable;
  if (c->abi_ < 1 && !c->use_ns_) {
    return Status(StatusCode::kFailedPrecondition,
                  "cannot enforce " + ModeName(spec.mode) +
                      ": Landlock is not available on this kernel and " + bwrap.reason +
                      "; install bubblewrap and allow user namespaces, or run unconfined with "
                      "--sandbox danger-full-access");
  }

  if (spec.mode == Mode::kWorkspaceWrite) {
    for (const std::string& root : spec.writable_roots) {
      ASSIGN_OR_RETURN(std::string canonical, Canonical(root));
      if (std::find(c->roots_.begin(), c->roots_.end(), canonical) == c->roots_.end()) {
        c->roots_.push_back(std::move(canonical));
      }
    }
    // Parents before children, so that a nested root's bind is not hidden.
    std::sort(c->roots_.begin(), c->roots_.end());
    for (const std::string& root : c->roots_) {
      // Without a mount namespace only a root's own top-level entries can be
      // left out of the grants.
      std::vector<std::string> paths =
          c->use_ns_ ? GitPaths(root) : std::vector<std::string>{Join(root, ".git")};
      paths.push_back(Join(root, ".codex"));
      for (std::string& path : paths) {
        struct stat st;
        if (::lstat(path.c_str(), &st) != 0) continue;
        if (std::find(c->protected_.begin(), c->protected_.end(), path) == c->protected_.end()) {
          c->protected_.push_back(std::move(path));
        }
      }
    }
  }

  if (c->abi_ >= 1) {
    const uint64_t net = c->network_ == Network::kDenied ? ll::kNetBindTcp | ll::kNetConnectTcp : 0;
    uint64_t scopes = ll::kScopeSignal;
    if (c->network_ == Network::kDenied) scopes |= ll::kScopeAbstractUnixSocket;
    ASSIGN_OR_RETURN(ll::Ruleset ruleset,
                     ll::Ruleset::Create(c->abi_, ll::FsRightsForAbi(c->abi_), net, scopes));
    RETURN_IF_ERROR(ruleset.AddPathRule("/", kReadRights));
    for (const char* device : kWritableDevices) {
      Status err = ruleset.AddPathRule(device, kDeviceRights);
      if (!err.ok() && err.code() != StatusCode::kNotFound) return err;
    }
    for (const std::string& root : c->roots_) {
      // With the mount namespace, read-only binds keep .git and .codex
      // read-only, so the whole root is granted (its top level included).
      bool split = false;
      for (const char* name : kProtectedNames) {
        struct stat st;
        if (::lstat(Join(root, name).c_str(), &st) == 0) split = true;
      }
      RETURN_IF_ERROR(GrantRoot(ruleset, root, split && !c->use_ns_));
    }
    if (spec.mode == Mode::kWorkspaceWrite) {
      if (auto shm = Canonical("/dev/shm"); shm.ok()) {
        RETURN_IF_ERROR(ruleset.AddPathRule(*shm, kWriteRights));
      }
    }
    c->ruleset_ = ruleset.TakeFd();
  }

  ASSIGN_OR_RETURN(c->seccomp_, BuildSeccompFilter(c->network_));

  if (c->use_ns_) {
    ASSIGN_OR_RETURN(c->seccomp_fd_, ProgramFd(c->seccomp_));
    const std::string helper = HelperExecutablePath();
    c->exe_fd_ = UniqueFd(::open(helper.c_str(), O_PATH | O_CLOEXEC));
    if (!c->exe_fd_) return Status(StatusCode::kInternal, ErrnoMessage("open " + helper, errno));
    std::vector<std::string>& a = c->bwrap_args_;
    a = {bwrap.path, "--die-with-parent", "--unshare-user", "--unshare-pid", "--unshare-ipc"};
    if (c->network_ == Network::kDenied) a.push_back("--unshare-net");
    a.insert(a.end(), {"--as-pid-1", "--ro-bind", "/", "/"});
    for (const std::string& root : c->roots_) a.insert(a.end(), {"--bind", root, root});
    // After the roots, so that a root of "/" cannot bring the host's /dev and
    // /proc back over the sandbox's own.
    a.insert(a.end(), {"--dev", "/dev", "--proc", "/proc"});
    if (spec.mode == Mode::kWorkspaceWrite) {
      struct stat st;
      if (::stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode)) {
        a.insert(a.end(), {"--bind", "/dev/shm", "/dev/shm"});
      }
    }
    for (const std::string& path : c->protected_) a.insert(a.end(), {"--ro-bind", path, path});
    a.push_back("--");
  }

  std::string ns_detail;
  if (c->use_ns_) {
    ns_detail = "bubblewrap " + bwrap.path + ": user, mount, pid, ipc" +
                (c->network_ == Network::kDenied ? ", net" : "") +
                "; private /proc, read-only / with writable roots bound, .git bound read-only";
  } else {
    ns_detail = bwrap.reason + " (no private /proc, no process-tree kill by namespace)";
  }
  c->layers_.push_back({"namespaces", c->use_ns_, ns_detail});
  c->layers_.push_back({"landlock", c->abi_ >= 1,
                        c->abi_ >= 1
                            ? "ABI " + std::to_string(c->abi_) +
                                  (c->abi_ >= 4 ? "; TCP bind/connect handled" : "") +
                                  (c->abi_ >= 6 ? "; abstract UNIX sockets and signals scoped" : "")
                            : "not available on this kernel"});
  c->layers_.push_back({"capabilities", true,
                        "all dropped (bounding, permitted, effective, inheritable, ambient); "
                        "no_new_privs"});
  for (const std::string& line : DescribeSeccompFilter(c->network_)) {
    c->layers_.push_back({"seccomp", true, line});
  }
  return c;
}

int Confinement::ApplyInChild(const char** what) const noexcept {
  if (mode_ == Mode::kFullAccess) return 0;
  if (use_ns_) {
    // The launcher path: bubblewrap, then the helper applies the rest.
    for (int fd : {exe_fd_.get(), ruleset_.get(), seccomp_fd_.get()}) {
      if (fd >= 0 && ::fcntl(fd, F_SETFD, 0) != 0) {
        *what = "fcntl(F_SETFD)";
        return errno;
      }
    }
    struct sigaction ignore;
    std::memset(&ignore, 0, sizeof(ignore));
    ignore.sa_handler = SIG_IGN;
    for (int sig : kLauncherIgnores) ::sigaction(sig, &ignore, nullptr);
    return 0;
  }
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    *what = "prctl(PR_SET_NO_NEW_PRIVS)";
    return errno;
  }
  if (ruleset_) {
    if (int err = ll::RestrictSelf(ruleset_.get()); err != 0) {
      *what = "landlock_restrict_self";
      return err;
    }
  }
  if (int err = DropAllCapabilities(); err != 0) {
    *what = "dropping capabilities";
    return err;
  }
  if (int err = InstallSeccompFilter(seccomp_.data(), seccomp_.size()); err != 0) {
    *what = "seccomp";
    return err;
  }
  return 0;
}

std::vector<std::string> Confinement::LaunchArgv(const std::vector<std::string>& argv,
                                                 int report_fd) const {
  if (mode_ == Mode::kFullAccess || !use_ns_) return {};
  std::vector<std::string> out = bwrap_args_;
  std::vector<std::string> helper = HelperArgv(
      exe_fd_.get(), report_fd < 0 ? HelperMode::kInteractive : HelperMode::kCaptured,
      ruleset_ ? ruleset_.get() : -1, seccomp_fd_.get(), seccomp_.size(), report_fd, argv);
  out.insert(out.end(), helper.begin(), helper.end());
  return out;
}

}  // namespace codex::sandbox
