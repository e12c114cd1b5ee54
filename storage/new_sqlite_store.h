// A brand-new SQLite store, made whole before it gets its name (a first run:
// CODEX_HOME has no sessions.db yet). Internal to codex_storage:
// SqliteSessionStore::Open calls PlaceNewStore before its ordinary opening,
// which then finds an up-to-date store and only checks it.
//
// Made the ordinary way, in the file under its real name, a new store paid
// six fsyncs (switching to WAL through a rollback journal, then the WAL
// header) and one transaction per migration. Here the migrations run on an
// in-memory database (the same ApplyMigrations: migrations/*.sql stay the one
// home of the schema), its image goes into an unnamed file in the same
// directory (O_TMPFILE), one fdatasync, then the file is linked under the
// real name only if that name is still free, and the directory is synced.
// A crash at any point leaves either no store or a whole one, and no
// temporary file (an unnamed file vanishes with its last descriptor); two
// first starts at once both end up opening the one store whose link won.
#pragma once

#include <string>

#include "base/status.h"

namespace codex::storage::internal {

// The file image of an empty store at the latest schema: the embedded
// migrations applied to an in-memory database, marked as a WAL database
// (file format bytes 18 and 19 = 2, as PRAGMA journal_mode = WAL sets them).
// `path` only names the store in messages.
Result<std::string> NewStoreImage(const std::string& path);

// When nothing is at `path` (nor a -wal or -journal file a crashed writer
// may have left beside it, which SQLite would replay into whatever file gets
// the name), puts a new store there as described above. The parent directory
// must exist. Best effort: when this way is not available here (no O_TMPFILE
// on the file system, no /proc, an error building or writing) or another
// process linked its store first, it does nothing more; the caller's
// ordinary opening follows in every case, creating the store the old way if
// it is still missing and reporting any error. Never leaves a file behind.
void PlaceNewStore(const std::string& path);

}  // namespace codex::storage::internal
