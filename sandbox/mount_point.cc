#include "sandbox/mount_point.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <map>
#include <mutex>

namespace codex::sandbox {
namespace {

// Whether the directory open at `fd` has no entry but . and ..
bool EmptyDirectory(int fd) {
  const int dup_fd = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (dup_fd < 0) return false;
  DIR* d = ::fdopendir(dup_fd);
  if (d == nullptr) {
    ::close(dup_fd);
    return false;
  }
  ::rewinddir(d);
  bool empty = true;
  while (const dirent* e = ::readdir(d)) {
    const std::string_view name = e->d_name;
    if (name != "." && name != "..") {
      empty = false;
      break;
    }
  }
  ::closedir(d);
  return empty;
}

// This process's live reservations, by path.
std::mutex reservations_mutex;
std::map<std::string, std::weak_ptr<MountPoint>>& Reservations() {
  static auto* reservations = new std::map<std::string, std::weak_ptr<MountPoint>>();
  return *reservations;
}

}  // namespace

Result<std::shared_ptr<MountPoint>> MountPoint::Reserve(const std::string& path) {
  std::lock_guard<std::mutex> lock(reservations_mutex);
  auto& reservations = Reservations();
  if (auto live = reservations[path].lock()) return live;
  // A few rounds at most: each retry means a creator removed the directory
  // between our open and our lock, and the next mkdir makes it ours.
  for (int attempt = 0; attempt < 8; ++attempt) {
    bool created = ::mkdir(path.c_str(), 0755) == 0;
    if (!created && errno != EEXIST) {
      return Status(StatusCode::kInternal, ErrnoMessage("mkdir '" + path + "'", errno));
    }
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd) {
      if (errno == ENOENT) continue;  // removed meanwhile
      return Status(StatusCode::kFailedPrecondition,
                    "'" + path +
                        "' appeared as something other than a directory while the sandbox was "
                        "being prepared; run the command again");
    }
    if (::flock(fd.get(), LOCK_SH) != 0) {
      return Status(StatusCode::kInternal, ErrnoMessage("flock '" + path + "'", errno));
    }
    // Still the directory at `path`? A creator may have removed it while we
    // waited for the lock; then make it again.
    struct stat held, now;
    if (::fstat(fd.get(), &held) != 0) continue;
    if (::lstat(path.c_str(), &now) != 0 || held.st_dev != now.st_dev ||
        held.st_ino != now.st_ino) {
      continue;
    }
    std::shared_ptr<MountPoint> reserved(new MountPoint(path, std::move(fd), created));
    reservations[path] = reserved;
    return reserved;
  }
  return Status(StatusCode::kUnavailable,
                "'" + path + "' keeps being removed while the sandbox is prepared; run it again");
}

MountPoint::~MountPoint() {
  if (created_ && fd_ && ::flock(fd_.get(), LOCK_EX | LOCK_NB) == 0 && EmptyDirectory(fd_.get())) {
    struct stat held, now;
    if (::fstat(fd_.get(), &held) == 0 && ::lstat(path_.c_str(), &now) == 0 &&
        held.st_dev == now.st_dev && held.st_ino == now.st_ino) {
      ::rmdir(path_.c_str());
    }
  }
  // Closing the descriptor releases the lock; a user waiting for it finds
  // the directory gone and makes it again.
}

}  // namespace codex::sandbox
