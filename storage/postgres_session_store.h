// PostgresSessionStore: the session store on a PostgreSQL server, for teams
// sharing sessions across machines (ARCHITECTURE.md, Data model / Backends).
//
// Same contract as SqliteSessionStore (storage/session_database.h): items are
// an immutable tree (body kept byte for byte, as bytea), a session is a row
// whose head points into it, a fork is one new row. Appends are one
// transaction that locks the session row (SELECT ... FOR UPDATE) and
// compare-and-sets its head: a stale view gets kFailedPrecondition / reason
// "session_advanced". The turn lease is a row of session_leases whose times
// come from the server's clock, so hosts with skewed clocks agree on when a
// heartbeat is stale (core/session_lease.h); a holder on another host whose
// heartbeat is older than kLeaseStaleMs is taken over, a live one is refused
// with SessionBusyError naming its host.
//
// Schema: migrations/postgresql/NNNN_name.sql, applied on Open under a
// server-wide advisory lock (several processes may open a new database at
// once) with the same checksum and newer-schema rules as SQLite
// (storage/migrations.h).
//
// Search: PostgreSQL full-text search (a tsvector per item with a GIN index)
// over the same decoded text SQLite indexes (storage/search_text.h),
// tokenised the same way (runs of letters and digits, case folded), with the
// same query syntax (words ANDed, "a phrase", prefix*).
//
// Connections: `url` is a libpq connection URI or keyword string
// ("postgresql://user@host:5432/db?sslmode=verify-full"); the password comes
// from the URL, PGPASSWORD or ~/.pgpass (libpq's rules). No message this
// class produces contains the password: the URL is shown redacted
// (RedactPostgresUrl). A connection found broken is re-established at most
// kReconnectAttempts times, with back-off, and a transaction that had not
// reached COMMIT is run again (the server rolled it back); a failure during
// COMMIT itself, or a server that stays away, is kUnavailable with a clear
// message. What was committed is never lost.
//
// Thread-compatible: one thread uses an object at a time. A held TurnLease
// refreshes its heartbeat from its own thread and connection.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "storage/session_database.h"

namespace codex::storage {

namespace internal {
class PgConnection;
}

// `url` with any password (user:password@ in a URI, password= in a query or
// keyword string) replaced by "***". Everything else is kept, so the message
// still says which server and database were meant.
std::string RedactPostgresUrl(std::string_view url);

// True when `location` names a PostgreSQL server ("postgresql://",
// "postgres://"), not a SQLite file.
bool IsPostgresUrl(std::string_view location);

class PostgresSessionStore final : public SessionDatabase {
 public:
  static constexpr int kReconnectAttempts = 3;
  // The session-level advisory lock (pg_locks: locktype advisory) that
  // serialises migrations and the search re-index across every process
  // sharing the server. An open that finds the schema current and nothing to
  // re-index does not take it.
  static constexpr int64_t kMigrationLockKey = 0x636f646578'6d6967;  // "codexmig"

  // Connects to `url`, applies the embedded PostgreSQL migrations (creating
  // the tables on an empty database) and returns the store. kUnavailable
  // when the server cannot be reached ("cannot connect to PostgreSQL at
  // <redacted url>: <libpq reason>"), kFailedPrecondition for a schema
  // written by a newer codex, kDataLoss for an edited migration.
  // options.busy_timeout_ms bounds lock waits (lock_timeout) and
  // options.read_only opens without migrating (an outdated schema is an
  // error) and refuses writes.
  static Result<std::unique_ptr<PostgresSessionStore>> Open(const std::string& url,
                                                            StoreOptions options = {});

  ~PostgresSessionStore() override;
  PostgresSessionStore(const PostgresSessionStore&) = delete;
  PostgresSessionStore& operator=(const PostgresSessionStore&) = delete;

  bool read_only() const override { return options_.read_only; }
  std::string location() const override;  // the redacted URL

  // core::SessionStore (see core/session_store.h for the contracts).
  Result<core::SessionInfo> CreateSession(const core::NewSession& spec) override;
  Result<std::unique_ptr<core::TurnLease>> AcquireTurnLease(std::string_view session_id) override;
  Result<core::SessionInfo> FindSession(std::string_view id_or_name) override;
  Result<core::SessionInfo> LatestSession(const std::optional<std::string>& cwd) override;
  Result<std::vector<core::StoredItem>> LoadTranscript(const core::SessionInfo& session) override;
  Result<std::vector<core::StoredItem>> LoadHistory(const core::SessionInfo& session) override;
  Result<std::vector<int64_t>> Append(std::string_view session_id,
                                      std::optional<int64_t> expected_head,
                                      std::string_view turn_id,
                                      const std::vector<core::Item>& items) override;
  Status MoveHead(std::string_view session_id, std::optional<int64_t> expected_head,
                  std::optional<int64_t> new_head) override;
  Result<core::ListPage> ListSessions(const core::ListQuery& query) override;
  Status RecordUsage(int64_t item_id, int64_t total_tokens) override;
  Status RecordTurn(const core::TurnRecord& turn) override;
  Status RecordEvent(std::string_view session_id, std::string_view turn_id, std::string_view type,
                     std::string_view payload_json) override;
  Result<core::SessionInfo> Fork(std::string_view session_id, std::optional<int> at_turn) override;
  Status SetTitle(std::string_view session_id, std::string_view text) override;

  // SessionDatabase (see storage/session_database.h).
  Result<std::optional<core::LeaseHolder>> CurrentLease(std::string_view session_id) override;
  Result<int64_t> LeaseNowMs() override;
  Status Archive(std::string_view id) override;
  Status Unarchive(std::string_view id) override;
  Status Rename(std::string_view id, std::string_view name) override;
  Result<RemoveStats> Remove(std::string_view id, const RemoveHooks& hooks = {}) override;
  Result<std::vector<core::SessionInfo>> Purge(const PurgeQuery& query,
                                               RemoveStats* stats) override;
  Result<std::vector<SearchHit>> Search(const SearchQuery& query) override;
  Result<std::vector<TreeNode>> Tree(std::string_view id) override;
  Result<SessionDetails> Show(std::string_view id) override;
  Result<std::vector<core::TurnRecord>> LoadTurns(std::string_view id) override;
  Result<std::vector<EventRecord>> LoadEvents(std::string_view id) override;
  Result<std::vector<TurnUsage>> TurnsSince(int64_t since_ms) override;
  Result<bool> ImportSession(const ImportedSession& session) override;
  Result<bool> ExtendImportedSession(const ImportedSession& session,
                                     std::optional<int64_t> expected_head, size_t from_item,
                                     size_t from_event) override;
  Result<bool> CopySession(const SessionCopy& copy) override;

 private:
  // The store's wall clock (StoreOptions::clock).
  int64_t Now() const { return ClockOr(options_.clock).NowMs(); }
  PostgresSessionStore(std::string url, StoreOptions options,
                       std::unique_ptr<internal::PgConnection> conn);

  std::string url_;  // as given (may hold a password): only passed to libpq
  StoreOptions options_;
  std::unique_ptr<internal::PgConnection> conn_;
};

}  // namespace codex::storage
