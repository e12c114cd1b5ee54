#include "storage/new_sqlite_store.h"

#include <SQLiteCpp/Database.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

#include "sandbox/unique_fd.h"
#include "storage/migrations.h"
#include "storage/sqlite_util.h"

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

Result<std::string> NewStoreImage(const std::string& path) {
  return Guarded(path, "building a new store", [&]() -> Result<std::string> {
    // A private in-memory file (the memdb VFS): the pager writes page 1's
    // header (change counter, page count, SQLite version) as for a file on
    // disk. Its journal is in memory too: memdb would open any other file on
    // the default VFS, relative to the working directory.
    SQLite::Database db(
        "file:codex-new-store?vfs=memdb",
        SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE | SQLite::OPEN_URI | SQLite::OPEN_NOMUTEX);
    db.exec("PRAGMA journal_mode = MEMORY");
    db.exec("PRAGMA temp_store = MEMORY");
    RETURN_IF_ERROR(RegisterStoreFunctions(db.getHandle()));
    RETURN_IF_ERROR(ApplyMigrations(db, path, EmbeddedMigrations()));
    sqlite3_int64 size = 0;
    const unsigned char* bytes =
        sqlite3_serialize(db.getHandle(), "main", &size, SQLITE_SERIALIZE_NOCOPY);
    if (bytes == nullptr || size < 100) {
      return InternalError("sessions database " + path +
                           ": building a new store failed: SQLite gave no image of it");
    }
    std::string image(reinterpret_cast<const char*>(bytes), static_cast<size_t>(size));
    // The file format's write and read versions: 2 marks a WAL database
    // (https://sqlite.org/fileformat2.html#file_format_version_numbers);
    // PRAGMA journal_mode = WAL sets exactly these two bytes.
    image[18] = 2;
    image[19] = 2;
    return image;
  });
}

void PlaceNewStore(const std::string& path) {
  if (!Absent(path) || !Absent(path + "-wal") || !Absent(path + "-journal")) return;
  const std::filesystem::path p(path);
  const std::string dir = p.has_parent_path() ? p.parent_path().string() : ".";
  Result<std::string> image = NewStoreImage(path);
  if (!image.ok()) return;  // the ordinary way runs the same migrations and says why
  // Unnamed until linked: a crash before the link leaves nothing behind.
  UniqueFd file(::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600));
  if (!file) return;
  // 0600 whatever the umask, as PrepareFile makes a store it creates.
  if (::fchmod(file.get(), 0600) != 0 || !WriteAll(file.get(), *image) ||
      ::fdatasync(file.get()) != 0) {
    return;
  }
  // No flag of linkat names "only if free" because it never replaces: EEXIST
  // means a concurrent first start linked its store first, which the caller
  // then opens. /proc/self/fd/N links the open file without privileges
  // (AT_EMPTY_PATH would need CAP_DAC_READ_SEARCH).
  const std::string self = "/proc/self/fd/" + std::to_string(file.get());
  if (::linkat(AT_FDCWD, self.c_str(), AT_FDCWD, path.c_str(), AT_SYMLINK_FOLLOW) != 0) return;
  // The name is durable once the directory is.
  UniqueFd d(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (d) ::fsync(d.get());
}

}  // namespace codex::storage::internal
