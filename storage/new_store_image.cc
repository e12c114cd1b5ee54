#include "storage/new_store_image.h"

#include <SQLiteCpp/Database.h>
#include <sqlite3.h>

#include "storage/migrations.h"
#include "storage/sqlite_util.h"

namespace codex::storage::internal {

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

}  // namespace codex::storage::internal
