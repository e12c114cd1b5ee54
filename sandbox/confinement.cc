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
#include <filesystem>

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

// Not /dev/pts: without namespaces it is the host's, and write there reaches
// every terminal of the user; bubblewrap mounts a devpts of its own.
constexpr const char* kWritableDevices[] = {"/dev/null",    "/dev/zero", "/dev/full", "/dev/random",
                                            "/dev/urandom", "/dev/tty",  "/dev/ptmx"};

// Signals the outer bubblewrap process ignores, so that a timeout's SIGTERM
// to the process group reaches the command through the helper (which forwards
// it) instead of killing bubblewrap and with it, at once, the whole sandbox.
constexpr int kLauncherIgnores[] = {SIGTERM, SIGINT, SIGQUIT, SIGHUP};

// Grants write access beneath `dir`, except to the `holes` inside it (paths
// that stay read-only, existing or not). Landlock cannot subtract a subtree,
// so a directory holding a hole is not granted itself: each of its entries
// is granted separately (or descended into, when a hole lies deeper), and
// nothing new can be created in it.
Status GrantAround(ll::Ruleset& ruleset, const std::string& dir,
                   const std::vector<std::string>& holes) {
  bool any = false;
  for (const std::string& h : holes) {
    if (h == dir) return OkStatus();
    if (PathWithin(h, dir)) any = true;
  }
  if (!any) return ruleset.AddPathRule(dir, kWriteRights);

  UniqueFd dir_fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir_fd) return Status(StatusCode::kInternal, ErrnoMessage("open '" + dir + "'", errno));
  DIR* d = ::fdopendir(dir_fd.get());
  if (d == nullptr) return Status(StatusCode::kInternal, ErrnoMessage("list '" + dir + "'", errno));
  dir_fd.Release();  // owned by `d` now
  std::vector<std::string> names;
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(std::move(name));
  }
  ::closedir(d);

  for (const std::string& name : names) {
    const std::string path = JoinPath(dir, name);
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0) continue;  // vanished meanwhile
    if (S_ISDIR(st.st_mode)) {
      RETURN_IF_ERROR(GrantAround(ruleset, path, holes));
      continue;
    }
    if (std::find(holes.begin(), holes.end(), path) != holes.end()) continue;
    // Symlinks, sockets and device nodes get nothing.
    if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode)) continue;
    Status err = ruleset.AddPathRule(path, kWriteRights);
    if (!err.ok() && err.code() != StatusCode::kNotFound) return err;
  }
  return OkStatus();
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
    WritableRootsSpec roots;
    roots.extra = spec.writable_roots;
    roots.exclude_slash_tmp = true;  // the caller lists /tmp and $TMPDIR when it wants them
    roots.exclude_tmpdir_env_var = true;
    roots.private_paths = spec.private_paths;
    roots.read_only_paths = spec.read_only_paths;
    ASSIGN_OR_RETURN(c->policy_, WorkspacePolicy::Compute(roots));
    c->roots_ = c->policy_.root_paths();
    for (const ProtectedPath& p : c->policy_.protected_paths()) {
      // Outside the roots, the read-only / holds them already.
      if (!p.in_root) continue;
      // Never mount over the sandbox's own /dev and /proc.
      if (PathWithin(p.path, "/dev") || PathWithin(p.path, "/proc")) continue;
      c->protected_.push_back(p.path);
    }
  }

  if (spec.mode == Mode::kWorkspaceWrite && c->use_ns_ && spec.writable_shm) {
    // A /dev/shm of the sandbox's own: a fresh directory bound there, removed
    // with the Confinement (never the host's /dev/shm).
    std::string tmpl = "/dev/shm/codex-sandbox-shm-XXXXXX";
    if (IsDirectory("/dev/shm") && ::mkdtemp(tmpl.data()) != nullptr) c->shm_dir_ = tmpl;
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
    // With the mount namespace, read-only binds keep the protected paths
    // read-only, so every root is granted whole (its top level included).
    // Without it, Landlock alone must leave them out (GrantAround): the
    // protected paths, existing or not, but the top-level .git/.codex of /tmp
    // and $TMPDIR (leaving those out would forbid creating anything in /tmp),
    // and codex's private paths.
    std::vector<std::string> holes;
    if (!c->use_ns_) {
      for (const ProtectedPath& p : c->policy_.protected_paths()) {
        if (p.in_root && !p.temp_top) holes.push_back(p.path);
      }
      for (const std::string& p : c->policy_.private_paths()) holes.push_back(p);
    }
    for (const std::string& root : c->roots_) RETURN_IF_ERROR(GrantAround(ruleset, root, holes));
    if (!c->shm_dir_.empty()) RETURN_IF_ERROR(ruleset.AddPathRule(c->shm_dir_, kWriteRights));
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
    // The roots, and every directory between a root and a protected path or
    // a nested root inside it, each bound onto itself: a mount point cannot be
    // renamed (EBUSY), so `mv repo elsewhere && mkdir -p repo/.git` cannot
    // swap a protected path (or the workspace) for one of the command's own.
    std::vector<std::string> binds = c->roots_;
    auto pin_between = [&](const std::string& path) {
      for (const std::string& root : c->roots_) {
        if (root == path || !PathWithin(path, root)) continue;
        for (std::string d = ParentDir(path); d != root && PathWithin(d, root); d = ParentDir(d)) {
          struct stat st;
          if (::lstat(d.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) continue;
          if (std::find(binds.begin(), binds.end(), d) == binds.end()) binds.push_back(d);
        }
      }
    };
    for (const std::string& p : c->protected_) pin_between(p);
    for (const std::string& p : c->policy_.private_paths()) pin_between(p);
    for (const std::string& root : c->roots_) pin_between(root);
    std::sort(binds.begin(), binds.end());  // parents before children
    for (const std::string& d : binds) a.insert(a.end(), {"--bind", d, d});
    // After the roots, so that a root of "/" cannot bring the host's /dev and
    // /proc back over the sandbox's own. bubblewrap's /dev has an empty,
    // read-only (Landlock) /dev/shm; workspace-write binds its own over it.
    a.insert(a.end(), {"--dev", "/dev", "--proc", "/proc"});
    if (!c->shm_dir_.empty()) a.insert(a.end(), {"--bind", c->shm_dir_, "/dev/shm"});
    std::error_code ignored;
    for (const ProtectedPath& p : c->policy_.protected_paths()) {
      if (std::find(c->protected_.begin(), c->protected_.end(), p.path) == c->protected_.end()) {
        continue;
      }
      if (p.exists) {
        // An empty directory may be another sandbox's mount point (below):
        // share its reservation, so that its creator does not remove it
        // while this sandbox still mounts it.
        if (IsDirectory(p.path) && std::filesystem::is_empty(p.path, ignored)) {
          ASSIGN_OR_RETURN(auto mount_point, MountPoint::Reserve(p.path));
          c->mount_points_.push_back(std::move(mount_point));
        }
        a.insert(a.end(), {"--ro-bind", p.path, p.path});
      } else if (::access(ParentDir(p.path).c_str(), W_OK) == 0) {
        // An absent path: an empty read-only tmpfs takes its place, so the
        // command can neither create it nor replace it. Its mount point, an
        // empty directory on the host, is reserved for this Confinement and
        // removed when no sandbox uses it any more (mount_point.h). Where
        // codex's user cannot write the parent, the command cannot create the
        // path either, and no mount point could be made.
        ASSIGN_OR_RETURN(auto mount_point, MountPoint::Reserve(p.path));
        c->mount_points_.push_back(std::move(mount_point));
        a.insert(a.end(), {"--tmpfs", p.path, "--remount-ro", p.path});
      }
    }
    // Codex's private state: masked by an empty read-only tmpfs.
    for (const std::string& p : c->policy_.private_paths()) {
      if (IsDirectory(p)) a.insert(a.end(), {"--tmpfs", p, "--remount-ro", p});
    }
    a.push_back("--");
  }

  std::string ns_detail;
  if (c->use_ns_) {
    ns_detail = "bubblewrap " + bwrap.path + ": user, mount, pid, ipc" +
                (c->network_ == Network::kDenied ? ", net" : "") +
                "; private /proc and /dev/shm, read-only / with writable roots bound, "
                "protected paths (.git, .codex, gitdirs) read-only";
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

Confinement::~Confinement() {
  if (!shm_dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(shm_dir_, ec);
  }
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
