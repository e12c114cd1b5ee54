// Rules and messages both session store backends share (SqliteSessionStore,
// PostgresSessionStore), so they answer alike. Internal to codex_storage.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "core/session_store.h"
#include "storage/project_identity.h"
#include "storage/session_database.h"

namespace codex::storage::internal {

// kFailedPrecondition, reason "session_advanced".
Status SessionAdvanced(std::string_view id);
// kNotFound "no session '<id>'; list sessions with ...".
Status UnknownSession(std::string_view id);
// kInvalidArgument, reason "ambiguous_prefix": `key` matches every session of
// `candidates` (in id order; the first 10 are listed, "..." says there are more).
Status AmbiguousPrefix(std::string_view key, const std::vector<core::SessionInfo>& candidates);
core::TurnStatus TurnStatusFromName(std::string_view s);
// Only hex digits and '-': could be read as a session id prefix.
bool LooksLikeHexPrefix(std::string_view s);
// The title for a session from the first real user message among `items`.
std::string TitleFromItems(const std::vector<ImportedItem>& items);
// The item a fork at turn `at_turn` (1-based) of `history` starts from: the
// last item of that turn; for 0, the item before turn 1's message (none when
// it starts the chain). kInvalidArgument naming the range otherwise.
Result<std::optional<int64_t>> ForkHeadAtTurn(const std::string& sid,
                                              const std::vector<core::StoredItem>& history,
                                              int at_turn);
// The row of a new fork of `parent` at `head`: a new id, the parent's place
// (cwd, host, project), model and provider, and the title "fork of <parent title>" (or of the
// parent id's first 8 characters) until its first own user message names it.
core::SessionInfo NewFork(const core::SessionInfo& parent, std::optional<int64_t> head,
                          int64_t now_ms);
// `root` and its `descendants` (in creation order) as `sessions tree` lists
// them: depth-first from the root, each session's forks oldest first.
std::vector<TreeNode> TreeOrder(core::SessionInfo root, std::vector<core::SessionInfo> descendants);
// kInvalidArgument naming the problem: an id that is not a UUID, an event
// payload that is not a JSON object (import), a fork point past the items (copy).
Status CheckImport(const ImportedSession& session);
// CheckImport, and `from_item` / `from_event` within the session's items and
// events (SessionDatabase::ExtendImportedSession).
Status CheckExtend(const ImportedSession& session, size_t from_item, size_t from_event);
Status CheckCopy(const SessionCopy& copy);
// Removing the sessions listed in the temporary table rm_sessions, the same
// on both backends (each wraps these in its dialect's "insert, ignoring
// duplicates"): kRemovalCandidatesSql selects every item their heads and fork
// points reach (into rm_candidates, with the items they created);
// kRemovalKeepSql selects the candidates a remaining session still reaches
// (into rm_keep). The candidates not kept are deleted.
inline constexpr const char* kRemovalCandidatesSql =
    "WITH RECURSIVE up(id) AS ("
    "   SELECT head_item_id FROM sessions"
    "    WHERE id IN (SELECT id FROM rm_sessions) AND head_item_id IS NOT NULL"
    "   UNION SELECT forked_from_item FROM sessions"
    "    WHERE id IN (SELECT id FROM rm_sessions) AND forked_from_item IS NOT NULL"
    "   UNION SELECT i.parent_id FROM up JOIN items AS i ON i.id = up.id"
    "    WHERE i.parent_id IS NOT NULL)"
    " SELECT id FROM up";
inline constexpr const char* kRemovalKeepSql =
    "WITH RECURSIVE k(id) AS ("
    "   SELECT s.head_item_id FROM rm_candidates AS c JOIN sessions AS s"
    "    ON s.head_item_id = c.id WHERE s.id NOT IN (SELECT id FROM rm_sessions)"
    "   UNION SELECT s.forked_from_item FROM rm_candidates AS c JOIN sessions AS s"
    "    ON s.forked_from_item = c.id WHERE s.id NOT IN (SELECT id FROM rm_sessions)"
    "   UNION SELECT i.parent_id FROM rm_candidates AS c JOIN items AS i"
    "    ON i.parent_id = c.id WHERE i.id NOT IN (SELECT id FROM rm_candidates)"
    "   UNION SELECT i.parent_id FROM k JOIN items AS i ON i.id = k.id"
    "    WHERE i.parent_id IN (SELECT id FROM rm_candidates))"
    " SELECT id FROM k";
// The sessions a directory filter (ListQuery::cwd, LatestSession,
// SearchQuery::cwd, PurgeQuery::cwd) selects: those whose cwd is `cwd`, on
// any host (so `--cwd` can name another machine's path), and those whose
// project is `project` when it is not "" (the same place in another checkout
// of the same repository, storage/project_identity.h). One rule for both
// backends; the SQL of each spells it as
// `(cwd = :cwd OR (:project <> '' AND project = :project))`.
struct DirScope {
  std::string cwd;
  std::string project;  // ProjectKey(cwd) on this machine
};
DirScope ScopeOf(std::string_view dir);
bool InScope(const core::SessionInfo& s, const DirScope& scope);
// This machine's host name (storage/project_identity.h).
using storage::LocalHost;
// The removal rule (Remove, Archive, Purge): called inside the transaction
// that changes the session, with new leases held off, with the lease row of
// `id` read there (nullopt: none) and the clock leases are judged by
// (`now_ms`). SessionBusyError while its holder lives; OK without a lease or
// when the holder is gone (core::LeaseHolderIsGone).
Status RefuseIfLeased(std::string_view id, const std::optional<core::LeaseHolder>& holder,
                      int64_t now_ms);
// Purge's side of the same rule: the sessions of `selected` no live holder in
// `leases` (every lease row, by session id) holds; the others go to *busy.
std::vector<core::SessionInfo> SkipLeased(std::vector<core::SessionInfo> selected,
                                          const std::map<std::string, core::LeaseHolder>& leases,
                                          int64_t now_ms, std::vector<BusySession>* busy);
// kInvalidArgument for a limit below 1 or a cursor EncodeCursor did not make;
// else the cursor's position in *after_ms and *after_id (unchanged without one).
Status CheckListQuery(const core::ListQuery& query, int64_t* after_ms, std::string* after_id);
// The opaque keyset cursor of ListSessions: after `s` in newest-first order.
std::string EncodeCursor(const core::SessionInfo& s);
bool DecodeCursor(std::string_view cursor, int64_t* ms, std::string* id);

}  // namespace codex::storage::internal
