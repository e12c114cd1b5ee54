#include "sandbox/confinement.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>

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

Expected<std::string> Canonical(const std::string& path) {
  char buf[PATH_MAX];
  if (::realpath(path.c_str(), buf) == nullptr) {
    int err = errno;
    return Error(ErrorKind::kInvalidArgument,
                 ErrnoMessage("writable root '" + path + "' cannot be used", err) +
                     "; create it or remove it from the writable roots");
  }
  struct stat st;
  if (::stat(buf, &st) != 0 || !S_ISDIR(st.st_mode)) {
    return Error(ErrorKind::kInvalidArgument,
                 "writable root '" + path + "' is not a directory; pass a directory");
  }
  return std::string(buf);
}

std::string Join(const std::string& dir, const std::string& name) {
  return dir == "/" ? "/" + name : dir + "/" + name;
}

// Grants write access beneath `root`, except on `root`/.git when `git_path`
// names it: then each entry of the root but `.git` is granted separately.
MaybeError GrantRoot(ll::Ruleset& ruleset, const std::string& root, const std::string& git_path) {
  if (git_path.empty()) return ruleset.AddPathRule(root, kWriteRights);

  UniqueFd dir_fd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir_fd) return Error(ErrorKind::kInternal, ErrnoMessage("open '" + root + "'", errno));
  DIR* d = ::fdopendir(dir_fd.get());
  if (d == nullptr) return Error(ErrorKind::kInternal, ErrnoMessage("list '" + root + "'", errno));
  dir_fd.Release();  // owned by `d` now
  std::vector<std::string> names;
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name != "." && name != ".." && name != ".git") names.push_back(std::move(name));
  }
  ::closedir(d);

  for (const std::string& name : names) {
    std::string path = Join(root, name);
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0) continue;  // vanished meanwhile
    // Symlinks, sockets and device nodes get nothing.
    if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode)) continue;
    MaybeError err = ruleset.AddPathRule(path, kWriteRights);
    if (err && err->kind() != ErrorKind::kNotFound) return err;
  }
  return std::nullopt;
}

}  // namespace

Expected<std::unique_ptr<Confinement>> Confinement::Prepare(const SandboxSpec& spec) {
  std::unique_ptr<Confinement> c(new Confinement());
  c->mode_ = spec.mode;
  if (spec.mode == Mode::kFullAccess) {
    c->network_ = Network::kAllowed;
    return c;
  }
  c->network_ = spec.mode == Mode::kWorkspaceWrite ? spec.network : Network::kDenied;
  c->abi_ = ll::AbiVersion();
  if (c->abi_ < 1) return Error(ErrorKind::kUnavailable, kLandlockMissingMessage);

  const uint64_t net = c->network_ == Network::kDenied ? ll::kNetBindTcp | ll::kNetConnectTcp : 0;
  uint64_t scopes = ll::kScopeSignal;
  if (c->network_ == Network::kDenied) scopes |= ll::kScopeAbstractUnixSocket;
  ASSIGN_OR_RETURN_SANDBOX(ll::Ruleset ruleset,
                           ll::Ruleset::Create(c->abi_, ll::FsRightsForAbi(c->abi_), net, scopes));

  RETURN_IF_SANDBOX_ERROR(ruleset.AddPathRule("/", kReadRights));
  for (const char* device : kWritableDevices) {
    MaybeError err = ruleset.AddPathRule(device, kDeviceRights);
    if (err && err->kind() != ErrorKind::kNotFound) return *err;
  }

  if (spec.mode == Mode::kWorkspaceWrite) {
    for (const std::string& root : spec.writable_roots) {
      ASSIGN_OR_RETURN_SANDBOX(std::string canonical, Canonical(root));
      if (std::find(c->roots_.begin(), c->roots_.end(), canonical) == c->roots_.end()) {
        c->roots_.push_back(std::move(canonical));
      }
    }
    for (const std::string& root : c->roots_) {
      std::string git = Join(root, ".git");
      struct stat st;
      if (::lstat(git.c_str(), &st) != 0) git.clear();
      RETURN_IF_SANDBOX_ERROR(GrantRoot(ruleset, root, git));
      if (!git.empty()) c->protected_.push_back(std::move(git));
    }
    if (auto shm = Canonical("/dev/shm"); shm.ok()) {
      RETURN_IF_SANDBOX_ERROR(ruleset.AddPathRule(*shm, kWriteRights));
    }
  }
  c->ruleset_ = ruleset.TakeFd();

  ASSIGN_OR_RETURN_SANDBOX(c->seccomp_, BuildSeccompFilter(c->network_));
  return c;
}

int Confinement::ApplyInChild(const char** what) const noexcept {
  if (mode_ == Mode::kFullAccess) return 0;
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    *what = "prctl(PR_SET_NO_NEW_PRIVS)";
    return errno;
  }
  if (int err = ll::RestrictSelf(ruleset_.get()); err != 0) {
    *what = "landlock_restrict_self";
    return err;
  }
  if (int err = InstallSeccompFilter(seccomp_.data(), seccomp_.size()); err != 0) {
    *what = "seccomp";
    return err;
  }
  return 0;
}

}  // namespace codex::sandbox
