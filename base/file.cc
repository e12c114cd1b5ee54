#include "base/file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>

namespace codex {
namespace {

// ReadToEnd, with room for `expected` bytes made first.
Result<std::string> ReadToEndReserved(int fd, const std::string& name, size_t max_bytes,
                                      size_t expected) {
  std::string bytes;
  if (expected > 0) bytes.reserve(expected + 1);
  char buf[65536];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return FailedPreconditionError(ErrnoMessage(name, errno));
    if (n == 0) break;
    if (static_cast<size_t>(n) > max_bytes - bytes.size()) {
      return ResourceExhaustedError(name + ": larger than " + std::to_string(max_bytes) + " bytes");
    }
    bytes.append(buf, static_cast<size_t>(n));
  }
  return bytes;
}

// Writes every byte of `bytes` to `fd`: 0, or the errno of the failure.
int WriteAllTo(int fd, std::string_view bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    done += static_cast<size_t>(n);
  }
  return 0;
}

// Creates a fresh name beside `base` in `dir` for ReplaceWholeFile:
// `make(name)` is called with ".BASE.tmp-PID-N" for N = 0, 1, ... while it
// fails with EEXIST (a name left by an earlier run killed mid-way). Returns
// make's result (>= 0) with `*name` set, or -1 with errno set.
template <typename Make>
int MakeTempName(const std::string& dir, const std::string& base, std::string* name, Make make) {
  for (int n = 0; n < 1000; ++n) {
    *name = dir + "/." + base + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(n);
    const int got = make(*name);
    if (got >= 0 || errno != EEXIST) return got;
  }
  return -1;
}

}  // namespace

Result<std::string> ReadWholeFile(const std::string& path, size_t max_bytes, bool regular_only) {
  // O_NONBLOCK: opening a FIFO never waits for a writer (it is refused below).
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT || err == ENOTDIR) return NotFoundError(ErrnoMessage(path, err));
    return FailedPreconditionError(ErrnoMessage(path, err));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return FailedPreconditionError(ErrnoMessage(path, err));
  }
  if (regular_only && !S_ISREG(st.st_mode)) {
    ::close(fd);
    return InvalidArgumentError(
        path + (S_ISDIR(st.st_mode) ? ": is a directory, not a file" : ": is not a regular file"));
  }
  // /proc files report size 0: read until the end whatever fstat said.
  const size_t expected = S_ISREG(st.st_mode) && st.st_size > 0
                              ? std::min(static_cast<size_t>(st.st_size), max_bytes)
                              : 0;
  Result<std::string> bytes = ReadToEndReserved(fd, path, max_bytes, expected);
  ::close(fd);
  return bytes;
}

Result<std::string> ReadToEnd(int fd, const std::string& name, size_t max_bytes) {
  return ReadToEndReserved(fd, name, max_bytes, 0);
}

Status WriteWholeFile(const std::string& path, std::string_view bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0666);
  if (fd < 0) return FailedPreconditionError(ErrnoMessage(path, errno));
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      return FailedPreconditionError(ErrnoMessage(path, err));
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0 && errno != EINTR) return FailedPreconditionError(ErrnoMessage(path, errno));
  return OkStatus();
}

Status ReplaceWholeFile(const std::string& path, std::string_view bytes) {
  std::string target = path;  // where a symlink points
  struct stat link {};
  if (::lstat(path.c_str(), &link) == 0 && S_ISLNK(link.st_mode)) {
    std::error_code ec;
    const std::filesystem::path resolved = std::filesystem::weakly_canonical(path, ec);
    if (!ec) target = resolved.string();
  }
  struct stat old {};
  const bool exists = ::stat(target.c_str(), &old) == 0;
  if (exists && !S_ISREG(old.st_mode)) return WriteWholeFile(path, bytes);
  const size_t slash = target.rfind('/');
  const std::string dir =
      slash == std::string::npos ? "." : (slash == 0 ? "/" : target.substr(0, slash));
  const std::string base = slash == std::string::npos ? target : target.substr(slash + 1);
  auto failed = [&](int err, int fd, const std::string& temp) {
    if (fd >= 0) ::close(fd);
    if (!temp.empty()) ::unlink(temp.c_str());
    return FailedPreconditionError(ErrnoMessage(path, err));
  };
  // The bytes, the old file's owner and mode, on disk: 0 or the errno.
  auto fill = [&](int fd) {
    if (const int err = WriteAllTo(fd, bytes); err != 0) return err;
    if (exists) {
      // The same owner: a change only root can make, for root editing a user's file.
      const int chowned = ::fchown(fd, old.st_uid, old.st_gid);
      (void)chowned;
      if (::fchmod(fd, old.st_mode & 07777) != 0) return errno;
    }
    return ::fdatasync(fd) == 0 ? 0 : errno;
  };
  auto open_named = [](const std::string& name) {
    return ::open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0666);
  };
  std::string temp;  // the temporary's name, once it has one
  int fd = ::open(dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
  if (fd >= 0) {
    if (const int err = fill(fd); err != 0) return failed(err, fd, "");
    const std::string self = "/proc/self/fd/" + std::to_string(fd);
    if (MakeTempName(dir, base, &temp, [&self](const std::string& name) {
          return ::linkat(AT_FDCWD, self.c_str(), AT_FDCWD, name.c_str(), AT_SYMLINK_FOLLOW);
        }) < 0) {
      ::close(fd);  // no /proc to name it through: the named way below
      fd = -1;
      temp.clear();
      errno = EOPNOTSUPP;
    }
  }
  if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
    fd = MakeTempName(dir, base, &temp, open_named);
    if (fd >= 0) {
      if (const int err = fill(fd); err != 0) return failed(err, fd, temp);
    }
  }
  if (fd < 0) {
    // A writable file in a directory this user cannot add names to.
    if (exists && (errno == EACCES || errno == EPERM)) return WriteWholeFile(path, bytes);
    return failed(errno, -1, "");
  }
  if (::close(fd) != 0 && errno != EINTR) return failed(errno, -1, temp);
  if (::rename(temp.c_str(), target.c_str()) != 0) return failed(errno, -1, temp);
  // The rename itself survives a power loss once the directory is synced.
  const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    const int synced = ::fsync(dir_fd);
    (void)synced;
    ::close(dir_fd);
  }
  return OkStatus();
}

}  // namespace codex
