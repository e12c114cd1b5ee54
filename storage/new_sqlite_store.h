// A brand-new SQLite store, made whole before it gets its name (a first run:
// CODEX_HOME has no sessions.db yet). Internal to codex_storage:
// SqliteSessionStore::Open calls PlaceNewStore before its ordinary opening,
// which then finds an up-to-date store and only checks it.
//
// Made the ordinary way, in the file under its real name, a new store paid
// six fsyncs (switching to WAL through a rollback journal, then the WAL
// header) and a transaction per migration, ~3 ms of CPU mostly spent by
// SQLite parsing DDL. Here the image of the new store, made at build time
// with the same migration code (storage/new_store_image.h), goes into an
// unnamed file in the same directory (O_TMPFILE), one fdatasync, then the
// file is linked under the real name only if that name is still free. The
// directory is not synced for the link: the first write's WAL sync syncs it
// (SQLite syncs a WAL's directory at the WAL's first sync), before which the
// store holds nothing to lose. A crash at any point leaves either no store
// or a whole one, and no temporary file (an unnamed file vanishes with its
// last descriptor); two first starts at once both end up opening the one
// store whose link won.
#pragma once

#include <string>

namespace codex::storage::internal {

// When nothing is at `path` (nor a -wal or -journal file a crashed writer
// may have left beside it, which SQLite would replay into whatever file gets
// the name), puts a new store there as described above. The parent directory
// must exist. Best effort: when this way is not available here (no O_TMPFILE
// on the file system, no /proc, an error writing) or another process linked
// its store first, it does nothing more; the caller's ordinary opening
// follows in every case, creating the store the old way if it is still
// missing and reporting any error. Never leaves a file behind.
void PlaceNewStore(const std::string& path);

}  // namespace codex::storage::internal
