// PostgresSessionStore's own promises, against the private server
// (storage/pg_test_server.h): migrations with checksums, newer-schema
// refusal and concurrent first opens; URLs and passwords never in messages;
// a lost connection or a stopped server. The shared contract is tested by
// the storage tests' PostgreSQL runs (storage_test_postgresql, ...).
#include <libpq-fe.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>

#include "core/item.h"
#include "storage/migrations.h"
#include "storage/pg_test_server.h"
#include "storage/postgres_session_store.h"
#include "storage/store_test_support.h"

using codex::StatusCode;
using codex::storage::PostgresSessionStore;
using codex::storage::RedactPostgresUrl;
using codex::storage::testing::PgTestServer;
using codex::storage::testing::QueryInt;
namespace core = codex::core;

namespace {

PgTestServer& Server() {
  REQUIRE(codex::storage::testing::IsPostgres());  // exits 4 when no server binaries
  return *PgTestServer::Get(nullptr);
}

std::unique_ptr<PostgresSessionStore> OpenOrDie(const std::string& url) {
  auto store = PostgresSessionStore::Open(url);
  INFO(store.status().ToString());
  REQUIRE(store.ok());
  return std::move(store).value();
}

std::string DatabaseName(const std::string& url) {
  const size_t start = url.find(":///") + 4;
  return url.substr(start, url.find('?') - start);
}

}  // namespace

TEST_CASE("RedactPostgresUrl hides the password and keeps the rest") {
  CHECK(RedactPostgresUrl("postgresql://alice:s3cret@db.example:5432/codex?sslmode=verify-full") ==
        "postgresql://alice:***@db.example:5432/codex?sslmode=verify-full");
  CHECK(RedactPostgresUrl("postgresql://alice@db/codex") == "postgresql://alice@db/codex");
  CHECK(RedactPostgresUrl("postgresql:///codex?host=/tmp&password=hunter2&user=bob") ==
        "postgresql:///codex?host=/tmp&password=***&user=bob");
  CHECK(RedactPostgresUrl("host=db password=hunter2 dbname=x") == "host=db password=*** dbname=x");
  CHECK(RedactPostgresUrl("postgresql://a:p%40ss@h/d") == "postgresql://a:***@h/d");
}

TEST_CASE("A server that cannot be reached is one clear line without the password") {
  Server();
  auto store = PostgresSessionStore::Open(
      "postgresql://alice:topsecretpw@/codex?host=/nonexistent-codex-socket-dir&connect_timeout=2");
  REQUIRE_FALSE(store.ok());
  CHECK(store.status().code() == StatusCode::kUnavailable);
  const std::string& m = store.status().message();
  CHECK(m.find("cannot connect to PostgreSQL at postgresql://alice:***@/codex") == 0);
  CHECK(m.find("topsecretpw") == std::string::npos);
  CHECK(m.find('\n') == std::string::npos);
}

TEST_CASE(
    "PostgreSQL migrations: recorded with checksums, an edited one and a newer schema refused") {
  const std::string url = Server().NewDatabase();
  { auto store = OpenOrDie(url); }
  const auto& migrations = codex::storage::internal::EmbeddedPostgresMigrations();
  REQUIRE_FALSE(migrations.empty());
  CHECK(QueryInt(url, "SELECT count(*) FROM schema_migrations") ==
        static_cast<int64_t>(migrations.size()));
  CHECK(QueryInt(url, "SELECT count(*) FROM schema_migrations WHERE checksum = '" +
                          codex::storage::MigrationChecksum(migrations[0].sql) + "'") == 1);
  // Reopening applies nothing again.
  { auto again = OpenOrDie(url); }
  CHECK(QueryInt(url, "SELECT count(*) FROM schema_migrations") ==
        static_cast<int64_t>(migrations.size()));

  SECTION("an edited migration is data loss") {
    QueryInt(url, "UPDATE schema_migrations SET checksum = 'abc' WHERE version = 1");
    auto store = PostgresSessionStore::Open(url);
    REQUIRE_FALSE(store.ok());
    CHECK(store.status().code() == StatusCode::kDataLoss);
    CHECK(store.status().message().find("was applied with a different text") != std::string::npos);
  }
  SECTION("a newer schema is refused") {
    QueryInt(url,
             "INSERT INTO schema_migrations(version, name, checksum, applied_at_ms)"
             " VALUES (999, 'future', 'x', 0)");
    auto store = PostgresSessionStore::Open(url);
    REQUIRE_FALSE(store.ok());
    CHECK(store.status().code() == StatusCode::kFailedPrecondition);
    CHECK(store.status().message().find("was written by a newer codex (schema version 999") !=
          std::string::npos);
  }
}

TEST_CASE("Eight processes opening a new PostgreSQL database at once all succeed") {
  const std::string url = Server().NewDatabase();
  std::vector<pid_t> children;
  for (int i = 0; i < 8; ++i) {
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      auto store = PostgresSessionStore::Open(url);
      if (!store.ok()) {
        std::fprintf(stderr, "child %d: %s\n", i, store.status().ToString().c_str());
        std::_Exit(1);
      }
      core::NewSession spec;
      spec.items = {core::UserMessage("hello " + std::to_string(i))};
      std::_Exit((*store)->CreateSession(spec).ok() ? 0 : 2);
    }
    children.push_back(pid);
  }
  int failures = 0;
  for (pid_t pid : children) {
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failures;
  }
  CHECK(failures == 0);
  CHECK(QueryInt(url, "SELECT count(*) FROM sessions") == 8);
  CHECK(QueryInt(url, "SELECT count(*) FROM schema_migrations") ==
        static_cast<int64_t>(codex::storage::internal::EmbeddedPostgresMigrations().size()));
}

TEST_CASE("A connection killed by the server is re-established; nothing committed is lost") {
  PgTestServer& server = Server();
  const std::string url = server.NewDatabase();
  auto store = OpenOrDie(url);
  core::NewSession spec;
  spec.items = {core::UserMessage("before")};
  auto s = store->CreateSession(spec);
  REQUIRE(s.ok());
  server.TerminateConnections(DatabaseName(url));
  // The next write finds its connection gone, reconnects and commits.
  auto ids = store->Append(s->id, s->head_item_id, "t2", {core::AssistantMessage("after")});
  INFO(ids.status().ToString());
  REQUIRE(ids.ok());
  server.TerminateConnections(DatabaseName(url));
  auto found = store->FindSession(s->id);
  REQUIRE(found.ok());
  auto transcript = store->LoadTranscript(*found);
  REQUIRE(transcript.ok());
  REQUIRE(transcript->size() == 2);
  CHECK(core::MessageText(transcript->back().item) == "after");
}

TEST_CASE("A stopped server: bounded retries, then one clear line; after restart all is there") {
  PgTestServer& server = Server();
  const std::string url = server.NewDatabase();
  auto store = OpenOrDie(url);
  core::NewSession spec;
  spec.items = {core::UserMessage("kept")};
  auto s = store->CreateSession(spec);
  REQUIRE(s.ok());
  REQUIRE(server.Stop());
  auto ids = store->Append(s->id, s->head_item_id, "t2", {core::AssistantMessage("lost")});
  const bool restarted = server.Start();
  REQUIRE(restarted);
  REQUIRE_FALSE(ids.ok());
  CHECK(ids.status().code() == StatusCode::kUnavailable);
  CHECK(ids.status().message().find("PostgreSQL at " + RedactPostgresUrl(url)) !=
        std::string::npos);
  CHECK(ids.status().message().find('\n') == std::string::npos);
  // The same object works again once the server is back.
  auto found = store->FindSession(s->id);
  INFO(found.status().ToString());
  REQUIRE(found.ok());
  auto transcript = store->LoadTranscript(*found);
  REQUIRE(transcript.ok());
  REQUIRE(transcript->size() == 1);
  CHECK(core::MessageText(transcript->front().item) == "kept");
  auto appended = store->Append(s->id, found->head_item_id, "t3", {core::AssistantMessage("ok")});
  CHECK(appended.ok());
}

TEST_CASE("A write meeting a row lock waits at most busy_timeout_ms, then fails clearly") {
  const std::string url = Server().NewDatabase();
  codex::storage::StoreOptions options;
  options.busy_timeout_ms = 500;
  auto opened = PostgresSessionStore::Open(url, options);
  REQUIRE(opened.ok());
  auto store = std::move(opened).value();
  core::NewSession spec;
  spec.items = {core::UserMessage("hello")};
  auto s = store->CreateSession(spec);
  REQUIRE(s.ok());
  // Another client holds the session row locked in an open transaction.
  PGconn* other = PQconnectdb(url.c_str());
  REQUIRE(PQstatus(other) == CONNECTION_OK);
  PQclear(PQexec(other, "BEGIN"));
  PQclear(PQexec(other, ("SELECT 1 FROM sessions WHERE id = '" + s->id + "' FOR UPDATE").c_str()));
  // Reads do not wait.
  CHECK(store->FindSession(s->id).ok());
  const auto t0 = std::chrono::steady_clock::now();
  auto ids = store->Append(s->id, s->head_item_id, "t", {core::AssistantMessage("blocked")});
  const auto waited =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0)
          .count();
  REQUIRE_FALSE(ids.ok());
  CHECK(ids.status().code() == StatusCode::kUnavailable);
  CHECK(ids.status().message().find("is busy") != std::string::npos);
  CHECK(waited >= 400);
  CHECK(waited < 10'000);
  PQclear(PQexec(other, "ROLLBACK"));
  PQfinish(other);
  CHECK(store->Append(s->id, s->head_item_id, "t", {core::AssistantMessage("free")}).ok());
}

TEST_CASE("A read-only PostgreSQL store reads and refuses every write") {
  const std::string url = Server().NewDatabase();
  std::string id;
  {
    auto store = OpenOrDie(url);
    core::NewSession spec;
    spec.items = {core::UserMessage("hello")};
    auto s = store->CreateSession(spec);
    REQUIRE(s.ok());
    id = s->id;
  }
  codex::storage::StoreOptions ro;
  ro.read_only = true;
  auto opened = PostgresSessionStore::Open(url, ro);
  REQUIRE(opened.ok());
  auto store = std::move(opened).value();
  CHECK(store->read_only());
  auto s = store->FindSession(id);
  REQUIRE(s.ok());
  CHECK(store->LoadTranscript(*s)->size() == 1);
  auto appended = store->Append(id, s->head_item_id, "t", {core::AssistantMessage("no")});
  REQUIRE_FALSE(appended.ok());
  CHECK(appended.status().code() == StatusCode::kFailedPrecondition);
  CHECK(appended.status().message().find("read-only") != std::string::npos);
  CHECK(store->AcquireTurnLease(id).status().code() == StatusCode::kFailedPrecondition);
  // A database without the schema is not created read-only.
  auto empty = PostgresSessionStore::Open(Server().NewDatabase(), ro);
  REQUIRE_FALSE(empty.ok());
  CHECK(empty.status().code() == StatusCode::kFailedPrecondition);
}
