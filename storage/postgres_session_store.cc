#include "storage/postgres_session_store.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>
#include <unordered_map>

#include "base/strings.h"
#include "core/context_budget.h"
#include "core/item.h"
#include "core/store_location.h"
#include "core/uuid.h"
#include "storage/libpq.h"
#include "storage/migrations.h"
#include "storage/pg_search.h"
#include "storage/postgres_store_internal.h"
#include "storage/project_identity.h"
#include "storage/search_text.h"
#include "storage/store_rules.h"

namespace codex::storage {

using namespace postgres_internal;  // NOLINT(google-build-using-namespace)

bool IsPostgresUrl(std::string_view location) {
  return location.rfind("postgresql://", 0) == 0 || location.rfind("postgres://", 0) == 0;
}

// The one redaction helper (core/store_location.h) serves this file too.
std::string RedactPostgresUrl(std::string_view url) { return core::RedactSecrets(url, url); }

namespace {

// The migration runner's view of a PostgreSQL database (storage/migrations.h).
class PgMigrationTarget final : public MigrationTarget {
 public:
  explicit PgMigrationTarget(PgConnection& conn) : conn_(conn) {}

  Result<std::vector<AppliedMigration>> Applied() override {
    return Read(
        conn_, "checking the schema version", [&]() -> Result<std::vector<AppliedMigration>> {
          std::vector<AppliedMigration> rows;
          Rows t = conn_.Exec("SELECT to_regclass('schema_migrations') IS NOT NULL");
          if (t.Str(0, 0) != "t") return rows;
          Rows q =
              conn_.Exec("SELECT version, name, checksum FROM schema_migrations ORDER BY version");
          for (int r = 0; r < q.size(); ++r) {
            rows.push_back({static_cast<int>(q.Int(r, 0)), q.Str(r, 1), q.Str(r, 2)});
          }
          return rows;
        });
  }

  Status Apply(const Migration& m, const std::string& checksum) override {
    const std::string what =
        "applying migration " + std::to_string(m.version) + "_" + std::string(m.name);
    return Transaction(conn_, what, [&]() -> Status {
      conn_.Script(
          "CREATE TABLE IF NOT EXISTS schema_migrations ("
          " version INTEGER PRIMARY KEY, name TEXT NOT NULL, checksum TEXT NOT NULL,"
          " applied_at_ms BIGINT NOT NULL)");
      Rows seen = conn_.Exec("SELECT 1 FROM schema_migrations WHERE version = $1", {P(m.version)});
      if (seen.size() > 0) return OkStatus();
      // A migration rebuilding an index of a large database runs as long as it takes.
      conn_.Exec("SET LOCAL statement_timeout = 0");
      conn_.Script(std::string(m.sql));
      conn_.Exec(
          "INSERT INTO schema_migrations(version, name, checksum, applied_at_ms)"
          " VALUES ($1, $2, $3, $4)",
          {P(m.version), P(m.name), P(checksum), P(NowMs())});
      return OkStatus();
    });
  }

 private:
  PgConnection& conn_;
};

// Re-indexes the items whose lexemes were made with earlier rules (listed
// in items_refold by migration 0005: folding < 3, before migration 0004; by
// 0007 and 0008: lexemes or token counts their tsvector could not hold)
// from their body with the current ones (SearchParams), a batch per
// transaction: an interrupted run is finished by the next open.
Status RefoldSearchIndex(PgConnection& conn) {
  constexpr int kBatch = 1000;
  while (true) {
    Result<int> done = Transaction(conn, "re-indexing search text", [&]() -> Result<int> {
      conn.Exec("SET LOCAL statement_timeout = 0");
      Rows q = conn.Exec(
          "SELECT r.item_id, i.kind, i.role, i.body,"
          " i.tsv IS NULL AND i.search_tokens IS NULL FROM items_refold AS r"
          " JOIN items AS i ON i.id = r.item_id ORDER BY r.item_id LIMIT $1 FOR UPDATE OF r",
          {P(kBatch)});
      std::string ids = "{";
      for (int r = 0; r < q.size(); ++r) {
        ids += (ids.size() > 1 ? "," : "") + std::to_string(q.Int(r, 0));
        Item item;
        item.kind = KindFromCode(q.Int(r, 1));
        item.role = q.Str(r, 2);
        item.body = TextFromStored(q.Bytea(r, 3), "item " + std::to_string(q.Int(r, 0)));
        SearchColumns search = SearchParams(item);
        // An item with no search text that has none stored is left as it is
        // (most of those migration 0008 lists: reasoning without a summary).
        if (q.Str(r, 4) == "t" && search.tsv.null && search.tokens.null) continue;
        conn.Exec("UPDATE items SET tsv = $2::tsvector, search_tokens = $3 WHERE id = $1",
                  {P(q.Int(r, 0)), std::move(search.tsv), std::move(search.tokens)});
      }
      ids += "}";
      conn.Exec("DELETE FROM items_refold WHERE item_id = ANY($1::bigint[])", {P(ids)});
      return q.size();
    });
    if (!done.ok()) return done.status();
    if (*done < kBatch) return OkStatus();
  }
}

int LatestPostgresSchemaVersion() {
  const auto& all = internal::EmbeddedPostgresMigrations();
  return all.empty() ? 0 : all.back().version;
}

// A held lease: a thread with its own connection refreshes the heartbeat
// every `heartbeat_ms`; the destructor stops it and deletes the row.
class PgTurnLease final : public core::TurnLease {
 public:
  PgTurnLease(std::string url, std::string session_id, std::string token, core::LeaseHolder holder,
              int64_t heartbeat_ms)
      : url_(std::move(url)),
        session_id_(std::move(session_id)),
        token_(std::move(token)),
        holder_(std::move(holder)),
        heartbeat_ms_(heartbeat_ms) {
    thread_ = std::thread([this] { Run(); });
  }
  ~PgTurnLease() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  const core::LeaseHolder& holder() const override { return holder_; }

 private:
  void Exec(std::unique_ptr<PgConnection>& conn, const std::string& sql) {
    if (!conn || conn->Broken()) {
      if (conn && !conn->Reconnect().ok()) return;
      if (!conn) {
        auto c = PgConnection::Connect(url_, 5'000, false, 5'000);
        if (!c.ok()) return;
        conn = std::move(c).value();
      }
    }
    try {
      conn->Exec(sql, {P(session_id_), P(token_)});
    } catch (const PgError&) {
      // A missed heartbeat is retried at the next tick.
    }
  }

  void Run() {
    std::unique_ptr<PgConnection> conn;
    std::unique_lock<std::mutex> lock(mu_);
    while (!stop_) {
      cv_.wait_for(lock, std::chrono::milliseconds(heartbeat_ms_), [this] { return stop_; });
      if (stop_) break;
      lock.unlock();
      Exec(conn, std::string("UPDATE session_leases SET heartbeat_at_ms = ") + kServerNowMs +
                     " WHERE session_id = $1 AND token = $2");
      lock.lock();
    }
    lock.unlock();
    // Left behind on failure, the row names this process: the next turn
    // (here, or anywhere once this process is gone) takes it over.
    Exec(conn, "DELETE FROM session_leases WHERE session_id = $1 AND token = $2");
  }

  std::string url_;
  std::string session_id_;
  std::string token_;
  core::LeaseHolder holder_;
  int64_t heartbeat_ms_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace

PostgresSessionStore::PostgresSessionStore(std::string url, StoreOptions options,
                                           std::unique_ptr<PgConnection> conn)
    : url_(std::move(url)), options_(std::move(options)), conn_(std::move(conn)) {}

PostgresSessionStore::~PostgresSessionStore() = default;

std::string PostgresSessionStore::location() const { return RedactPostgresUrl(url_); }

Result<std::unique_ptr<PostgresSessionStore>> PostgresSessionStore::Open(const std::string& url,
                                                                         StoreOptions options) {
  if (url.empty()) return InvalidArgumentError("PostgreSQL URL is empty");
  ASSIGN_OR_RETURN(std::unique_ptr<PgConnection> conn,
                   PgConnection::Connect(url, options.busy_timeout_ms, options.read_only,
                                         options.statement_timeout_ms));
  const std::string name = conn->redacted();
  PgMigrationTarget target(*conn);
  if (options.read_only) {
    ASSIGN_OR_RETURN(std::vector<AppliedMigration> rows, target.Applied());
    const int version = rows.empty() ? 0 : rows.back().version;
    if (version != LatestPostgresSchemaVersion()) {
      return FailedPreconditionError(
          "sessions database " + name + " has schema version " + std::to_string(version) +
          " and this codex needs " + std::to_string(LatestPostgresSchemaVersion()) +
          ", but it is opened read-only; open it once with write access to upgrade it");
    }
  } else {
    // The usual open finds the schema current and nothing to re-index: three
    // reads, without the migration lock and its statements around it (10
    // round trips of every PostgreSQL command). A migration or a re-index in
    // progress elsewhere is seen as pending (each migration commits with its
    // row; the re-index deletes its rows as it goes): then the lock below.
    ASSIGN_OR_RETURN(const bool pending,
                     MigrationsPending(target, name, internal::EmbeddedPostgresMigrations(),
                                       LatestPostgresSchemaVersion()));
    bool refold = true;
    if (!pending) {
      Status read = Read(*conn, "checking the search index", [&]() -> Status {
        refold = conn->Exec("SELECT EXISTS (SELECT 1 FROM items_refold)").Str(0, 0) == "t";
        return OkStatus();
      });
      RETURN_IF_ERROR(read);
    }
    if (!pending && !refold) {
      return std::unique_ptr<PostgresSessionStore>(
          new PostgresSessionStore(url, std::move(options), std::move(conn)));
    }
    // One process at a time migrates; the others wait here, then find the
    // schema current. A session-level lock, released below (or with the
    // connection if we fail).
    Status locked = Read(*conn, "waiting for the migration lock", [&]() -> Status {
      // Another process's migration may take long: wait for it unbounded.
      conn->Exec("SET lock_timeout = 0");
      conn->Exec("SET statement_timeout = 0");
      conn->Exec("SELECT pg_advisory_lock($1)", {P(kMigrationLockKey)});
      conn->Exec("SET lock_timeout = " + std::to_string(std::max(1, options.busy_timeout_ms)));
      conn->Exec("SET statement_timeout = " +
                 std::to_string(std::max(0, options.statement_timeout_ms)));
      return OkStatus();
    });
    RETURN_IF_ERROR(locked);
    Status migrated = RunMigrations(target, name, internal::EmbeddedPostgresMigrations(),
                                    LatestPostgresSchemaVersion());
    if (migrated.ok()) migrated = RefoldSearchIndex(*conn);
    Status unlocked = Read(*conn, "releasing the migration lock", [&]() -> Status {
      conn->Exec("SELECT pg_advisory_unlock($1)", {P(kMigrationLockKey)});
      return OkStatus();
    });
    RETURN_IF_ERROR(migrated);
    RETURN_IF_ERROR(unlocked);
  }
  return std::unique_ptr<PostgresSessionStore>(
      new PostgresSessionStore(url, std::move(options), std::move(conn)));
}

Result<SessionInfo> PostgresSessionStore::CreateSession(const core::NewSession& spec) {
  SessionInfo s;
  s.id = spec.id.empty() ? core::NewUuidV7() : Lower(spec.id);
  if (!core::LooksLikeUuid(s.id)) {
    return InvalidArgumentError("session id '" + spec.id + "' is not a UUID");
  }
  s.cwd = spec.cwd;
  s.host = spec.host.empty() ? LocalHost() : spec.host;
  s.project = ProjectKey(s.cwd);
  s.model = spec.model;
  s.provider = spec.provider;
  s.title = spec.title;
  s.source = spec.source.empty() ? "exec" : spec.source;
  s.forked_from_session = spec.parent_session;
  s.created_at_ms = spec.created_at_ms != 0 ? spec.created_at_ms : Now();
  s.updated_at_ms = s.created_at_ms;
  return Transaction(*conn_, "creating a session", [&]() -> Result<SessionInfo> {
    SessionInfo out = s;
    Rows ins = conn_->Exec(
        "INSERT INTO sessions(id, cwd, model, provider, title, source, created_at_ms,"
        " updated_at_ms, host, project, forked_from_session)"
        " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)"
        " ON CONFLICT (id) DO NOTHING RETURNING 1",
        {P(out.id), P(out.cwd), P(out.model), P(out.provider), P(out.title), P(out.source),
         P(out.created_at_ms), P(out.updated_at_ms), P(out.host), P(out.project),
         spec.parent_session.empty() ? NullParam() : P(spec.parent_session)});
    if (ins.size() == 0) return InvalidArgumentError("session " + out.id + " already exists");
    if (!spec.items.empty()) {
      std::vector<ImportedItem> batch;
      batch.reserve(spec.items.size());
      for (const Item& item : spec.items) batch.push_back({spec.turn_id, out.created_at_ms, item});
      const std::vector<int64_t> ids = InsertChain(*conn_, out.id, std::nullopt, batch);
      out.head_item_id = ids.back();
      if (out.title.empty()) out.title = TitleFromItems(batch);
      conn_->Exec("UPDATE sessions SET head_item_id = $1, title = $2 WHERE id = $3",
                  {P(ids.back()), P(out.title), P(out.id)});
    }
    return out;
  });
}

Result<std::optional<core::LeaseHolder>> PostgresSessionStore::CurrentLease(
    std::string_view session_id) {
  const std::string sid(session_id);
  return Read(*conn_, "reading the lease of " + sid,
              [&]() -> Result<std::optional<core::LeaseHolder>> {
                Rows q = conn_->Exec(
                    "SELECT pid, host, process_start, started_at_ms, heartbeat_at_ms"
                    " FROM session_leases WHERE session_id = $1",
                    {P(sid)});
                if (q.size() == 0) return std::optional<core::LeaseHolder>();
                return std::optional<core::LeaseHolder>(ReadLease(q, 0));
              });
}

Result<int64_t> PostgresSessionStore::LeaseNowMs() {
  return Read(*conn_, "reading the server's clock", [&]() -> Result<int64_t> {
    return conn_->Exec(std::string("SELECT ") + kServerNowMs).Int(0, 0);
  });
}

Result<std::unique_ptr<core::TurnLease>> PostgresSessionStore::AcquireTurnLease(
    std::string_view session_id) {
  const std::string sid(session_id);
  if (options_.read_only) {
    return FailedPreconditionError("sessions database " + location() +
                                   " is read-only; a turn cannot be recorded");
  }
  core::LeaseHolder me = core::CurrentProcessHolder();
  const std::string token = core::NewUuidV7();
  Status taken = Transaction(*conn_, "taking the lease of " + sid, [&]() -> Status {
    // Decisions about one session's lease are taken one at a time, also
    // while no row exists yet (a new session's first turn).
    Rows now_row = conn_->Exec(
        std::string("SELECT pg_advisory_xact_lock(hashtextextended($1, 0)), ") + kServerNowMs,
        {P("codex-lease:" + sid)});
    const int64_t now = now_row.Int(0, 1);
    Rows cur = conn_->Exec(
        "SELECT pid, host, process_start, started_at_ms, heartbeat_at_ms"
        " FROM session_leases WHERE session_id = $1",
        {P(sid)});
    if (cur.size() > 0) {
      const core::LeaseHolder other = ReadLease(cur, 0);
      // One process runs one turn per session at a time: a row naming this
      // very process is a leftover of an earlier turn of ours.
      const bool ours =
          other.pid == me.pid && other.host == me.host && other.process_start == me.process_start;
      if (!ours && !core::LeaseHolderIsGone(other, me.host, now)) {
        return core::SessionBusyError(sid, other);
      }
    }
    me.started_at_ms = now;
    me.heartbeat_at_ms = now;
    conn_->Exec(
        "INSERT INTO session_leases(session_id, token, pid, host, process_start, started_at_ms,"
        " heartbeat_at_ms) VALUES ($1, $2, $3, $4, $5, $6, $7)"
        " ON CONFLICT (session_id) DO UPDATE SET token = excluded.token, pid = excluded.pid,"
        " host = excluded.host, process_start = excluded.process_start,"
        " started_at_ms = excluded.started_at_ms, heartbeat_at_ms = excluded.heartbeat_at_ms",
        {P(sid), P(token), P(me.pid), P(me.host), P(me.process_start), P(me.started_at_ms),
         P(me.heartbeat_at_ms)});
    return OkStatus();
  });
  RETURN_IF_ERROR(taken);
  return std::unique_ptr<core::TurnLease>(
      new PgTurnLease(url_, sid, token, me, options_.lease_heartbeat_ms));
}

Result<std::vector<int64_t>> PostgresSessionStore::Append(std::string_view session_id,
                                                          std::optional<int64_t> expected_head,
                                                          std::string_view turn_id,
                                                          const std::vector<Item>& items) {
  const std::string sid(session_id);
  const int64_t now = Now();
  std::vector<ImportedItem> batch;
  batch.reserve(items.size());
  for (const Item& item : items) batch.push_back({std::string(turn_id), now, item});
  return Transaction(*conn_, "appending to session " + sid, [&]() -> Result<std::vector<int64_t>> {
    // The row lock orders concurrent appends; the head check is the CAS.
    Rows cur =
        conn_->Exec("SELECT head_item_id, title FROM sessions WHERE id = $1 FOR UPDATE", {P(sid)});
    if (cur.size() == 0) return UnknownSession(sid);
    if (cur.OptInt(0, 0) != expected_head) return SessionAdvanced(sid);
    const bool needs_title = cur.Str(0, 1).empty();
    if (batch.empty()) return std::vector<int64_t>{};
    std::vector<int64_t> ids = InsertChain(*conn_, sid, expected_head, batch);
    const std::string title = needs_title ? TitleFromItems(batch) : std::string();
    conn_->Exec(
        "UPDATE sessions SET head_item_id = $1, updated_at_ms = $2,"
        " title = CASE WHEN $3 <> '' AND title = '' THEN $3 ELSE title END WHERE id = $4",
        {P(ids.back()), P(now), P(title), P(sid)});
    return ids;
  });
}

Status PostgresSessionStore::MoveHead(std::string_view session_id,
                                      std::optional<int64_t> expected_head,
                                      std::optional<int64_t> new_head) {
  const std::string sid(session_id);
  return Transaction(*conn_, "moving the head of " + sid, [&]() -> Status {
    Rows cur = conn_->Exec("SELECT head_item_id FROM sessions WHERE id = $1 FOR UPDATE", {P(sid)});
    if (cur.size() == 0) return UnknownSession(sid);
    if (cur.OptInt(0, 0) != expected_head) return SessionAdvanced(sid);
    if (new_head) {
      Rows item = conn_->Exec("SELECT 1 FROM items WHERE id = $1", {P(*new_head)});
      if (item.size() == 0) {
        return InvalidArgumentError("cannot move session " + sid + " to item " +
                                    std::to_string(*new_head) + ": no such item");
      }
    }
    conn_->Exec("UPDATE sessions SET head_item_id = $1, updated_at_ms = $2 WHERE id = $3",
                {P(new_head), P(Now()), P(sid)});
    return OkStatus();
  });
}

Status PostgresSessionStore::RecordUsage(int64_t item_id, int64_t total_tokens) {
  return Transaction(*conn_, "recording usage", [&]() -> Status {
    conn_->Exec(
        "INSERT INTO item_usage(item_id, total_tokens) VALUES ($1, $2)"
        " ON CONFLICT (item_id) DO UPDATE SET total_tokens = excluded.total_tokens",
        {P(item_id), P(total_tokens)});
    return OkStatus();
  });
}

Status PostgresSessionStore::RecordTurn(const core::TurnRecord& turn) {
  return Transaction(*conn_, "recording a turn", [&]() -> Status {
    Rows exists =
        conn_->Exec("SELECT 1 FROM sessions WHERE id = $1 FOR UPDATE", {P(turn.session_id)});
    if (exists.size() == 0) return UnknownSession(turn.session_id);
    Rows old = conn_->Exec("SELECT total_tokens FROM turns WHERE session_id = $1 AND turn_id = $2",
                           {P(turn.session_id), P(turn.turn_id)});
    const int64_t previous_total = old.size() > 0 ? old.Int(0, 0) : 0;
    InsertTurn(*conn_, turn.session_id, turn);
    // Recording a turn again replaces its usage rather than counting it twice.
    conn_->Exec("UPDATE sessions SET tokens_used = tokens_used + $1 WHERE id = $2",
                {P(turn.usage.total_tokens - previous_total), P(turn.session_id)});
    return OkStatus();
  });
}

Status PostgresSessionStore::RecordEvent(std::string_view session_id, std::string_view turn_id,
                                         std::string_view type, std::string_view payload_json) {
  const nlohmann::json payload = nlohmann::json::parse(payload_json, nullptr, false);
  if (payload.is_discarded() || !payload.is_object()) {
    return InvalidArgumentError("event '" + std::string(type) + "' payload is not a JSON object");
  }
  const std::string sid(session_id);
  return Transaction(*conn_, "recording an event", [&]() -> Status {
    Rows exists = conn_->Exec("SELECT 1 FROM sessions WHERE id = $1", {P(sid)});
    if (exists.size() == 0) return UnknownSession(sid);
    conn_->Exec(
        "INSERT INTO events(session_id, turn_id, type, payload, created_at_ms)"
        " VALUES ($1, $2, $3, $4, $5)",
        {P(sid), P(turn_id), P(type), StoredTextParam(pg::CleanText(std::string(payload_json))),
         P(Now())});
    return OkStatus();
  });
}

Result<SessionInfo> PostgresSessionStore::Fork(std::string_view session_id,
                                               std::optional<int> at_turn) {
  const std::string sid(session_id);
  return Transaction(*conn_, "forking " + sid, [&]() -> Result<SessionInfo> {
    ASSIGN_OR_RETURN(SessionInfo parent, GetById(*conn_, sid));
    std::optional<int64_t> head = parent.head_item_id;
    if (at_turn) {
      ASSIGN_OR_RETURN(std::vector<StoredItem> history,
                       LoadChain(*conn_, parent.head_item_id, false));
      ASSIGN_OR_RETURN(head, ForkHeadAtTurn(sid, history, *at_turn));
    }
    SessionInfo fork = NewFork(parent, head, Now());
    conn_->Exec(
        "INSERT INTO sessions(id, head_item_id, forked_from_session, forked_from_item, cwd,"
        " model, provider, title, source, created_at_ms, updated_at_ms, host, project)"
        " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
        {P(fork.id), P(fork.head_item_id), P(fork.forked_from_session), P(fork.forked_from_item),
         P(fork.cwd), P(fork.model), P(fork.provider), P(fork.title), P(fork.source),
         P(fork.created_at_ms), P(fork.updated_at_ms), P(fork.host), P(fork.project)});
    return fork;
  });
}

Status PostgresSessionStore::SetTitle(std::string_view session_id, std::string_view text) {
  const std::string sid(session_id);
  const std::string title = TitleFromText(text);
  return Transaction(*conn_, "setting the title of " + sid, [&]() -> Status {
    if (conn_->Exec("UPDATE sessions SET title = $1 WHERE id = $2", {P(title), P(sid)})
            .Affected() == 0) {
      return UnknownSession(sid);
    }
    return OkStatus();
  });
}

Status PostgresSessionStore::Archive(std::string_view id) {
  const std::string sid(id);
  return Transaction(*conn_, "archiving " + sid, [&]() -> Status {
    const int64_t now = LockLeases(*conn_);
    RETURN_IF_ERROR(RefuseIfLeased(sid, LeaseRow(*conn_, sid), now));
    if (conn_->Exec("UPDATE sessions SET archived = 1 WHERE id = $1", {P(sid)}).Affected() == 0) {
      return UnknownSession(sid);
    }
    return OkStatus();
  });
}

Status PostgresSessionStore::Unarchive(std::string_view id) {
  const std::string sid(id);
  return Transaction(*conn_, "unarchiving " + sid, [&]() -> Status {
    if (conn_->Exec("UPDATE sessions SET archived = 0 WHERE id = $1", {P(sid)}).Affected() == 0) {
      return UnknownSession(sid);
    }
    return OkStatus();
  });
}

Status PostgresSessionStore::Rename(std::string_view id, std::string_view name) {
  const std::string sid(id);
  const std::string new_name(Trim(name));
  if (new_name.find('\n') != std::string::npos) {
    return InvalidArgumentError("a session name must be one line");
  }
  if (LooksLikeHexPrefix(Lower(new_name))) {
    return InvalidArgumentError("'" + new_name +
                                "' could be read as a session id prefix (only hex digits and "
                                "'-'); choose a name with another letter in it");
  }
  return Transaction(*conn_, "renaming " + sid, [&]() -> Status {
    if (!new_name.empty()) {
      Rows taken = conn_->Exec("SELECT id FROM sessions WHERE name = $1 AND id <> $2",
                               {P(new_name), P(sid)});
      if (taken.size() > 0) {
        return InvalidArgumentError("the name '" + new_name + "' is already used by session " +
                                    taken.Str(0, 0) + "; choose another name");
      }
    }
    Rows q = conn_->Exec("UPDATE sessions SET name = $1 WHERE id = $2",
                         {new_name.empty() ? NullParam() : P(new_name), P(sid)});
    if (q.Affected() == 0) return UnknownSession(sid);
    return OkStatus();
  });
}

}  // namespace codex::storage
