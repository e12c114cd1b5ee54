// PostgresSessionStore's own promises, against the private server
// (testing/pg_test_server.h): migrations with checksums, newer-schema
// refusal and concurrent first opens; URLs and passwords never in messages;
// a lost connection or a stopped server. The shared contract is tested by
// the storage tests' PostgreSQL runs (storage_test_postgresql, ...).
#include <arpa/inet.h>
#include <libpq-fe.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <thread>
#include <vector>

#include "core/item.h"
#include "storage/copy_sessions.h"
#include "storage/migrations.h"
#include "storage/pg_search.h"
#include "storage/postgres_session_store.h"
#include "testing/pg_test_server.h"
#include "testing/store_test_support.h"

using codex::StatusCode;
using codex::storage::PostgresSessionStore;
using codex::storage::RedactPostgresUrl;
using codex::storage::testing::OpenOrDie;
using codex::storage::testing::PgTestServer;
using codex::storage::testing::QueryInt;
namespace core = codex::core;

namespace {

PgTestServer& Server() {
  REQUIRE(codex::storage::testing::IsPostgres());  // exits 4 when no server binaries
  return *PgTestServer::Get(nullptr);
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
  { auto store = OpenOrDie<PostgresSessionStore>(url); }
  const auto& migrations = codex::storage::internal::EmbeddedPostgresMigrations();
  REQUIRE_FALSE(migrations.empty());
  CHECK(QueryInt(url, "SELECT count(*) FROM schema_migrations") ==
        static_cast<int64_t>(migrations.size()));
  CHECK(QueryInt(url, "SELECT count(*) FROM schema_migrations WHERE checksum = '" +
                          codex::storage::MigrationChecksum(migrations[0].sql) + "'") == 1);
  // Reopening applies nothing again.
  { auto again = OpenOrDie<PostgresSessionStore>(url); }
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

namespace {

// How many sessions wait for an advisory lock of `url`'s server (pg_locks).
int64_t AdvisoryWaiters(const std::string& url) {
  return QueryInt(
      url,
      "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
      " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())");
}

}  // namespace

TEST_CASE(
    "An up-to-date store opens without the migration lock; a pending migration or re-index "
    "waits for it") {
  const std::string url = Server().NewDatabase();
  {
    auto store = OpenOrDie<PostgresSessionStore>(url);
    core::NewSession spec;
    spec.items = {core::UserMessage("un Café à l'École")};
    REQUIRE(store->CreateSession(spec).ok());
  }
  // Another process holds the migration lock (migrating, or stuck).
  PGconn* holder = PQconnectdb(url.c_str());
  REQUIRE(PQstatus(holder) == CONNECTION_OK);
  const std::string lock =
      "SELECT pg_advisory_lock(" + std::to_string(PostgresSessionStore::kMigrationLockKey) + ")";
  PQclear(PQexec(holder, lock.c_str()));
  REQUIRE(QueryInt(url, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted") ==
          1);

  // Opens the store beside the holder: whether the open queued for the lock
  // (seen in pg_locks; the holder then lets go, so that it finishes), and
  // how it ended.
  auto open_beside_holder = [&]() -> std::pair<bool, std::string> {
    std::atomic<bool> done{false};
    std::string opened;
    std::thread opener([&] {
      auto store = PostgresSessionStore::Open(url);
      if (store.ok()) {
        core::NewSession spec;
        spec.items = {core::UserMessage("opened beside a migration")};
        opened = (*store)->CreateSession(spec).status().ToString();
      } else {
        opened = store.status().ToString();
      }
      done = true;
    });
    bool waited = false;
    while (!done && !waited) {
      waited = AdvisoryWaiters(url) == 1;
      if (!waited) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (waited) PQclear(PQexec(holder, "SELECT pg_advisory_unlock_all()"));
    opener.join();
    return {waited, opened};
  };
  SECTION("the schema is current and nothing to re-index: the open does not wait") {
    // (Before, every open queued behind the holder.)
    const auto [waited, opened] = open_beside_holder();
    CHECK_FALSE(waited);
    CHECK(opened == "OK");
  }
  SECTION("a migration is missing: the open waits for the lock, then migrates") {
    codex::storage::testing::TakePostgresBackToSchema7(url);
    const auto [waited, opened] = open_beside_holder();
    CHECK(waited);
    CHECK(opened == "OK");
    CHECK(QueryInt(url, "SELECT count(*) FROM schema_migrations") ==
          static_cast<int64_t>(codex::storage::internal::EmbeddedPostgresMigrations().size()));
  }
  SECTION("items are listed for re-indexing: the open waits for the lock, then re-indexes") {
    QueryInt(url, "INSERT INTO items_refold(item_id) SELECT id FROM items");
    REQUIRE(QueryInt(url, "SELECT count(*) FROM items_refold") > 0);
    const auto [waited, opened] = open_beside_holder();
    CHECK(waited);
    CHECK(opened == "OK");
    CHECK(QueryInt(url, "SELECT count(*) FROM items_refold") == 0);
  }
  PQfinish(holder);
}

TEST_CASE("A connection killed by the server is re-established; nothing committed is lost") {
  PgTestServer& server = Server();
  const std::string url = server.NewDatabase();
  auto store = OpenOrDie<PostgresSessionStore>(url);
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
  auto store = OpenOrDie<PostgresSessionStore>(url);
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
    auto store = OpenOrDie<PostgresSessionStore>(url);
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

TEST_CASE(
    "A statement the server does not finish is cut at statement_timeout_ms; nothing is lost") {
  const std::string url = Server().NewDatabase();
  codex::storage::StoreOptions options;
  options.statement_timeout_ms = 500;
  auto opened = PostgresSessionStore::Open(url, options);
  REQUIRE(opened.ok());
  auto store = std::move(opened).value();
  core::NewSession spec;
  spec.items = {core::UserMessage("hello")};
  auto s = store->CreateSession(spec);
  REQUIRE(s.ok());
  // An overloaded server, as seen from the client: every item insert stalls
  // for a minute (no lock involved, so lock_timeout does not apply).
  PGconn* admin = PQconnectdb(url.c_str());
  REQUIRE(PQstatus(admin) == CONNECTION_OK);
  auto exec = [&](const char* sql) {
    PGresult* r = PQexec(admin, sql);
    INFO(PQerrorMessage(admin));
    CHECK(PQresultStatus(r) == PGRES_COMMAND_OK);
    PQclear(r);
  };
  exec(
      "CREATE FUNCTION stall() RETURNS trigger LANGUAGE plpgsql AS"
      " $$BEGIN PERFORM pg_sleep(60); RETURN NEW; END$$");
  exec("CREATE TRIGGER stall BEFORE INSERT ON items FOR EACH ROW EXECUTE FUNCTION stall()");
  const auto t0 = std::chrono::steady_clock::now();
  auto ids = store->Append(s->id, s->head_item_id, "t", {core::AssistantMessage("stalled")});
  const auto waited =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0)
          .count();
  REQUIRE_FALSE(ids.ok());
  CHECK(ids.status().code() == StatusCode::kDeadlineExceeded);
  CHECK(ids.status().message().find("statement_timeout") != std::string::npos);
  CHECK(waited >= 400);
  CHECK(waited < 30'000);
  exec("DROP TRIGGER stall ON items");
  PQfinish(admin);
  // The session is as it was; the same store object goes on.
  auto again = store->FindSession(s->id);
  REQUIRE(again.ok());
  CHECK(again->head_item_id == s->head_item_id);
  CHECK(store->Append(s->id, s->head_item_id, "t", {core::AssistantMessage("free")}).ok());
  CHECK(store->LoadTranscript(*store->FindSession(s->id))->size() == 2);
}

TEST_CASE("Items listed with the earlier folding are re-indexed at the next open") {
  const std::string url = Server().NewDatabase();
  std::string id;
  {
    auto store = OpenOrDie<PostgresSessionStore>(url);
    core::NewSession spec;
    spec.items = {core::UserMessage("un Café à l'École")};
    auto s = store->CreateSession(spec);
    REQUIRE(s.ok());
    id = s->id;
  }
  // As migration 0005 leaves a database written before 0003: unfolded
  // lexemes in the item's row, the item listed for re-indexing.
  QueryInt(url, "UPDATE items SET tsv = '''Café'':2 ''un'':1 ''École'':5'::tsvector");
  QueryInt(url, "INSERT INTO items_refold(item_id) SELECT id FROM items");
  CHECK(QueryInt(url, "SELECT count(*) FROM items_refold") == 1);
  auto store = OpenOrDie<PostgresSessionStore>(url);
  CHECK(QueryInt(url, "SELECT count(*) FROM items_refold") == 0);
  codex::storage::SearchQuery q;
  q.text = "cafe ecole";
  auto hits = store->Search(q);
  REQUIRE(hits.ok());
  REQUIRE(hits->size() == 1);
  CHECK(hits->at(0).sessions.at(0).session.id == id);
}

namespace {

// A loopback TCP port relaying each connection to the test server's Unix
// socket, so that the store's connection is a real TCP socket of this process.
class TcpRelay {
 public:
  explicit TcpRelay(std::string unix_path) : unix_path_(std::move(unix_path)) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    REQUIRE(::listen(listen_fd_, 8) == 0);
    socklen_t len = sizeof addr;
    REQUIRE(::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
    port_ = ntohs(addr.sin_port);
    accept_thread_ = std::thread([this] { AcceptLoop(); });
  }
  ~TcpRelay() {
    stop_ = true;
    ::shutdown(listen_fd_, SHUT_RDWR);
    accept_thread_.join();
    for (auto& t : relays_) t.join();
    ::close(listen_fd_);
  }
  int port() const { return port_; }

 private:
  void AcceptLoop() {
    while (!stop_) {
      const int client = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (client < 0) return;
      const int server = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
      sockaddr_un addr{};
      addr.sun_family = AF_UNIX;
      std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", unix_path_.c_str());
      if (::connect(server, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
        ::close(client);
        ::close(server);
        continue;
      }
      relays_.emplace_back([this, client, server] { Relay(client, server); });
    }
  }
  void Relay(int a, int b) {
    char buf[16384];
    while (!stop_) {
      pollfd fds[2] = {{a, POLLIN, 0}, {b, POLLIN, 0}};
      if (::poll(fds, 2, 100) < 0) break;
      bool closed = false;
      for (int i = 0; i < 2 && !closed; ++i) {
        if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
        if (n <= 0) {
          closed = true;
          break;
        }
        const int to = i == 0 ? b : a;
        for (ssize_t off = 0; off < n;) {
          const ssize_t w = ::write(to, buf + off, static_cast<size_t>(n - off));
          if (w <= 0) {
            closed = true;
            break;
          }
          off += w;
        }
      }
      if (closed) break;
    }
    ::close(a);
    ::close(b);
  }

  std::string unix_path_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread accept_thread_;
  std::vector<std::thread> relays_;
};

// The keepalive timer of this machine's established IPv4 sockets connected
// to port `port`, in 1/100 s, from /proc/net/tcp ("tr" 2 = the keepalive
// timer is armed); -1 for a socket without one.
std::vector<long> KeepaliveTimers(int port) {
  std::ifstream in("/proc/net/tcp");
  std::string line;
  std::getline(in, line);  // header
  std::vector<long> out;
  char want[8];
  std::snprintf(want, sizeof want, "%04X", port);
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string sl, local, remote, state, queues, timer;
    fields >> sl >> local >> remote >> state >> queues >> timer;
    if (state != "01" || remote.substr(remote.find(':') + 1) != want) continue;
    const size_t colon = timer.find(':');
    const long kind = std::strtol(timer.substr(0, colon).c_str(), nullptr, 16);
    out.push_back(kind == 2 ? std::strtol(timer.substr(colon + 1).c_str(), nullptr, 16) : -1);
  }
  return out;
}

}  // namespace

TEST_CASE("A database at schema version 3 upgrades: the text stored once, rows re-indexed") {
  const std::string url = Server().NewDatabase();
  PGconn* admin = PQconnectdb(url.c_str());
  REQUIRE(PQstatus(admin) == CONNECTION_OK);
  auto exec = [&](const std::string& sql) {
    PGresult* r = PQexec(admin, sql.c_str());
    INFO(PQerrorMessage(admin));
    CHECK(PQresultStatus(r) == PGRES_COMMAND_OK);
    PQclear(r);
  };
  // What a codex of schema version 3 made: its migrations, then a session
  // whose search row holds its text and the lexemes of that version's rules.
  exec(
      "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL,"
      " checksum TEXT NOT NULL, applied_at_ms BIGINT NOT NULL)");
  for (const auto& m : codex::storage::internal::EmbeddedPostgresMigrations()) {
    if (m.version > 3) break;
    exec("BEGIN; " + std::string(m.sql) + "; COMMIT");
    exec("INSERT INTO schema_migrations VALUES (" + std::to_string(m.version) + ", '" +
         std::string(m.name) + "', '" + codex::storage::MigrationChecksum(m.sql) + "', 1)");
  }
  const std::string id = "01900000-0000-7000-8000-0000000000cc";
  const std::string text = "le mythe de σίσυφος en 日本語のテキスト";
  exec("INSERT INTO sessions(id, cwd, title, created_at_ms, updated_at_ms) VALUES ('" + id +
       "', '/w', 't', 1, 1)");
  PGresult* ins = PQexecParams(
      admin,
      "INSERT INTO items(session_id, kind, role, body, created_at_ms)"
      " VALUES ($1, 'message', 'user', convert_to($2, 'UTF8'), 1) RETURNING id",
      2, nullptr, std::vector<const char*>{id.c_str(), core::UserMessage(text).body.c_str()}.data(),
      nullptr, nullptr, 0);
  REQUIRE(PQresultStatus(ins) == PGRES_TUPLES_OK);
  const std::string item = PQgetvalue(ins, 0, 0);
  PQclear(ins);
  exec("UPDATE sessions SET head_item_id = " + item);
  exec("INSERT INTO items_search(item_id, text, tsv, folding) VALUES (" + item + ", '" + text +
       "', to_tsvector('simple', '" + text + "'), 2)");
  PQfinish(admin);

  auto store = OpenOrDie<PostgresSessionStore>(url);
  CHECK(QueryInt(url, "SELECT max(version) FROM schema_migrations") ==
        codex::storage::internal::EmbeddedPostgresMigrations().back().version);
  // 0004 dropped the text, 0005 the table: the lexemes are in the item's row.
  CHECK(QueryInt(url,
                 "SELECT count(*) FROM information_schema.tables"
                 " WHERE table_name = 'items_search'") == 0);
  CHECK(QueryInt(url, "SELECT count(*) FROM items_refold") == 0);
  CHECK(QueryInt(url, "SELECT count(*) FROM items WHERE tsv IS NOT NULL") == 1);
  for (const char* q : {"σισυφος", "日本語", "テキスト", "mythe"}) {
    INFO(q);
    codex::storage::SearchQuery query;
    query.text = q;
    auto hits = store->Search(query);
    REQUIRE(hits.ok());
    REQUIRE(hits->size() == 1);
    CHECK(hits->at(0).sessions.at(0).session.id == id);
    CHECK(hits->at(0).snippet.find('[') != std::string::npos);
  }
}

namespace {

// A search's results as one comparable text: item, kind, role, snippet, and
// each holder with its turn, in the order given.
std::string SearchTrace(PostgresSessionStore& store, const std::string& text,
                        std::optional<std::string> cwd, int limit) {
  codex::storage::SearchQuery q;
  q.text = text;
  q.cwd = std::move(cwd);
  q.limit = limit;
  auto hits = store.Search(q);
  if (!hits.ok()) return "error: " + hits.status().ToString();
  std::string out;
  for (const auto& h : *hits) {
    out += std::to_string(h.item_id) + " " + h.kind + " " + h.role + " " + h.snippet + " <-";
    for (const auto& w : h.sessions) out += " " + w.session.id + "#" + std::to_string(w.turn);
    out += "\n";
  }
  return out;
}

}  // namespace

TEST_CASE("A store at schema version 4 upgrades in place: every item kept, the same search") {
  const std::string url = Server().NewDatabase();
  const std::vector<std::pair<std::string, std::optional<std::string>>> queries = {
      {"zebra", std::nullopt},  {"zebra", std::string("/w/a")}, {"\"turn 7\"", std::nullopt},
      {"quag*", std::nullopt},  {"日本語", std::nullopt},       {"σισυφος", std::nullopt},
      {"walrus", std::nullopt}, {"zebra stripes", std::nullopt}};
  std::vector<std::string> before;
  std::string forked;
  std::vector<std::string> sessions;
  std::map<std::string, std::string> transcripts;  // by session: ids, creators, bodies
  {
    auto store = OpenOrDie<PostgresSessionStore>(url);
    std::optional<core::SessionInfo> first;
    for (int k = 0; k < 3; ++k) {
      core::NewSession spec;
      spec.cwd = k == 0 ? "/w/a" : "/w/b";
      spec.items = {core::UserMessage("zebra session " + std::to_string(k))};
      auto s = store->CreateSession(spec);
      REQUIRE(s.ok());
      sessions.push_back(s->id);
      if (!first) first = *s;
      std::optional<int64_t> head = s->head_item_id;
      for (int t = 0; t < 90; ++t) {
        // 270 items with "zebra" in each session: more than the first ranking page (200).
        auto ids = store->Append(
            s->id, head, "t" + std::to_string(t),
            {core::UserMessage("turn " + std::to_string(t) + " zebra stripes quagga"),
             core::AssistantMessage(t % 2 ? "le mythe de σίσυφος" : "日本語のテキスト zebra"),
             core::FunctionCallOutput("c" + std::to_string(t), "")});
        REQUIRE(ids.ok());
        head = ids->back();
      }
    }
    auto fork = store->Fork(first->id, std::nullopt);
    REQUIRE(fork.ok());
    forked = fork->id;
    REQUIRE(store->Append(forked, fork->head_item_id, "f", {core::UserMessage("zebra in the fork")})
                .ok());
    for (const auto& [text, cwd] : queries) before.push_back(SearchTrace(*store, text, cwd, 250));
    sessions.push_back(forked);
    for (const std::string& id : sessions) {
      auto transcript = store->LoadTranscript(*store->FindSession(id));
      REQUIRE(transcript.ok());
      for (const auto& t : *transcript) {
        transcripts[id] += std::to_string(t.id) + t.session_id + t.item.body;
      }
    }
  }
  const int64_t items = QueryInt(url, "SELECT count(*) FROM items");
  const int64_t with_text = QueryInt(url, "SELECT count(*) FROM items WHERE tsv IS NOT NULL");
  const std::string digest =
      "SELECT ('x' || left(md5(string_agg(body::text, ',' ORDER BY id)), 15))::bit(60)::bigint"
      " FROM items";
  REQUIRE(items == 3 * (1 + 270) + 1);
  // Back to what a codex of schema version 4 stored; one item's lexemes of
  // the earlier folding rules, left for the re-index.
  codex::storage::testing::TakePostgresBackToSchema4(
      url, QueryInt(url, "SELECT max(id) FROM items WHERE role = 'assistant'"));
  REQUIRE(QueryInt(url, "SELECT max(version) FROM schema_migrations") == 4);
  const int64_t bodies = QueryInt(url, digest);  // the bodies as schema 4 stored them

  auto store = OpenOrDie<PostgresSessionStore>(url);
  CHECK(QueryInt(url, "SELECT max(version) FROM schema_migrations") ==
        codex::storage::internal::EmbeddedPostgresMigrations().back().version);
  CHECK(QueryInt(url,
                 "SELECT count(*) FROM information_schema.tables"
                 " WHERE table_name = 'items_search'") == 0);
  CHECK(QueryInt(url, "SELECT count(*) FROM items") == items);
  CHECK(QueryInt(url, "SELECT count(*) FROM items WHERE tsv IS NOT NULL") == with_text);
  CHECK(QueryInt(url, "SELECT count(*) FROM items_refold") == 0);  // re-indexed at the open
  CHECK(QueryInt(url, digest) == bodies);
  CHECK(QueryInt(url, "SELECT count(*) FROM session_keys") == 4);
  CHECK(QueryInt(url,
                 "SELECT count(*) FROM information_schema.columns"
                 " WHERE table_name = 'items' AND column_name = 'session_id'") == 0);
  for (size_t k = 0; k < queries.size(); ++k) {
    INFO(queries[k].first);
    CHECK(SearchTrace(*store, queries[k].first, queries[k].second, 250) == before[k]);
  }
  CHECK(before[0].find(forked) != std::string::npos);
  CHECK(std::count(before[0].begin(), before[0].end(), '\n') == 250);
  // Every session loads the same transcript, and takes new items as before.
  for (const std::string& id : sessions) {
    auto found = store->FindSession(id);
    REQUIRE(found.ok());
    auto transcript = store->LoadTranscript(*found);
    REQUIRE(transcript.ok());
    std::string text;
    for (const auto& t : *transcript) text += std::to_string(t.id) + t.session_id + t.item.body;
    CHECK(text == transcripts[id]);
  }
  auto s = store->FindSession(forked);
  REQUIRE(s.ok());
  REQUIRE(store->Append(forked, s->head_item_id, "g", {core::UserMessage("okapi now")}).ok());
  CHECK(SearchTrace(*store, "okapi", std::nullopt, 20).find(forked) != std::string::npos);
  auto fresh = store->FindSession(forked);
  REQUIRE(fresh.ok());
  CHECK(store->LoadTranscript(*fresh)->back().session_id == forked);
}

namespace {

// Session `id`'s transcript and events as text (ids, kinds, roles, bodies,
// payloads), for comparing a store before and after an upgrade.
std::string TranscriptText(PostgresSessionStore& store, const std::string& id) {
  auto found = store.FindSession(id);
  REQUIRE(found.ok());
  auto transcript = store.LoadTranscript(*found);
  REQUIRE(transcript.ok());
  std::string text;
  for (const auto& t : *transcript) {
    text += std::to_string(t.id) + "|" + std::string(core::ItemKindName(t.item.kind)) + "|" +
            t.item.role + "|" + t.item.body + "\n";
  }
  auto events = store.LoadEvents(id);
  REQUIRE(events.ok());
  for (const auto& e : *events) text += "event " + e.type + "|" + e.payload_json + "\n";
  return text;
}

}  // namespace

TEST_CASE(
    "A store at schema version 5 upgrades in place: bodies packed from then on, kept, same "
    "search") {
  const std::string url = Server().NewDatabase();
  // A tool output long enough to pack, a short message that is not worth
  // it, and bodies whose first byte is the packed marker (0x01) or the
  // escape (0x00): a store must give each back byte for byte.
  std::string listing;
  for (int i = 0; i < 40; ++i) listing += "src/file" + std::to_string(i) + ".cc:42: TODO zebra\n";
  core::Item marked = core::AssistantMessage("zebra marked");
  marked.body = std::string("\x01not packed at all, zebra", 25);
  core::Item escaped = core::AssistantMessage("zebra escaped");
  escaped.body = std::string("\0\x01\x02 zebra", 9);
  // Kinds other than messages and outputs, stored by number from schema 6.
  core::Item reasoning;
  reasoning.kind = core::ItemKind::kReasoning;
  reasoning.body = R"({"type":"reasoning","summary":[{"type":"summary_text","text":"zebra"}]})";
  core::Item other;
  other.kind = core::ItemKind::kOther;
  other.body = R"({"type":"web_search_call","status":"completed"})";
  const std::vector<std::string> queries = {"zebra", "\"TODO zebra\"", "src", "ok*"};
  std::string id;
  std::vector<std::string> before;
  std::string transcript_before;
  {
    auto store = OpenOrDie<PostgresSessionStore>(url);
    core::NewSession spec;
    spec.items = {core::UserMessage("zebra ok")};
    auto s = store->CreateSession(spec);
    REQUIRE(s.ok());
    id = s->id;
    auto ids = store->Append(id, s->head_item_id, "t",
                             {core::FunctionCallOutput("c1", listing), marked, escaped,
                              core::AssistantMessage("okapi zebra"), reasoning, other});
    REQUIRE(ids.ok());
    // Stored packed: the listing (first byte 0x01, a fraction of its size);
    // the marked and escaped bodies behind a 0x00; the short message as is.
    CHECK(QueryInt(url, "SELECT get_byte(body, 0) FROM items WHERE id = " +
                            std::to_string((*ids)[0])) == 1);
    CHECK(QueryInt(url, "SELECT length(body) FROM items WHERE id = " + std::to_string((*ids)[0])) *
              3 <
          static_cast<int64_t>(core::FunctionCallOutput("c1", listing).body.size()));
    CHECK(QueryInt(url, "SELECT get_byte(body, 0) + length(body) FROM items WHERE id = " +
                            std::to_string((*ids)[1])) == 26);
    CHECK(QueryInt(url, "SELECT get_byte(body, 0) + length(body) FROM items WHERE id = " +
                            std::to_string((*ids)[2])) == 10);
    CHECK(QueryInt(url, "SELECT get_byte(body, 0) FROM items WHERE id = " +
                            std::to_string((*ids)[3])) == '{');
    // Events: a payload long enough to pack and a short one.
    REQUIRE(store
                ->RecordEvent(id, "t", "exec_command_end",
                              R"({"type":"exec_command_end","aggregated_output":")" +
                                  std::string(600, 'x') + "\"}")
                .ok());
    REQUIRE(store->RecordEvent(id, "t", "token_count", R"({"type":"token_count"})").ok());
    CHECK(QueryInt(url, "SELECT get_byte(payload, 0) FROM events ORDER BY id LIMIT 1") == 1);
    CHECK(QueryInt(url, "SELECT get_byte(payload, 0) FROM events ORDER BY id DESC LIMIT 1") == '{');
    for (const std::string& q : queries) before.push_back(SearchTrace(*store, q, std::nullopt, 20));
    transcript_before = TranscriptText(*store, id);
  }
  CHECK(transcript_before.find("|reasoning||") != std::string::npos);
  CHECK(transcript_before.find("|other||") != std::string::npos);
  CHECK(transcript_before.find("|function_call_output||") != std::string::npos);
  CHECK(transcript_before.find(std::string(600, 'x')) != std::string::npos);
  CHECK(transcript_before.find(R"(event token_count|{"type":"token_count"})") != std::string::npos);
  CHECK(transcript_before.find(marked.body) != std::string::npos);
  CHECK(transcript_before.find(escaped.body) != std::string::npos);
  CHECK(transcript_before.find(listing.substr(0, 27)) != std::string::npos);
  CHECK(before[1].find("TODO") != std::string::npos);

  // What a codex of schema 5 stored: every body as its bytes, the marked
  // and escaped ones too (0x01 and 0x00 first).
  codex::storage::testing::TakePostgresBackToSchema5(url);
  REQUIRE(QueryInt(url, "SELECT max(version) FROM schema_migrations") == 5);
  REQUIRE(QueryInt(url, "SELECT count(*) FROM items WHERE get_byte(body, 0) < 9") == 2);
  const int64_t items = QueryInt(url, "SELECT count(*) FROM items");

  auto store = OpenOrDie<PostgresSessionStore>(url);
  CHECK(QueryInt(url, "SELECT max(version) FROM schema_migrations") ==
        codex::storage::internal::EmbeddedPostgresMigrations().back().version);
  CHECK(QueryInt(url, "SELECT count(*) FROM items") == items);
  CHECK(QueryInt(url,
                 "SELECT count(*) FROM information_schema.columns WHERE table_name = 'items'"
                 " AND column_name = 'kind' AND data_type = 'smallint'") == 1);
  // items was made again: the foreign keys that point at it are back (its
  // parent, sessions' fork point, item_usage, items_refold; sessions' head
  // is kept by the triggers of migration 0009, which dropped its key), and
  // no dropped column is left in its rows.
  CHECK(QueryInt(url,
                 "SELECT count(*) FROM pg_constraint WHERE contype = 'f'"
                 " AND confrelid = 'items'::regclass") == 4);
  CHECK(QueryInt(
            url,
            "SELECT count(*) FROM pg_trigger WHERE tgname IN ('sessions_head_insert',"
            " 'sessions_head_update', 'items_heads_kept_delete', 'items_heads_kept_update')") == 4);
  CHECK(QueryInt(url,
                 "SELECT count(*) FROM pg_attribute WHERE attrelid = 'items'::regclass"
                 " AND attisdropped") == 0);
  // The two bodies a schema-5 store kept with a marker byte first are now
  // escaped; the rest are untouched.
  CHECK(QueryInt(url, "SELECT count(*) FROM items WHERE get_byte(body, 0) = 0") == 2);
  CHECK(TranscriptText(*store, id) == transcript_before);
  for (size_t k = 0; k < queries.size(); ++k) {
    INFO(queries[k]);
    CHECK(SearchTrace(*store, queries[k], std::nullopt, 20) == before[k]);
  }
  // New items are packed again, and read back whole.
  auto s = store->FindSession(id);
  REQUIRE(s.ok());
  auto more = store->Append(id, s->head_item_id, "u", {core::FunctionCallOutput("c2", listing)});
  REQUIRE(more.ok());
  CHECK(QueryInt(url, "SELECT get_byte(body, 0) FROM items WHERE id = " +
                          std::to_string(more->back())) == 1);
  const std::string added = std::to_string(more->back()) + "|function_call_output||" +
                            core::FunctionCallOutput("c2", listing).body + "\n";
  std::string expected = transcript_before;
  expected.insert(expected.find("event "), added);
  CHECK(TranscriptText(*store, id) == expected);
  CHECK(QueryInt(url,
                 "SELECT count(*) FROM information_schema.columns WHERE table_name = 'events'"
                 " AND column_name = 'payload' AND data_type = 'bytea'") == 1);
  // A packed body that is damaged is one kDataLoss naming the item, not garbage.
  QueryInt(url,
           "UPDATE items SET body = overlay(body placing '\\xffff'::bytea from 8)"
           " WHERE id = " +
               std::to_string(more->back()));
  auto found = store->FindSession(id);
  REQUIRE(found.ok());
  auto broken = store->LoadTranscript(*found);
  REQUIRE_FALSE(broken.ok());
  CHECK(broken.status().code() == StatusCode::kDataLoss);
  CHECK(broken.status().message().find("item " + std::to_string(more->back())) !=
        std::string::npos);
}

TEST_CASE(
    "A store at schema version 6 upgrades: the words past an item's 16383rd are found, the rest "
    "unchanged") {
  const std::string url = Server().NewDatabase();
  // A tool output of 17,000 words: "needle at the end" comes after the last
  // position a tsvector has (16383).
  std::string long_output;
  for (int i = 0; i < 17'000; ++i) long_output += "line" + std::to_string(i % 5) + " ";
  long_output += "needle at the end";
  const std::vector<std::string> queries = {"zebra",  "line3",          "\"line1 line2\"",
                                            "lin*",   "okapi",          "zebra okapi",
                                            "walrus", "\"okapi zebra\""};
  std::string id;
  int64_t long_item = 0;
  std::vector<std::string> before;
  std::string transcript_before;
  {
    auto store = OpenOrDie<PostgresSessionStore>(url);
    core::NewSession spec;
    spec.items = {core::UserMessage("zebra okapi")};
    auto s = store->CreateSession(spec);
    REQUIRE(s.ok());
    id = s->id;
    auto ids = store->Append(id, s->head_item_id, "t",
                             {core::FunctionCallOutput("c1", long_output),
                              core::AssistantMessage("okapi zebra line3 again")});
    REQUIRE(ids.ok());
    long_item = (*ids)[0];
    REQUIRE(store->RecordEvent(id, "t", "token_count", R"({"type":"token_count"})").ok());
    for (const std::string& q : queries) before.push_back(SearchTrace(*store, q, std::nullopt, 20));
    transcript_before = TranscriptText(*store, id);
    // With the current rules the words after the last position are found.
    CHECK(
        SearchTrace(*store, "needle", std::nullopt, 20).rfind(std::to_string(long_item) + " ", 0) ==
        0);
  }
  const std::string others =
      "SELECT ('x' || left(md5(string_agg(tsv::text, ',' ORDER BY id)), 15))::bit(60)::bigint"
      " FROM items WHERE id <> " +
      std::to_string(long_item);
  const int64_t others_before = QueryInt(url, others);
  codex::storage::testing::TakePostgresBackToSchema7(url);
  // What a codex of schema 6 stored: the long item's lexemes stop at its
  // 16383rd word (the words after it are in no other place of the text).
  QueryInt(url,
           "BEGIN; UPDATE items SET tsv = ts_delete(tsv, ARRAY['needle', 'at', 'the', 'end'])"
           " WHERE id = " +
               std::to_string(long_item) +
               "; DELETE FROM schema_migrations WHERE version > 6; COMMIT");
  REQUIRE(QueryInt(url, "SELECT max(version) FROM schema_migrations") == 6);
  REQUIRE(QueryInt(url, "SELECT count(*) FROM items WHERE tsv @@ 'needle'::tsquery") == 0);

  auto store = OpenOrDie<PostgresSessionStore>(url);
  CHECK(QueryInt(url, "SELECT max(version) FROM schema_migrations") ==
        codex::storage::internal::EmbeddedPostgresMigrations().back().version);
  CHECK(QueryInt(url, "SELECT count(*) FROM items_refold") == 0);  // re-indexed at the open
  const std::string needle = SearchTrace(*store, "needle", std::nullopt, 20);
  CHECK(needle.rfind(std::to_string(long_item) + " ", 0) == 0);
  CHECK(std::count(needle.begin(), needle.end(), '\n') == 1);
  CHECK(
      SearchTrace(*store, "the end", std::nullopt, 20).rfind(std::to_string(long_item) + " ", 0) ==
      0);
  // Everything else as it was, byte for byte: other items' lexemes, the
  // transcript and events, and every other search's hits, order and snippets.
  CHECK(QueryInt(url, others) == others_before);
  CHECK(TranscriptText(*store, id) == transcript_before);
  for (size_t k = 0; k < queries.size(); ++k) {
    INFO(queries[k]);
    CHECK(SearchTrace(*store, queries[k], std::nullopt, 20) == before[k]);
  }
}

TEST_CASE("Every item kind is stored by its number and read back as itself") {
  const std::string url = Server().NewDatabase();
  auto store = OpenOrDie<PostgresSessionStore>(url);
  core::NewSession spec;
  spec.items = {core::UserMessage("kinds")};
  auto s = store->CreateSession(spec);
  REQUIRE(s.ok());
  std::vector<core::Item> items;
  // Every kind but the two that restart the transcript (a compaction and
  // our checkpoint: the compaction tests walk those).
  for (int k = 0; k <= static_cast<int>(core::ItemKind::kOther); ++k) {
    core::Item item;
    item.kind = static_cast<core::ItemKind>(k);
    if (item.kind == core::ItemKind::kCompaction ||
        item.kind == core::ItemKind::kCompactionCheckpoint) {
      continue;
    }
    item.body = R"({"type":")" + std::string(core::ItemKindName(item.kind)) + R"(","n":)" +
                std::to_string(k) + "}";
    items.push_back(item);
  }
  auto ids = store->Append(s->id, s->head_item_id, "t", items);
  REQUIRE(ids.ok());
  auto found = store->FindSession(s->id);
  REQUIRE(found.ok());
  auto transcript = store->LoadTranscript(*found);
  REQUIRE(transcript.ok());
  REQUIRE(transcript->size() == items.size() + 1);
  for (size_t i = 0; i < items.size(); ++i) {
    INFO(core::ItemKindName(items[i].kind));
    CHECK((*transcript)[i + 1].item.kind == items[i].kind);
    CHECK((*transcript)[i + 1].item.body == items[i].body);
  }
  // Distinct numbers: no two kinds share one.
  CHECK(QueryInt(url, "SELECT count(DISTINCT kind) FROM items") ==
        static_cast<int64_t>(items.size()));
}

TEST_CASE("Connections carry TCP keepalives (idle 15 s) unless the URL says otherwise") {
  PgTestServer& server = Server();
  const std::string url = server.NewDatabase();
  std::string unix_path;
  for (const auto& e : std::filesystem::directory_iterator(server.socket_dir())) {
    const std::string name = e.path().filename().string();
    if (name.rfind(".s.PGSQL.", 0) == 0 && name.find(".lock") == std::string::npos) {
      unix_path = e.path().string();
    }
  }
  REQUIRE_FALSE(unix_path.empty());
  TcpRelay relay(unix_path);
  std::string tcp_url = url;
  const std::string host = "host=" + server.socket_dir();
  REQUIRE(tcp_url.find(host) != std::string::npos);
  tcp_url.replace(tcp_url.find(host), host.size(),
                  "host=127.0.0.1&port=" + std::to_string(relay.port()));
  {
    auto store = OpenOrDie<PostgresSessionStore>(tcp_url);
    CHECK(store->ListSessions({}).ok());
    const std::vector<long> timers = KeepaliveTimers(relay.port());
    REQUIRE(timers.size() == 1);
    CHECK(timers[0] > 0);
    CHECK(timers[0] <= 15 * 100);
  }
  {
    auto store = OpenOrDie<PostgresSessionStore>(tcp_url + "&keepalives_idle=600");
    CHECK(store->ListSessions({}).ok());
    const std::vector<long> timers = KeepaliveTimers(relay.port());
    REQUIRE(timers.size() == 1);
    CHECK(timers[0] > 15 * 100);
  }
  {
    auto store = OpenOrDie<PostgresSessionStore>(tcp_url + "&keepalives=0");
    CHECK(store->ListSessions({}).ok());
    CHECK(KeepaliveTimers(relay.port()) == std::vector<long>{-1});
  }
}

namespace {

// The searchable items and their tokens two ways: as search_totals keeps
// them (summed over its rows) and counted again from the items.
std::pair<std::string, std::string> SearchTotals(const std::string& url) {
  return {
      std::to_string(QueryInt(url, "SELECT COALESCE(SUM(items), 0) FROM search_totals")) + "/" +
          std::to_string(QueryInt(url, "SELECT COALESCE(SUM(tokens), 0) FROM search_totals")),
      std::to_string(QueryInt(url, "SELECT count(*) FROM items WHERE search_tokens IS NOT NULL")) +
          "/" + std::to_string(QueryInt(url, "SELECT COALESCE(SUM(search_tokens), 0) FROM items"))};
}

}  // namespace

TEST_CASE(
    "A store at schema version 7 upgrades: every item's token count and the totals BM25 ranks "
    "by, the rest unchanged") {
  const std::string url = Server().NewDatabase();
  // Items whose count the tsvector holds exactly, and those it cannot: a
  // word 300 times (a lexeme keeps 256 positions), 17,000 words (positions
  // stop at 16383), punctuation only (no lexeme, but a row of SQLite's
  // index), an output with no text (no row there).
  std::string long_output;
  for (int i = 0; i < 17'000; ++i) long_output += "line" + std::to_string(i % 5) + " ";
  long_output += "needle at the end";
  std::string repeated;
  for (int i = 0; i < 300; ++i) repeated += "zebra ";
  const std::vector<std::string> queries = {"zebra",  "line3",          "\"line1 line2\"",
                                            "lin*",   "okapi",          "zebra okapi",
                                            "needle", "\"okapi zebra\""};
  std::vector<std::string> before;
  std::vector<std::string> ids;
  std::string transcripts_before;
  auto transcripts_of = [&](PostgresSessionStore& store) {
    std::string text;
    for (const std::string& id : ids) {
      auto found = store.FindSession(id);
      REQUIRE(found.ok());
      auto transcript = store.LoadTranscript(*found);
      REQUIRE(transcript.ok());
      for (const auto& t : *transcript) {
        text += std::to_string(t.id) + "|" + t.session_id + "|" + t.item.body + "\n";
      }
      auto events = store.LoadEvents(id);
      REQUIRE(events.ok());
      for (const auto& e : *events) text += "event " + e.type + "|" + e.payload_json + "\n";
    }
    return text;
  };
  const std::string counts =
      "SELECT ('x' || left(md5(string_agg(id || ':' || COALESCE(search_tokens::text, '-'), ','"
      " ORDER BY id)), 15))::bit(60)::bigint FROM items";
  {
    auto store = OpenOrDie<PostgresSessionStore>(url);
    core::NewSession spec;
    spec.items = {core::UserMessage("zebra okapi")};
    auto s = store->CreateSession(spec);
    REQUIRE(s.ok());
    ids.push_back(s->id);
    auto more =
        store->Append(s->id, s->head_item_id, "t",
                      {core::FunctionCallOutput("c1", long_output),
                       core::AssistantMessage("okapi zebra line3 again"),
                       core::FunctionCallOutput("c2", repeated),
                       core::AssistantMessage("... -- ()"), core::FunctionCallOutput("c3", "")});
    REQUIRE(more.ok());
    REQUIRE(store->RecordEvent(s->id, "t", "token_count", R"({"type":"token_count"})").ok());
    auto fork = store->Fork(s->id, std::nullopt);
    REQUIRE(fork.ok());
    ids.push_back(fork->id);
    REQUIRE(store->Append(fork->id, fork->head_item_id, "f", {core::UserMessage("zebra in a fork")})
                .ok());
    for (const std::string& q : queries) before.push_back(SearchTrace(*store, q, std::nullopt, 20));
    transcripts_before = transcripts_of(*store);
    // The punctuation is a searchable item of no token; the empty output none.
    CHECK(QueryInt(url, "SELECT count(*) FROM items WHERE search_tokens = 0 AND tsv IS NULL") == 1);
    CHECK(QueryInt(url, "SELECT search_tokens FROM items WHERE id = " +
                            std::to_string((*more)[0])) == 17'004);
    CHECK(QueryInt(url, "SELECT search_tokens FROM items WHERE id = " +
                            std::to_string((*more)[2])) == 300);
  }
  const auto totals_before = SearchTotals(url);
  CHECK(totals_before.first == totals_before.second);
  const int64_t counts_before = QueryInt(url, counts);

  codex::storage::testing::TakePostgresBackToSchema7(url);
  REQUIRE(QueryInt(url, "SELECT max(version) FROM schema_migrations") == 7);
  REQUIRE(QueryInt(url,
                   "SELECT count(*) FROM information_schema.columns"
                   " WHERE table_name = 'items' AND column_name = 'search_tokens'") == 0);

  auto store = OpenOrDie<PostgresSessionStore>(url);
  CHECK(QueryInt(url, "SELECT max(version) FROM schema_migrations") ==
        codex::storage::internal::EmbeddedPostgresMigrations().back().version);
  CHECK(QueryInt(url, "SELECT count(*) FROM items_refold") == 0);  // re-indexed at the open
  // Each item's count as a new store makes it, and the totals from them.
  CHECK(QueryInt(url, counts) == counts_before);
  CHECK(SearchTotals(url) == totals_before);
  // The same transcripts and events, and every search's hits, order and snippets.
  CHECK(transcripts_of(*store) == transcripts_before);
  for (size_t k = 0; k < queries.size(); ++k) {
    INFO(queries[k]);
    CHECK(SearchTrace(*store, queries[k], std::nullopt, 20) == before[k]);
  }
}

TEST_CASE("The search totals stay exact through append, fork, import, copy, removal and purge") {
  const std::string url = Server().NewDatabase();
  auto store = OpenOrDie<PostgresSessionStore>(url);
  auto exact = [&](const char* after) {
    INFO("after " << after);
    const auto totals = SearchTotals(url);
    CHECK(totals.first == totals.second);
    return totals.first;
  };
  core::NewSession spec;
  spec.cwd = "/w";
  spec.items = {core::UserMessage("zebra okapi one")};
  auto a = store->CreateSession(spec);
  REQUIRE(a.ok());
  REQUIRE(store
              ->Append(a->id, a->head_item_id, "t",
                       {core::AssistantMessage("zebra two three"), core::AssistantMessage("?!")})
              .ok());
  CHECK(exact("append") == "3/6");  // "?!" is an item of no token
  auto fork = store->Fork(a->id, std::nullopt);
  REQUIRE(fork.ok());
  REQUIRE(store->Append(fork->id, fork->head_item_id, "f", {core::UserMessage("fork words here")})
              .ok());
  CHECK(exact("fork") == "4/9");
  codex::storage::ImportedSession imported;
  imported.spec.id = "01900000-0000-7000-8000-0000000000ab";
  imported.spec.cwd = "/w";
  imported.items = {{"t", 1, core::UserMessage("imported zebra")},
                    {"t", 2, core::FunctionCallOutput("c", "")}};
  REQUIRE(store->ImportSession(imported).ok());
  CHECK(exact("import") == "5/11");
  {
    // A copy from another store of the same backend.
    auto other = OpenOrDie<PostgresSessionStore>(Server().NewDatabase());
    core::NewSession o;
    o.cwd = "/w";
    o.items = {core::UserMessage("copied zebra words")};
    REQUIRE(other->CreateSession(o).ok());
    REQUIRE(codex::storage::CopyAllSessions(*other, *store).ok());
  }
  CHECK(exact("copy") == "6/14");
  // The root goes; its items stay for the fork, and so in the totals.
  REQUIRE(store->Remove(a->id).ok());
  CHECK(exact("removing the root") == "6/14");
  REQUIRE(store->Remove(fork->id).ok());
  CHECK(exact("removing the fork") == "2/5");
  codex::storage::PurgeQuery purge;
  purge.updated_before_ms = std::numeric_limits<int64_t>::max();
  codex::storage::RemoveStats stats;
  REQUIRE(store->Purge(purge, &stats).ok());
  CHECK(exact("purge") == "0/0");
  CHECK(SearchTrace(*store, "zebra", std::nullopt, 20).empty());
}

namespace {

// A client of its own, for a transaction left open across steps.
struct RawClient {
  explicit RawClient(const std::string& url) : conn(PQconnectdb(url.c_str())) {
    REQUIRE(PQstatus(conn) == CONNECTION_OK);
  }
  ~RawClient() { PQfinish(conn); }
  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;
  // Runs `sql` to its end; its SQLSTATE, "" when it succeeded.
  std::string Run(const std::string& sql) {
    PGresult* r = PQexec(conn, sql.c_str());
    return StateOf(r);
  }
  // Sends `sql` and returns without its answer (Finish reads it).
  void Send(const std::string& sql) { REQUIRE(PQsendQuery(conn, sql.c_str()) == 1); }
  std::string Finish() {
    std::string state;
    while (PGresult* r = PQgetResult(conn)) {
      const std::string s = StateOf(r);
      if (state.empty()) state = s;
    }
    return state;
  }
  int Pid() const { return PQbackendPID(conn); }
  static std::string StateOf(PGresult* r) {
    const ExecStatusType st = PQresultStatus(r);
    std::string state;
    if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK) {
      const char* code = PQresultErrorField(r, PG_DIAG_SQLSTATE);
      state = code ? code : "?";
    }
    PQclear(r);
    return state;
  }
  PGconn* conn;
};

// Runs `sql` as another client would and returns its SQLSTATE ("" when it
// succeeded).
std::string SqlState(const std::string& url, const std::string& sql) {
  return RawClient(url).Run(sql);
}

// The bytes of every index of sessions.
int64_t SessionsIndexBytes(const std::string& url) {
  return QueryInt(url,
                  "SELECT sum(pg_relation_size(indexrelid))::bigint FROM pg_index"
                  " WHERE indrelid = 'sessions'::regclass");
}

// The bytes of sessions' rows. A page may be added when the server could
// not yet reclaim the old versions of the row (a snapshot held meanwhile,
// e.g. by autovacuum), so the tests allow one page.
int64_t SessionsHeapBytes(const std::string& url) {
  return QueryInt(url, "SELECT pg_relation_size('sessions')");
}

// Every page of ListSessions (pages of `limit`), as ids, newest first.
std::vector<std::string> AllPages(PostgresSessionStore& store, std::optional<std::string> cwd,
                                  bool archived, int limit) {
  core::ListQuery q;
  q.cwd = std::move(cwd);
  q.archived = archived;
  q.limit = limit;
  std::vector<std::string> ids;
  do {
    auto page = store.ListSessions(q);
    REQUIRE(page.ok());
    for (const auto& s : page->sessions) ids.push_back(s.id);
    q.cursor = page->next_cursor;
  } while (!q.cursor.empty());
  return ids;
}

}  // namespace

TEST_CASE("Appends update the session's row in place: the indexes of sessions do not grow") {
  const std::string url = Server().NewDatabase();
  auto store = OpenOrDie<PostgresSessionStore>(url);
  core::NewSession spec;
  spec.cwd = "/w";
  spec.items = {core::UserMessage("first")};
  auto s = store->CreateSession(spec);
  REQUIRE(s.ok());
  auto other = store->CreateSession(spec);
  REQUIRE(other.ok());
  const int64_t indexes_before = SessionsIndexBytes(url);
  const int64_t heap_before = SessionsHeapBytes(url);
  // 400 appends in a burst, with usage recorded every 10: each changes the
  // row's head and time (and tokens). Before migration 0009 each left a new
  // entry in all eight indexes of sessions (~330 bytes), ~130 KB in all.
  std::optional<int64_t> head = s->head_item_id;
  for (int i = 0; i < 400; ++i) {
    auto ids = store->Append(s->id, head, "t" + std::to_string(i / 10),
                             {core::AssistantMessage("item " + std::to_string(i))});
    REQUIRE(ids.ok());
    head = ids->back();
    if (i % 10 == 9) {
      core::TurnRecord turn;
      turn.session_id = s->id;
      turn.turn_id = "t" + std::to_string(i / 10);
      turn.status = core::TurnStatus::kCompleted;
      turn.usage.total_tokens = 7;
      REQUIRE(store->RecordTurn(turn).ok());
    }
  }
  CHECK(SessionsIndexBytes(url) == indexes_before);
  CHECK(SessionsHeapBytes(url) <= heap_before + 8192);
  // And every change is there.
  auto found = store->FindSession(s->id);
  REQUIRE(found.ok());
  CHECK(found->head_item_id == head);
  CHECK(found->tokens_used == 40 * 7);
  auto transcript = store->LoadTranscript(*found);
  REQUIRE(transcript.ok());
  CHECK(transcript->size() == 401);
  CHECK(store->LatestSession(std::string("/w"))->id == s->id);
  CHECK(AllPages(*store, std::nullopt, false, 1) == std::vector<std::string>{s->id, other->id});
}

TEST_CASE("A session's head names an existing item, and no head item can be deleted") {
  // The rule the head's foreign key kept until migration 0009, tried by
  // another client's SQL: the same SQLSTATE (23503), nothing changed.
  const std::string url = Server().NewDatabase();
  auto store = OpenOrDie<PostgresSessionStore>(url);
  core::NewSession spec;
  spec.items = {core::UserMessage("one"), core::AssistantMessage("two")};
  auto s = store->CreateSession(spec);
  REQUIRE(s.ok());
  const std::string head = std::to_string(*s->head_item_id);
  const std::string missing = std::to_string(*s->head_item_id + 1000);
  CHECK(SqlState(url, "UPDATE sessions SET head_item_id = " + missing + " WHERE id = '" + s->id +
                          "'") == "23503");
  CHECK(SqlState(url,
                 "INSERT INTO sessions(id, head_item_id, created_at_ms, updated_at_ms) VALUES"
                 " ('01900000-0000-7000-8000-00000000beef', " +
                     missing + ", 1, 1)") == "23503");
  CHECK(SqlState(url, "DELETE FROM item_usage; DELETE FROM items WHERE id = " + head) == "23503");
  CHECK(SqlState(url, "DELETE FROM items WHERE id >= " + std::to_string(*s->head_item_id - 1)) ==
        "23503");
  CHECK(SqlState(url, "UPDATE items SET id = " + missing + " WHERE id = " + head) == "23503");
  CHECK(QueryInt(url, "SELECT count(*) FROM items") == 2);
  CHECK(QueryInt(url, "SELECT count(*) FROM sessions") == 1);
  // What a head may be: an existing item, or none; a non-head item may go.
  CHECK(SqlState(url, "UPDATE sessions SET head_item_id = " + std::to_string(*s->head_item_id - 1) +
                          " WHERE id = '" + s->id + "'") == "");
  CHECK(SqlState(url, "UPDATE sessions SET head_item_id = NULL WHERE id = '" + s->id + "'") == "");
  CHECK(SqlState(url, "DELETE FROM items WHERE id = " + head) == "");
  // Removing the session through the store removes its items.
  REQUIRE(store->Remove(s->id).ok());
  CHECK(QueryInt(url, "SELECT count(*) FROM items") == 0);
}

namespace {

// Waits until the server's backend `pid` waits for a lock (what another
// transaction holds); false when it did not within 20 s.
bool WaitsForLock(const std::string& url, int pid) {
  for (int i = 0; i < 2000; ++i) {
    if (QueryInt(url, "SELECT count(*) FROM pg_stat_activity WHERE pid = " + std::to_string(pid) +
                          " AND wait_event_type = 'Lock'") == 1) {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

}  // namespace

TEST_CASE("A head change and the deletion of its item, racing, never both commit") {
  // The foreign key did this with row locks; the triggers of migration 0009
  // must too (READ COMMITTED, each side in an open transaction of its own).
  const std::string url = Server().NewDatabase();
  auto store = OpenOrDie<PostgresSessionStore>(url);
  core::NewSession spec;
  spec.items = {core::UserMessage("one"), core::AssistantMessage("two")};
  auto s = store->CreateSession(spec);
  REQUIRE(s.ok());
  const std::string first = std::to_string(*s->head_item_id - 1);
  const std::string leaf = std::to_string(*s->head_item_id);
  const std::string where = " WHERE id = '" + s->id + "'";
  const std::string delete_leaf =
      "DELETE FROM item_usage WHERE item_id = " + leaf + "; DELETE FROM items WHERE id = " + leaf;
  // The leaf is nobody's head now.
  REQUIRE(SqlState(url, "UPDATE sessions SET head_item_id = " + first + where) == "");
  auto head = [&] { return QueryInt(url, "SELECT head_item_id FROM sessions" + where); };

  SECTION("the head moves to the item first: the deletion waits, then fails") {
    RawClient mover(url), deleter(url);
    REQUIRE(mover.Run("BEGIN") == "");
    REQUIRE(mover.Run("UPDATE sessions SET head_item_id = " + leaf + where) == "");
    deleter.Send(delete_leaf);
    REQUIRE(WaitsForLock(url, deleter.Pid()));
    REQUIRE(mover.Run("COMMIT") == "");
    CHECK(deleter.Finish() == "23503");
    CHECK(std::to_string(head()) == leaf);
    CHECK(QueryInt(url, "SELECT count(*) FROM items WHERE id = " + leaf) == 1);
  }
  SECTION("the item is deleted first: the head change waits, then fails") {
    RawClient deleter(url), mover(url);
    REQUIRE(deleter.Run("BEGIN") == "");
    REQUIRE(deleter.Run(delete_leaf) == "");
    mover.Send("UPDATE sessions SET head_item_id = " + leaf + where);
    REQUIRE(WaitsForLock(url, mover.Pid()));
    REQUIRE(deleter.Run("COMMIT") == "");
    CHECK(mover.Finish() == "23503");
    CHECK(std::to_string(head()) == first);
    CHECK(QueryInt(url, "SELECT count(*) FROM items WHERE id = " + leaf) == 0);
  }
  SECTION("a new session naming the item, against its deletion") {
    RawClient inserter(url), deleter(url);
    REQUIRE(inserter.Run("BEGIN") == "");
    REQUIRE(inserter.Run("INSERT INTO sessions(id, head_item_id, created_at_ms, updated_at_ms)"
                         " VALUES ('01900000-0000-7000-8000-00000000cafe', " +
                         leaf + ", 1, 1)") == "");
    deleter.Send(delete_leaf);
    REQUIRE(WaitsForLock(url, deleter.Pid()));
    REQUIRE(inserter.Run("COMMIT") == "");
    CHECK(deleter.Finish() == "23503");
    CHECK(QueryInt(url, "SELECT count(*) FROM items WHERE id = " + leaf) == 1);
  }
}

TEST_CASE(
    "A store at schema version 8 upgrades: the same lists, latest sessions, transcripts and "
    "searches; appends then update in place") {
  const std::string url = Server().NewDatabase();
  std::vector<std::string> ids;
  const int64_t base = 1'700'000'040'000;
  {
    auto store = OpenOrDie<PostgresSessionStore>(url);
    // Sessions on either side of 10-second boundaries, ties, two directories,
    // a fork and an archived session.
    const std::vector<int64_t> offsets = {9'999, 10'000, 0,      10'000, -1,
                                          5,     19'999, 20'001, 9'999,  60'000};
    for (size_t i = 0; i < offsets.size(); ++i) {
      codex::storage::ImportedSession imported;
      imported.spec.id = "01900000-0000-7000-8000-0000000000" + std::to_string(10 + i);
      imported.spec.cwd = i % 2 ? "/a" : "/b";
      imported.spec.created_at_ms = base - 100'000;
      imported.updated_at_ms = base + offsets[i];
      imported.items = {{"t", base, core::UserMessage("zebra " + std::to_string(i))},
                        {"t", base, core::AssistantMessage("okapi " + std::to_string(i))}};
      REQUIRE(store->ImportSession(imported).ok());
      ids.push_back(imported.spec.id);
    }
    REQUIRE(store->Archive(ids[3]).ok());
  }
  auto state = [&](PostgresSessionStore& store) {
    std::string text;
    for (const auto& cwd : {std::optional<std::string>(), std::optional<std::string>("/a"),
                            std::optional<std::string>("/b")}) {
      for (bool archived : {false, true}) {
        for (int limit : {1, 3, 50}) {
          for (const std::string& id : AllPages(store, cwd, archived, limit)) text += id + " ";
          text += "\n";
        }
      }
      auto latest = store.LatestSession(cwd);
      REQUIRE(latest.ok());
      text += "latest " + latest->id + "\n";
    }
    for (const std::string& id : ids) {
      auto found = store.FindSession(id);
      REQUIRE(found.ok());
      text += id + " updated " + std::to_string(found->updated_at_ms) + " head " +
              std::to_string(found->head_item_id.value_or(0)) + "\n";
      auto transcript = store.LoadTranscript(*found);
      REQUIRE(transcript.ok());
      for (const auto& t : *transcript) text += std::to_string(t.id) + "|" + t.item.body + "\n";
    }
    for (const std::string q : {"zebra", "okapi", "zebra okapi"}) {
      text += SearchTrace(store, q, std::nullopt, 20);
    }
    return text;
  };
  std::string before;
  {
    auto store = OpenOrDie<PostgresSessionStore>(url);
    before = state(*store);
  }
  codex::storage::testing::TakePostgresBackToSchema8(url);
  REQUIRE(QueryInt(url, "SELECT max(version) FROM schema_migrations") == 8);
  REQUIRE(QueryInt(url, "SELECT count(*) FROM pg_indexes WHERE indexname = 'sessions_head'") == 1);

  auto store = OpenOrDie<PostgresSessionStore>(url);
  CHECK(QueryInt(url, "SELECT max(version) FROM schema_migrations") ==
        codex::storage::internal::EmbeddedPostgresMigrations().back().version);
  CHECK(state(*store) == before);
  // The slots are the times in whole 10 seconds; the head's index and key
  // gave way to the triggers.
  CHECK(QueryInt(url, "SELECT count(*) FROM sessions WHERE updated_slot = updated_at_ms / 10000") ==
        static_cast<int64_t>(ids.size()));
  CHECK(QueryInt(url, "SELECT count(*) FROM pg_indexes WHERE indexname = 'sessions_head'") == 0);
  CHECK(
      QueryInt(url,
               "SELECT count(*) FROM pg_constraint WHERE conname = 'sessions_head_item_id_fkey'") ==
      0);
  CHECK(
      SqlState(url, "DELETE FROM items WHERE id = (SELECT head_item_id FROM sessions WHERE id = '" +
                        ids[0] + "')") == "23503");
  // Appends now leave the indexes of sessions at their size, and move the
  // session to the front.
  const int64_t indexes = SessionsIndexBytes(url);
  const int64_t heap = SessionsHeapBytes(url);
  auto found = store->FindSession(ids[4]);
  REQUIRE(found.ok());
  std::optional<int64_t> head = found->head_item_id;
  for (int i = 0; i < 200; ++i) {
    auto more = store->Append(ids[4], head, "u", {core::AssistantMessage("more")});
    REQUIRE(more.ok());
    head = more->back();
  }
  CHECK(SessionsIndexBytes(url) == indexes);
  CHECK(SessionsHeapBytes(url) <= heap + 8192);
  CHECK(AllPages(*store, std::nullopt, false, 2).front() == ids[4]);
  CHECK(store->LatestSession(std::string("/b"))->id == ids[4]);
}

// The search reads each match's count of a one-token phrase from the
// server's ranking functions instead of its positions (storage/pg_search.h):
// for a word ts_rank (WordCountOfRank), for a prefix ts_rank_cd with unit
// weights. Both asked of the real server for every count a tsvector holds
// (1 to 256 positions of a lexeme), beside other lexemes, one of which the
// prefix also matches.
TEST_CASE("The server's ranks of a word and a prefix give back their counts, 1 to 256") {
  const std::string url = Server().NewDatabase();
  PGconn* c = PQconnectdb(url.c_str());
  REQUIRE(PQstatus(c) == CONNECTION_OK);
  PGresult* r =
      PQexec(c,
             "SELECT n, ts_rank(v, 'heron'::tsquery),"
             " ts_rank_cd('{1,1,1,1}', v, 'her:*'::tsquery) FROM generate_series(1, 256) AS n,"
             " LATERAL (SELECT ('egret:1 heron:' || string_agg((p + 1)::text, ',') || ' herald:' ||"
             " (n + 2) || ',' || (n + 3) || ' mud:' || (n + 4))::tsvector AS v"
             " FROM generate_series(1, n) AS p) AS t ORDER BY n");
  REQUIRE(PQresultStatus(r) == PGRES_TUPLES_OK);
  REQUIRE(PQntuples(r) == 256);
  for (int i = 0; i < PQntuples(r); ++i) {
    const int n = std::stoi(PQgetvalue(r, i, 0));
    INFO("count " << n << ": ts_rank " << PQgetvalue(r, i, 1));
    CHECK(codex::storage::pg::WordCountOfRank(std::strtof(PQgetvalue(r, i, 1), nullptr)) == n);
    CHECK(std::strtof(PQgetvalue(r, i, 2), nullptr) == static_cast<float>(n + 2));
  }
  PQclear(r);
  PQfinish(c);
}
