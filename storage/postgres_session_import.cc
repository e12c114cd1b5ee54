// PostgresSessionStore: importing rollouts and copying sessions between stores.

#include "base/strings.h"
#include "storage/postgres_session_store.h"
#include "storage/postgres_store_internal.h"

namespace codex::storage {

using namespace postgres_internal;  // NOLINT(google-build-using-namespace)

Result<bool> PostgresSessionStore::ImportSession(const ImportedSession& session) {
  RETURN_IF_ERROR(CheckImport(session));
  const std::string sid = Lower(session.spec.id);
  return Transaction(*conn_, "importing " + sid, [&]() -> Result<bool> {
    const int64_t created = session.spec.created_at_ms != 0 ? session.spec.created_at_ms : Now();
    const int64_t updated = std::max(created, session.updated_at_ms);
    int64_t tokens = 0;
    for (const core::TurnRecord& t : session.turns) tokens += t.usage.total_tokens;
    const std::string title =
        session.spec.title.empty() ? TitleFromItems(session.items) : session.spec.title;
    // The session row first (items reference nothing in it), head set after.
    Rows ins = conn_->Exec(
        "INSERT INTO sessions(id, cwd, model, provider, title, source, created_at_ms,"
        " updated_at_ms, tokens_used, host, project)"
        " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)"
        " ON CONFLICT (id) DO NOTHING RETURNING 1",
        {P(sid), P(session.spec.cwd), P(session.spec.model), P(session.spec.provider), P(title),
         P(session.spec.source.empty() ? std::string("import") : session.spec.source), P(created),
         P(updated), P(tokens), P(session.spec.host.empty() ? LocalHost() : session.spec.host),
         P(ProjectKey(session.spec.cwd))});
    if (ins.size() == 0) return false;
    const std::vector<int64_t> ids =
        InsertChain(*conn_, sid, std::nullopt, session.items, session.progress);
    for (const auto& [index, total] : session.reported_totals) {
      if (index >= ids.size()) continue;
      conn_->Exec("INSERT INTO item_usage(item_id, total_tokens) VALUES ($1, $2)",
                  {P(ids[index]), P(total)});
    }
    if (!ids.empty()) {
      conn_->Exec("UPDATE sessions SET head_item_id = $1 WHERE id = $2", {P(ids.back()), P(sid)});
    }
    for (const core::TurnRecord& t : session.turns) InsertTurn(*conn_, sid, t);
    for (const EventRecord& e : session.events) {
      conn_->Exec(
          "INSERT INTO events(session_id, turn_id, type, payload, created_at_ms)"
          " VALUES ($1, $2, $3, $4, $5)",
          {P(sid), P(e.turn_id), P(e.type), StoredTextParam(pg::CleanText(e.payload_json)),
           P(e.created_at_ms != 0 ? e.created_at_ms : created)});
    }
    return true;
  });
}

Result<bool> PostgresSessionStore::ExtendImportedSession(const ImportedSession& session,
                                                         std::optional<int64_t> expected_head,
                                                         size_t from_item, size_t from_event) {
  RETURN_IF_ERROR(CheckExtend(session, from_item, from_event));
  const std::string sid = Lower(session.spec.id);
  return Transaction(*conn_, "importing " + sid, [&]() -> Result<bool> {
    // The row lock orders this against appends; the head check is the CAS.
    Rows cur = conn_->Exec("SELECT head_item_id FROM sessions WHERE id = $1 FOR UPDATE", {P(sid)});
    if (cur.size() == 0) return false;
    const std::optional<int64_t> head = cur.OptInt(0, 0);
    if (head != expected_head) return false;
    const std::vector<ImportedItem> added(session.items.begin() + static_cast<ptrdiff_t>(from_item),
                                          session.items.end());
    const std::vector<int64_t> ids = InsertChain(*conn_, sid, head, added, session.progress);
    for (const auto& [index, total] : session.reported_totals) {
      if (index < from_item || index - from_item >= ids.size()) continue;
      conn_->Exec("INSERT INTO item_usage(item_id, total_tokens) VALUES ($1, $2)",
                  {P(ids[index - from_item]), P(total)});
    }
    int64_t tokens = 0;
    for (const core::TurnRecord& t : session.turns) tokens += t.usage.total_tokens;
    const std::string title =
        session.spec.title.empty() ? TitleFromItems(session.items) : session.spec.title;
    conn_->Exec(
        "UPDATE sessions SET head_item_id = $1, updated_at_ms = GREATEST(updated_at_ms, $2),"
        " tokens_used = GREATEST(tokens_used, $3),"
        " title = CASE WHEN title = '' THEN $4 ELSE title END WHERE id = $5",
        {P(ids.empty() ? head : std::optional<int64_t>(ids.back())), P(session.updated_at_ms),
         P(tokens), P(title), P(sid)});
    for (const core::TurnRecord& t : session.turns) InsertTurn(*conn_, sid, t);
    for (size_t i = from_event; i < session.events.size(); ++i) {
      const EventRecord& e = session.events[i];
      conn_->Exec(
          "INSERT INTO events(session_id, turn_id, type, payload, created_at_ms)"
          " VALUES ($1, $2, $3, $4, $5)",
          {P(sid), P(e.turn_id), P(e.type), StoredTextParam(pg::CleanText(e.payload_json)),
           P(e.created_at_ms != 0 ? e.created_at_ms : session.updated_at_ms)});
    }
    return true;
  });
}

Result<bool> PostgresSessionStore::CopySession(const SessionCopy& copy) {
  RETURN_IF_ERROR(CheckCopy(copy));
  const std::string sid = Lower(copy.info.id);
  return Transaction(*conn_, "copying " + sid, [&]() -> Result<bool> {
    const SessionInfo& info = copy.info;
    Rows ins = conn_->Exec(
        "INSERT INTO sessions(id, forked_from_session, cwd, model, provider, title, name, source,"
        " created_at_ms, updated_at_ms, archived, tokens_used, host, project)"
        " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)"
        " ON CONFLICT (id) DO NOTHING RETURNING 1",
        {P(sid), info.forked_from_session.empty() ? NullParam() : P(info.forked_from_session),
         P(info.cwd), P(info.model), P(info.provider), P(info.title),
         info.name.empty() ? NullParam() : P(info.name), P(info.source), P(info.created_at_ms),
         P(info.updated_at_ms), P(info.archived ? 1 : 0), P(info.tokens_used), P(info.host),
         P(info.project)});
    if (ins.size() == 0) return false;
    std::vector<ImportedItem> chain;
    chain.reserve(copy.items.size());
    for (const StoredItem& it : copy.items)
      chain.push_back({it.turn_id, it.created_at_ms, it.item});
    const std::vector<int64_t> ids = InsertChain(*conn_, sid, copy.base_item_id, chain);
    for (size_t i = 0; i < ids.size(); ++i) {
      if (!copy.items[i].reported_total_tokens) continue;
      conn_->Exec("INSERT INTO item_usage(item_id, total_tokens) VALUES ($1, $2)",
                  {P(ids[i]), P(*copy.items[i].reported_total_tokens)});
    }
    const std::optional<int64_t> head =
        ids.empty() ? copy.base_item_id : std::optional<int64_t>(ids.back());
    std::optional<int64_t> fork_point = copy.forked_from_item;
    if (!fork_point && copy.forked_from_index) fork_point = ids[*copy.forked_from_index];
    conn_->Exec("UPDATE sessions SET head_item_id = $1, forked_from_item = $2 WHERE id = $3",
                {P(head), P(fork_point), P(sid)});
    for (const core::TurnRecord& t : copy.turns) InsertTurn(*conn_, sid, t);
    for (const EventRecord& e : copy.events) {
      conn_->Exec(
          "INSERT INTO events(session_id, turn_id, type, payload, created_at_ms)"
          " VALUES ($1, $2, $3, $4, $5)",
          {P(sid), P(e.turn_id), P(e.type), StoredTextParam(pg::CleanText(e.payload_json)),
           P(e.created_at_ms)});
    }
    return true;
  });
}

}  // namespace codex::storage
