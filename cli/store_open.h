// Opening the sessions database for a codex command (ARCHITECTURE.md, Data
// model and "Store backends"): the one place that decides which database a
// command uses (the `session_store` setting, core/store_location.h), how the
// CLI waits for a lock and what it prints meanwhile, and applies
// `[history] retention_days`.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "base/status.h"
#include "cli/global_options.h"
#include "core/config.h"
#include "core/store_location.h"
#include "storage/session_database.h"

namespace codex::cli {

// The database at `location` (storage::OpenDatabase). For SQLite a write that
// meets another process's lock waits at most ~10 s in total, printing
// "waiting for HOLDER to release the database…" on stderr after ~1 s (HOLDER:
// storage::internal::LockHolder, e.g. "another codex process (pid 12)"), then
// fails with one error. `read_only` commands (list, show, tree, search,
// export) work from a read-only CODEX_HOME and write to a SQLite file only to
// bring a writable one of an older schema up to date. A PostgreSQL server
// that cannot be reached is one error naming the server (password redacted).
Result<std::unique_ptr<storage::SessionDatabase>> OpenCliStore(const core::StoreLocation& location,
                                                               bool read_only = false);

// For commands that run no model (codex sessions ..., fork): loads the
// config ($CODEX_HOME/config.toml, -c, -p, CODEX_SESSION_STORE) and opens the
// store it names.
Result<std::unique_ptr<storage::SessionDatabase>> OpenConfiguredStore(const GlobalOptions& global,
                                                                      bool read_only = false);

// The store OpenConfiguredStore opens (the same config), without opening it.
Result<core::StoreLocation> ConfiguredStoreLocation(const GlobalOptions& global);

// Removes sessions not updated for `retention_days` (every directory). Cheap
// at start: runs at most once an hour (the mtime of
// $CODEX_HOME/.retention-checked records the last run); says on stderr what
// it removed. Failures are reported as a warning, never fatal.
void ApplyRetention(storage::SessionDatabase& store, const std::string& codex_home,
                    std::optional<int> retention_days);

}  // namespace codex::cli
