// SqliteSessionStore: removing sessions (rm, purge) and the items only they held.

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

// Deletes the sessions in `ids` and the items only they needed. Runs inside
// the caller's write transaction.
//   candidates = the removed sessions' chains (from head and fork point to the
//                root) plus every item they appended;
//   kept       = candidates still needed: another session's head or fork
//                point, the parent of a surviving item, and their ancestors.
Result<RemoveStats> SqliteSessionStore::RemoveSessions(const std::vector<std::string>& ids,
                                                       const RemoveHooks* hooks) {
  RemoveStats stats;
  if (ids.empty()) return stats;
  SQLite::Database& db = *db_;
  db.exec(
      "CREATE TEMP TABLE IF NOT EXISTS rm_sessions(id TEXT PRIMARY KEY);"
      "CREATE TEMP TABLE IF NOT EXISTS rm_candidates(id INTEGER PRIMARY KEY);"
      "CREATE TEMP TABLE IF NOT EXISTS rm_keep(id INTEGER PRIMARY KEY);"
      "DELETE FROM rm_sessions; DELETE FROM rm_candidates; DELETE FROM rm_keep;");
  {
    SQLite::Statement ins(db, "INSERT OR IGNORE INTO rm_sessions(id) VALUES (?)");
    for (const std::string& id : ids) {
      ins.reset();
      ins.bind(1, id);
      ins.exec();
    }
  }
  db.exec(std::string("INSERT OR IGNORE INTO rm_candidates(id) ") + kRemovalCandidatesSql +
          ";"
          "INSERT OR IGNORE INTO rm_candidates(id)"
          " SELECT id FROM items WHERE session_id IN (SELECT id FROM rm_sessions);"
          "INSERT OR IGNORE INTO rm_keep(id) " +
          kRemovalKeepSql + ";");
  db.exec("DELETE FROM session_leases WHERE session_id IN (SELECT id FROM rm_sessions)");
  stats.sessions = db.exec("DELETE FROM sessions WHERE id IN (SELECT id FROM rm_sessions)");
  if (hooks == nullptr || (!hooks->progress && hooks->cancel == nullptr)) {
    stats.items = db.exec(
        "DELETE FROM items WHERE id IN"
        " (SELECT id FROM rm_candidates EXCEPT SELECT id FROM rm_keep)");
  } else {
    // In batches, newest first (a child's id is above its parent's, so no
    // batch leaves a child without its parent), for the progress and Ctrl-C.
    db.exec(
        "CREATE TEMP TABLE IF NOT EXISTS rm_delete(id INTEGER PRIMARY KEY);"
        "DELETE FROM rm_delete;"
        "INSERT INTO rm_delete(id) SELECT id FROM rm_candidates EXCEPT SELECT id FROM rm_keep;");
    const int64_t total = db.execAndGet("SELECT count(*) FROM rm_delete").getInt64();
    SQLite::Statement batch(db,
                            "DELETE FROM items WHERE id IN"
                            " (SELECT id FROM rm_delete ORDER BY id DESC LIMIT ?)");
    SQLite::Statement forget(db,
                             "DELETE FROM rm_delete WHERE id IN"
                             " (SELECT id FROM rm_delete ORDER BY id DESC LIMIT ?)");
    while (stats.items < total) {
      if (hooks->cancel != nullptr && hooks->cancel->cancelled()) return RemoveCancelledError();
      batch.reset();
      batch.bind(1, kRemoveItemBatch);
      const int deleted = batch.exec();
      forget.reset();
      forget.bind(1, kRemoveItemBatch);
      if (forget.exec() == 0) break;
      stats.items += deleted;
      if (hooks->progress) hooks->progress(stats.items, total);
    }
    db.exec("DELETE FROM rm_delete");
  }
  db.exec("DELETE FROM rm_sessions; DELETE FROM rm_candidates; DELETE FROM rm_keep;");
  return stats;
}

Result<RemoveStats> SqliteSessionStore::Remove(std::string_view id, const RemoveHooks& hooks) {
  const std::string sid(id);
  return WithWriteTransaction(*db_, path_, "removing " + sid, [&]() -> Result<RemoveStats> {
    ASSIGN_OR_RETURN(SessionInfo s, GetById(sid));
    // The write lock held since BEGIN IMMEDIATE keeps new leases off until commit.
    RETURN_IF_ERROR(RefuseIfLeased(s.id, LeaseRow(*db_, s.id), Now()));
    return RemoveSessions({s.id}, &hooks);
  });
}

Result<std::vector<SessionInfo>> SqliteSessionStore::Purge(const PurgeQuery& query,
                                                           RemoveStats* stats) {
  auto select = [&]() -> std::vector<SessionInfo> {
    std::string sql =
        std::string("SELECT ") + kSessionCols + " FROM sessions WHERE updated_at_ms < ?";
    if (query.cwd) sql += std::string(" AND ") + kInScope;
    sql += " ORDER BY updated_at_ms, id";
    SQLite::Statement q(*db_, sql);
    q.bind(1, query.updated_before_ms);
    if (query.cwd) BindScope(q, 2, ScopeOf(*query.cwd));
    std::vector<SessionInfo> out;
    while (q.executeStep()) out.push_back(ReadSession(q));
    std::vector<BusySession> busy;
    out = SkipLeased(std::move(out), LeaseRows(*db_), Now(), &busy);
    if (stats) stats->busy = std::move(busy);
    return out;
  };
  if (query.dry_run) {
    return Guarded(path_, "listing old sessions",
                   [&]() -> Result<std::vector<SessionInfo>> { return select(); });
  }
  // The write lock held since BEGIN IMMEDIATE keeps new leases off until commit.
  return WithWriteTransaction(
      *db_, path_, "purging old sessions", [&]() -> Result<std::vector<SessionInfo>> {
        std::vector<SessionInfo> sessions = select();
        RemoveStats removed;
        // In batches, for the progress: removing a batch keeps what
        // the sessions of later batches still need, and the later
        // batch then takes it, so the result is the same.
        const auto total = static_cast<int64_t>(sessions.size());
        for (size_t at = 0; at < sessions.size(); at += kPurgeBatch) {
          if (query.cancel != nullptr && query.cancel->cancelled()) return PurgeCancelledError();
          std::vector<std::string> ids;
          for (size_t i = at; i < std::min(sessions.size(), at + kPurgeBatch); ++i) {
            ids.push_back(sessions[i].id);
          }
          ASSIGN_OR_RETURN(RemoveStats part, RemoveSessions(ids));
          removed.sessions += part.sessions;
          removed.items += part.items;
          if (query.progress) {
            query.progress(static_cast<int64_t>(at + ids.size()), total);
          }
        }
        if (stats) {
          stats->sessions = removed.sessions;
          stats->items = removed.items;
        }
        return sessions;
      });
}

}  // namespace codex::storage
