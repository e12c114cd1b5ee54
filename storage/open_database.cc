#include "storage/open_database.h"

#include "storage/sqlite_session_store.h"

namespace codex::storage {

Result<std::unique_ptr<SessionDatabase>> OpenDatabase(const core::StoreLocation& location,
                                                      StoreOptions options) {
  if (location.kind == core::StoreLocation::Kind::kSqlite) {
    if (location.path.empty()) return InvalidArgumentError("the SQLite path is empty");
    ASSIGN_OR_RETURN(auto store, SqliteSessionStore::Open(location.path, std::move(options)));
    return std::unique_ptr<SessionDatabase>(std::move(store));
  }
  return FailedPreconditionError("PostgreSQL store at " + core::DescribeStoreLocation(location) +
                                 " is not available in this build");
}

}  // namespace codex::storage
