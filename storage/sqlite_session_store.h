// SqliteSessionStore: core::SessionStore on one SQLite file (ARCHITECTURE.md,
// Data model), plus the maintenance queries behind `codex sessions ...`.
//
// Layout: `items` is a tree of immutable wire items (body = the JSON text as
// sent, stored and returned byte for byte); a session is a row whose
// head_item_id points into that tree; a fork is a new row pointing at an
// existing item, so forking copies nothing. A compaction is an item of kind
// compaction_checkpoint followed by its replacement history as ordinary
// items; LoadTranscript stops at the newest checkpoint, LoadHistory does not.
//
// Durability and concurrency: WAL, synchronous=NORMAL (a process crash never
// loses a committed append; a power cut may lose the last few commits but
// never corrupts), foreign keys on. Every write runs in one BEGIN IMMEDIATE
// transaction; a lock held by another process is waited for at most
// StoreOptions::busy_timeout_ms in total (on_wait is called after ~1 s), then
// the write fails with kUnavailable: no retry loop multiplies the wait. Reads
// never wait for writers (WAL). A turn holds the session's lease
// (AcquireTurnLease, the session_leases table); appends also compare-and-set
// the head: a process whose view of a session is stale gets
// kFailedPrecondition / reason "session_advanced".
//
// Errors: never throws; SQLite failures become a Status whose message keeps
// the SQLite extended result code. Thread-compatible: one thread uses an
// object at a time (open one object per thread or process).
#pragma once

#include <SQLiteCpp/Database.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/session_store.h"
#include "storage/session_database.h"

namespace codex::storage {

namespace internal {
struct BusyWait;
}

class SqliteSessionStore final : public SessionDatabase {
 public:
  // Opens (creating when absent, with its parent directories) the database at
  // `path`: the file gets mode 0600 whatever the umask, then WAL, busy
  // timeout and foreign keys are set and the embedded migrations applied.
  static Result<std::unique_ptr<SqliteSessionStore>> Open(const std::string& path,
                                                          StoreOptions options = {});
  bool read_only() const override { return options_.read_only; }
  std::string location() const override { return path_; }

  ~SqliteSessionStore() override;
  SqliteSessionStore(const SqliteSessionStore&) = delete;
  SqliteSessionStore& operator=(const SqliteSessionStore&) = delete;

  const std::string& path() const { return path_; }

  // core::SessionStore (see core/session_store.h for the contracts).
  Result<core::SessionInfo> CreateSession(const core::NewSession& spec) override;
  Result<std::unique_ptr<core::TurnLease>> AcquireTurnLease(std::string_view session_id) override;
  // The lease currently recorded for `session_id` (live or not); nullopt when none.
  Result<std::optional<core::LeaseHolder>> CurrentLease(std::string_view session_id) override;
  Result<int64_t> LeaseNowMs() override;
  // By full id, name, or any unique id prefix; an ambiguous prefix is
  // kInvalidArgument listing the candidates.
  Result<core::SessionInfo> FindSession(std::string_view id_or_name) override;
  Result<core::SessionInfo> LatestSession(const std::optional<std::string>& cwd) override;
  // Walks from `session.head_item_id` (the head as the caller saw it).
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
  // Turns are counted along the whole history (root to head) with
  // TurnStartIndexes; turn N ends just before turn N+1 starts.
  Result<core::SessionInfo> Fork(std::string_view session_id, std::optional<int> at_turn) override;
  Status SetTitle(std::string_view session_id, std::string_view text) override;

  // --- Maintenance (codex sessions ...). `id` is a full session id. ---

  Status Archive(std::string_view id) override;
  Status Unarchive(std::string_view id) override;
  // Sets the name FindSession also accepts; "" clears it. kInvalidArgument
  // when another session already has that name, or when the name could be
  // read as an id prefix (only hex digits and '-').
  Status Rename(std::string_view id, std::string_view name) override;
  // Deletes the session, its turns and events, and every item of its chain
  // that no other session still needs (reachable from another session's head
  // or fork point). Forks of it keep working; their forked_from_session stays
  // as a historical record.
  Result<RemoveStats> Remove(std::string_view id, const RemoveHooks& hooks = {}) override;
  // Removes the sessions `query` selects, with the items nothing else needs,
  // and returns them (oldest first). With dry_run nothing changes.
  Result<std::vector<core::SessionInfo>> Purge(const PurgeQuery& query,
                                               RemoveStats* stats) override;
  // Items whose plain text (storage/search_text.h) matches `query`, best
  // match first, each with the live sessions that hold it.
  Result<std::vector<SearchHit>> Search(const SearchQuery& query) override;
  // The fork tree containing `id`: its root ancestor and every descendant.
  Result<std::vector<TreeNode>> Tree(std::string_view id) override;
  Result<SessionDetails> Show(std::string_view id) override;
  Result<std::vector<core::TurnRecord>> LoadTurns(std::string_view id) override;
  Result<std::vector<EventRecord>> LoadEvents(std::string_view id) override;
  Result<std::vector<TurnUsage>> TurnsSince(int64_t since_ms) override;
  // Imports a whole session in one transaction. Returns false (and changes
  // nothing) when a session with spec.id already exists.
  Result<bool> ImportSession(const ImportedSession& session) override;
  Result<bool> ExtendImportedSession(const ImportedSession& session,
                                     std::optional<int64_t> expected_head, size_t from_item,
                                     size_t from_event) override;
  Result<bool> CopySession(const SessionCopy& copy) override;

 private:
  // The store's wall clock (StoreOptions::clock).
  int64_t Now() const { return ClockOr(options_.clock).NowMs(); }
  SqliteSessionStore(std::string path, std::unique_ptr<SQLite::Database> db, StoreOptions options,
                     std::unique_ptr<internal::BusyWait> wait);

  Result<core::SessionInfo> GetById(std::string_view id);
  Result<std::vector<core::StoredItem>> LoadChain(std::optional<int64_t> head,
                                                  bool stop_at_checkpoint);
  Result<RemoveStats> RemoveSessions(const std::vector<std::string>& ids,
                                     const RemoveHooks* hooks = nullptr);

  std::string path_;
  StoreOptions options_;
  std::unique_ptr<internal::BusyWait> wait_;  // installed on db_; outlives it
  std::unique_ptr<SQLite::Database> db_;
  // Append's statements, prepared at its first use (declared after db_:
  // finalized before the connection closes).
  struct AppendStatements;
  std::unique_ptr<AppendStatements> append_;
};

// <codex_home>/sessions.db, opened with SqliteSessionStore::Open. A missing
// CODEX_HOME is created with mode 0700 (unless read_only).
Result<std::unique_ptr<SqliteSessionStore>> OpenSessionStore(const std::string& codex_home,
                                                             StoreOptions options = {});

}  // namespace codex::storage
