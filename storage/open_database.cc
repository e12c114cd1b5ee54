#include "storage/open_database.h"

#include "storage/postgres_session_store.h"
#include "storage/sqlite_session_store.h"

namespace codex::storage {

Result<std::unique_ptr<SessionDatabase>> OpenDatabase(const core::StoreLocation& location,
                                                      StoreOptions options) {
  if (location.kind == core::StoreLocation::Kind::kSqlite) {
    if (location.path.empty()) return InvalidArgumentError("the SQLite path is empty");
    ASSIGN_OR_RETURN(auto store, SqliteSessionStore::Open(location.path, std::move(options)));
    return std::unique_ptr<SessionDatabase>(std::move(store));
  }
  ASSIGN_OR_RETURN(auto store, PostgresSessionStore::Open(location.url, std::move(options)));
  return std::unique_ptr<SessionDatabase>(std::move(store));
}

}  // namespace codex::storage
