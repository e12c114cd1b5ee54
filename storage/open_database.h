// The one store factory: opens the sessions database a `session_store`
// setting names (core/store_location.h), SQLite or PostgreSQL, behind
// SessionDatabase. The CLI (cli/store_open.h), `codex sessions migrate` and
// the tests open stores through it, so every command reaches the same backend.
#pragma once

#include <memory>

#include "base/status.h"
#include "core/store_location.h"
#include "storage/session_database.h"

namespace codex::storage {

// SQLite: SqliteSessionStore::Open(location.path) (a missing directory is
// created 0700). PostgreSQL: PostgresSessionStore::Open(location.url). No
// message carries a password (core::RedactSecrets).
Result<std::unique_ptr<SessionDatabase>> OpenDatabase(const core::StoreLocation& location,
                                                      StoreOptions options = {});

}  // namespace codex::storage
