// SqliteSessionStore: importing rollouts and copying sessions between stores.

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

namespace {

// Writes `turns` into session `sid` (a turn already there is replaced) and
// appends `events`; an event with no time gets `default_created_ms`.
void WriteTurnsAndEvents(SQLite::Database& db, const std::string& sid,
                         const std::vector<core::TurnRecord>& turns,
                         const std::vector<EventRecord>& events, int64_t default_created_ms) {
  SQLite::Statement turn(db,
                         "INSERT OR REPLACE INTO turns(session_id, turn_id, status, error,"
                         " input_tokens, cached_input_tokens, output_tokens,"
                         " reasoning_output_tokens, total_tokens, started_at_ms, ended_at_ms)"
                         " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  for (const core::TurnRecord& t : turns) {
    turn.reset();
    BindTurnRow(turn, sid, t);
    turn.exec();
  }
  SQLite::Statement ev(db,
                       "INSERT INTO events(session_id, turn_id, type, payload, created_at_ms)"
                       " VALUES (?, ?, ?, ?, ?)");
  for (const EventRecord& e : events) {
    ev.reset();
    ev.bind(1, sid);
    ev.bind(2, e.turn_id);
    ev.bind(3, e.type);
    BindStoredText(ev, 4, e.payload_json);
    ev.bind(5, e.created_at_ms != 0 ? e.created_at_ms : default_created_ms);
    ev.exec();
  }
}

}  // namespace

Result<bool> SqliteSessionStore::ImportSession(const ImportedSession& session) {
  RETURN_IF_ERROR(CheckImport(session));
  const std::string sid = Lower(session.spec.id);
  return WithWriteTransaction(*db_, path_, "importing " + sid, [&]() -> Result<bool> {
    SQLite::Statement exists(*db_, "SELECT 1 FROM sessions WHERE id = ?");
    exists.bind(1, sid);
    if (exists.executeStep()) return false;
    const int64_t created = session.spec.created_at_ms != 0 ? session.spec.created_at_ms : Now();
    const int64_t updated = std::max(created, session.updated_at_ms);
    int64_t tokens = 0;
    for (const core::TurnRecord& t : session.turns) tokens += t.usage.total_tokens;
    std::string title =
        session.spec.title.empty() ? TitleFromItems(session.items) : session.spec.title;
    // The session row first (items reference nothing in it), head set after.
    SQLite::Statement ins(*db_,
                          "INSERT INTO sessions(id, cwd, model, provider, title, source,"
                          " created_at_ms, updated_at_ms, tokens_used, host, project)"
                          " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    ins.bind(1, sid);
    ins.bind(2, session.spec.cwd);
    ins.bind(3, session.spec.model);
    ins.bind(4, session.spec.provider);
    ins.bind(5, title);
    ins.bind(6, session.spec.source.empty() ? std::string("import") : session.spec.source);
    ins.bind(7, created);
    ins.bind(8, updated);
    ins.bind(9, tokens);
    ins.bind(10, session.spec.host.empty() ? LocalHost() : session.spec.host);
    ins.bind(11, ProjectKey(session.spec.cwd));
    ins.exec();
    std::vector<int64_t> ids =
        InsertChain(*db_, sid, std::nullopt, session.items, session.progress);
    SQLite::Statement usage(*db_, "INSERT INTO item_usage(item_id, total_tokens) VALUES (?, ?)");
    for (const auto& [index, total] : session.reported_totals) {
      if (index >= ids.size()) continue;
      usage.reset();
      usage.bind(1, ids[index]);
      usage.bind(2, total);
      usage.exec();
    }
    if (!ids.empty()) {
      SQLite::Statement head(*db_, "UPDATE sessions SET head_item_id = ? WHERE id = ?");
      head.bind(1, ids.back());
      head.bind(2, sid);
      head.exec();
    }
    WriteTurnsAndEvents(*db_, sid, session.turns, session.events, created);
    return true;
  });
}

Result<bool> SqliteSessionStore::ExtendImportedSession(const ImportedSession& session,
                                                       std::optional<int64_t> expected_head,
                                                       size_t from_item, size_t from_event) {
  RETURN_IF_ERROR(CheckExtend(session, from_item, from_event));
  const std::string sid = Lower(session.spec.id);
  return WithWriteTransaction(*db_, path_, "importing " + sid, [&]() -> Result<bool> {
    std::optional<int64_t> head;
    {
      SQLite::Statement cur(*db_, "SELECT head_item_id FROM sessions WHERE id = ?");
      cur.bind(1, sid);
      if (!cur.executeStep()) return false;
      if (!cur.getColumn(0).isNull()) head = cur.getColumn(0).getInt64();
    }
    if (head != expected_head) return false;
    const std::vector<ImportedItem> added(session.items.begin() + static_cast<ptrdiff_t>(from_item),
                                          session.items.end());
    const std::vector<int64_t> ids = InsertChain(*db_, sid, head, added, session.progress);
    SQLite::Statement usage(*db_, "INSERT INTO item_usage(item_id, total_tokens) VALUES (?, ?)");
    for (const auto& [index, total] : session.reported_totals) {
      if (index < from_item || index - from_item >= ids.size()) continue;
      usage.reset();
      usage.bind(1, ids[index - from_item]);
      usage.bind(2, total);
      usage.exec();
    }
    int64_t tokens = 0;
    for (const core::TurnRecord& t : session.turns) tokens += t.usage.total_tokens;
    SQLite::Statement set(
        *db_,
        "UPDATE sessions SET head_item_id = ?,"
        " updated_at_ms = MAX(updated_at_ms, ?), tokens_used = MAX(tokens_used, ?),"
        " title = CASE WHEN title = '' THEN ? ELSE title END WHERE id = ?");
    BindOptional(set, 1, ids.empty() ? head : std::optional<int64_t>(ids.back()));
    set.bind(2, session.updated_at_ms);
    set.bind(3, tokens);
    set.bind(4, session.spec.title.empty() ? TitleFromItems(session.items) : session.spec.title);
    set.bind(5, sid);
    set.exec();
    const std::vector<EventRecord> events(
        session.events.begin() + static_cast<ptrdiff_t>(from_event), session.events.end());
    WriteTurnsAndEvents(*db_, sid, session.turns, events, session.updated_at_ms);
    return true;
  });
}

// Over 80 lines: one write transaction copying a session's rows table by
// table (session, items, usage, head, turns, events) in the order the foreign
// keys need; each part is a few binds of one prepared statement.
Result<bool> SqliteSessionStore::CopySession(const SessionCopy& copy) {
  RETURN_IF_ERROR(CheckCopy(copy));
  const std::string sid = Lower(copy.info.id);
  return WithWriteTransaction(*db_, path_, "copying " + sid, [&]() -> Result<bool> {
    SQLite::Statement exists(*db_, "SELECT 1 FROM sessions WHERE id = ?");
    exists.bind(1, sid);
    if (exists.executeStep()) return false;
    const SessionInfo& info = copy.info;
    SQLite::Statement ins(*db_,
                          "INSERT INTO sessions(id, forked_from_session, cwd, model, provider,"
                          " title, name, source, created_at_ms, updated_at_ms, archived,"
                          " tokens_used, host, project)"
                          " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    ins.bind(1, sid);
    if (info.forked_from_session.empty()) {
      ins.bind(2);
    } else {
      ins.bind(2, info.forked_from_session);
    }
    ins.bind(3, info.cwd);
    ins.bind(4, info.model);
    ins.bind(5, info.provider);
    ins.bind(6, info.title);
    if (info.name.empty()) {
      ins.bind(7);
    } else {
      ins.bind(7, info.name);
    }
    ins.bind(8, info.source);
    ins.bind(9, info.created_at_ms);
    ins.bind(10, info.updated_at_ms);
    ins.bind(11, info.archived ? 1 : 0);
    ins.bind(12, info.tokens_used);
    ins.bind(13, info.host);
    ins.bind(14, info.project);
    ins.exec();
    std::vector<ImportedItem> chain;
    chain.reserve(copy.items.size());
    for (const StoredItem& it : copy.items) {
      chain.push_back({it.turn_id, it.created_at_ms, it.item});
    }
    const std::vector<int64_t> ids = InsertChain(*db_, sid, copy.base_item_id, chain);
    SQLite::Statement usage(*db_, "INSERT INTO item_usage(item_id, total_tokens) VALUES (?, ?)");
    for (size_t i = 0; i < ids.size(); ++i) {
      if (!copy.items[i].reported_total_tokens) continue;
      usage.reset();
      usage.bind(1, ids[i]);
      usage.bind(2, *copy.items[i].reported_total_tokens);
      usage.exec();
    }
    std::optional<int64_t> head = ids.empty() ? copy.base_item_id : std::optional(ids.back());
    std::optional<int64_t> fork_point = copy.forked_from_item;
    if (!fork_point && copy.forked_from_index) fork_point = ids[*copy.forked_from_index];
    SQLite::Statement set(
        *db_, "UPDATE sessions SET head_item_id = ?, forked_from_item = ? WHERE id = ?");
    BindOptional(set, 1, head);
    BindOptional(set, 2, fork_point);
    set.bind(3, sid);
    set.exec();
    WriteTurnsAndEvents(*db_, sid, copy.turns, copy.events, 0);
    return true;
  });
}

}  // namespace codex::storage
