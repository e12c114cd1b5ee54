// PostgresSessionStore: removing sessions (rm, purge) and the items only they held.

#include "storage/postgres_session_store.h"
#include "storage/postgres_store_internal.h"

namespace codex::storage {

using namespace postgres_internal;  // NOLINT(google-build-using-namespace)

namespace {

// Deletes the sessions in `ids` and the items only they needed, inside the
// caller's transaction (the rules of SqliteSessionStore::RemoveSessions):
//   candidates = the removed sessions' chains (from head and fork point to the
//                root) plus every item they appended;
//   kept       = candidates still needed: another session's head or fork
//                point, the parent of a surviving item, and their ancestors.
Result<RemoveStats> RemoveSessions(PgConnection& conn, const std::vector<std::string>& ids,
                                   const RemoveHooks* hooks = nullptr) {
  RemoveStats stats;
  if (ids.empty()) return stats;
  // Purge calls this once a batch within one transaction: the tables are
  // made once and emptied each time.
  conn.Script(
      "CREATE TEMP TABLE IF NOT EXISTS rm_sessions(id TEXT PRIMARY KEY) ON COMMIT DROP;"
      "CREATE TEMP TABLE IF NOT EXISTS rm_candidates(id BIGINT PRIMARY KEY) ON COMMIT DROP;"
      "CREATE TEMP TABLE IF NOT EXISTS rm_keep(id BIGINT PRIMARY KEY) ON COMMIT DROP;"
      "DELETE FROM rm_sessions; DELETE FROM rm_candidates; DELETE FROM rm_keep;");
  conn.Exec("INSERT INTO rm_sessions(id) SELECT DISTINCT unnest($1::text[])", {P(TextArray(ids))});
  conn.Exec(std::string("INSERT INTO rm_candidates(id) ") + kRemovalCandidatesSql +
            " ON CONFLICT DO NOTHING");
  conn.Exec(
      "INSERT INTO rm_candidates(id)"
      " SELECT id FROM items WHERE session_key IN (SELECT key FROM session_keys"
      " WHERE id IN (SELECT id FROM rm_sessions))"
      " ON CONFLICT DO NOTHING");
  conn.Exec(std::string("INSERT INTO rm_keep(id) ") + kRemovalKeepSql + " ON CONFLICT DO NOTHING");
  conn.Exec("DELETE FROM session_leases WHERE session_id IN (SELECT id FROM rm_sessions)");
  stats.sessions =
      conn.Exec("DELETE FROM sessions WHERE id IN (SELECT id FROM rm_sessions)").Affected();
  if (hooks == nullptr || (!hooks->progress && hooks->cancel == nullptr)) {
    // Children before parents is not needed: the whole set goes in one
    // statement, and parent_id references are checked at its end.
    stats.items = conn.Exec(
                          "DELETE FROM items WHERE id IN"
                          " (SELECT id FROM rm_candidates EXCEPT SELECT id FROM rm_keep)")
                      .Affected();
    return stats;
  }
  // In batches, newest first (a child's id is above its parent's, so no
  // statement ends with a child whose parent it deleted), for the progress
  // and Ctrl-C.
  conn.Script(
      "CREATE TEMP TABLE IF NOT EXISTS rm_delete(id BIGINT PRIMARY KEY) ON COMMIT DROP;"
      "DELETE FROM rm_delete;"
      "INSERT INTO rm_delete(id) SELECT id FROM rm_candidates EXCEPT SELECT id FROM rm_keep;");
  const int64_t total = conn.Exec("SELECT count(*) FROM rm_delete").Int(0, 0);
  while (stats.items < total) {
    if (hooks->cancel != nullptr && hooks->cancel->cancelled()) return RemoveCancelledError();
    const int64_t deleted =
        conn.Exec(
                "WITH b AS (DELETE FROM rm_delete WHERE id IN (SELECT id FROM rm_delete"
                " ORDER BY id DESC LIMIT $1) RETURNING id)"
                " DELETE FROM items WHERE id IN (SELECT id FROM b)",
                {P(kRemoveItemBatch)})
            .Affected();
    if (deleted == 0) break;
    stats.items += deleted;
    if (hooks->progress) hooks->progress(stats.items, total);
  }
  return stats;
}

}  // namespace

Result<RemoveStats> PostgresSessionStore::Remove(std::string_view id, const RemoveHooks& hooks) {
  const std::string sid(id);
  return Transaction(*conn_, "removing " + sid, [&]() -> Result<RemoveStats> {
    const int64_t now = LockLeases(*conn_);
    ASSIGN_OR_RETURN(SessionInfo s, GetById(*conn_, sid, /*for_update=*/true));
    RETURN_IF_ERROR(RefuseIfLeased(s.id, LeaseRow(*conn_, s.id), now));
    return RemoveSessions(*conn_, {s.id}, &hooks);
  });
}

Result<std::vector<SessionInfo>> PostgresSessionStore::Purge(const PurgeQuery& query,
                                                             RemoveStats* stats) {
  // The selected sessions but those a live turn holds (their holders go to stats->busy).
  auto select = [&](int64_t now) -> std::vector<SessionInfo> {
    std::vector<Param> params{P(query.updated_before_ms)};
    std::string sql =
        std::string("SELECT ") + kSessionCols + " FROM sessions WHERE updated_at_ms < $1";
    if (query.cwd) sql += " AND " + ScopeSql(params, ScopeOf(*query.cwd));
    sql += " ORDER BY updated_at_ms, id COLLATE \"C\"";
    std::vector<BusySession> busy;
    std::vector<SessionInfo> out =
        SkipLeased(ReadSessions(conn_->Exec(sql, params)), LeaseRows(*conn_), now, &busy);
    if (stats) stats->busy = std::move(busy);
    return out;
  };
  if (query.dry_run) {
    return Read(*conn_, "listing old sessions", [&]() -> Result<std::vector<SessionInfo>> {
      return select(conn_->Exec(std::string("SELECT ") + kServerNowMs).Int(0, 0));
    });
  }
  return Transaction(*conn_, "purging old sessions", [&]() -> Result<std::vector<SessionInfo>> {
    const int64_t now = LockLeases(*conn_);
    std::vector<SessionInfo> sessions = select(now);
    RemoveStats removed;
    // In batches, for the progress (as SqliteSessionStore::Purge: same result).
    const auto total = static_cast<int64_t>(sessions.size());
    for (size_t at = 0; at < sessions.size(); at += kPurgeBatch) {
      if (query.cancel != nullptr && query.cancel->cancelled()) return PurgeCancelledError();
      std::vector<std::string> ids;
      for (size_t i = at; i < std::min(sessions.size(), at + kPurgeBatch); ++i) {
        ids.push_back(sessions[i].id);
      }
      ASSIGN_OR_RETURN(const RemoveStats part, RemoveSessions(*conn_, ids));
      removed.sessions += part.sessions;
      removed.items += part.items;
      if (query.progress) query.progress(static_cast<int64_t>(at + ids.size()), total);
    }
    if (stats) {
      stats->sessions = removed.sessions;
      stats->items = removed.items;
    }
    return sessions;
  });
}

}  // namespace codex::storage
