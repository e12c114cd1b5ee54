// Shared by the files of PostgresSessionStore (postgres_session_store.cc:
// open, append, fork, lease; postgres_session_queries.cc;
// postgres_session_search.cc; postgres_session_import.cc;
// postgres_session_maintenance.cc): the connection, its transactions and
// retries, the row readers and chain walks. Internal: include only from
// those files.
#ifndef CODEX_STORAGE_POSTGRES_STORE_INTERNAL_H_
#define CODEX_STORAGE_POSTGRES_STORE_INTERNAL_H_

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>
#include <unordered_map>

#include "base/time.h"
#include "core/context_budget.h"
#include "core/item.h"
#include "core/store_location.h"
#include "core/uuid.h"
#include "storage/libpq.h"
#include "storage/migrations.h"
#include "storage/packed_text.h"
#include "storage/pg_search.h"
#include "storage/postgres_session_store.h"
#include "storage/project_identity.h"
#include "storage/search_text.h"
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

namespace postgres_internal {

// The server's wall clock in ms: lease times across hosts use one clock.
inline constexpr const char* kServerNowMs =
    "(extract(epoch from clock_timestamp()) * 1000)::bigint";

inline constexpr int64_t kMigrationLockKey = PostgresSessionStore::kMigrationLockKey;

}  // namespace postgres_internal

namespace internal {

// A failed statement: carries its Status to the transaction edge. Only
// thrown and caught inside the PostgresSessionStore files.
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

inline Param P(std::string_view s) { return {false, false, std::string(s)}; }
inline Param P(const char* s) { return {false, false, std::string(s)}; }
inline Param P(int64_t v) { return {false, false, std::to_string(v)}; }
inline Param P(int v) { return {false, false, std::to_string(v)}; }
inline Param P(std::optional<int64_t> v) { return v ? P(*v) : Param{true, false, {}}; }
inline Param Bytes(std::string_view s) { return {false, true, std::string(s)}; }
inline Param NullParam() { return {true, false, {}}; }

class Rows {
 public:
  explicit Rows(PGresult* r) : r_(r, Pq().clear) {}
  int size() const { return Pq().ntuples(r_.get()); }
  bool Null(int row, int col) const { return Pq().getisnull(r_.get(), row, col) != 0; }
  std::string Str(int row, int col) const {
    return std::string(Pq().getvalue(r_.get(), row, col),
                       static_cast<size_t>(Pq().getlength(r_.get(), row, col)));
  }
  int64_t Int(int row, int col) const {
    return Null(row, col) ? 0 : std::strtoll(Pq().getvalue(r_.get(), row, col), nullptr, 10);
  }
  std::optional<int64_t> OptInt(int row, int col) const {
    if (Null(row, col)) return std::nullopt;
    return Int(row, col);
  }
  // A bytea column in text (hex) output: "\x0a1b..." -> the bytes.
  std::string Bytea(int row, int col) const {
    const char* v = Pq().getvalue(r_.get(), row, col);
    const size_t n = static_cast<size_t>(Pq().getlength(r_.get(), row, col));
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
    const auto* p = reinterpret_cast<const unsigned char*>(Pq().getvalue(r_.get(), row, col));
    const int n = Pq().getlength(r_.get(), row, col);
    uint64_t v = 0;
    for (int i = 0; i < n; ++i) v = (v << 8) | p[i];
    if (n == 4) return static_cast<int32_t>(static_cast<uint32_t>(v));
    return static_cast<int64_t>(v);
  }
  // A real (float4) column of a binary result: 4 bytes, big-endian IEEE 754.
  float BinFloat(int row, int col) const {
    const auto* p = reinterpret_cast<const unsigned char*>(Pq().getvalue(r_.get(), row, col));
    const uint32_t v =
        (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
    float f = 0;
    std::memcpy(&f, &v, sizeof f);
    return f;
  }
  int64_t Affected() const {
    const char* t = Pq().cmd_tuples(r_.get());
    return t && *t ? std::strtoll(t, nullptr, 10) : 0;
  }

 private:
  std::unique_ptr<PGresult, decltype(LibPq::clear)> r_;
};

// One libpq connection: statements that throw PgError, and a bounded
// reconnect. Messages name the server by its redacted URL and never hold
// the password.
class PgConnection {
 public:
  static Result<std::unique_ptr<PgConnection>> Connect(const std::string& url, int lock_timeout_ms,
                                                       bool read_only, int statement_timeout_ms) {
    // libpq is loaded on the first PostgreSQL connection, never before (storage/libpq.h).
    RETURN_IF_ERROR(LoadLibPq().status());
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
    c->conn_ = Pq().connectdb_params(keys, values, /*expand_dbname=*/1);
    if (c->conn_ == nullptr || Pq().status(c->conn_) != CONNECTION_OK) {
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
    if (conn_) Pq().finish(conn_);
  }
  PgConnection(const PgConnection&) = delete;
  PgConnection& operator=(const PgConnection&) = delete;

  const std::string& redacted() const { return redacted_; }
  const std::string& url() const { return url_; }

  // libpq's last error, one line, the password scrubbed.
  std::string LastError() const {
    std::string m = conn_ ? Pq().error_message(conn_) : "out of memory";
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
        Pq().exec_params(conn_, sql.c_str(), static_cast<int>(params.size()), nullptr,
                         values.data(), lengths.data(), formats.data(), binary_result ? 1 : 0);
    return Check(r);
  }
  // Runs a script of several statements without parameters.
  void Script(const std::string& sql) { Check(Pq().exec(conn_, sql.c_str())); }

  bool Broken() const { return conn_ == nullptr || Pq().status(conn_) != CONNECTION_OK; }

  // Re-establishes a broken connection: at most PostgresSessionStore::
  // kReconnectAttempts tries with growing pauses, then kUnavailable.
  Status Reconnect() {
    int pause_ms = 100;
    for (int attempt = 0; attempt < PostgresSessionStore::kReconnectAttempts; ++attempt) {
      if (attempt > 0) std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms));
      pause_ms *= 3;
      Pq().reset(conn_);
      if (Pq().status(conn_) == CONNECTION_OK && Configure().ok()) return OkStatus();
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
    Pq().set_notice_processor(
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
    const ExecStatusType st = r ? Pq().result_status(r) : PGRES_FATAL_ERROR;
    if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) return Rows(r);
    std::string sqlstate;
    std::string message;
    if (r) {
      const char* code = Pq().result_error_field(r, PG_DIAG_SQLSTATE);
      sqlstate = code ? code : "";
      const char* primary = Pq().result_error_field(r, PG_DIAG_MESSAGE_PRIMARY);
      message = primary ? primary : Pq().result_error_message(r);
      Pq().clear(r);
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

namespace postgres_internal {

inline constexpr const char* kSessionCols =
    "id, head_item_id, forked_from_session, forked_from_item, cwd, model, provider, title, "
    "name, source, created_at_ms, updated_at_ms, archived, tokens_used, host, project";

// The length of the slots sessions.updated_slot counts the update time in
// (updated_at_ms / kUpdatedSlotMs, a generated column of migration 0009):
// the recency indexes order by the slot, which an append changes at most
// once per slot, so that its update of the session's row is in place (HOT).
// Changed only together with that column, by a migration.
inline constexpr int64_t kUpdatedSlotMs = 10'000;

// Newest first, ids compared byte-wise as in SQLite: the order of
// (updated_at_ms DESC, id DESC), the slot first so that the recency indexes
// give it (the slot never decreases as the time grows).
inline constexpr const char* kRecentOrder =
    " ORDER BY updated_slot DESC, updated_at_ms DESC, id COLLATE \"C\" DESC";

inline SessionInfo ReadSession(const Rows& q, int row, int first = 0) {
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
inline std::string ScopeSql(std::vector<Param>& params, const DirScope& scope) {
  params.push_back(P(scope.cwd));
  const std::string cwd = "$" + std::to_string(params.size());
  params.push_back(P(scope.project));
  const std::string project = "$" + std::to_string(params.size());
  return "(cwd = " + cwd + " OR (" + project + " <> '' AND project = " + project + "))";
}

inline std::vector<SessionInfo> ReadSessions(const Rows& q) {
  std::vector<SessionInfo> out;
  out.reserve(static_cast<size_t>(q.size()));
  for (int r = 0; r < q.size(); ++r) out.push_back(ReadSession(q, r));
  return out;
}

inline core::LeaseHolder ReadLease(const Rows& q, int row) {
  core::LeaseHolder h;
  h.pid = q.Int(row, 0);
  h.host = q.Str(row, 1);
  h.process_start = q.Str(row, 2);
  h.started_at_ms = q.Int(row, 3);
  h.heartbeat_at_ms = q.Int(row, 4);
  return h;
}

inline constexpr const char* kLeaseCols =
    "pid, host, process_start, started_at_ms, heartbeat_at_ms";

// The removal rule's lock (SessionDatabase::Remove): held to the end of the
// caller's transaction, it holds off every new lease (and heartbeat, and
// release), since they write session_leases, which this mode excludes; the
// lease takers touch no other table, so it is taken first and cannot
// deadlock. Returns the server clock leases are judged by.
inline int64_t LockLeases(PgConnection& conn) {
  conn.Exec("LOCK TABLE session_leases IN SHARE ROW EXCLUSIVE MODE");
  return conn.Exec(std::string("SELECT ") + kServerNowMs).Int(0, 0);
}

// The lease row of `id` (nullopt when none), or every row by session id.
inline std::optional<core::LeaseHolder> LeaseRow(PgConnection& conn, const std::string& id) {
  Rows q = conn.Exec(std::string("SELECT ") + kLeaseCols +
                         " FROM session_leases"
                         " WHERE session_id = $1",
                     {P(id)});
  if (q.size() == 0) return std::nullopt;
  return ReadLease(q, 0);
}
inline std::map<std::string, core::LeaseHolder> LeaseRows(PgConnection& conn) {
  Rows q = conn.Exec(std::string("SELECT ") + kLeaseCols + ", session_id FROM session_leases");
  std::map<std::string, core::LeaseHolder> out;
  for (int r = 0; r < q.size(); ++r) out[q.Str(r, 5)] = ReadLease(q, r);
  return out;
}

// A PostgreSQL text array literal of plain tokens (session ids).
inline std::string TextArray(const std::vector<std::string>& values) {
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

// items.kind as stored (migration 0006): a small integer per ItemKind
// instead of its name (2 bytes in the row and in items_session, where the
// name took 8-24). The numbers are part of the schema and never change; a
// new kind takes the next free number here and in a migration's CASE.
// Unknown numbers read as kOther, as unknown names did.
struct StoredKind {
  ItemKind kind;
  int code;
};
inline constexpr StoredKind kStoredKinds[] = {
    {ItemKind::kOther, 0},
    {ItemKind::kMessage, 1},
    {ItemKind::kReasoning, 2},
    {ItemKind::kFunctionCall, 3},
    {ItemKind::kFunctionCallOutput, 4},
    {ItemKind::kCustomToolCall, 5},
    {ItemKind::kCustomToolCallOutput, 6},
    {ItemKind::kLocalShellCall, 7},
    {ItemKind::kLocalShellCallOutput, 8},
    {ItemKind::kCompaction, 9},
    {ItemKind::kCompactionCheckpoint, 10},
};
inline int KindCode(ItemKind kind) {
  for (const StoredKind& k : kStoredKinds) {
    if (k.kind == kind) return k.code;
  }
  return 0;
}
inline ItemKind KindFromCode(int64_t code) {
  for (const StoredKind& k : kStoredKinds) {
    if (k.code == code) return k.kind;
  }
  return ItemKind::kOther;
}
// The SQL literal of a kind's code, for a query's condition on items.kind.
inline std::string KindSql(ItemKind kind) { return std::to_string(KindCode(kind)); }

// A JSON text as the store keeps it (migration 0006): an item's body in
// items.body, an event's payload in events.payload, both bytea. The packed
// form (storage/packed_text.h: deflate with the rollout dictionary; first
// byte 0x01) when packing saves an eighth, else the bytes as they are. A
// text whose first byte is below 0x09 (never JSON, which starts with '{' or
// white space) is stored behind a 0x00 byte, so the first byte always tells
// the two apart and 0x02..0x08 stay free for later packed formats.
inline Param StoredTextParam(std::string_view text) {
  if (std::optional<std::string> packed = PackText(text)) return Bytes(*packed);
  if (!text.empty() && static_cast<unsigned char>(text[0]) < 0x09) {
    return Bytes(std::string(1, '\0') + std::string(text));
  }
  return Bytes(text);
}

// The text a stored body or payload (StoredTextParam's output, or a row
// written before migration 0006) holds. A packed text that does not unpack
// is a PgError (kDataLoss naming `what`, e.g. "item 12"), carried to the
// caller's transaction edge.
inline std::string TextFromStored(std::string stored, std::string_view what) {
  if (stored.empty()) return stored;
  const auto first = static_cast<unsigned char>(stored[0]);
  if (first == 0x00) return stored.substr(1);
  if (first >= 0x09) return stored;
  Result<std::string> text = UnpackText(stored);
  if (!text.ok()) {
    throw PgError(DataLossError(std::string(what) + ": " + std::string(text.status().message())));
  }
  return std::move(text).value();
}

// What an item's row holds for search (storage/pg_search.h, over the text
// storage/search_text.h derives): its lexemes (items.tsv; NULL when it has
// no word to search) and its number of search tokens (items.search_tokens,
// the row size BM25 ranks by; NULL when it has no search text, as SQLite's
// index then holds no row for it).
struct SearchColumns {
  Param tsv{true, false, {}};
  Param tokens{true, false, {}};
};
inline SearchColumns SearchParams(const Item& item) {
  SearchColumns out;
  const std::string text = SearchText(item);
  if (text.empty()) return out;
  int64_t tokens = 0;
  const std::string tsv = pg::TsVectorOf(pg::CleanText(text), &tokens);
  if (!tsv.empty()) out.tsv = P(tsv);
  out.tokens = P(tokens);
  return out;
}

// The integer that stands for a session id in items (session_keys,
// migration 0005): made at the session's first item, never removed (items
// outlive their session when a fork still reaches them).
inline int64_t SessionKey(PgConnection& conn, std::string_view session_id) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    Rows k = conn.Exec("SELECT key FROM session_keys WHERE id = $1", {P(session_id)});
    if (k.size() > 0) return k.Int(0, 0);
    k = conn.Exec(
        "INSERT INTO session_keys(id) VALUES ($1) ON CONFLICT (id) DO NOTHING"
        " RETURNING key",
        {P(session_id)});
    if (k.size() > 0) return k.Int(0, 0);
  }
  throw PgError{Status(StatusCode::kInternal, "no key for session " + std::string(session_id))};
}

// Inserts `items` chained from `parent` (ids drawn first, then one INSERT
// per chunk); returns their ids. `on_item` (may be empty) is told how many
// are in after each chunk.
inline std::vector<int64_t> InsertChain(PgConnection& conn, std::string_view session_id,
                                        std::optional<int64_t> parent,
                                        const std::vector<ImportedItem>& items,
                                        const std::function<void(size_t)>& on_item = {}) {
  std::vector<int64_t> ids;
  if (items.empty()) return ids;
  {
    Rows r = conn.Exec(
        "SELECT nextval(pg_get_serial_sequence('items', 'id')) FROM generate_series(1, $1)",
        {P(static_cast<int64_t>(items.size()))});
    for (int i = 0; i < r.size(); ++i) ids.push_back(r.Int(i, 0));
  }
  std::sort(ids.begin(), ids.end());
  const int64_t key = SessionKey(conn, session_id);
  constexpr size_t kChunk = 500;  // 13 parameters a row, well under libpq's 65535
  for (size_t start = 0; start < items.size(); start += kChunk) {
    const size_t end = std::min(items.size(), start + kChunk);
    // The lexemes go in the item's row (tsv; NULL when it has no text to search).
    std::string sql =
        "INSERT INTO items(id, parent_id, session_key, turn_id, kind, role, call_id, server_id,"
        " body, tokens_est, created_at_ms, tsv, search_tokens) VALUES ";
    std::vector<Param> params;
    for (size_t i = start; i < end; ++i) {
      const ImportedItem& it = items[i];
      const std::optional<int64_t> p = i == 0 ? parent : std::optional<int64_t>(ids[i - 1]);
      const size_t b = params.size();
      if (i > start) sql += ',';
      sql += "(";
      for (size_t k = 1; k <= 12; ++k) sql += (k > 1 ? ",$" : "$") + std::to_string(b + k);
      sql += "::tsvector,$" + std::to_string(b + 13) + ")";
      params.push_back(P(ids[i]));
      params.push_back(P(p));
      params.push_back(P(key));
      params.push_back(P(it.turn_id));
      params.push_back(P(KindCode(it.item.kind)));
      params.push_back(P(it.item.role));
      params.push_back(P(it.item.call_id));
      params.push_back(P(it.item.server_id));
      params.push_back(StoredTextParam(it.item.body));
      params.push_back(P(core::EstimateItemTokens(it.item)));
      params.push_back(P(it.created_at_ms));
      SearchColumns search = SearchParams(it.item);
      params.push_back(std::move(search.tsv));
      params.push_back(std::move(search.tokens));
    }
    conn.Exec(sql, params);
    if (on_item) on_item(end);
  }
  return ids;
}

inline void InsertTurn(PgConnection& conn, const std::string& sid, const core::TurnRecord& t) {
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

inline std::optional<SessionInfo> SessionById(PgConnection& conn, const std::string& id,
                                              bool for_update = false) {
  Rows q = conn.Exec(std::string("SELECT ") + kSessionCols + " FROM sessions WHERE id = $1" +
                         (for_update ? " FOR UPDATE" : ""),
                     {P(id)});
  if (q.size() == 0) return std::nullopt;
  return ReadSession(q, 0);
}

inline Result<SessionInfo> GetById(PgConnection& conn, const std::string& id,
                                   bool for_update = false) {
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

inline Result<ChainWalk> WalkChain(PgConnection& conn, int64_t head, bool stop_at_checkpoint) {
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
          "SELECT id, parent_id, kind = " + KindSql(ItemKind::kCompactionCheckpoint) +
              ", session_key FROM items"
              " WHERE session_key = (SELECT session_key FROM items WHERE id = $1) AND id <= $1",
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

inline Result<std::vector<StoredItem>> LoadChain(PgConnection& conn, std::optional<int64_t> head,
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
  // The bodies: one range scan of (session_key, id) per creator session, in
  // binary; rows off the chain (another branch of the same session) are
  // skipped.
  for (const auto& [session, range] : walk.ranges) {
    Rows q = conn.Exec(
        "SELECT i.id, i.parent_id, k.id, i.turn_id, i.created_at_ms, i.kind::integer, i.role,"
        " i.call_id, i.server_id, i.body, u.total_tokens FROM items AS i"
        " JOIN session_keys AS k ON k.key = i.session_key"
        " LEFT JOIN item_usage AS u ON u.item_id = i.id"
        " WHERE i.session_key = $1 AND i.id BETWEEN $2 AND $3",
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
      s.item.kind = KindFromCode(q.BinInt(r, 5).value_or(0));
      s.item.role = q.Str(r, 6);
      s.item.call_id = q.Str(r, 7);
      s.item.server_id = q.Str(r, 8);
      s.item.body = TextFromStored(
          q.Str(r, 9), "item " + std::to_string(id));  // binary bytea: the bytes themselves
      s.reported_total_tokens = q.BinInt(r, 10);
    }
  }
  if (filled != ids.size()) {
    return DataLossError("sessions database " + conn.redacted() + ": the item chain from " +
                         std::to_string(*head) + " is inconsistent");
  }
  return out;
}

}  // namespace postgres_internal
}  // namespace codex::storage

#endif  // CODEX_STORAGE_POSTGRES_STORE_INTERNAL_H_
