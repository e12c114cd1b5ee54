// SessionDatabase: core::SessionStore plus the maintenance queries behind
// `codex sessions ...` (archive, rename, rm, purge, search, tree, show,
// import). One contract, two backends (ARCHITECTURE.md, Data model):
// storage::SqliteSessionStore (one file, the embedded default) and
// storage::PostgresSessionStore (a shared server, for teams). Both keep the
// same semantics, messages and Status reasons; the storage tests run
// against each of them.
//
// Implementations are not thread-safe: one thread uses an object at a time
// (open one object per thread or process).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "core/cancel.h"
#include "core/session_lease.h"
#include "core/session_store.h"
#include "core/transcript.h"

namespace codex::storage {

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
  int busy_timeout_ms = 10'000;  // the most a write waits for a lock, in total
  int wait_notice_ms = 1'000;    // on_wait is called once a wait lasts this long
  // Called once a wait lasts wait_notice_ms, with who holds the lock as far as
  // can be told (LockHolder: "another codex process (pid 12)", "another
  // process (sqlite3, pid 34)", "another process"); e.g. prints "waiting for …".
  std::function<void(const std::string& holder)> on_wait;
  // Open without writing: no file or directory is created, no migration is
  // applied (an outdated schema is an error). Also chosen automatically when
  // the database cannot be opened for writing (a read-only CODEX_HOME).
  bool read_only = false;
  int64_t lease_heartbeat_ms = core::kLeaseHeartbeatMs;
  // PostgreSQL: the most one statement may run (statement_timeout; 0 = no
  // limit). Migrations and the wait for another process's migration are
  // exempt. A statement cut short fails with kDeadlineExceeded.
  int statement_timeout_ms = 30'000;
  // The wall clock the store stamps sessions, items and events with, and (on
  // SQLite) writes heartbeats with and judges leases by (base/clock.h); null
  // is the system clock. Must outlive the store and its leases. PostgreSQL
  // judges leases and purges by the server's clock (one clock for every
  // host), so a test ages a lease there by moving its heartbeat back.
  const Clock* clock = nullptr;
};

// A full-text search match: one item and every live session whose history
// holds it (its creator, forks that inherited it).
struct SearchHit {
  int64_t item_id = 0;
  double score = 0;     // BM25 (storage/search_rank.h), higher first; a later page's key
  std::string kind;     // the item's kind: message, reasoning, function_call_output, ...
  std::string role;     // for messages
  std::string snippet;  // one line; matched terms wrapped in [ ], cut with "…"
  struct Where {
    core::SessionInfo session;
    int turn = 0;  // 1-based turn of the session the item belongs to; 0 = before the first
  };
  std::vector<Where> sessions;  // newest first
};

// What a search ranked by: the store as it was at a first page, so that a
// later page (`codex sessions search --cursor`) ranks every item the first
// page saw with the same scores, whatever was stored or removed since.
struct SearchBasis {
  int64_t rows = 0;              // BM25's N: the searchable items
  int64_t tokens = 0;            // their tokens (avgdl = tokens / rows)
  std::vector<int64_t> holding;  // per phrase of the query: the items holding it
  int64_t max_item_id = 0;       // the newest item then
};

// A later page starts after this hit of the same ranking.
struct SearchAfter {
  double score = 0;
  int64_t item_id = 0;
};

struct SearchQuery {
  std::string text;                // words (ANDed), "a phrase", prefix*
  std::optional<std::string> cwd;  // only sessions of this directory; nullopt = all
  int limit = 20;                  // matching items
  // A later page: rank by `basis` (what the first page's `basis_out` got;
  // kInvalidArgument when it has not one count per phrase of `text`), over
  // the items up to basis->max_item_id, and list only the hits after `after`.
  // Items stored since are left out; hits of sessions removed since are gone.
  std::optional<SearchBasis> basis;
  std::optional<SearchAfter> after;
  SearchBasis* basis_out = nullptr;  // when set, receives the basis ranked by
};

// What Purge removes: sessions (archived or not) last updated before
// `updated_before_ms`, only in `cwd` when set.
struct PurgeQuery {
  int64_t updated_before_ms = 0;
  std::optional<std::string> cwd;
  bool dry_run = false;  // list what would go, change nothing
  // Told, as the sessions go (in batches of kPurgeBatch, all in the one
  // transaction), how many are removed so far of how many; may be empty.
  std::function<void(int64_t done, int64_t total)> progress;
  // Checked before each batch (may be null): once cancelled (Ctrl-C), Purge
  // rolls back and returns kCancelled (PurgeCancelledError); nothing is removed.
  const core::CancelToken* cancel = nullptr;
};

// The kCancelled status of a purge stopped by PurgeQuery::cancel.
Status PurgeCancelledError();

// How many sessions Purge removes between two progress reports.
inline constexpr size_t kPurgeBatch = 100;

// What Remove reports and checks as it deletes one session's items (in
// batches of kRemoveItemBatch, newest first, all in the one transaction); both
// may be empty: then the items go in one statement.
struct RemoveHooks {
  // Items deleted so far, of how many the session takes with it.
  std::function<void(int64_t done, int64_t total)> progress;
  // Checked before each batch: once cancelled (Ctrl-C), Remove rolls back and
  // returns kCancelled (RemoveCancelledError); nothing is removed.
  const core::CancelToken* cancel = nullptr;
};

// The kCancelled status of a removal stopped by RemoveHooks::cancel.
Status RemoveCancelledError();

// How many items Remove deletes between two progress reports.
inline constexpr int64_t kRemoveItemBatch = 2'000;

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

// A session a live turn holds the lease of (core/session_lease.h), and its holder.
struct BusySession {
  core::SessionInfo session;
  core::LeaseHolder holder;
};

// One turn and the responses recorded in it: how many items the session
// itself appended in the turn carry a reported usage (RecordUsage), i.e. the
// model requests of the turn whose usage the server reported.
struct TurnUsage {
  core::TurnRecord turn;
  int64_t requests = 0;
};

// What Remove / Purge deleted, and what Purge left alone.
struct RemoveStats {
  int64_t sessions = 0;
  int64_t items = 0;
  // Purge (also with dry_run): the selected sessions it skipped because a
  // live turn holds their lease, oldest first.
  std::vector<BusySession> busy;
};

// A whole session to import atomically (storage/rollout.h builds these).
struct ImportedItem {
  std::string turn_id;
  int64_t created_at_ms = 0;
  core::Item item;
};
// The last line of a rollout that a crash cut off (no newline, not a JSON
// object): import keeps the lines before it and drops it.
struct DroppedTail {
  size_t line = 0;   // 1-based line number
  size_t bytes = 0;  // its length
};

// A complete line of a rollout that is not one (not JSON, not a rollout
// line, an item that does not decode): import drops it and keeps the others,
// as Codex 0.169 does when it reads the file ("failed to parse line"). A
// crash that Codex resumed leaves one: the cut line with the next glued on.
struct DroppedLine {
  size_t line = 0;  // 1-based line number
  std::string why;  // "not a rollout line (a JSON object with \"type\")", ...
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
  std::optional<DroppedTail> dropped_tail;  // set by ParseRollout
  std::vector<DroppedLine> dropped_lines;   // set by ParseRollout, in file order
  // Told as ImportSession / ExtendImportedSession store the items, with how
  // many are stored so far (a big rollout takes seconds); may be empty.
  std::function<void(size_t stored)> progress;
};

// A user message from the person (core/transcript.h, the rule compaction
// and the CLI share): turns start at real user messages; titles come from the
// first one.
using core::IsRealUserMessage;

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

// One session as `codex sessions migrate` copies it into another database
// (SessionDatabase::CopySession). Item ids are the destination's own: the
// copied chain hangs from `base_item_id`, an item already copied with the
// session this one was forked from, so a fork shares its parent's items in
// the destination as it did in the source.
struct SessionCopy {
  // Every field is kept but head_item_id and forked_from_item (source ids):
  // the head becomes the last copied item (base_item_id when `items` is empty).
  core::SessionInfo info;
  std::optional<int64_t> base_item_id;  // a destination id; nullopt = the chain starts at a root
  // Oldest first, each the child of the previous; turn_id, created_at_ms,
  // item and reported_total_tokens are kept, id and parent_id ignored.
  std::vector<core::StoredItem> items;
  // The destination fork point: forked_from_item when set (a destination id),
  // else the copy of items[forked_from_index] when set, else none.
  std::optional<int64_t> forked_from_item;
  std::optional<size_t> forked_from_index;
  std::vector<core::TurnRecord> turns;
  std::vector<EventRecord> events;
};

class SessionDatabase : public core::SessionStore {
 public:
  ~SessionDatabase() override = default;

  // True when opened without write access (SQLite: a read-only CODEX_HOME).
  virtual bool read_only() const = 0;
  // Names the database in messages: the file path, or the server URL with
  // any password replaced by "***". Never contains a secret.
  virtual std::string location() const = 0;

  // The lease currently recorded for `session_id` (live or not); nullopt when none.
  virtual Result<std::optional<core::LeaseHolder>> CurrentLease(std::string_view session_id) = 0;
  // The time this store judges leases by (the now_ms of core::LeaseHolderIsGone):
  // its Clock on SQLite, the server's clock on PostgreSQL. A caller that judges
  // a CurrentLease itself (a copy's source) asks this, never its own clock.
  virtual Result<int64_t> LeaseNowMs() = 0;

  // --- Maintenance (codex sessions ...). `id` is a full session id. ---

  virtual Status Archive(std::string_view id) = 0;
  virtual Status Unarchive(std::string_view id) = 0;
  // Sets the name FindSession also accepts; "" clears it. kInvalidArgument
  // when another session already has that name, or when the name could be
  // read as an id prefix (only hex digits and '-').
  virtual Status Rename(std::string_view id, std::string_view name) = 0;
  // Deletes the session, its turns and events, and every item of its chain
  // that no other session still needs (reachable from another session's head
  // or fork point). Forks of it keep working; their forked_from_session stays
  // as a historical record.
  //
  // Remove and Archive refuse a session whose lease a live turn holds
  // (SessionBusyError, exit 3), and Purge skips such sessions
  // (RemoveStats::busy): the lease is read in the transaction that changes
  // the session, with new leases held off until it ends (SQLite: the write
  // lock; PostgreSQL: a lock on session_leases), so nothing is removed
  // underneath a running turn. A lease whose holder is gone does not count.
  virtual Result<RemoveStats> Remove(std::string_view id, const RemoveHooks& hooks = {}) = 0;
  // Removes the sessions `query` selects, but those a live turn holds, with
  // the items nothing else needs, and returns them (oldest first). With
  // dry_run nothing changes.
  virtual Result<std::vector<core::SessionInfo>> Purge(const PurgeQuery& query,
                                                       RemoveStats* stats) = 0;
  // Items whose plain text (storage/search_text.h) matches `query`, best
  // match first, each with the live sessions that hold it.
  virtual Result<std::vector<SearchHit>> Search(const SearchQuery& query) = 0;
  // The fork tree containing `id`: its root ancestor and every descendant.
  virtual Result<std::vector<TreeNode>> Tree(std::string_view id) = 0;
  virtual Result<SessionDetails> Show(std::string_view id) = 0;
  virtual Result<std::vector<core::TurnRecord>> LoadTurns(std::string_view id) = 0;
  virtual Result<std::vector<EventRecord>> LoadEvents(std::string_view id) = 0;
  // One implementation for both backends, over FindSession and LoadEvents.
  Result<std::optional<std::string>> LatestEvent(std::string_view session_id,
                                                 std::string_view type) final;
  // Every turn of every session (archived ones too) started at or after
  // `since_ms`, oldest first, with its requests: one query however many
  // sessions there are (codex sessions usage).
  virtual Result<std::vector<TurnUsage>> TurnsSince(int64_t since_ms) = 0;
  // Imports a whole session in one transaction. Returns false (and changes
  // nothing) when a session with spec.id already exists.
  virtual Result<bool> ImportSession(const ImportedSession& session) = 0;
  // Adds to a session already in the store what a longer copy of its rollout
  // holds (Codex resumed the file a crash had cut off): session.items from
  // `from_item` on, chained after `expected_head`, with their reported
  // totals; every turn of `session` (a turn already there is replaced); and
  // session.events from `from_event` on. One transaction. Returns false (and
  // changes nothing) when the session's head is no longer `expected_head`.
  virtual Result<bool> ExtendImportedSession(const ImportedSession& session,
                                             std::optional<int64_t> expected_head, size_t from_item,
                                             size_t from_event) = 0;
  // Copies a whole session in one transaction (codex sessions migrate).
  // Returns false (and changes nothing) when a session with info.id already
  // exists, so a copy interrupted at any point is finished by running it again.
  virtual Result<bool> CopySession(const SessionCopy& copy) = 0;
};

}  // namespace codex::storage
