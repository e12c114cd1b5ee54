#include "base/file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

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

}  // namespace codex
