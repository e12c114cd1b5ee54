#include "storage/new_sqlite_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

#include "sandbox/unique_fd.h"
#include "storage/new_store_image.h"

namespace codex::storage::internal {

namespace {

using sandbox::UniqueFd;

// True when nothing (not even a dangling link) is at `path`.
bool Absent(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) != 0 && errno == ENOENT;
}

bool WriteAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

}  // namespace

void PlaceNewStore(const std::string& path) {
  if (!Absent(path) || !Absent(path + "-wal") || !Absent(path + "-journal")) return;
  const std::filesystem::path p(path);
  const std::string dir = p.has_parent_path() ? p.parent_path().string() : ".";
  const std::string_view image = BuiltStoreImage();
  // Unnamed until linked: a crash before the link leaves nothing behind.
  UniqueFd file(::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600));
  if (!file) return;
  // 0600 whatever the umask, as PrepareFile makes a store it creates.
  if (::fchmod(file.get(), 0600) != 0 || !WriteAll(file.get(), image) ||
      ::fdatasync(file.get()) != 0) {
    return;
  }
  // linkat never replaces a name: EEXIST means a concurrent first start
  // linked its store first, which the caller then opens. /proc/self/fd/N
  // links the open file without privileges (AT_EMPTY_PATH would need
  // CAP_DAC_READ_SEARCH).
  const std::string self = "/proc/self/fd/" + std::to_string(file.get());
  // The directory is not synced here: the name becomes durable with the
  // first write, whose WAL sync also syncs this directory (SQLite syncs the
  // directory of a WAL file at that file's first sync, and the WAL is always
  // beside the database); until then the store holds nothing to lose, and a
  // power cut leaves no store or this whole one (its bytes were synced first).
  (void)::linkat(AT_FDCWD, self.c_str(), AT_FDCWD, path.c_str(), AT_SYMLINK_FOLLOW);
}

}  // namespace codex::storage::internal
