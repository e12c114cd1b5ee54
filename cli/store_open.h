// Opening the sessions database for a codex command (ARCHITECTURE.md, Data
// model): the one place that decides how the CLI waits for a lock and what
// it prints meanwhile, and applies `[history] retention_days`.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "core/status.h"
#include "storage/sqlite_session_store.h"

namespace codex::cli {

// $CODEX_HOME/sessions.db. A write that meets another process's lock waits
// at most ~10 s in total, printing "waiting for another codex process to
// release the database…" on stderr after ~1 s, then fails with one error.
// `read_only` commands (list, show, tree, search, export) never write and
// work from a read-only CODEX_HOME.
Result<std::unique_ptr<storage::SqliteSessionStore>> OpenCliStore(const std::string& codex_home,
                                                                  bool read_only = false);

// Removes sessions not updated for `retention_days` (every directory). Cheap
// at start: runs at most once an hour (the mtime of
// $CODEX_HOME/.retention-checked records the last run); says on stderr what
// it removed. Failures are reported as a warning, never fatal.
void ApplyRetention(storage::SqliteSessionStore& store, const std::string& codex_home,
                    std::optional<int> retention_days);

}  // namespace codex::cli
