#include "testing/store_test_support.h"

#include <SQLiteCpp/SQLiteCpp.h>
#include <libpq-fe.h>

#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "storage/open_database.h"
#include "storage/packed_text.h"
#include "storage/postgres_session_store.h"
#include "storage/sqlite_session_store.h"
#include "testing/pg_test_server.h"
#include "testing/skip.h"

namespace codex::storage::testing {

Backend TestBackend() {
  static const Backend backend = [] {
    const char* env = std::getenv("CODEX_TEST_STORE");
    const std::string_view name = env ? env : "sqlite";
    if (name == "sqlite" || name.empty()) return Backend::kSqlite;
    if (name != "postgresql") {
      std::fprintf(stderr, "CODEX_TEST_STORE=%s: expected sqlite or postgresql\n", env);
      std::exit(1);
    }
    std::string why;
    if (!PgTestServer::Get(&why)) ::codex::testing::SkipTest(why);
    return Backend::kPostgres;
  }();
  return backend;
}

Result<std::unique_ptr<SessionDatabase>> OpenStore(const std::string& location,
                                                   StoreOptions options) {
  // Through the one factory the codex binary uses (storage/open_database.h).
  core::StoreLocation loc;
  if (IsPostgresUrl(location)) {
    loc.kind = core::StoreLocation::Kind::kPostgres;
    loc.url = location;
  } else {
    loc.path = location;
  }
  return OpenDatabase(loc, std::move(options));
}

void DieOpening(const std::string& location, const Status& status) {
  std::fprintf(stderr, "error: cannot open the test store %s: %s\n", location.c_str(),
               status.ToString().c_str());
  std::abort();
}

core::SessionInfo NewQuestionSession(SessionDatabase& store, int i) {
  core::NewSession spec;
  spec.cwd = "/w";
  spec.items = {core::UserMessage("question " + std::to_string(i))};
  spec.turn_id = "t1";
  auto s = store.CreateSession(spec);
  if (!s.ok()) {
    std::fprintf(stderr, "error: cannot create a test session: %s\n",
                 s.status().ToString().c_str());
    std::abort();
  }
  return *std::move(s);
}

void TakePostgresBackToSchema8(const std::string& url) {
  QueryInt(url,
           "BEGIN;"
           " DROP TRIGGER sessions_head_insert ON sessions;"
           " DROP TRIGGER sessions_head_update ON sessions;"
           " DROP TRIGGER items_heads_kept_delete ON items;"
           " DROP TRIGGER items_heads_kept_update ON items;"
           " DROP FUNCTION codex_session_head_exists();"
           " DROP FUNCTION codex_session_heads_kept();"
           " DROP FUNCTION codex_session_head_id_kept();"
           " ALTER TABLE sessions ADD CONSTRAINT sessions_head_item_id_fkey"
           "  FOREIGN KEY (head_item_id) REFERENCES items(id);"
           " CREATE INDEX sessions_head ON sessions(head_item_id);"
           " DROP INDEX sessions_recent; DROP INDEX sessions_cwd_recent;"
           " DROP INDEX sessions_project_recent;"
           " ALTER TABLE sessions DROP COLUMN updated_slot;"
           " CREATE INDEX sessions_recent"
           "  ON sessions(archived, updated_at_ms DESC, id COLLATE \"C\" DESC);"
           " CREATE INDEX sessions_cwd_recent"
           "  ON sessions(archived, cwd, updated_at_ms DESC, id COLLATE \"C\" DESC);"
           " CREATE INDEX sessions_project_recent"
           "  ON sessions(archived, project, updated_at_ms DESC, id COLLATE \"C\" DESC);"
           " ALTER TABLE sessions RESET (fillfactor);"
           " ALTER INDEX items_pkey RESET (fillfactor);"
           " ALTER INDEX items_parent RESET (fillfactor);"
           " ALTER INDEX items_session RESET (fillfactor);"
           " DELETE FROM schema_migrations WHERE version > 8;"
           " COMMIT");
}

void TakePostgresBackToSchema7(const std::string& url) {
  TakePostgresBackToSchema8(url);
  QueryInt(url,
           "BEGIN;"
           " DROP TRIGGER items_search_totals_insert ON items;"
           " DROP TRIGGER items_search_totals_delete ON items;"
           " DROP TRIGGER items_search_totals_update ON items;"
           " DROP FUNCTION codex_search_totals();"
           " DROP TABLE search_totals;"
           " ALTER TABLE items DROP COLUMN search_tokens;"
           " DELETE FROM schema_migrations WHERE version > 7;"
           " COMMIT");
}

void TakePostgresBackToSchema5(const std::string& url) {
  TakePostgresBackToSchema7(url);
  PGconn* c = PQconnectdb(url.c_str());
  std::string error;
  auto exec = [&](const char* sql, int n, const char* const* values, const int* lengths,
                  const int* formats) {
    PGresult* r = PQexecParams(c, sql, n, nullptr, values, lengths, formats, /*binary=*/1);
    const ExecStatusType st = PQresultStatus(r);
    if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK && error.empty()) {
      error = std::string(sql) + ": " + PQresultErrorMessage(r);
    }
    return r;
  };
  if (PQstatus(c) != CONNECTION_OK) {
    error = PQerrorMessage(c);
  } else {
    PQclear(exec("BEGIN", 0, nullptr, nullptr, nullptr));
    // Every body and payload whose first byte marks it (packed, or escaped
    // behind 0x00) goes back to the bytes themselves, as schema 5 stored them.
    for (const std::string table : {"items", "events"}) {
      const std::string column = table == "items" ? "body" : "payload";
      const std::string select = "SELECT id::text, " + column + " FROM " + table +
                                 " WHERE length(" + column + ") > 0 AND get_byte(" + column +
                                 ", 0) < 9";
      const std::string update =
          "UPDATE " + table + " SET " + column + " = $2 WHERE id = $1::bigint";
      PGresult* rows = exec(select.c_str(), 0, nullptr, nullptr, nullptr);
      for (int i = 0; error.empty() && i < PQntuples(rows); ++i) {
        const std::string_view stored(PQgetvalue(rows, i, 1),
                                      static_cast<size_t>(PQgetlength(rows, i, 1)));
        std::string text;
        if (stored[0] == '\0') {
          text = std::string(stored.substr(1));
        } else {
          Result<std::string> unpacked = UnpackText(stored);
          if (!unpacked.ok()) {
            error = unpacked.status().ToString();
            break;
          }
          text = std::move(unpacked).value();
        }
        const std::string id(PQgetvalue(rows, i, 0), static_cast<size_t>(PQgetlength(rows, i, 0)));
        const char* values[2] = {id.c_str(), text.data()};
        const int lengths[2] = {0, static_cast<int>(text.size())};
        const int formats[2] = {0, 1};
        PQclear(exec(update.c_str(), 2, values, lengths, formats));
      }
      PQclear(rows);
    }
    // Kinds by name again (the numbers of migration 0006); payloads as text.
    if (error.empty()) {
      PQclear(
          exec("ALTER TABLE events ALTER COLUMN payload TYPE TEXT"
               " USING convert_from(payload, 'UTF8')",
               0, nullptr, nullptr, nullptr));
      PQclear(
          exec("ALTER TABLE items ALTER COLUMN kind TYPE TEXT USING COALESCE((ARRAY["
               "'message', 'reasoning', 'function_call', 'function_call_output',"
               " 'custom_tool_call', 'custom_tool_call_output', 'local_shell_call',"
               " 'local_shell_call_output', 'compaction', 'compaction_checkpoint'])[kind],"
               " 'other')",
               0, nullptr, nullptr, nullptr));
    }
    PQclear(exec(error.empty() ? "DELETE FROM schema_migrations WHERE version > 5" : "ROLLBACK", 0,
                 nullptr, nullptr, nullptr));
    if (error.empty()) PQclear(exec("COMMIT", 0, nullptr, nullptr, nullptr));
  }
  PQfinish(c);
  if (!error.empty()) {
    std::fprintf(stderr, "TakePostgresBackToSchema5: %s\n", error.c_str());
    std::abort();
  }
}

void TakePostgresBackToSchema4(const std::string& url, int64_t stale_item) {
  TakePostgresBackToSchema5(url);
  QueryInt(url,
           "BEGIN;"
           " CREATE TABLE items_search (item_id BIGINT PRIMARY KEY REFERENCES items(id) ON DELETE"
           " CASCADE, tsv TSVECTOR NOT NULL, folding SMALLINT NOT NULL DEFAULT 3);"
           " CREATE INDEX items_search_tsv ON items_search USING GIN (tsv);"
           " CREATE INDEX items_search_refold ON items_search(item_id) WHERE folding < 3;"
           " INSERT INTO items_search(item_id, tsv) SELECT id, tsv FROM items"
           "   WHERE tsv IS NOT NULL;"
           " UPDATE items_search SET folding = 2, tsv = 'obsolete'::tsvector WHERE item_id = " +
               std::to_string(stale_item) +
               ";"
               " DROP TABLE items_refold; ALTER TABLE items DROP COLUMN tsv;"
               " ALTER TABLE items ADD COLUMN session_id TEXT;"
               " UPDATE items AS i SET session_id = k.id FROM session_keys AS k"
               "   WHERE k.key = i.session_key;"
               " ALTER TABLE items ALTER COLUMN session_id SET NOT NULL;"
               " DROP INDEX items_session; ALTER TABLE items DROP COLUMN session_key;"
               " DROP TABLE session_keys;"
               " CREATE INDEX items_session ON items(session_id, id) INCLUDE (parent_id, kind);"
               " DELETE FROM schema_migrations WHERE version > 4; COMMIT");
}

int64_t QueryInt(const std::string& location, const std::string& sql) {
  if (!IsPostgresUrl(location)) {
    SQLite::Database db(location, SQLite::OPEN_READWRITE);
    SQLite::Statement q(db, sql);
    return q.executeStep() ? q.getColumn(0).getInt64() : 0;
  }
  PGconn* c = PQconnectdb(location.c_str());
  int64_t value = 0;
  std::string error;
  if (PQstatus(c) != CONNECTION_OK) {
    error = PQerrorMessage(c);
  } else {
    PGresult* r = PQexec(c, sql.c_str());
    const ExecStatusType st = PQresultStatus(r);
    if (st == PGRES_TUPLES_OK && PQntuples(r) > 0 && !PQgetisnull(r, 0, 0)) {
      value = std::strtoll(PQgetvalue(r, 0, 0), nullptr, 10);
    } else if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK) {
      error = PQresultErrorMessage(r);
    }
    PQclear(r);
  }
  PQfinish(c);
  if (!error.empty()) {
    std::fprintf(stderr, "QueryInt(%s): %s\n", sql.c_str(), error.c_str());
    std::abort();
  }
  return value;
}

void InsertLease(const std::string& location, const std::string& session, int64_t pid,
                 const std::string& host, int64_t heartbeat_ms, const std::string& process_start) {
  QueryInt(location, "DELETE FROM session_leases WHERE session_id = '" + session + "'");
  QueryInt(location,
           "INSERT INTO session_leases(session_id, token, pid, host, process_start, started_at_ms,"
           " heartbeat_at_ms) VALUES ('" +
               session + "', 't', " + std::to_string(pid) + ", '" + host + "', '" + process_start +
               "', " + std::to_string(heartbeat_ms) + ", " + std::to_string(heartbeat_ms) + ")");
}

std::string StoreDir::Store(const std::string& name) {
  auto it = stores_.find(name);
  if (it != stores_.end()) return it->second;
  std::string location;
  if (IsPostgres()) {
    location = PgTestServer::Get(nullptr)->NewDatabase();
  } else {
    location = dir_.File(name);
  }
  stores_.emplace(name, location);
  return location;
}

}  // namespace codex::storage::testing
