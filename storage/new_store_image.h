// The file image of an empty SQLite store at the latest schema: what a first
// run writes as its new sessions.db (storage/new_sqlite_store.h).
//
// It is made at build time by codex-store-image (store_image_main.cc) with
// NewStoreImage below, the same ApplyMigrations every store runs, so
// migrations/*.sql stay the one home of the schema; the build embeds the
// result (BuiltStoreImage). A migration must therefore do on an empty
// database nothing that depends on the machine or the time it runs on
// (today they only create and change tables, views and triggers there; the
// rows they fill from codex_host_name() and the like are existing ones), and
// a new store's schema_migrations.applied_at_ms is when its codex was built.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace codex::storage::internal {

// The embedded migrations applied to an in-memory database, marked as a WAL
// database (file format bytes 18 and 19 = 2, as PRAGMA journal_mode = WAL
// sets them). `path` only names the store in messages.
Result<std::string> NewStoreImage(const std::string& path);

// NewStoreImage's result at build time; defined in the generated
// store_image_embedded.cc (linked into codex_storage, not into the program
// that generates it).
std::string_view BuiltStoreImage();

}  // namespace codex::storage::internal
