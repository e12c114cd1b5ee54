// Storage tests against either backend (test support, not linked into
// codex). A test binary runs its cases against the backend named by
// $CODEX_TEST_STORE: "sqlite" (the default) or "postgresql" (a private
// server, testing/pg_test_server.h, started once per binary). ctest runs
// each storage test binary once per backend (storage/CMakeLists.txt), so
// every assertion holds for both; a PostgreSQL run whose server binaries are
// absent exits 4 (skipped) with the reason printed.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

#include "base/status.h"
#include "storage/session_database.h"
#include "testing/temp_dir.h"

namespace codex::storage::testing {

enum class Backend { kSqlite, kPostgres };

// The backend of this run (see above). For kPostgres the server is started
// here on first use, or the binary exits 4 saying why it cannot be.
Backend TestBackend();
inline bool IsPostgres() { return TestBackend() == Backend::kPostgres; }

// Opens `location` (a file path, or a postgresql:// URL) with the backend's Open.
Result<std::unique_ptr<SessionDatabase>> OpenStore(const std::string& location,
                                                   StoreOptions options = {});

// Prints that `location` could not be opened, with `status`, and aborts.
[[noreturn]] void DieOpening(const std::string& location, const Status& status);

// The one "open or die", for a store a test's (or a bench's) setup needs: a
// failure prints the status and aborts the binary. OpenOrDie(location) opens
// the run's backend (OpenStore); OpenOrDie<SqliteSessionStore>(path) or
// OpenOrDie<PostgresSessionStore>(url) that class's Open.
template <typename Store = SessionDatabase>
std::unique_ptr<Store> OpenOrDie(const std::string& location, StoreOptions options = {}) {
  Result<std::unique_ptr<Store>> opened = [&]() -> Result<std::unique_ptr<Store>> {
    if constexpr (std::is_same_v<Store, SessionDatabase>) {
      return OpenStore(location, std::move(options));
    } else {
      return Store::Open(location, std::move(options));
    }
  }();
  if (!opened.ok()) DieOpening(location, opened.status());
  return std::move(opened).value();
}

// A new session in `store` of the one message "question <i>", begun in /w
// (turn "t1"): what the crash and migrate tests seed stores with. A failure
// prints the status and aborts the binary.
core::SessionInfo NewQuestionSession(SessionDatabase& store, int i);

// Runs `sql` on the database at `location` outside any store object (as a
// test's adversary would) and returns the first column of the first row as
// an integer (0 when no row). Aborts the test binary on an SQL error.
int64_t QueryInt(const std::string& location, const std::string& sql);

// Takes a PostgreSQL store made at the latest schema back to what a codex of
// schema version 8 stored for the same sessions: the recency indexes on
// updated_at_ms, no updated_slot column, sessions_head and the head's
// foreign key instead of the triggers of migration 0009, the default
// fillfactors. One transaction.
void TakePostgresBackToSchema8(const std::string& url);

// Takes a PostgreSQL store made at the latest schema back to what a codex of
// schema version 7 stored for the same sessions: no search_tokens column, no
// search_totals table nor its triggers (migration 0008). Two transactions
// (to 8, then to 7).
void TakePostgresBackToSchema7(const std::string& url);

// Takes a PostgreSQL store made at the latest schema back to what a codex of
// schema version 5 (migrations 0001..0005) stored for the same sessions:
// every item body as its bytes and every event payload as text (not packed,
// not escaped), kinds by name. One transaction.
void TakePostgresBackToSchema5(const std::string& url);

// Takes a PostgreSQL store made at the latest schema back to what a codex of
// schema version 4 (migrations 0001..0004) stored for the same sessions: the
// lexemes in items_search, items naming their session by its text id. The
// item `stale_item` (if not 0) keeps lexemes of the earlier folding rules
// ('obsolete', folding 2), left for the re-index. Two transactions (to 5,
// then to 4).
void TakePostgresBackToSchema4(const std::string& url, int64_t stale_item = 0);

// Writes the lease row of `session` (replacing any) as another process, or a
// process on `host`, would have left it: last heartbeat (and turn start) at
// `heartbeat_ms`, process start `process_start` ("" = unknown).
void InsertLease(const std::string& location, const std::string& session, int64_t pid,
                 const std::string& host, int64_t heartbeat_ms,
                 const std::string& process_start = "");

// A temp directory for files, plus store locations by name: Store("s.db")
// is a file in the directory for SQLite, a fresh database on the private
// server for PostgreSQL; the same name gives the same location.
class StoreDir {
 public:
  std::string path() const { return dir_.str(); }
  std::string File(const std::string& name) const { return dir_.File(name); }
  std::string Store(const std::string& name);

 private:
  ::codex::testing::TempDir dir_{"codex-storage-"};
  std::map<std::string, std::string> stores_;
};

}  // namespace codex::storage::testing

// Ends a test case that exercises one backend's own machinery (SQLite file
// modes and locks) when this run is against the other one.
#define CODEX_SQLITE_ONLY()                                                   \
  do {                                                                        \
    if (::codex::storage::testing::IsPostgres()) {                            \
      SUCCEED("SQLite-specific: file modes, file locks and read-only files"); \
      return;                                                                 \
    }                                                                         \
  } while (0)
