// Shared by the files of SqliteSessionStore (sqlite_session_store.cc: open,
// append, fork, lease; sqlite_session_queries.cc; sqlite_session_search.cc;
// sqlite_session_import.cc; sqlite_session_maintenance.cc): the column lists,
// row readers and binders they all use. Internal: include only from those files.
#ifndef CODEX_STORAGE_SQLITE_STORE_INTERNAL_H_
#define CODEX_STORAGE_SQLITE_STORE_INTERNAL_H_

#include <SQLiteCpp/Statement.h>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/time.h"
#include "core/context_budget.h"
#include "storage/packed_text.h"
#include "storage/search_text.h"
#include "storage/sqlite_session_store.h"
#include "storage/sqlite_util.h"
#include "storage/store_rules.h"

namespace codex::storage {

using core::Item;
using core::ItemKind;
using core::SessionInfo;
using core::StoredItem;
using internal::AmbiguousPrefix;
using internal::CheckCopy;
using internal::CheckExtend;
using internal::CheckImport;
using internal::CheckListQuery;
using internal::DecodeCursor;
using internal::DirScope;
using internal::EncodeCursor;
using internal::ForkHeadAtTurn;
using internal::Guarded;
using internal::InScope;
using internal::kRemovalCandidatesSql;
using internal::kRemovalKeepSql;
using internal::LocalHost;
using internal::LooksLikeHexPrefix;
using internal::NewFork;
using internal::RefuseIfLeased;
using internal::ScopeOf;
using internal::SessionAdvanced;
using internal::SkipLeased;
using internal::TitleFromItems;
using internal::TreeOrder;
using internal::TurnStatusFromName;
using internal::UnknownSession;
using internal::WithWriteTransaction;

namespace sqlite_internal {

inline constexpr const char* kSessionCols =
    "id, head_item_id, forked_from_session, forked_from_item, cwd, model, provider, title, "
    "name, source, created_at_ms, updated_at_ms, archived, tokens_used, host, project";

inline constexpr const char* kLeaseCols =
    "pid, host, process_start, started_at_ms, heartbeat_at_ms";

// A session_leases row read with kLeaseCols first.
inline core::LeaseHolder ReadLease(SQLite::Statement& q) {
  core::LeaseHolder h;
  h.pid = q.getColumn(0).getInt64();
  h.host = q.getColumn(1).getString();
  h.process_start = q.getColumn(2).getString();
  h.started_at_ms = q.getColumn(3).getInt64();
  h.heartbeat_at_ms = q.getColumn(4).getInt64();
  return h;
}

// The lease row of `id`, nullopt when none.
inline std::optional<core::LeaseHolder> LeaseRow(SQLite::Database& db, const std::string& id) {
  SQLite::Statement q(
      db, std::string("SELECT ") + kLeaseCols + " FROM session_leases WHERE session_id = ?");
  q.bind(1, id);
  if (!q.executeStep()) return std::nullopt;
  return ReadLease(q);
}

// Every lease row, by session id.
inline std::map<std::string, core::LeaseHolder> LeaseRows(SQLite::Database& db) {
  SQLite::Statement q(db, std::string("SELECT ") + kLeaseCols + ", session_id FROM session_leases");
  std::map<std::string, core::LeaseHolder> out;
  while (q.executeStep()) out[q.getColumn(5).getString()] = ReadLease(q);
  return out;
}

// A directory filter (internal::DirScope) in SQL: bind with BindScope.
inline constexpr const char* kInScope = "(cwd = ? OR (? <> '' AND project = ?))";

inline constexpr const char* kItemCols =
    "id, parent_id, session_id, turn_id, created_at_ms, kind, role, call_id, server_id, body";

inline std::optional<int64_t> OptionalInt(const SQLite::Column& c) {
  if (c.isNull()) return std::nullopt;
  return c.getInt64();
}

inline SessionInfo ReadSession(SQLite::Statement& q, int first = 0) {
  SessionInfo s;
  s.id = q.getColumn(first + 0).getString();
  s.head_item_id = OptionalInt(q.getColumn(first + 1));
  s.forked_from_session = q.getColumn(first + 2).getString();
  s.forked_from_item = OptionalInt(q.getColumn(first + 3));
  s.cwd = q.getColumn(first + 4).getString();
  s.model = q.getColumn(first + 5).getString();
  s.provider = q.getColumn(first + 6).getString();
  s.title = q.getColumn(first + 7).getString();
  s.name = q.getColumn(first + 8).getString();
  s.source = q.getColumn(first + 9).getString();
  s.created_at_ms = q.getColumn(first + 10).getInt64();
  s.updated_at_ms = q.getColumn(first + 11).getInt64();
  s.archived = q.getColumn(first + 12).getInt() != 0;
  s.tokens_used = q.getColumn(first + 13).getInt64();
  s.host = q.getColumn(first + 14).getString();
  s.project = q.getColumn(first + 15).getString();
  return s;
}

// Newest-first sessions with archived = :archived, after the cursor
// (:ms, :id) when `cursor`, at most :limit, in the directory scope (:cwd,
// :project; internal::DirScope) when `scoped`. Each arm of the scope reads
// its own index (sessions_cwd_recent, sessions_project_recent): one OR
// would make SQLite walk sessions_recent over every directory.
inline std::string RecentSessionsSql(bool scoped, bool cursor) {
  const std::string after = cursor ? " AND (updated_at_ms, id) < (:ms, :id)" : "";
  const std::string order = " ORDER BY updated_at_ms DESC, id DESC LIMIT :limit";
  const std::string base =
      std::string("SELECT ") + kSessionCols + " FROM sessions WHERE archived = :archived" + after;
  if (!scoped) return base + order;
  return "SELECT * FROM (SELECT * FROM (" + base + " AND cwd = :cwd" + order +
         ") UNION SELECT * FROM (" + base + " AND :project <> '' AND project = :project" + order +
         "))" + order;
}

inline void BindRecent(SQLite::Statement& q, bool archived, const std::optional<DirScope>& scope,
                       const std::optional<std::pair<int64_t, std::string>>& after, int limit) {
  q.bind(":archived", archived ? 1 : 0);
  if (scope) {
    q.bind(":cwd", scope->cwd);
    q.bind(":project", scope->project);
  }
  if (after) {
    q.bind(":ms", after->first);
    q.bind(":id", after->second);
  }
  q.bind(":limit", limit);
}

// Binds kInScope's parameters from `i`; returns the next index.
inline int BindScope(SQLite::Statement& q, int i, const DirScope& scope) {
  q.bind(i, scope.cwd);
  q.bind(i + 1, scope.project);
  q.bind(i + 2, scope.project);
  return i + 3;
}

// An item body or event payload as it was given: a BLOB column is packed
// (storage/packed_text.h), TEXT is the text itself. Throws on a damaged one
// (the callers turn exceptions into a Status).
inline std::string ReadStoredText(const SQLite::Column& c) {
  if (!c.isBlob()) return c.getString();
  auto text = UnpackText(
      std::string_view(static_cast<const char*>(c.getBlob()), static_cast<size_t>(c.getBytes())));
  if (!text.ok()) throw std::runtime_error(text.status().message());
  return std::move(text).value();
}

// Binds an item body or event payload: packed, as a BLOB, when that is
// smaller; as TEXT when not.
inline void BindStoredText(SQLite::Statement& q, int index, const std::string& text) {
  if (auto packed = PackText(text)) {
    q.bind(index, packed->data(), static_cast<int>(packed->size()));
  } else {
    q.bind(index, text);
  }
}

inline StoredItem ReadItem(SQLite::Statement& q) {
  StoredItem s;
  s.id = q.getColumn(0).getInt64();
  s.parent_id = OptionalInt(q.getColumn(1));
  s.session_id = q.getColumn(2).getString();
  s.turn_id = q.getColumn(3).getString();
  s.created_at_ms = q.getColumn(4).getInt64();
  s.item.kind = core::ItemKindFromName(q.getColumn(5).getText());
  s.item.role = q.getColumn(6).getString();
  s.item.call_id = q.getColumn(7).getString();
  s.item.server_id = q.getColumn(8).getString();
  // getString() keeps embedded NULs: the body comes back byte for byte.
  s.item.body = ReadStoredText(q.getColumn(9));
  return s;
}

inline void BindOptional(SQLite::Statement& q, int index, std::optional<int64_t> v) {
  if (v) {
    q.bind(index, *v);
  } else {
    q.bind(index);  // NULL
  }
}

// Inserts item chains: its two statements are prepared once and reused
// (SqliteSessionStore keeps one for its appends: parsing them again was a
// fifth of an append's CPU). Each use resets them first, and a finished
// INSERT holds no lock.
class ChainInserter {
 public:
  explicit ChainInserter(SQLite::Database& db)
      : db_(db),
        ins_(db,
             "INSERT INTO items(parent_id, session_id, turn_id, kind, role, call_id, "
             "server_id, body, tokens_est, created_at_ms) "
             "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"),
        fts_(db, "INSERT INTO items_fts(rowid, text) VALUES (?, ?)") {}

  // Inserts `items` chained from `parent`; returns their ids. `on_item` (may
  // be empty) is told how many are in after each.
  std::vector<int64_t> Insert(std::string_view session_id, std::optional<int64_t> parent,
                              const std::vector<ImportedItem>& items,
                              const std::function<void(size_t)>& on_item = {}) {
    std::vector<int64_t> ids;
    ids.reserve(items.size());
    const std::string sid(session_id);
    for (const ImportedItem& it : items) {
      ins_.reset();
      BindOptional(ins_, 1, parent);
      ins_.bind(2, sid);
      ins_.bind(3, it.turn_id);
      ins_.bind(4, std::string(core::ItemKindName(it.item.kind)));
      ins_.bind(5, it.item.role);
      ins_.bind(6, it.item.call_id);
      ins_.bind(7, it.item.server_id);
      BindStoredText(ins_, 8, it.item.body);
      ins_.bind(9, core::EstimateItemTokens(it.item));
      ins_.bind(10, it.created_at_ms);
      ins_.exec();
      parent = db_.getLastInsertRowid();
      ids.push_back(*parent);
      const std::string text = SearchText(it.item);
      if (!text.empty()) {
        fts_.reset();
        fts_.bind(1, *parent);
        fts_.bind(2, text);
        fts_.exec();
      }
      if (on_item) on_item(ids.size());
    }
    return ids;
  }

 private:
  SQLite::Database& db_;
  SQLite::Statement ins_;
  SQLite::Statement fts_;
};

// Inserts `items` chained from `parent`; returns their ids.
inline std::vector<int64_t> InsertChain(SQLite::Database& db, std::string_view session_id,
                                        std::optional<int64_t> parent,
                                        const std::vector<ImportedItem>& items,
                                        const std::function<void(size_t)>& on_item = {}) {
  ChainInserter inserter(db);
  return inserter.Insert(session_id, parent, items, on_item);
}

// Binds the 11 columns of a `turns` row (session_id, turn_id, status, error,
// the five token counts, started_at_ms, ended_at_ms) in that order.
inline void BindTurnRow(SQLite::Statement& q, const std::string& session_id,
                        const core::TurnRecord& turn) {
  q.bind(1, session_id);
  q.bind(2, turn.turn_id);
  q.bind(3, std::string(TurnStatusName(turn.status)));
  q.bind(4, turn.error);
  q.bind(5, turn.usage.input_tokens);
  q.bind(6, turn.usage.cached_input_tokens);
  q.bind(7, turn.usage.output_tokens);
  q.bind(8, turn.usage.reasoning_output_tokens);
  q.bind(9, turn.usage.total_tokens);
  q.bind(10, turn.started_at_ms);
  q.bind(11, turn.ended_at_ms);
}

}  // namespace sqlite_internal
}  // namespace codex::storage

#endif  // CODEX_STORAGE_SQLITE_STORE_INTERNAL_H_
