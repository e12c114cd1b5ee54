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

namespace codex::storage {

namespace internal {
struct BusyWait;
}

// One row of the `events` table.
struct EventRecord {
  int64_t id = 0;
  std::string session_id;
  std::string turn_id;
  std::string type;
  std::string payload_json;  // a JSON object
  int64_t created_at_ms = 0;
};

// How Open behaves under contention and on a read-only CODEX_HOME.
struct StoreOptions {
  int busy_timeout_ms = 10'000;   // the most a write waits for a lock, in total
  int wait_notice_ms = 1'000;     // on_wait is called once a wait lasts this long
  std::function<void()> on_wait;  // e.g. print "waiting for another codex process…"
  // Open without writing: no file or directory is created, no migration is
  // applied (an outdated schema is an error). Also chosen automatically when
  // the database cannot be opened for writing (a read-only CODEX_HOME).
  bool read_only = false;
  int64_t lease_heartbeat_ms = core::kLeaseHeartbeatMs;
};

// A full-text search match: one item and every live session whose history
// holds it (its creator, forks that inherited it).
struct SearchHit {
  int64_t item_id = 0;
  std::string kind;     // the item's kind: message, reasoning, function_call_output, ...
  std::string role;     // for messages
  std::string snippet;  // one line; matched terms wrapped in [ ], cut with "…"
  struct Where {
    core::SessionInfo session;
    int turn = 0;  // 1-based turn of the session the item belongs to; 0 = before the first
  };
  std::vector<Where> sessions;  // newest first
};

struct SearchQuery {
  std::string text;                // words (ANDed), "a phrase", prefix*
  std::optional<std::string> cwd;  // only sessions of this directory; nullopt = all
  int limit = 20;                  // matching items
};

// What Purge removes: sessions (archived or not) last updated before
// `updated_before_ms`, only in `cwd` when set.
struct PurgeQuery {
  int64_t updated_before_ms = 0;
  std::optional<std::string> cwd;
  bool dry_run = false;  // list what would go, change nothing
};

// One session of a fork tree, in depth-first order (parents before children).
struct TreeNode {
  core::SessionInfo session;
  int depth = 0;  // 0 = the root of the tree
};

// Everything `codex sessions show` prints.
struct SessionDetails {
  core::SessionInfo session;
  std::vector<core::StoredItem> history;  // root to head, checkpoints included
  std::vector<core::TurnRecord> turns;    // oldest first
  std::vector<EventRecord> events;        // oldest first
  std::vector<core::SessionInfo> forks;   // sessions forked from this one
};

// What Remove / Purge deleted.
struct RemoveStats {
  int64_t sessions = 0;
  int64_t items = 0;
};

// A whole session to import atomically (storage/rollout.h builds these).
struct ImportedItem {
  std::string turn_id;
  int64_t created_at_ms = 0;
  core::Item item;
};
struct ImportedSession {
  core::NewSession spec;  // spec.id required
  int64_t updated_at_ms = 0;
  std::vector<ImportedItem> items;  // oldest first, chained in this order
  // items[index] -> the total_tokens a token_count event reported after it
  // (stored as by RecordUsage).
  std::map<size_t, int64_t> reported_totals;
  std::vector<core::TurnRecord> turns;
  std::vector<EventRecord> events;
};

// True for a user message typed by a person, false for injected context
// (core::IsContextItem, and <environment_context>, <user_instructions>,
// # AGENTS.md, <permissions instructions> even after leading whitespace). Turns start
// at real user messages; titles come from the first one.
bool IsRealUserMessage(const core::Item& item);

// The "replacement_items" count of a compaction checkpoint body (see
// core/compaction_checkpoint.h): how many items after the checkpoint form the
// compacted history. nullopt when absent or not a checkpoint.
std::optional<int64_t> CheckpointReplacementItems(const core::Item& item);

// Indexes of the items of `chain` (oldest first) that start a turn: real user
// messages, except those inside a checkpoint's replacement history (copies
// of earlier messages and summaries are not new turns). Turn N (1-based)
// runs from starts[N-1] to before starts[N].
std::vector<size_t> TurnStartIndexes(const std::vector<core::StoredItem>& chain);

// "completed" | "failed" | "interrupted": how turns are stored and printed.
std::string_view TurnStatusName(core::TurnStatus status);

// The one-line title for a user message text: first non-empty line, trimmed,
// at most ~80 characters (cut on a UTF-8 boundary, "…" appended when cut).
std::string TitleFromText(std::string_view text);

class SqliteSessionStore final : public core::SessionStore {
 public:
  // Opens (creating when absent, with its parent directories) the database at
  // `path`: the file gets mode 0600 whatever the umask, then WAL, busy
  // timeout and foreign keys are set and the embedded migrations applied.
  static Result<std::unique_ptr<SqliteSessionStore>> Open(const std::string& path,
                                                          StoreOptions options = {});
  bool read_only() const { return options_.read_only; }

  ~SqliteSessionStore() override;
  SqliteSessionStore(const SqliteSessionStore&) = delete;
  SqliteSessionStore& operator=(const SqliteSessionStore&) = delete;

  const std::string& path() const { return path_; }

  // core::SessionStore (see core/session_store.h for the contracts).
  Result<core::SessionInfo> CreateSession(const core::NewSession& spec) override;
  Result<std::unique_ptr<core::TurnLease>> AcquireTurnLease(std::string_view session_id) override;
  // The lease currently recorded for `session_id` (live or not); nullopt when none.
  Result<std::optional<core::LeaseHolder>> CurrentLease(std::string_view session_id);
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

  Status Archive(std::string_view id);
  Status Unarchive(std::string_view id);
  // Sets the name FindSession also accepts; "" clears it. kInvalidArgument
  // when another session already has that name, or when the name could be
  // read as an id prefix (only hex digits and '-').
  Status Rename(std::string_view id, std::string_view name);
  // Deletes the session, its turns and events, and every item of its chain
  // that no other session still needs (reachable from another session's head
  // or fork point). Forks of it keep working; their forked_from_session stays
  // as a historical record.
  Result<RemoveStats> Remove(std::string_view id);
  // Removes the sessions `query` selects, with the items nothing else needs,
  // and returns them (oldest first). With dry_run nothing changes.
  Result<std::vector<core::SessionInfo>> Purge(const PurgeQuery& query, RemoveStats* stats);
  // Items whose plain text (storage/search_text.h) matches `query`, best
  // match first, each with the live sessions that hold it.
  Result<std::vector<SearchHit>> Search(const SearchQuery& query);
  // The fork tree containing `id`: its root ancestor and every descendant.
  Result<std::vector<TreeNode>> Tree(std::string_view id);
  Result<SessionDetails> Show(std::string_view id);
  Result<std::vector<core::TurnRecord>> LoadTurns(std::string_view id);
  Result<std::vector<EventRecord>> LoadEvents(std::string_view id);
  // Imports a whole session in one transaction. Returns false (and changes
  // nothing) when a session with spec.id already exists.
  Result<bool> ImportSession(const ImportedSession& session);

 private:
  SqliteSessionStore(std::string path, std::unique_ptr<SQLite::Database> db, StoreOptions options,
                     std::unique_ptr<internal::BusyWait> wait);

  Result<core::SessionInfo> GetById(std::string_view id);
  Result<std::vector<core::StoredItem>> LoadChain(std::optional<int64_t> head,
                                                  bool stop_at_checkpoint);
  Result<RemoveStats> RemoveSessions(const std::vector<std::string>& ids);

  Result<int> TurnOfItem(int64_t item_id, std::map<int64_t, bool>* real_user);

  std::string path_;
  StoreOptions options_;
  std::unique_ptr<internal::BusyWait> wait_;  // installed on db_; outlives it
  std::unique_ptr<SQLite::Database> db_;
};

// <codex_home>/sessions.db, opened with SqliteSessionStore::Open. A missing
// CODEX_HOME is created with mode 0700 (unless read_only).
Result<std::unique_ptr<SqliteSessionStore>> OpenSessionStore(const std::string& codex_home,
                                                             StoreOptions options = {});

}  // namespace codex::storage
