// Internal helpers of codex_storage: converting SQLiteCpp exceptions into
// Status at the module edge, the bounded busy wait, and running write
// transactions with BEGIN IMMEDIATE. Not part of the public interface.
#pragma once

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Exception.h>
#include <SQLiteCpp/Transaction.h>
#include <sqlite3.h>

#include <chrono>
#include <exception>
#include <functional>
#include <string>
#include <string_view>
#include <thread>

#include "base/status.h"

namespace codex::storage::internal {

// The Status for an exception thrown while doing `what` on the database at
// `path`. SQLite errors keep their extended result code in the message;
// corruption maps to kDataLoss, lock contention to kUnavailable.
Status StatusFromException(const std::exception& e, const std::string& path, std::string_view what);

// Who holds a lock on the SQLite database at `path` (its file, -wal or -shm),
// from /proc/locks and /proc/PID/comm, a writer's lock first: "another codex
// process (pid N)", "another connection of this process", "another process
// (COMM, pid N)" for any other program, "another process" when none is seen.
std::string LockHolder(const std::string& path);

// True for an SQLite exception that a retry of the whole transaction may cure.
bool IsBusy(const std::exception& e);

// The one bound on waiting for a lock: SQLite calls the handler while the
// database is locked; it sleeps in short steps, calls `on_wait` once when a
// wait passes `notice_ms`, and gives up (SQLITE_BUSY) after `timeout_ms`. No
// caller retries on top of it, so a locked database costs at most
// `timeout_ms` per operation. Must outlive the connection it is installed on.
struct BusyWait {
  int timeout_ms = 10'000;
  int notice_ms = 1'000;
  std::string path;  // the database, to name who holds its lock (LockHolder)
  std::function<void(const std::string& holder)> on_wait;
  std::chrono::steady_clock::time_point start{};
  bool noticed = false;
};
void InstallBusyWait(SQLite::Database& db, BusyWait* wait);

// Registers codex_host_name() (this machine's name, LocalHost) and
// codex_project_key(dir) (storage/project_identity.h) on a connection:
// migration 0005 fills the columns of existing sessions with them.
void RegisterPlaceFunctions(sqlite3* db);

// Registers on a connection everything the schema and the store's statements
// call: codex_search_text, the packed-text functions, the place functions,
// codex_bm25 and the "codex" FTS5 tokenizer. Every store connection that may
// migrate or query the schema (SqliteSessionStore::Open, the new-store image,
// tests building old schemas) goes through it.
Status RegisterStoreFunctions(sqlite3* db);

// Runs `body` (returning Status or Result<T>) inside BEGIN IMMEDIATE ... COMMIT.
// A non-OK result rolls back. The lock wait is the connection's BusyWait; an
// exception (SQLITE_BUSY after it, or any other) becomes a Status. Never throws.
template <typename F>
auto WithWriteTransaction(SQLite::Database& db, const std::string& path, std::string_view what,
                          F&& body) -> decltype(body()) {
  using R = decltype(body());
  try {
    SQLite::Transaction txn(db, SQLite::TransactionBehavior::IMMEDIATE);
    R result = body();
    if (result.ok()) txn.commit();
    return result;  // ~Transaction rolls back when not committed
  } catch (const std::exception& e) {
    return R(StatusFromException(e, path, what));
  }
}

// Runs a read-only `body`, converting exceptions. Never throws.
template <typename F>
auto Guarded(const std::string& path, std::string_view what, F&& body) -> decltype(body()) {
  using R = decltype(body());
  try {
    return body();
  } catch (const std::exception& e) {
    return R(StatusFromException(e, path, what));
  }
}

}  // namespace codex::storage::internal
