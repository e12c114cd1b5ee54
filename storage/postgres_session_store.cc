#include "storage/postgres_session_store.h"

#include <libpq-fe.h>

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

#include "core/context_budget.h"
#include "core/item.h"
#include "core/store_location.h"
#include "core/uuid.h"
#include "storage/migrations.h"
#include "storage/pg_search.h"
#include "storage/project_identity.h"
#include "storage/search_text.h"
#include "storage/store_rules.h"

namespace codex::storage {

using core::Item;
using core::ItemKind;
using core::SessionInfo;
using core::StoredItem;
using internal::DecodeCursor;
using internal::DirScope;
using internal::EncodeCursor;
using internal::ForkHeadAtTurn;
using internal::LocalHost;
using internal::LooksLikeHexPrefix;
using internal::NewFork;
using internal::ScopeOf;
using internal::SessionAdvanced;
using internal::TitleFromItems;
using internal::ToLower;
using internal::TrimView;
using internal::TurnStatusFromName;
using internal::UnknownSession;

namespace {

int64_t LocalNowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The server's wall clock in ms: lease times across hosts use one clock.
constexpr const char* kServerNowMs = "(extract(epoch from clock_timestamp()) * 1000)::bigint";

// Serialises first opens (migrations) across every process sharing the server.
constexpr int64_t kMigrationLockKey = 0x636f646578'6d6967;  // "codexmig"

}  // namespace

bool IsPostgresUrl(std::string_view location) {
  return location.rfind("postgresql://", 0) == 0 || location.rfind("postgres://", 0) == 0;
}

// The one redaction helper (core/store_location.h) serves this file too.
std::string RedactPostgresUrl(std::string_view url) { return core::RedactSecrets(url, url); }

namespace internal {

// A failed statement: carries its Status to the transaction edge. Only
// thrown and caught inside this file.
struct PgError : std::exception {
  Status status;
  bool connection_lost = false;
  bool retryable = false;  // serialization failure / deadlock: run the transaction again
  explicit PgError(Status s) : status(std::move(s)) {}
  const char* what() const noexcept override { return status.message().c_str(); }
};

// One statement parameter, sent as text (or bytes for bytea).
struct Param {
  bool null = false;
  bool binary = false;
  std::string value;
};

Param P(std::string_view s) { return {false, false, std::string(s)}; }
Param P(const char* s) { return {false, false, std::string(s)}; }
Param P(int64_t v) { return {false, false, std::to_string(v)}; }
Param P(int v) { return {false, false, std::to_string(v)}; }
Param P(std::optional<int64_t> v) { return v ? P(*v) : Param{true, false, {}}; }
Param Bytes(std::string_view s) { return {false, true, std::string(s)}; }
Param NullParam() { return {true, false, {}}; }

class Rows {
 public:
  explicit Rows(PGresult* r) : r_(r, &PQclear) {}
  int size() const { return PQntuples(r_.get()); }
  bool Null(int row, int col) const { return PQgetisnull(r_.get(), row, col) != 0; }
  std::string Str(int row, int col) const {
    return std::string(PQgetvalue(r_.get(), row, col),
                       static_cast<size_t>(PQgetlength(r_.get(), row, col)));
  }
  int64_t Int(int row, int col) const {
    return Null(row, col) ? 0 : std::strtoll(PQgetvalue(r_.get(), row, col), nullptr, 10);
  }
  std::optional<int64_t> OptInt(int row, int col) const {
    if (Null(row, col)) return std::nullopt;
    return Int(row, col);
  }
  // A bytea column in text (hex) output: "\x0a1b..." -> the bytes.
  std::string Bytea(int row, int col) const {
    const char* v = PQgetvalue(r_.get(), row, col);
    const size_t n = static_cast<size_t>(PQgetlength(r_.get(), row, col));
    if (n < 2 || v[0] != '\\' || v[1] != 'x') return std::string(v, n);
    std::string out;
    out.resize((n - 2) / 2);
    auto nib = [](char c) -> int {
      if (c >= '0' && c <= '9') return c - '0';
      if (c >= 'a' && c <= 'f') return c - 'a' + 10;
      return c - 'A' + 10;
    };
    for (size_t i = 0; i < out.size(); ++i) {
      out[i] = static_cast<char>((nib(v[2 + 2 * i]) << 4) | nib(v[3 + 2 * i]));
    }
    return out;
  }
  // A bigint (8 bytes) or integer (4 bytes) column of a binary result.
  std::optional<int64_t> BinInt(int row, int col) const {
    if (Null(row, col)) return std::nullopt;
    const auto* p = reinterpret_cast<const unsigned char*>(PQgetvalue(r_.get(), row, col));
    const int n = PQgetlength(r_.get(), row, col);
    uint64_t v = 0;
    for (int i = 0; i < n; ++i) v = (v << 8) | p[i];
    if (n == 4) return static_cast<int32_t>(static_cast<uint32_t>(v));
    return static_cast<int64_t>(v);
  }
  int64_t Affected() const {
    const char* t = PQcmdTuples(r_.get());
    return t && *t ? std::strtoll(t, nullptr, 10) : 0;
  }

 private:
  std::unique_ptr<PGresult, decltype(&PQclear)> r_;
};

// One libpq connection: statements that throw PgError, and a bounded
// reconnect. Messages name the server by its redacted URL and never hold
// the password.
class PgConnection {
 public:
  static Result<std::unique_ptr<PgConnection>> Connect(const std::string& url, int lock_timeout_ms,
                                                       bool read_only, int statement_timeout_ms) {
    auto c = std::unique_ptr<PgConnection>(
        new PgConnection(url, lock_timeout_ms, read_only, statement_timeout_ms));
    // Bounded waits on a TCP connection whose peer vanished (a server host
    // that died, a NAT that forgot us): libpq's defaults wait for the
    // kernel's (hours). Values the URL gives win: they come after these in
    // the expanded "dbname".
    const char* const keys[] = {
        "connect_timeout",  "keepalives",       "keepalives_idle", "keepalives_interval",
        "keepalives_count", "tcp_user_timeout", "dbname",          nullptr};
    const std::string idle = std::to_string(kKeepaliveIdleS);
    const std::string interval = std::to_string(kKeepaliveIntervalS);
    const std::string count = std::to_string(kKeepaliveCount);
    const std::string user_timeout = std::to_string(kTcpUserTimeoutMs);
    const std::string connect = std::to_string(kConnectTimeoutS);
    const char* const values[] = {connect.c_str(),  "1",           idle.c_str(),
                                  interval.c_str(), count.c_str(), user_timeout.c_str(),
                                  url.c_str(),      nullptr};
    c->conn_ = PQconnectdbParams(keys, values, /*expand_dbname=*/1);
    if (c->conn_ == nullptr || PQstatus(c->conn_) != CONNECTION_OK) {
      return UnavailableError("cannot connect to PostgreSQL at " + c->redacted_ + ": " +
                              c->LastError() + "; check that the server is running and the URL");
    }
    Status configured = c->Configure();
    if (!configured.ok()) return configured;
    return c;
  }

  // Keepalive and timeout settings every connection gets unless its URL
  // says otherwise (docs/architecture.md, "PostgreSQL backend").
  static constexpr int kConnectTimeoutS = 10;
  static constexpr int kKeepaliveIdleS = 15;
  static constexpr int kKeepaliveIntervalS = 5;
  static constexpr int kKeepaliveCount = 3;
  static constexpr int kTcpUserTimeoutMs = 30'000;
  ~PgConnection() {
    if (conn_) PQfinish(conn_);
  }
  PgConnection(const PgConnection&) = delete;
  PgConnection& operator=(const PgConnection&) = delete;

  const std::string& redacted() const { return redacted_; }
  const std::string& url() const { return url_; }

  // libpq's last error, one line, the password scrubbed.
  std::string LastError() const {
    std::string m = conn_ ? PQerrorMessage(conn_) : "out of memory";
    for (char& c : m) {
      if (c == '\n' || c == '\r' || c == '\t') c = ' ';
    }
    while (!m.empty() && m.back() == ' ') m.pop_back();
    return Scrub(m);
  }
  std::string Scrub(std::string m) const { return core::RedactSecrets(m, url_); }

  // Runs one statement; throws PgError on failure.
  // `binary_result` asks for every column in binary (Rows::BinInt, raw
  // bytea bytes): half the bytes of hex text for item bodies.
  Rows Exec(const std::string& sql, const std::vector<Param>& params = {},
            bool binary_result = false) {
    std::vector<const char*> values(params.size());
    std::vector<int> lengths(params.size());
    std::vector<int> formats(params.size());
    for (size_t i = 0; i < params.size(); ++i) {
      values[i] = params[i].null ? nullptr : params[i].value.c_str();
      lengths[i] = static_cast<int>(params[i].value.size());
      formats[i] = params[i].binary ? 1 : 0;
    }
    PGresult* r =
        PQexecParams(conn_, sql.c_str(), static_cast<int>(params.size()), nullptr, values.data(),
                     lengths.data(), formats.data(), binary_result ? 1 : 0);
    return Check(r);
  }
  // Runs a script of several statements without parameters.
  void Script(const std::string& sql) { Check(PQexec(conn_, sql.c_str())); }

  bool Broken() const { return conn_ == nullptr || PQstatus(conn_) != CONNECTION_OK; }

  // Re-establishes a broken connection: at most PostgresSessionStore::
  // kReconnectAttempts tries with growing pauses, then kUnavailable.
  Status Reconnect() {
    int pause_ms = 100;
    for (int attempt = 0; attempt < PostgresSessionStore::kReconnectAttempts; ++attempt) {
      if (attempt > 0) std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms));
      pause_ms *= 3;
      PQreset(conn_);
      if (PQstatus(conn_) == CONNECTION_OK && Configure().ok()) return OkStatus();
    }
    return UnavailableError("lost the connection to PostgreSQL at " + redacted_ +
                            " and could not reconnect after " +
                            std::to_string(PostgresSessionStore::kReconnectAttempts) +
                            " attempts: " + LastError() + "; check that the server is running");
  }

 private:
  PgConnection(const std::string& url, int lock_timeout_ms, bool read_only,
               int statement_timeout_ms)
      : url_(url),
        redacted_(RedactPostgresUrl(url)),
        lock_timeout_ms_(lock_timeout_ms),
        statement_timeout_ms_(statement_timeout_ms),
        read_only_(read_only) {}

  Status Configure() {
    // Notices (e.g. "relation already exists, skipping") would go to stderr:
    // a library never prints.
    PQsetNoticeProcessor(
        conn_, [](void*, const char*) {}, nullptr);
    std::string sql =
        "SET lock_timeout = " + std::to_string(std::max(1, lock_timeout_ms_)) +
        "; SET statement_timeout = " + std::to_string(std::max(0, statement_timeout_ms_)) +
        "; SET client_encoding = 'UTF8'";
    if (read_only_) sql += "; SET default_transaction_read_only = on";
    try {
      Script(sql);
    } catch (const PgError& e) {
      return e.status;
    }
    return OkStatus();
  }

  Rows Check(PGresult* r) {
    const ExecStatusType st = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
    if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) return Rows(r);
    std::string sqlstate;
    std::string message;
    if (r) {
      const char* code = PQresultErrorField(r, PG_DIAG_SQLSTATE);
      sqlstate = code ? code : "";
      const char* primary = PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY);
      message = primary ? primary : PQresultErrorMessage(r);
      PQclear(r);
    }
    if (message.empty()) message = LastError();
    for (char& c : message) {
      if (c == '\n') c = ' ';
    }
    message = Scrub(message);
    const bool lost = Broken() || sqlstate.rfind("08", 0) == 0 || sqlstate == "57P01";
    Status s;
    if (lost) {
      s = UnavailableError("lost the connection to PostgreSQL at " + redacted_ + ": " + message);
    } else if (sqlstate == "57014" && message.find("statement timeout") != std::string::npos) {
      s = DeadlineExceededError("PostgreSQL at " + redacted_ +
                                " did not finish a statement within " +
                                std::to_string(statement_timeout_ms_) +
                                " ms (statement_timeout); the server may be overloaded: try "
                                "again, or raise statement_timeout in the URL's options");
    } else if (sqlstate == "40001" || sqlstate == "40P01" || sqlstate == "55P03" ||
               sqlstate == "57014") {
      s = UnavailableError("PostgreSQL at " + redacted_ + " is busy: " + message + " (SQLSTATE " +
                           sqlstate + "); try again");
    } else if (sqlstate == "25006") {
      s = FailedPreconditionError("sessions database " + redacted_ +
                                  " is opened read-only; a change cannot be recorded");
    } else {
      s = InternalError("PostgreSQL at " + redacted_ + ": " + message +
                        (sqlstate.empty() ? "" : " (SQLSTATE " + sqlstate + ")"));
    }
    PgError e(std::move(s));
    e.connection_lost = lost;
    e.retryable = sqlstate == "40001" || sqlstate == "40P01";
    throw e;
  }

  std::string url_;
  std::string redacted_;
  int lock_timeout_ms_;
  int statement_timeout_ms_;
  bool read_only_;
  PGconn* conn_ = nullptr;
};

}  // namespace internal

using internal::Bytes;
using internal::NullParam;
using internal::P;
using internal::Param;
using internal::PgConnection;
using internal::PgError;
using internal::Rows;

namespace {

constexpr const char* kSessionCols =
    "id, head_item_id, forked_from_session, forked_from_item, cwd, model, provider, title, "
    "name, source, created_at_ms, updated_at_ms, archived, tokens_used, host, project";

// Newest first, ids compared byte-wise as in SQLite.
constexpr const char* kRecentOrder = " ORDER BY updated_at_ms DESC, id COLLATE \"C\" DESC";

SessionInfo ReadSession(const Rows& q, int row, int first = 0) {
  SessionInfo s;
  s.id = q.Str(row, first + 0);
  s.head_item_id = q.OptInt(row, first + 1);
  s.forked_from_session = q.Str(row, first + 2);
  s.forked_from_item = q.OptInt(row, first + 3);
  s.cwd = q.Str(row, first + 4);
  s.model = q.Str(row, first + 5);
  s.provider = q.Str(row, first + 6);
  s.title = q.Str(row, first + 7);
  s.name = q.Str(row, first + 8);
  s.source = q.Str(row, first + 9);
  s.created_at_ms = q.Int(row, first + 10);
  s.updated_at_ms = q.Int(row, first + 11);
  s.archived = q.Int(row, first + 12) != 0;
  s.tokens_used = q.Int(row, first + 13);
  s.host = q.Str(row, first + 14);
  s.project = q.Str(row, first + 15);
  return s;
}

// A directory filter (internal::DirScope) in SQL, its values appended to `params`.
std::string ScopeSql(std::vector<Param>& params, const DirScope& scope) {
  params.push_back(P(scope.cwd));
  const std::string cwd = "$" + std::to_string(params.size());
  params.push_back(P(scope.project));
  const std::string project = "$" + std::to_string(params.size());
  return "(cwd = " + cwd + " OR (" + project + " <> '' AND project = " + project + "))";
}

std::vector<SessionInfo> ReadSessions(const Rows& q) {
  std::vector<SessionInfo> out;
  out.reserve(static_cast<size_t>(q.size()));
  for (int r = 0; r < q.size(); ++r) out.push_back(ReadSession(q, r));
  return out;
}

core::LeaseHolder ReadLease(const Rows& q, int row) {
  core::LeaseHolder h;
  h.pid = q.Int(row, 0);
  h.host = q.Str(row, 1);
  h.process_start = q.Str(row, 2);
  h.started_at_ms = q.Int(row, 3);
  h.heartbeat_at_ms = q.Int(row, 4);
  return h;
}

// A PostgreSQL text array literal of plain tokens (session ids).
std::string TextArray(const std::vector<std::string>& values) {
  std::string out = "{";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) out += ',';
    out += '"';
    for (char c : values[i]) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  return out + "}";
}

// Runs `body` in BEGIN ... COMMIT on `conn`. A connection found broken is
// re-established first (bounded); a transaction interrupted by a lost
// connection before COMMIT, or by a deadlock, runs again (at most
// kReconnectAttempts times). A failure of COMMIT itself is not retried: the
// caller cannot know whether it took effect.
template <typename F>
auto Transaction(PgConnection& conn, std::string_view what, F&& body) -> decltype(body()) {
  using R = decltype(body());
  for (int attempt = 0;; ++attempt) {
    if (conn.Broken()) {
      Status s = conn.Reconnect();
      if (!s.ok()) return R(s);
    }
    bool committing = false;
    try {
      conn.Exec("BEGIN");
      R result = body();
      if (!result.ok()) {
        conn.Exec("ROLLBACK");
        return result;
      }
      committing = true;
      conn.Exec("COMMIT");
      return result;
    } catch (const PgError& e) {
      if (!e.connection_lost) {
        try {
          conn.Exec("ROLLBACK");
        } catch (const PgError&) {
        }
      }
      const bool again = !committing && (e.connection_lost || e.retryable) &&
                         attempt + 1 < PostgresSessionStore::kReconnectAttempts;
      if (again) continue;
      Status s = e.status;
      if (committing && e.connection_lost) {
        return R(UnavailableError(
            std::string(s.message()) + " while committing " + std::string(what) +
            "; it may or may not have been saved: check with 'codex sessions show'"));
      }
      return R(Status(s.code(), std::string(s.message()) + " (while " + std::string(what) + ")")
                   .WithReason(s.reason()));
    }
  }
}

// Runs a read `body` (no transaction), reconnecting and retrying like Transaction.
template <typename F>
auto Read(PgConnection& conn, std::string_view what, F&& body) -> decltype(body()) {
  using R = decltype(body());
  for (int attempt = 0;; ++attempt) {
    if (conn.Broken()) {
      Status s = conn.Reconnect();
      if (!s.ok()) return R(s);
    }
    try {
      return body();
    } catch (const PgError& e) {
      if (e.connection_lost && attempt + 1 < PostgresSessionStore::kReconnectAttempts) continue;
      return R(Status(e.status.code(),
                      std::string(e.status.message()) + " (while " + std::string(what) + ")"));
    }
  }
}

// Inserts `items` chained from `parent` (ids drawn first, then one INSERT
// per chunk); returns their ids.
std::vector<int64_t> InsertChain(PgConnection& conn, std::string_view session_id,
                                 std::optional<int64_t> parent,
                                 const std::vector<ImportedItem>& items) {
  std::vector<int64_t> ids;
  if (items.empty()) return ids;
  {
    Rows r = conn.Exec(
        "SELECT nextval(pg_get_serial_sequence('items', 'id')) FROM generate_series(1, $1)",
        {P(static_cast<int64_t>(items.size()))});
    for (int i = 0; i < r.size(); ++i) ids.push_back(r.Int(i, 0));
  }
  std::sort(ids.begin(), ids.end());
  constexpr size_t kChunk = 500;  // 10 parameters a row, well under libpq's 65535
  for (size_t start = 0; start < items.size(); start += kChunk) {
    const size_t end = std::min(items.size(), start + kChunk);
    std::string sql =
        "INSERT INTO items(id, parent_id, session_id, turn_id, kind, role, call_id, server_id,"
        " body, tokens_est, created_at_ms) VALUES ";
    std::vector<Param> params;
    std::string search_sql = "INSERT INTO items_search(item_id, text, tsv) VALUES ";
    std::vector<Param> search_params;
    for (size_t i = start; i < end; ++i) {
      const ImportedItem& it = items[i];
      const std::optional<int64_t> p = i == 0 ? parent : std::optional<int64_t>(ids[i - 1]);
      const size_t b = params.size();
      if (i > start) sql += ',';
      sql += "(";
      for (size_t k = 1; k <= 11; ++k) sql += (k > 1 ? ",$" : "$") + std::to_string(b + k);
      sql += ")";
      params.push_back(P(ids[i]));
      params.push_back(P(p));
      params.push_back(P(session_id));
      params.push_back(P(it.turn_id));
      params.push_back(P(core::ItemKindName(it.item.kind)));
      params.push_back(P(it.item.role));
      params.push_back(P(it.item.call_id));
      params.push_back(P(it.item.server_id));
      params.push_back(Bytes(it.item.body));
      params.push_back(P(core::EstimateItemTokens(it.item)));
      params.push_back(P(it.created_at_ms));
      const std::string text = pg::CleanText(SearchText(it.item));
      if (!text.empty()) {
        const size_t sb = search_params.size();
        if (sb) search_sql += ',';
        search_sql += "($" + std::to_string(sb + 1) + ",$" + std::to_string(sb + 2) + ",$" +
                      std::to_string(sb + 3) + "::tsvector)";
        search_params.push_back(P(ids[i]));
        search_params.push_back(P(text));
        search_params.push_back(P(pg::TsVectorOf(text)));
      }
    }
    conn.Exec(sql, params);
    if (!search_params.empty()) conn.Exec(search_sql, search_params);
  }
  return ids;
}

void InsertTurn(PgConnection& conn, const std::string& sid, const core::TurnRecord& t) {
  conn.Exec(
      "INSERT INTO turns(session_id, turn_id, status, error, input_tokens, cached_input_tokens,"
      " output_tokens, reasoning_output_tokens, total_tokens, started_at_ms, ended_at_ms)"
      " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)"
      " ON CONFLICT (session_id, turn_id) DO UPDATE SET status = excluded.status,"
      " error = excluded.error, input_tokens = excluded.input_tokens,"
      " cached_input_tokens = excluded.cached_input_tokens,"
      " output_tokens = excluded.output_tokens,"
      " reasoning_output_tokens = excluded.reasoning_output_tokens,"
      " total_tokens = excluded.total_tokens, started_at_ms = excluded.started_at_ms,"
      " ended_at_ms = excluded.ended_at_ms",
      {P(sid), P(t.turn_id), P(TurnStatusName(t.status)), P(t.error), P(t.usage.input_tokens),
       P(t.usage.cached_input_tokens), P(t.usage.output_tokens), P(t.usage.reasoning_output_tokens),
       P(t.usage.total_tokens), P(t.started_at_ms), P(t.ended_at_ms)});
}

std::optional<SessionInfo> SessionById(PgConnection& conn, const std::string& id,
                                       bool for_update = false) {
  Rows q = conn.Exec(std::string("SELECT ") + kSessionCols + " FROM sessions WHERE id = $1" +
                         (for_update ? " FOR UPDATE" : ""),
                     {P(id)});
  if (q.size() == 0) return std::nullopt;
  return ReadSession(q, 0);
}

Result<SessionInfo> GetById(PgConnection& conn, const std::string& id, bool for_update = false) {
  std::optional<SessionInfo> s = SessionById(conn, id, for_update);
  if (!s) return UnknownSession(id);
  return *s;
}

// The ids of the chain from `head` towards the root, head first: with
// `stop_at_checkpoint` the walk ends before the newest checkpoint (left
// out). A recursive query costs a server round of work per item (~100 ms
// for 10,000), so the walk runs here over light rows fetched a creator
// session at a time: every item a session appended up to the current one
// (one query for a plain session, one more per fork level crossed). A
// parent's id is always smaller than its child's, so the walk ends.
struct ChainWalk {
  std::vector<int64_t> ids;  // head first
  // Per creator session crossed: the lowest and highest id of the chain it appended.
  std::map<std::string, std::pair<int64_t, int64_t>> ranges;
};

Result<ChainWalk> WalkChain(PgConnection& conn, int64_t head, bool stop_at_checkpoint) {
  struct Link {
    std::optional<int64_t> parent;
    bool checkpoint = false;
    size_t segment = 0;  // index into `segments`
  };
  std::unordered_map<int64_t, Link> known;
  std::vector<std::string> segments;
  ChainWalk walk;
  std::optional<int64_t> cur = head;
  while (cur) {
    auto it = known.find(*cur);
    if (it == known.end()) {
      Rows r = conn.Exec(
          "SELECT id, parent_id, kind = 'compaction_checkpoint', session_id FROM items"
          " WHERE session_id = (SELECT session_id FROM items WHERE id = $1) AND id <= $1",
          {P(*cur)});
      if (r.size() > 0) segments.push_back(r.Str(0, 3));
      for (int i = 0; i < r.size(); ++i) {
        known.emplace(r.Int(i, 0), Link{r.OptInt(i, 1), r.Str(i, 2) == "t", segments.size() - 1});
      }
      it = known.find(*cur);
      if (it == known.end()) {
        if (walk.ids.empty() && stop_at_checkpoint) return walk;  // as SQLite: nothing to show
        if (walk.ids.empty()) {
          return DataLossError("sessions database " + conn.redacted() + ": head item " +
                               std::to_string(head) + " is missing");
        }
        return DataLossError("sessions database " + conn.redacted() + ": the item chain from " +
                             std::to_string(head) + " is inconsistent");
      }
    }
    if (stop_at_checkpoint && it->second.checkpoint) break;
    walk.ids.push_back(*cur);
    auto [range, fresh] =
        walk.ranges.try_emplace(segments[it->second.segment], std::make_pair(*cur, *cur));
    if (!fresh) {
      range->second.first = std::min(range->second.first, *cur);
      range->second.second = std::max(range->second.second, *cur);
    }
    const std::optional<int64_t> parent = it->second.parent;
    if (parent && *parent >= *cur) {
      return DataLossError("sessions database " + conn.redacted() + ": the item chain from " +
                           std::to_string(head) + " is inconsistent");
    }
    cur = parent;
  }
  return walk;
}

Result<std::vector<StoredItem>> LoadChain(PgConnection& conn, std::optional<int64_t> head,
                                          bool stop_at_checkpoint) {
  std::vector<StoredItem> out;
  if (!head) return out;
  ASSIGN_OR_RETURN(const ChainWalk walk, WalkChain(conn, *head, stop_at_checkpoint));
  const std::vector<int64_t>& ids = walk.ids;
  if (ids.empty()) return out;
  // ids is head first; the transcript is oldest first.
  std::unordered_map<int64_t, size_t> slot;
  slot.reserve(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) slot.emplace(ids[i], ids.size() - 1 - i);
  out.resize(ids.size());
  size_t filled = 0;
  // The bodies: one range scan of (session_id, id) per creator session, in
  // binary; rows off the chain (another branch of the same session) are
  // skipped.
  for (const auto& [session, range] : walk.ranges) {
    Rows q = conn.Exec(
        "SELECT i.id, i.parent_id, i.session_id, i.turn_id, i.created_at_ms, i.kind, i.role,"
        " i.call_id, i.server_id, i.body, u.total_tokens FROM items AS i"
        " LEFT JOIN item_usage AS u ON u.item_id = i.id"
        " WHERE i.session_id = $1 AND i.id BETWEEN $2 AND $3",
        {P(session), P(range.first), P(range.second)}, /*binary_result=*/true);
    for (int r = 0; r < q.size(); ++r) {
      const int64_t id = q.BinInt(r, 0).value_or(0);
      auto at = slot.find(id);
      if (at == slot.end()) continue;
      StoredItem& s = out[at->second];
      if (s.id == 0) ++filled;
      s.id = id;
      s.parent_id = q.BinInt(r, 1);
      s.session_id = q.Str(r, 2);
      s.turn_id = q.Str(r, 3);
      s.created_at_ms = q.BinInt(r, 4).value_or(0);
      s.item.kind = core::ItemKindFromName(q.Str(r, 5));
      s.item.role = q.Str(r, 6);
      s.item.call_id = q.Str(r, 7);
      s.item.server_id = q.Str(r, 8);
      s.item.body = q.Str(r, 9);  // binary bytea: the bytes themselves
      s.reported_total_tokens = q.BinInt(r, 10);
    }
  }
  if (filled != ids.size()) {
    return DataLossError("sessions database " + conn.redacted() + ": the item chain from " +
                         std::to_string(*head) + " is inconsistent");
  }
  return out;
}

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
          {P(m.version), P(m.name), P(checksum), P(LocalNowMs())});
      return OkStatus();
    });
  }

 private:
  PgConnection& conn_;
};

// Re-indexes the search rows made before migration 0003 (folding < 2) from
// their stored text with the current rules (storage/pg_search.h), a batch
// per transaction: an interrupted run is finished by the next open.
Status RefoldSearchIndex(PgConnection& conn) {
  constexpr int kBatch = 1000;
  while (true) {
    Result<int> done = Transaction(conn, "re-indexing search text", [&]() -> Result<int> {
      conn.Exec("SET LOCAL statement_timeout = 0");
      Rows q = conn.Exec(
          "SELECT item_id, text FROM items_search WHERE folding < 2 ORDER BY item_id LIMIT $1"
          " FOR UPDATE",
          {P(kBatch)});
      for (int r = 0; r < q.size(); ++r) {
        conn.Exec("UPDATE items_search SET tsv = $2::tsvector, folding = 2 WHERE item_id = $1",
                  {P(q.Int(r, 0)), P(pg::TsVectorOf(q.Str(r, 1)))});
      }
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
  s.id = spec.id.empty() ? core::NewUuidV7() : ToLower(spec.id);
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
  s.created_at_ms = spec.created_at_ms != 0 ? spec.created_at_ms : LocalNowMs();
  s.updated_at_ms = s.created_at_ms;
  return Transaction(*conn_, "creating a session", [&]() -> Result<SessionInfo> {
    SessionInfo out = s;
    Rows ins = conn_->Exec(
        "INSERT INTO sessions(id, cwd, model, provider, title, source, created_at_ms,"
        " updated_at_ms, host, project) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"
        " ON CONFLICT (id) DO NOTHING RETURNING 1",
        {P(out.id), P(out.cwd), P(out.model), P(out.provider), P(out.title), P(out.source),
         P(out.created_at_ms), P(out.updated_at_ms), P(out.host), P(out.project)});
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

Result<SessionInfo> PostgresSessionStore::FindSession(std::string_view id_or_name) {
  const std::string key(TrimView(id_or_name));
  if (key.empty()) return InvalidArgumentError("empty session id; give an id, a prefix or a name");
  return Read(*conn_, "finding a session", [&]() -> Result<SessionInfo> {
    const std::string lower = ToLower(key);
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
      if (found.size() > 1) {
        std::string list;
        for (size_t i = 0; i < found.size() && i < 10; ++i) {
          const SessionInfo& c = found[i];
          list += "\n  " + c.id + "  " + (c.name.empty() ? c.title : c.name + ": " + c.title);
        }
        if (found.size() > 10) list += "\n  ...";
        Status ambiguous = InvalidArgumentError(
            "session prefix '" + key + "' is ambiguous; give more characters of one of:" + list);
        ambiguous.WithReason(StatusReason::kAmbiguousPrefix);
        return ambiguous;
      }
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

Result<std::vector<int64_t>> PostgresSessionStore::Append(std::string_view session_id,
                                                          std::optional<int64_t> expected_head,
                                                          std::string_view turn_id,
                                                          const std::vector<Item>& items) {
  const std::string sid(session_id);
  const int64_t now = LocalNowMs();
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
                {P(new_head), P(LocalNowMs()), P(sid)});
    return OkStatus();
  });
}

Result<core::ListPage> PostgresSessionStore::ListSessions(const core::ListQuery& query) {
  if (query.limit <= 0) {
    return InvalidArgumentError("list limit must be at least 1, got " +
                                std::to_string(query.limit));
  }
  int64_t after_ms = 0;
  std::string after_id;
  const bool has_cursor = !query.cursor.empty();
  if (has_cursor && !DecodeCursor(query.cursor, &after_ms, &after_id)) {
    return InvalidArgumentError("invalid cursor '" + query.cursor +
                                "'; pass the value printed by 'codex sessions list'");
  }
  return Read(*conn_, "listing sessions", [&]() -> Result<core::ListPage> {
    std::vector<Param> params{P(query.archived ? 1 : 0)};
    std::string sql = std::string("SELECT ") + kSessionCols + " FROM sessions WHERE archived = $1";
    if (query.cwd) sql += " AND " + ScopeSql(params, ScopeOf(*query.cwd));
    if (has_cursor) {
      params.push_back(P(after_ms));
      const std::string ms = "$" + std::to_string(params.size());
      params.push_back(P(after_id));
      const std::string id = "$" + std::to_string(params.size());
      sql += " AND (updated_at_ms < " + ms + " OR (updated_at_ms = " + ms +
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
        {P(sid), P(turn_id), P(type), P(pg::CleanText(std::string(payload_json))),
         P(LocalNowMs())});
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
    SessionInfo fork = NewFork(parent, head, LocalNowMs());
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
  const std::string new_name(TrimView(name));
  if (new_name.find('\n') != std::string::npos) {
    return InvalidArgumentError("a session name must be one line");
  }
  if (LooksLikeHexPrefix(ToLower(new_name))) {
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

namespace {

// Deletes the sessions in `ids` and the items only they needed, inside the
// caller's transaction (the rules of SqliteSessionStore::RemoveSessions):
//   candidates = the removed sessions' chains (from head and fork point to the
//                root) plus every item they appended;
//   kept       = candidates still needed: another session's head or fork
//                point, the parent of a surviving item, and their ancestors.
RemoveStats RemoveSessions(PgConnection& conn, const std::vector<std::string>& ids) {
  RemoveStats stats;
  if (ids.empty()) return stats;
  conn.Script(
      "CREATE TEMP TABLE rm_sessions(id TEXT PRIMARY KEY) ON COMMIT DROP;"
      "CREATE TEMP TABLE rm_candidates(id BIGINT PRIMARY KEY) ON COMMIT DROP;"
      "CREATE TEMP TABLE rm_keep(id BIGINT PRIMARY KEY) ON COMMIT DROP;");
  conn.Exec("INSERT INTO rm_sessions(id) SELECT DISTINCT unnest($1::text[])", {P(TextArray(ids))});
  conn.Exec(
      "INSERT INTO rm_candidates(id)"
      " WITH RECURSIVE up(id) AS ("
      "   SELECT head_item_id FROM sessions"
      "    WHERE id IN (SELECT id FROM rm_sessions) AND head_item_id IS NOT NULL"
      "   UNION SELECT forked_from_item FROM sessions"
      "    WHERE id IN (SELECT id FROM rm_sessions) AND forked_from_item IS NOT NULL"
      "   UNION SELECT i.parent_id FROM up JOIN items AS i ON i.id = up.id"
      "    WHERE i.parent_id IS NOT NULL)"
      " SELECT id FROM up ON CONFLICT DO NOTHING");
  conn.Exec(
      "INSERT INTO rm_candidates(id)"
      " SELECT id FROM items WHERE session_id IN (SELECT id FROM rm_sessions)"
      " ON CONFLICT DO NOTHING");
  conn.Exec(
      "INSERT INTO rm_keep(id)"
      " WITH RECURSIVE k(id) AS ("
      "   SELECT s.head_item_id FROM rm_candidates AS c JOIN sessions AS s"
      "    ON s.head_item_id = c.id WHERE s.id NOT IN (SELECT id FROM rm_sessions)"
      "   UNION SELECT s.forked_from_item FROM rm_candidates AS c JOIN sessions AS s"
      "    ON s.forked_from_item = c.id WHERE s.id NOT IN (SELECT id FROM rm_sessions)"
      "   UNION SELECT i.parent_id FROM rm_candidates AS c JOIN items AS i"
      "    ON i.parent_id = c.id WHERE i.id NOT IN (SELECT id FROM rm_candidates)"
      "   UNION SELECT i.parent_id FROM k JOIN items AS i ON i.id = k.id"
      "    WHERE i.parent_id IN (SELECT id FROM rm_candidates))"
      " SELECT id FROM k ON CONFLICT DO NOTHING");
  conn.Exec("DELETE FROM session_leases WHERE session_id IN (SELECT id FROM rm_sessions)");
  stats.sessions =
      conn.Exec("DELETE FROM sessions WHERE id IN (SELECT id FROM rm_sessions)").Affected();
  // Children before parents is not needed: the whole set goes in one
  // statement, and parent_id references are checked at its end.
  stats.items = conn.Exec(
                        "DELETE FROM items WHERE id IN"
                        " (SELECT id FROM rm_candidates EXCEPT SELECT id FROM rm_keep)")
                    .Affected();
  return stats;
}

}  // namespace

Result<RemoveStats> PostgresSessionStore::Remove(std::string_view id) {
  const std::string sid(id);
  return Transaction(*conn_, "removing " + sid, [&]() -> Result<RemoveStats> {
    ASSIGN_OR_RETURN(SessionInfo s, GetById(*conn_, sid, /*for_update=*/true));
    return RemoveSessions(*conn_, {s.id});
  });
}

Result<std::vector<SessionInfo>> PostgresSessionStore::Purge(const PurgeQuery& query,
                                                             RemoveStats* stats) {
  auto select = [&]() -> std::vector<SessionInfo> {
    std::vector<Param> params{P(query.updated_before_ms)};
    std::string sql =
        std::string("SELECT ") + kSessionCols + " FROM sessions WHERE updated_at_ms < $1";
    if (query.cwd) sql += " AND " + ScopeSql(params, ScopeOf(*query.cwd));
    sql += " ORDER BY updated_at_ms, id COLLATE \"C\"";
    return ReadSessions(conn_->Exec(sql, params));
  };
  if (query.dry_run) {
    return Read(*conn_, "listing old sessions",
                [&]() -> Result<std::vector<SessionInfo>> { return select(); });
  }
  return Transaction(*conn_, "purging old sessions", [&]() -> Result<std::vector<SessionInfo>> {
    std::vector<SessionInfo> sessions = select();
    std::vector<std::string> ids;
    for (const SessionInfo& si : sessions) ids.push_back(si.id);
    const RemoveStats removed = RemoveSessions(*conn_, ids);
    if (stats) *stats = removed;
    return sessions;
  });
}

namespace {

// What Search needs to know of items to credit hits to sessions and turns,
// fetched a creator session at a time and kept for one Search call: the
// parent link, and the body of user messages and checkpoints (which decide
// where turns start). Walking these in the client replaces one recursive
// query per hit (each ~10 us of server work per item of the chain).
class ItemLinks {
 public:
  explicit ItemLinks(PgConnection& conn) : conn_(conn) {}

  struct Link {
    std::optional<int64_t> parent;
    ItemKind kind = ItemKind::kMessage;
    std::string role;
    std::string body;  // user messages and checkpoints only
    std::optional<bool> real_user;
  };

  // nullptr when `id` is not stored.
  Link* Get(int64_t id) {
    auto it = links_.find(id);
    if (it != links_.end()) return &it->second;
    Rows r = conn_.Exec(
        "SELECT id, parent_id, kind, role, CASE WHEN (kind = 'message' AND role = 'user') OR"
        " kind = 'compaction_checkpoint' THEN body ELSE ''::bytea END FROM items"
        " WHERE session_id = (SELECT session_id FROM items WHERE id = $1)",
        {P(id)});
    for (int i = 0; i < r.size(); ++i) {
      Link l;
      l.parent = r.OptInt(i, 1);
      l.kind = core::ItemKindFromName(r.Str(i, 2));
      l.role = r.Str(i, 3);
      l.body = r.Bytea(i, 4);
      links_.emplace(r.Int(i, 0), std::move(l));
    }
    it = links_.find(id);
    return it == links_.end() ? nullptr : &it->second;
  }

  // True when `item` is on the chain from `head` to the root. Parents have
  // smaller ids than their children, so the walk stops below `item`.
  bool Holds(std::optional<int64_t> head, int64_t item) {
    for (std::optional<int64_t> cur = head; cur && *cur >= item;) {
      if (*cur == item) return true;
      const Link* l = Get(*cur);
      if (!l) return false;
      cur = l->parent;
    }
    return false;
  }

  // The 1-based turn of the chain from the root to `item` that the item
  // belongs to (the TurnStartIndexes rule); 0 before the first turn.
  int TurnOf(int64_t item) {
    std::vector<int64_t> up;
    for (std::optional<int64_t> cur = item; cur;) {
      const Link* l = Get(*cur);
      if (!l) break;
      up.push_back(*cur);
      cur = l->parent;
    }
    int turns = 0;
    size_t replacement_left = 0;
    for (auto it = up.rbegin(); it != up.rend(); ++it) {
      Link& l = *Get(*it);
      if (l.kind == ItemKind::kCompactionCheckpoint) {
        Item checkpoint;
        checkpoint.kind = l.kind;
        checkpoint.body = l.body;
        replacement_left = static_cast<size_t>(CheckpointReplacementItems(checkpoint).value_or(0));
        continue;
      }
      if (replacement_left > 0) {
        --replacement_left;
        continue;
      }
      if (l.kind != ItemKind::kMessage || l.role != "user") continue;
      if (!l.real_user) {
        Item message;
        message.kind = l.kind;
        message.role = "user";
        message.body = l.body;
        l.real_user = IsRealUserMessage(message);
      }
      if (*l.real_user) ++turns;
    }
    return turns;
  }

 private:
  PgConnection& conn_;
  std::unordered_map<int64_t, Link> links_;
};

}  // namespace

Result<std::vector<SearchHit>> PostgresSessionStore::Search(const SearchQuery& query) {
  // The same validation (and messages) as SQLite's query syntax.
  RETURN_IF_ERROR(FtsQueryFromUser(query.text).status());
  if (query.limit <= 0) return InvalidArgumentError("search limit must be at least 1");
  ASSIGN_OR_RETURN(const pg::TsQuery tsq, pg::TsQueryFromUser(query.text));
  if (tsq.text.empty()) return std::vector<SearchHit>{};
  const std::optional<DirScope> scope =
      query.cwd ? std::optional<DirScope>(ScopeOf(*query.cwd)) : std::nullopt;
  return Read(*conn_, "searching", [&]() -> Result<std::vector<SearchHit>> {
    // The sessions that can hold an item: its creator and every session
    // forked from it, directly or not (also after the creator was removed:
    // forked_from_session stays), plus the lineages cut off by a removed
    // session in the middle (a fork of a removed fork links to nothing
    // live; SQLite finds those by walking items down from the match).
    // Each candidate is checked by walking its chain.
    std::string candidates_sql =
        std::string(
            "WITH RECURSIVE f(id) AS (SELECT id FROM (SELECT $1::text AS id UNION"
            " SELECT o.id FROM sessions AS o WHERE o.forked_from_session IS NOT NULL"
            " AND NOT EXISTS (SELECT 1 FROM sessions AS p WHERE p.id = o.forked_from_session))"
            " AS seed UNION SELECT s.id FROM sessions AS s JOIN f"
            " ON s.forked_from_session = f.id) SELECT ") +
        kSessionCols + " FROM sessions WHERE id IN (SELECT id FROM f)";
    if (scope) candidates_sql += " AND (cwd = $2 OR ($3 <> '' AND project = $3))";
    candidates_sql += kRecentOrder;
    std::map<std::string, std::vector<SessionInfo>> candidates;  // by creator session
    ItemLinks links(*conn_);
    std::vector<SearchHit> hits;
    constexpr int kPage = 200;
    for (int offset = 0; hits.size() < static_cast<size_t>(query.limit); offset += kPage) {
      // Best matches first. A fork keeps its parent's cwd, so with a
      // directory only items whose creator is in it (or is gone, leaving
      // forks) can be held there.
      std::vector<Param> params{P(tsq.text), P(static_cast<int64_t>(kPage)),
                                P(static_cast<int64_t>(offset))};
      std::string sql =
          "SELECT s.item_id, s.text, i.kind, i.role, i.session_id FROM items_search AS s"
          " JOIN items AS i ON i.id = s.item_id WHERE s.tsv @@ $1::tsquery";
      if (scope) {
        sql += " AND (i.session_id IN (SELECT id FROM sessions WHERE " + ScopeSql(params, *scope) +
               ") OR i.session_id NOT IN (SELECT id FROM sessions))";
      }
      sql += " ORDER BY ts_rank(s.tsv, $1::tsquery) DESC, s.item_id DESC LIMIT $2 OFFSET $3";
      Rows q = conn_->Exec(sql, params);
      for (int r = 0; r < q.size() && hits.size() < static_cast<size_t>(query.limit); ++r) {
        SearchHit hit;
        hit.item_id = q.Int(r, 0);
        const std::string creator = q.Str(r, 4);
        auto c = candidates.find(creator);
        if (c == candidates.end()) {
          std::vector<Param> cp{P(creator)};
          if (scope) {
            cp.push_back(P(scope->cwd));
            cp.push_back(P(scope->project));
          }
          c = candidates.emplace(creator, ReadSessions(conn_->Exec(candidates_sql, cp))).first;
        }
        for (const SessionInfo& session : c->second) {
          if (links.Holds(session.head_item_id, hit.item_id)) hit.sessions.push_back({session, 0});
        }
        if (hit.sessions.empty()) continue;
        hit.snippet = pg::Snippet(q.Str(r, 1), tsq);
        hit.kind = q.Str(r, 2);
        hit.role = q.Str(r, 3);
        const int turn = links.TurnOf(hit.item_id);
        for (auto& w : hit.sessions) w.turn = turn;
        hits.push_back(std::move(hit));
      }
      if (q.size() < kPage) break;
    }
    return hits;
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
    std::multimap<std::string, SessionInfo> children;
    for (SessionInfo& s : ReadSessions(q)) {
      std::string parent = s.forked_from_session;
      children.emplace(std::move(parent), std::move(s));
    }
    std::vector<TreeNode> out;
    std::vector<TreeNode> stack{{root, 0}};
    while (!stack.empty()) {
      TreeNode node = std::move(stack.back());
      stack.pop_back();
      auto [lo, hi] = children.equal_range(node.session.id);
      std::vector<TreeNode> kids;
      for (auto it = lo; it != hi; ++it) kids.push_back({it->second, node.depth + 1});
      out.push_back(std::move(node));
      for (auto it = kids.rbegin(); it != kids.rend(); ++it) stack.push_back(std::move(*it));
    }
    return out;
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
    e.payload_json = q.Str(r, 3);
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

Result<bool> PostgresSessionStore::ImportSession(const ImportedSession& session) {
  const std::string sid = ToLower(session.spec.id);
  if (!core::LooksLikeUuid(sid)) {
    return InvalidArgumentError("imported session id '" + session.spec.id + "' is not a UUID");
  }
  for (const EventRecord& e : session.events) {
    const nlohmann::json payload = nlohmann::json::parse(e.payload_json, nullptr, false);
    if (payload.is_discarded() || !payload.is_object()) {
      return InvalidArgumentError("event '" + e.type + "' payload is not a JSON object");
    }
  }
  return Transaction(*conn_, "importing " + sid, [&]() -> Result<bool> {
    const int64_t created =
        session.spec.created_at_ms != 0 ? session.spec.created_at_ms : LocalNowMs();
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
    const std::vector<int64_t> ids = InsertChain(*conn_, sid, std::nullopt, session.items);
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
          {P(sid), P(e.turn_id), P(e.type), P(pg::CleanText(e.payload_json)),
           P(e.created_at_ms != 0 ? e.created_at_ms : created)});
    }
    return true;
  });
}

Result<bool> PostgresSessionStore::CopySession(const SessionCopy& copy) {
  const std::string sid = ToLower(copy.info.id);
  if (!core::LooksLikeUuid(sid)) {
    return InvalidArgumentError("copied session id '" + copy.info.id + "' is not a UUID");
  }
  if (copy.forked_from_index && *copy.forked_from_index >= copy.items.size()) {
    return InvalidArgumentError("session " + sid + ": fork point index is past its items");
  }
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
          {P(sid), P(e.turn_id), P(e.type), P(pg::CleanText(e.payload_json)), P(e.created_at_ms)});
    }
    return true;
  });
}

}  // namespace codex::storage
