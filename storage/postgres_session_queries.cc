// PostgresSessionStore: reading sessions back (find, latest, list, chains,
// tree, turns, events, show).

#include "base/strings.h"
#include "storage/postgres_session_store.h"
#include "storage/postgres_store_internal.h"

namespace codex::storage {

using namespace postgres_internal;  // NOLINT(google-build-using-namespace)

Result<SessionInfo> PostgresSessionStore::FindSession(std::string_view id_or_name) {
  const std::string key(Trim(id_or_name));
  if (key.empty()) return InvalidArgumentError("empty session id; give an id, a prefix or a name");
  return Read(*conn_, "finding a session", [&]() -> Result<SessionInfo> {
    const std::string lower = Lower(key);
    if (auto s = SessionById(*conn_, lower)) return *s;
    {
      Rows q = conn_->Exec(std::string("SELECT ") + kSessionCols + " FROM sessions WHERE name = $1",
                           {P(key)});
      if (q.size() > 0) return ReadSession(q, 0);
    }
    if (LooksLikeHexPrefix(lower)) {
      Rows q = conn_->Exec(std::string("SELECT ") + kSessionCols +
                               " FROM sessions WHERE id COLLATE \"C\" >= $1 AND id COLLATE \"C\" <"
                               " $2 ORDER BY id COLLATE \"C\" LIMIT 11",
                           {P(lower), P(lower + "\x7f")});
      std::vector<SessionInfo> found = ReadSessions(q);
      if (found.size() == 1) return found.front();
      if (found.size() > 1) return AmbiguousPrefix(key, found);
    }
    return UnknownSession(key);
  });
}

Result<SessionInfo> PostgresSessionStore::LatestSession(const std::optional<std::string>& cwd) {
  return Read(*conn_, "finding the latest session", [&]() -> Result<SessionInfo> {
    std::string sql = std::string("SELECT ") + kSessionCols + " FROM sessions WHERE archived = 0";
    std::vector<Param> params;
    if (cwd) sql += " AND " + ScopeSql(params, ScopeOf(*cwd));
    sql += std::string(kRecentOrder) + " LIMIT 1";
    Rows q = conn_->Exec(sql, params);
    if (q.size() == 0) {
      return NotFoundError(cwd ? "no session in " + *cwd + "; start one with 'codex exec'"
                               : std::string("no session yet; start one with 'codex exec'"));
    }
    return ReadSession(q, 0);
  });
}

Result<std::vector<StoredItem>> PostgresSessionStore::LoadTranscript(const SessionInfo& session) {
  return Read(*conn_, "loading a transcript",
              [&] { return LoadChain(*conn_, session.head_item_id, /*stop_at_checkpoint=*/true); });
}

Result<std::vector<StoredItem>> PostgresSessionStore::LoadHistory(const SessionInfo& session) {
  return Read(*conn_, "loading a transcript", [&] {
    return LoadChain(*conn_, session.head_item_id, /*stop_at_checkpoint=*/false);
  });
}

Result<core::ListPage> PostgresSessionStore::ListSessions(const core::ListQuery& query) {
  int64_t after_ms = 0;
  std::string after_id;
  RETURN_IF_ERROR(CheckListQuery(query, &after_ms, &after_id));
  const bool has_cursor = !query.cursor.empty();
  return Read(*conn_, "listing sessions", [&]() -> Result<core::ListPage> {
    std::vector<Param> params{P(query.archived ? 1 : 0)};
    std::string sql = std::string("SELECT ") + kSessionCols + " FROM sessions WHERE archived = $1";
    if (query.cwd) sql += " AND " + ScopeSql(params, ScopeOf(*query.cwd));
    if (has_cursor) {
      params.push_back(P(after_ms));
      const std::string ms = "$" + std::to_string(params.size());
      params.push_back(P(after_id));
      const std::string id = "$" + std::to_string(params.size());
      // The slot bound lets the recency index start at the cursor's slot.
      sql += " AND updated_slot <= " + ms + "::bigint / " + std::to_string(kUpdatedSlotMs) +
             " AND (updated_at_ms < " + ms + " OR (updated_at_ms = " + ms +
             " AND id COLLATE \"C\" < " + id + "))";
    }
    params.push_back(P(static_cast<int64_t>(query.limit) + 1));
    sql += std::string(kRecentOrder) + " LIMIT $" + std::to_string(params.size());
    core::ListPage page;
    page.sessions = ReadSessions(conn_->Exec(sql, params));
    if (page.sessions.size() > static_cast<size_t>(query.limit)) {
      page.sessions.pop_back();
      page.next_cursor = EncodeCursor(page.sessions.back());
    }
    return page;
  });
}

Result<std::vector<TreeNode>> PostgresSessionStore::Tree(std::string_view id) {
  const std::string sid(id);
  return Read(*conn_, "reading the fork tree", [&]() -> Result<std::vector<TreeNode>> {
    ASSIGN_OR_RETURN(SessionInfo root, GetById(*conn_, sid));
    // Climb to the oldest ancestor still present (a removed parent ends the climb).
    for (int guard = 0; !root.forked_from_session.empty() && guard < 10'000; ++guard) {
      std::optional<SessionInfo> parent = SessionById(*conn_, root.forked_from_session);
      if (!parent) break;
      root = std::move(*parent);
    }
    Rows q = conn_->Exec(std::string("WITH RECURSIVE d(id) AS (SELECT $1::text UNION"
                                     " SELECT s.id FROM sessions AS s JOIN d"
                                     " ON s.forked_from_session = d.id)"
                                     " SELECT ") +
                             kSessionCols +
                             " FROM sessions WHERE id IN (SELECT id FROM d) AND id <> $1"
                             " ORDER BY created_at_ms, id COLLATE \"C\"",
                         {P(root.id)});
    return TreeOrder(std::move(root), ReadSessions(q));
  });
}

namespace {

std::vector<core::TurnRecord> ReadTurns(PgConnection& conn, const std::string& sid) {
  Rows q = conn.Exec(
      "SELECT turn_id, status, error, input_tokens, cached_input_tokens, output_tokens,"
      " reasoning_output_tokens, total_tokens, started_at_ms, ended_at_ms FROM turns"
      " WHERE session_id = $1 ORDER BY started_at_ms, ended_at_ms, turn_id COLLATE \"C\"",
      {P(sid)});
  std::vector<core::TurnRecord> out;
  for (int r = 0; r < q.size(); ++r) {
    core::TurnRecord t;
    t.session_id = sid;
    t.turn_id = q.Str(r, 0);
    t.status = TurnStatusFromName(q.Str(r, 1));
    t.error = q.Str(r, 2);
    t.usage.input_tokens = q.Int(r, 3);
    t.usage.cached_input_tokens = q.Int(r, 4);
    t.usage.output_tokens = q.Int(r, 5);
    t.usage.reasoning_output_tokens = q.Int(r, 6);
    t.usage.total_tokens = q.Int(r, 7);
    t.started_at_ms = q.Int(r, 8);
    t.ended_at_ms = q.Int(r, 9);
    out.push_back(std::move(t));
  }
  return out;
}

std::vector<EventRecord> ReadEvents(PgConnection& conn, const std::string& sid) {
  Rows q = conn.Exec(
      "SELECT id, turn_id, type, payload, created_at_ms FROM events WHERE session_id = $1"
      " ORDER BY id",
      {P(sid)});
  std::vector<EventRecord> out;
  for (int r = 0; r < q.size(); ++r) {
    EventRecord e;
    e.id = q.Int(r, 0);
    e.session_id = sid;
    e.turn_id = q.Str(r, 1);
    e.type = q.Str(r, 2);
    e.payload_json = TextFromStored(q.Bytea(r, 3), "event " + std::to_string(e.id));
    e.created_at_ms = q.Int(r, 4);
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace

Result<std::vector<core::TurnRecord>> PostgresSessionStore::LoadTurns(std::string_view id) {
  const std::string sid(id);
  return Read(*conn_, "loading turns",
              [&]() -> Result<std::vector<core::TurnRecord>> { return ReadTurns(*conn_, sid); });
}

Result<std::vector<TurnUsage>> PostgresSessionStore::TurnsSince(int64_t since_ms) {
  return Read(*conn_, "summing usage", [&]() -> Result<std::vector<TurnUsage>> {
    // As the SQLite backend: requests grouped once from item_usage.
    Rows q = conn_->Exec(
        "WITH r AS (SELECT k.id AS session_id, i.turn_id, count(*) AS n"
        " FROM item_usage AS u JOIN items AS i ON i.id = u.item_id"
        " JOIN session_keys AS k ON k.key = i.session_key"
        " WHERE i.created_at_ms >= $1 GROUP BY k.id, i.turn_id)"
        " SELECT t.session_id, t.turn_id, t.status, t.error, t.input_tokens,"
        " t.cached_input_tokens, t.output_tokens, t.reasoning_output_tokens, t.total_tokens,"
        " t.started_at_ms, t.ended_at_ms, coalesce(r.n, 0)"
        " FROM turns AS t LEFT JOIN r ON r.session_id = t.session_id AND r.turn_id = t.turn_id"
        " WHERE t.started_at_ms >= $1"
        " ORDER BY t.started_at_ms, t.session_id COLLATE \"C\", t.turn_id COLLATE \"C\"",
        {P(since_ms)});
    std::vector<TurnUsage> out;
    for (int r = 0; r < q.size(); ++r) {
      TurnUsage u;
      core::TurnRecord& t = u.turn;
      t.session_id = q.Str(r, 0);
      t.turn_id = q.Str(r, 1);
      t.status = TurnStatusFromName(q.Str(r, 2));
      t.error = q.Str(r, 3);
      t.usage.input_tokens = q.Int(r, 4);
      t.usage.cached_input_tokens = q.Int(r, 5);
      t.usage.output_tokens = q.Int(r, 6);
      t.usage.reasoning_output_tokens = q.Int(r, 7);
      t.usage.total_tokens = q.Int(r, 8);
      t.started_at_ms = q.Int(r, 9);
      t.ended_at_ms = q.Int(r, 10);
      u.requests = q.Int(r, 11);
      out.push_back(std::move(u));
    }
    return out;
  });
}

Result<std::vector<EventRecord>> PostgresSessionStore::LoadEvents(std::string_view id) {
  const std::string sid(id);
  return Read(*conn_, "loading events",
              [&]() -> Result<std::vector<EventRecord>> { return ReadEvents(*conn_, sid); });
}

Result<SessionDetails> PostgresSessionStore::Show(std::string_view id) {
  const std::string sid(id);
  // One snapshot: the history, turns and forks agree with each other.
  return Transaction(*conn_, "reading session " + sid, [&]() -> Result<SessionDetails> {
    conn_->Exec("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY");
    SessionDetails d;
    ASSIGN_OR_RETURN(d.session, GetById(*conn_, sid));
    ASSIGN_OR_RETURN(d.history, LoadChain(*conn_, d.session.head_item_id, false));
    d.turns = ReadTurns(*conn_, sid);
    d.events = ReadEvents(*conn_, sid);
    d.forks = ReadSessions(conn_->Exec(std::string("SELECT ") + kSessionCols +
                                           " FROM sessions WHERE forked_from_session = $1"
                                           " ORDER BY created_at_ms, id COLLATE \"C\"",
                                       {P(sid)}));
    return d;
  });
}

}  // namespace codex::storage
