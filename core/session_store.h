// SessionStore: the persistence seam of the engine (ARCHITECTURE.md, Data model).
//
// A session is a pointer (head) into a tree of immutable items; a fork is a
// new pointer. Implementations: storage::SqliteSessionStore. Every method
// commits before returning: once Append returns OK the items survive a crash.
// Implementations are not required to be thread-safe; one thread owns a store
// object, while several processes may share the underlying database.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "core/item.h"
#include "core/session_lease.h"
#include "core/token_usage.h"

namespace codex::core {

// The reasons (base/status.h) a session store's error carries (and
// kSessionBusy, core/session_lease.h).
namespace reason {
inline constexpr StatusReason kSessionAdvanced{
    "session_advanced"};  // the head moved under a writer
inline constexpr StatusReason kAmbiguousPrefix{"ambiguous_prefix"};  // an id prefix matches several
}  // namespace reason

struct SessionInfo {
  std::string id;                       // UUIDv7 text
  std::optional<int64_t> head_item_id;  // nullopt while the session has no item
  std::string forked_from_session;      // "" unless a fork
  std::optional<int64_t> forked_from_item;
  std::string cwd;
  std::string model;
  std::string provider;
  std::string title;            // first user message, one line
  std::string name;             // set by `sessions rename`; "" when unnamed
  std::string source = "exec";  // exec | interactive | import | fork
  int64_t created_at_ms = 0;
  int64_t updated_at_ms = 0;
  bool archived = false;
  int64_t tokens_used = 0;
  // The machine the session was created on (its host name; "" for sessions
  // stored before hosts were recorded), and the project key of `cwd` there
  // (storage/project_identity.h; "" outside a git checkout with a remote).
  // `cwd` filters match a session by its cwd on any host, or by its project.
  std::string host;
  std::string project;
};

struct StoredItem {
  int64_t id = 0;
  std::optional<int64_t> parent_id;
  std::string session_id;  // the session that appended it
  std::string turn_id;
  int64_t created_at_ms = 0;
  Item item;
  // The total_tokens the server reported for the response this item ended
  // (RecordUsage); nullopt for items no usage was recorded after.
  std::optional<int64_t> reported_total_tokens;
};

struct NewSession {
  std::string id;  // optional: a UUIDv7 is generated when empty (import passes one)
  std::string cwd;
  std::string model;
  std::string provider;
  std::string title;
  std::string source = "exec";
  // The session this one is a sub-agent of (stored as its forked_from_session,
  // with no fork point: it shares no history); "" = none.
  std::string parent_session;
  std::string host;           // "" = this machine
  int64_t created_at_ms = 0;  // 0 = now
  // Committed with the row, in the same transaction, chained in order (the
  // head is the last). A session is created with its first user message, so
  // no session without one is ever stored (import and fork aside).
  std::vector<Item> items;
  std::string turn_id;  // of `items`
};

struct ListQuery {
  // nullopt = every directory; else the sessions started in it on any host or
  // in the same place of a checkout of the same project (SessionInfo::project).
  std::optional<std::string> cwd;
  bool archived = false;  // list archived sessions instead of live ones
  int limit = 20;
  std::string cursor;  // opaque, from a previous ListPage; "" = first page
};

struct ListPage {
  std::vector<SessionInfo> sessions;
  std::string next_cursor;  // "" when there is no further page
};

enum class TurnStatus { kCompleted, kFailed, kInterrupted };

struct TurnRecord {
  std::string session_id;
  std::string turn_id;
  int64_t started_at_ms = 0;
  int64_t ended_at_ms = 0;
  TurnStatus status = TurnStatus::kCompleted;
  TokenUsage usage;
  std::string error;  // the failure message when status != kCompleted
};

class SessionStore {
 public:
  virtual ~SessionStore() = default;

  virtual Result<SessionInfo> CreateSession(const NewSession& spec) = 0;

  // Takes the turn lease of `session_id` (core/session_lease.h) for this
  // process; the session row need not exist yet (a new session's first turn).
  // kFailedPrecondition / reason "session_busy" (SessionBusyError) while
  // another live holder has it; a gone holder's lease is taken over. The
  // implementation keeps the heartbeat fresh while the returned object lives
  // (from its own thread and connection) and releases the lease when it is
  // destroyed. Appends stay compare-and-set: the lease keeps writers apart,
  // the head check is the last defence.
  virtual Result<std::unique_ptr<TurnLease>> AcquireTurnLease(std::string_view session_id) = 0;

  // By full id, unique id prefix (>= 8 chars) or name. kNotFound otherwise.
  virtual Result<SessionInfo> FindSession(std::string_view id_or_name) = 0;

  // The most recently updated non-archived session, in `cwd` when given (as
  // ListQuery::cwd matches).
  virtual Result<SessionInfo> LatestSession(const std::optional<std::string>& cwd) = 0;

  // The session's current view, oldest first: the chain from head back to (not
  // including) the newest compaction checkpoint, or to the root.
  virtual Result<std::vector<StoredItem>> LoadTranscript(const SessionInfo& session) = 0;

  // The whole chain from the root to head, checkpoints and pre-compaction items included.
  virtual Result<std::vector<StoredItem>> LoadHistory(const SessionInfo& session) = 0;

  // Appends `items` in one transaction, each the child of the previous, the
  // first a child of `expected_head`, then sets the session head to the last
  // (compare-and-set). Returns the new item ids in order. If the head is no
  // longer `expected_head`: kFailedPrecondition, reason "session_advanced",
  // message "session <id> was advanced by another process; use 'codex fork <id>'".
  virtual Result<std::vector<int64_t>> Append(std::string_view session_id,
                                              std::optional<int64_t> expected_head,
                                              std::string_view turn_id,
                                              const std::vector<Item>& items) = 0;

  // Moves the head to `new_head` (an item already on the session's chain or
  // shared tree), compare-and-set against `expected_head`.
  virtual Status MoveHead(std::string_view session_id, std::optional<int64_t> expected_head,
                          std::optional<int64_t> new_head) = 0;

  virtual Result<ListPage> ListSessions(const ListQuery& query) = 0;

  // The total_tokens a response.completed reported, stored with `item_id`,
  // the last item committed before it (the item it followed). Resuming reads
  // it back (StoredItem::reported_total_tokens) so the context estimate of a
  // new process starts from what the server counted.
  virtual Status RecordUsage(int64_t item_id, int64_t total_tokens) = 0;
  // Usage and outcome of one turn; adds usage.total_tokens to tokens_used.
  virtual Status RecordTurn(const TurnRecord& turn) = 0;

  // A rollout event that is not an item (approvals, errors, compactions ...).
  // `payload_json` is a JSON object.
  virtual Status RecordEvent(std::string_view session_id, std::string_view turn_id,
                             std::string_view type, std::string_view payload_json) = 0;
  // The payload of the session's latest event of `type`; for a fork without
  // one, its parent's latest recorded up to the fork's creation (and so on up
  // the fork tree). nullopt when there is none. State kept as events whose
  // latest value is the state (the thread goal, core/goals.h) reads it here.
  virtual Result<std::optional<std::string>> LatestEvent(std::string_view session_id,
                                                         std::string_view type) = 0;

  // A new session whose head is an existing item of `session_id`: its head, or
  // the last item of turn `at_turn` (1-based; 0: before turn 1). No item is copied.
  // Its title is "fork of <the parent's title>" (of the parent's first 8 id
  // characters when untitled), cut like any title, until its first own user
  // message replaces it (Conversation does, through SetTitle).
  virtual Result<SessionInfo> Fork(std::string_view session_id, std::optional<int> at_turn) = 0;

  // Sets the session's title to the one-line title of `text` (its first
  // non-empty line, trimmed and cut as a title from a first message is); the
  // session's updated time is left alone. kNotFound for an unknown session.
  virtual Status SetTitle(std::string_view session_id, std::string_view text) = 0;
};

}  // namespace codex::core
