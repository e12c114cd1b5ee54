// SqliteSessionStore: reading sessions back (find, latest, list, chains,
// tree, turns, events, show).

#include <SQLiteCpp/Statement.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "base/strings.h"
#include "core/context_budget.h"
#include "core/uuid.h"
#include "storage/migrations.h"
#include "storage/project_identity.h"
#include "storage/search_rank.h"
#include "storage/search_text.h"
#include "storage/sqlite_session_store.h"
#include "storage/sqlite_store_internal.h"
#include "storage/sqlite_util.h"
#include "storage/store_rules.h"

namespace codex::storage {

using namespace sqlite_internal;  // NOLINT(google-build-using-namespace)

Result<SessionInfo> SqliteSessionStore::FindSession(std::string_view id_or_name) {
  const std::string key(Trim(id_or_name));
  if (key.empty()) return InvalidArgumentError("empty session id; give an id, a prefix or a name");
  return Guarded(path_, "finding a session", [&]() -> Result<SessionInfo> {
    const std::string lower = Lower(key);
    {
      SQLite::Statement q(*db_,
                          std::string("SELECT ") + kSessionCols + " FROM sessions WHERE id = ?");
      q.bind(1, lower);
      if (q.executeStep()) return ReadSession(q);
    }
    std::vector<SessionInfo> found;
    {
      SQLite::Statement q(*db_,
                          std::string("SELECT ") + kSessionCols + " FROM sessions WHERE name = ?");
      q.bind(1, key);
      if (q.executeStep()) found.push_back(ReadSession(q));
    }
    // A name that reads as an id prefix (refused by Rename, but possible in a
    // database from before that rule) does not shadow the ids it prefixes.
    if (!found.empty() && !LooksLikeHexPrefix(lower)) return found.front();
    if (LooksLikeHexPrefix(lower)) {
      SQLite::Statement q(*db_, std::string("SELECT ") + kSessionCols +
                                    " FROM sessions WHERE id >= ? AND id < ? ORDER BY id LIMIT 11");
      q.bind(1, lower);
      q.bind(2, lower + "\x7f");
      while (q.executeStep()) {
        SessionInfo s = ReadSession(q);
        if (found.empty() || found.front().id != s.id) found.push_back(std::move(s));
      }
      if (found.size() == 1) return found.front();
      if (found.size() > 1) return AmbiguousPrefix(key, found);
    }
    return UnknownSession(key);
  });
}

Result<SessionInfo> SqliteSessionStore::LatestSession(const std::optional<std::string>& cwd) {
  return Guarded(path_, "finding the latest session", [&]() -> Result<SessionInfo> {
    SQLite::Statement q(*db_, RecentSessionsSql(cwd.has_value(), false));
    BindRecent(q, false, cwd ? std::optional<DirScope>(ScopeOf(*cwd)) : std::nullopt, std::nullopt,
               1);
    if (!q.executeStep()) {
      return NotFoundError(cwd ? "no session in " + *cwd + "; start one with 'codex exec'"
                               : std::string("no session yet; start one with 'codex exec'"));
    }
    return ReadSession(q);
  });
}

Result<std::vector<StoredItem>> SqliteSessionStore::LoadChain(std::optional<int64_t> head,
                                                              bool stop_at_checkpoint) {
  std::vector<StoredItem> out;
  if (!head) return out;
  return Guarded(path_, "loading a transcript", [&]() -> Result<std::vector<StoredItem>> {
    // Walk parent links from the head; with ?2 = 1 the walk does not go past
    // a checkpoint and the checkpoint itself is left out.
    // Rows carry their depth (0 = head); placing them by depth avoids an
    // ORDER BY that would sort every body.
    SQLite::Statement q(*db_,
                        "WITH RECURSIVE chain(id, parent_id, kind, depth) AS ("
                        "  SELECT id, parent_id, kind, 0 FROM items WHERE id = ?1"
                        "  UNION ALL"
                        "  SELECT i.id, i.parent_id, i.kind, c.depth + 1"
                        "  FROM chain AS c JOIN items AS i ON i.id = c.parent_id"
                        "  WHERE ?2 = 0 OR c.kind <> 'compaction_checkpoint')"
                        " SELECT i.id, i.parent_id, i.session_id, i.turn_id, i.created_at_ms,"
                        "   i.kind, i.role, i.call_id, i.server_id, i.body, c.depth, u.total_tokens"
                        " FROM chain AS c JOIN items AS i ON i.id = c.id"
                        " LEFT JOIN item_usage AS u ON u.item_id = c.id"
                        " WHERE ?2 = 0 OR c.kind <> 'compaction_checkpoint'");
    q.bind(1, *head);
    q.bind(2, stop_at_checkpoint ? 1 : 0);
    std::vector<std::pair<int64_t, StoredItem>> rows;
    while (q.executeStep()) {
      StoredItem item = ReadItem(q);
      if (!q.getColumn(11).isNull()) item.reported_total_tokens = q.getColumn(11).getInt64();
      rows.emplace_back(q.getColumn(10).getInt64(), std::move(item));
    }
    out.resize(rows.size());
    for (auto& [depth, item] : rows) {
      if (depth < 0 || static_cast<size_t>(depth) >= rows.size()) {
        return DataLossError("sessions database " + path_ + ": the item chain from " +
                             std::to_string(*head) + " is inconsistent");
      }
      out[rows.size() - 1 - static_cast<size_t>(depth)] = std::move(item);
    }
    if (out.empty() && !stop_at_checkpoint) {
      return DataLossError("sessions database " + path_ + ": head item " + std::to_string(*head) +
                           " is missing");
    }
    return std::move(out);
  });
}

Result<std::vector<StoredItem>> SqliteSessionStore::LoadTranscript(const SessionInfo& session) {
  return LoadChain(session.head_item_id, /*stop_at_checkpoint=*/true);
}

Result<std::vector<StoredItem>> SqliteSessionStore::LoadHistory(const SessionInfo& session) {
  return LoadChain(session.head_item_id, /*stop_at_checkpoint=*/false);
}

Result<core::ListPage> SqliteSessionStore::ListSessions(const core::ListQuery& query) {
  int64_t after_ms = 0;
  std::string after_id;
  RETURN_IF_ERROR(CheckListQuery(query, &after_ms, &after_id));
  const bool has_cursor = !query.cursor.empty();
  return Guarded(path_, "listing sessions", [&]() -> Result<core::ListPage> {
    SQLite::Statement q(*db_, RecentSessionsSql(query.cwd.has_value(), has_cursor));
    BindRecent(q, query.archived,
               query.cwd ? std::optional<DirScope>(ScopeOf(*query.cwd)) : std::nullopt,
               has_cursor ? std::optional(std::make_pair(after_ms, after_id)) : std::nullopt,
               query.limit + 1);
    core::ListPage page;
    while (q.executeStep()) page.sessions.push_back(ReadSession(q));
    if (page.sessions.size() > static_cast<size_t>(query.limit)) {
      page.sessions.pop_back();
      page.next_cursor = EncodeCursor(page.sessions.back());
    }
    return page;
  });
}

Result<std::vector<TreeNode>> SqliteSessionStore::Tree(std::string_view id) {
  const std::string sid(id);
  return Guarded(path_, "reading the fork tree", [&]() -> Result<std::vector<TreeNode>> {
    ASSIGN_OR_RETURN(SessionInfo root, GetById(sid));
    // Climb to the oldest ancestor still present (a removed parent ends the climb).
    for (int guard = 0; !root.forked_from_session.empty() && guard < 10'000; ++guard) {
      Result<SessionInfo> parent = GetById(root.forked_from_session);
      if (!parent.ok()) break;
      root = std::move(parent).value();
    }
    SQLite::Statement q(*db_, std::string("WITH RECURSIVE d(id) AS (SELECT ?1 UNION"
                                          " SELECT s.id FROM sessions AS s JOIN d"
                                          " ON s.forked_from_session = d.id)"
                                          " SELECT ") +
                                  kSessionCols +
                                  " FROM sessions WHERE id IN (SELECT id FROM d) AND id <> ?1"
                                  " ORDER BY created_at_ms, id");
    q.bind(1, root.id);
    std::vector<SessionInfo> descendants;
    while (q.executeStep()) descendants.push_back(ReadSession(q));
    return TreeOrder(std::move(root), std::move(descendants));
  });
}

Result<std::vector<core::TurnRecord>> SqliteSessionStore::LoadTurns(std::string_view id) {
  const std::string sid(id);
  return Guarded(path_, "loading turns", [&]() -> Result<std::vector<core::TurnRecord>> {
    SQLite::Statement q(*db_,
                        "SELECT turn_id, status, error, input_tokens, cached_input_tokens,"
                        " output_tokens, reasoning_output_tokens, total_tokens, started_at_ms,"
                        " ended_at_ms FROM turns WHERE session_id = ?"
                        " ORDER BY started_at_ms, ended_at_ms, turn_id");
    q.bind(1, sid);
    std::vector<core::TurnRecord> out;
    while (q.executeStep()) {
      core::TurnRecord t;
      t.session_id = sid;
      t.turn_id = q.getColumn(0).getString();
      t.status = TurnStatusFromName(q.getColumn(1).getText());
      t.error = q.getColumn(2).getString();
      t.usage.input_tokens = q.getColumn(3).getInt64();
      t.usage.cached_input_tokens = q.getColumn(4).getInt64();
      t.usage.output_tokens = q.getColumn(5).getInt64();
      t.usage.reasoning_output_tokens = q.getColumn(6).getInt64();
      t.usage.total_tokens = q.getColumn(7).getInt64();
      t.started_at_ms = q.getColumn(8).getInt64();
      t.ended_at_ms = q.getColumn(9).getInt64();
      out.push_back(std::move(t));
    }
    return out;
  });
}

Result<std::vector<TurnUsage>> SqliteSessionStore::TurnsSince(int64_t since_ms) {
  return Guarded(path_, "summing usage", [&]() -> Result<std::vector<TurnUsage>> {
    // Requests are counted once per (session, turn) from item_usage (one row
    // per response, found by primary key), not per turn over the items.
    SQLite::Statement q(*db_,
                        "WITH r AS (SELECT i.session_id, i.turn_id, count(*) AS n"
                        " FROM item_usage AS u JOIN items AS i ON i.id = u.item_id"
                        " WHERE i.created_at_ms >= ?1 GROUP BY i.session_id, i.turn_id)"
                        " SELECT t.session_id, t.turn_id, t.status, t.error, t.input_tokens,"
                        " t.cached_input_tokens, t.output_tokens, t.reasoning_output_tokens,"
                        " t.total_tokens, t.started_at_ms, t.ended_at_ms, coalesce(r.n, 0)"
                        " FROM turns AS t LEFT JOIN r ON r.session_id = t.session_id"
                        " AND r.turn_id = t.turn_id WHERE t.started_at_ms >= ?1"
                        " ORDER BY t.started_at_ms, t.session_id, t.turn_id");
    q.bind(1, since_ms);
    std::vector<TurnUsage> out;
    while (q.executeStep()) {
      TurnUsage u;
      core::TurnRecord& t = u.turn;
      t.session_id = q.getColumn(0).getString();
      t.turn_id = q.getColumn(1).getString();
      t.status = TurnStatusFromName(q.getColumn(2).getText());
      t.error = q.getColumn(3).getString();
      t.usage.input_tokens = q.getColumn(4).getInt64();
      t.usage.cached_input_tokens = q.getColumn(5).getInt64();
      t.usage.output_tokens = q.getColumn(6).getInt64();
      t.usage.reasoning_output_tokens = q.getColumn(7).getInt64();
      t.usage.total_tokens = q.getColumn(8).getInt64();
      t.started_at_ms = q.getColumn(9).getInt64();
      t.ended_at_ms = q.getColumn(10).getInt64();
      u.requests = q.getColumn(11).getInt64();
      out.push_back(std::move(u));
    }
    return out;
  });
}

Result<std::vector<EventRecord>> SqliteSessionStore::LoadEvents(std::string_view id) {
  const std::string sid(id);
  return Guarded(path_, "loading events", [&]() -> Result<std::vector<EventRecord>> {
    SQLite::Statement q(*db_,
                        "SELECT id, turn_id, type, payload, created_at_ms FROM events"
                        " WHERE session_id = ? ORDER BY id");
    q.bind(1, sid);
    std::vector<EventRecord> out;
    while (q.executeStep()) {
      EventRecord e;
      e.id = q.getColumn(0).getInt64();
      e.session_id = sid;
      e.turn_id = q.getColumn(1).getString();
      e.type = q.getColumn(2).getString();
      e.payload_json = ReadStoredText(q.getColumn(3));
      e.created_at_ms = q.getColumn(4).getInt64();
      out.push_back(std::move(e));
    }
    return out;
  });
}

Result<SessionDetails> SqliteSessionStore::Show(std::string_view id) {
  const std::string sid(id);
  return Guarded(path_, "reading session " + sid, [&]() -> Result<SessionDetails> {
    SessionDetails d;
    ASSIGN_OR_RETURN(d.session, GetById(sid));
    ASSIGN_OR_RETURN(d.history, LoadHistory(d.session));
    ASSIGN_OR_RETURN(d.turns, LoadTurns(sid));
    ASSIGN_OR_RETURN(d.events, LoadEvents(sid));
    SQLite::Statement q(*db_, std::string("SELECT ") + kSessionCols +
                                  " FROM sessions WHERE forked_from_session = ?"
                                  " ORDER BY created_at_ms, id");
    q.bind(1, sid);
    while (q.executeStep()) d.forks.push_back(ReadSession(q));
    return d;
  });
}

}  // namespace codex::storage
