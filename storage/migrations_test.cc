#include "storage/migrations.h"

#include <SQLiteCpp/SQLiteCpp.h>

#include <catch2/catch.hpp>

#include "core/item.h"
#include "core/session_lease.h"
#include "storage/sqlite_session_store.h"
#include "storage/sqlite_util.h"
#include "testing/temp_dir.h"

using codex::StatusCode;
using codex::storage::ApplyMigrations;
using codex::storage::LatestSchemaVersion;
using codex::storage::Migration;
using codex::storage::SqliteSessionStore;
using codex::testing::TempDir;
namespace internal = codex::storage::internal;

namespace {

constexpr const char* kOldEvent =
    R"({"type":"token_count","info":{"total_token_usage":{"input_tokens":100,"cached_input_tokens":0,"output_tokens":10,"reasoning_output_tokens":5,"total_tokens":110}}})";

int Version(const std::string& path) {
  SQLite::Database db(path, SQLite::OPEN_READONLY);
  auto v = codex::storage::SchemaVersion(db);
  REQUIRE(v.ok());
  return *v;
}

// Writes a session with three items through plain SQL valid at `version`, the
// way a codex of that version would have stored it.
void SeedAtVersion(SQLite::Database& db, int version) {
  REQUIRE(version >= 1);  // 0001 defines items and sessions; later versions keep them
  db.exec(
      "INSERT INTO sessions(id, cwd, model, provider, title, source, created_at_ms,"
      " updated_at_ms) VALUES ('01900000-0000-7000-8000-0000000000aa', '/old', 'm', 'p',"
      " 'old title', 'exec', 1, 1)");
  const std::string user =
      codex::core::UserMessage("ancient zebra question of σίσυφος in 日本語のテキスト").body;
  // Long enough to be packed from 0007 on (storage/packed_text.h).
  std::string lines;
  for (int i = 0; i < 30; ++i) lines += "giraffe output line " + std::to_string(i) + "\\n";
  const std::string out =
      R"({"type":"function_call_output","call_id":"c1","output":")" + lines + R"("})";
  SQLite::Statement ins(db,
                        "INSERT INTO items(parent_id, session_id, kind, role, call_id, body,"
                        " tokens_est, created_at_ms) VALUES (?, "
                        "'01900000-0000-7000-8000-0000000000aa', ?, ?, ?, ?, 1, 1)");
  ins.bind(1);
  ins.bind(2, "message");
  ins.bind(3, "user");
  ins.bind(4, "");
  ins.bind(5, user);
  ins.exec();
  const int64_t first = db.getLastInsertRowid();
  ins.reset();
  ins.bind(1, first);
  ins.bind(2, "function_call_output");
  ins.bind(3, "");
  ins.bind(4, "c1");
  ins.bind(5, out);
  ins.exec();
  db.exec("UPDATE sessions SET head_item_id = last_insert_rowid()");
  db.exec(
      "INSERT INTO events(session_id, turn_id, type, payload, created_at_ms) VALUES"
      " ('01900000-0000-7000-8000-0000000000aa', 't1', 'token_count', '" +
      std::string(kOldEvent) + "', 1)");
  if (version >= 3) {
    // From 0003 on the store indexes each item's text as it inserts it.
    db.exec(
        "INSERT INTO items_fts(rowid, text) SELECT id, codex_search_text(kind, role, body)"
        " FROM items WHERE codex_search_text(kind, role, body) IS NOT NULL");
  }
}

}  // namespace

TEST_CASE("Embedded migrations are numbered 1..N and checksummed") {
  const auto& all = internal::EmbeddedMigrations();
  REQUIRE(!all.empty());
  for (size_t i = 0; i < all.size(); ++i) {
    CHECK(all[i].version == static_cast<int>(i + 1));
    CHECK(!all[i].sql.empty());
  }
  CHECK(LatestSchemaVersion() == all.back().version);
  CHECK(codex::storage::MigrationChecksum("") ==
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST_CASE("A fresh database gets every migration; reopening changes nothing") {
  TempDir dir;
  const std::string path = dir.File("s.db");
  { REQUIRE(SqliteSessionStore::Open(path).ok()); }
  CHECK(Version(path) == LatestSchemaVersion());
  {
    SQLite::Database db(path, SQLite::OPEN_READONLY);
    SQLite::Statement q(db,
                        "SELECT version, name, checksum, applied_at_ms FROM schema_migrations"
                        " ORDER BY version");
    size_t i = 0;
    while (q.executeStep()) {
      const Migration& m = internal::EmbeddedMigrations().at(i++);
      CHECK(q.getColumn(0).getInt() == m.version);
      CHECK(q.getColumn(1).getString() == std::string(m.name));
      CHECK(q.getColumn(2).getString() == codex::storage::MigrationChecksum(m.sql));
      CHECK(q.getColumn(3).getInt64() > 0);
    }
    CHECK(i == internal::EmbeddedMigrations().size());
  }
  { REQUIRE(SqliteSessionStore::Open(path).ok()); }
  SQLite::Database db(path, SQLite::OPEN_READONLY);
  CHECK(db.execAndGet("SELECT count(*) FROM schema_migrations").getInt() == LatestSchemaVersion());
}

TEST_CASE("A database from a newer codex is refused clearly") {
  TempDir dir;
  const std::string path = dir.File("s.db");
  { REQUIRE(SqliteSessionStore::Open(path).ok()); }
  const int newer = LatestSchemaVersion() + 1;
  {
    SQLite::Database db(path, SQLite::OPEN_READWRITE);
    db.exec("INSERT INTO schema_migrations VALUES (" + std::to_string(newer) +
            ", 'future', 'x', 1)");
  }
  auto store = SqliteSessionStore::Open(path);
  REQUIRE_FALSE(store.ok());
  CHECK(store.status().code() == StatusCode::kFailedPrecondition);
  CHECK(store.status().message() == "database " + path +
                                        " was written by a newer codex (schema version " +
                                        std::to_string(newer) + " > " +
                                        std::to_string(LatestSchemaVersion()) + "); upgrade codex");
}

TEST_CASE("A changed checksum of an applied migration is data loss") {
  TempDir dir;
  const std::string path = dir.File("s.db");
  { REQUIRE(SqliteSessionStore::Open(path).ok()); }
  {
    SQLite::Database db(path, SQLite::OPEN_READWRITE);
    db.exec("UPDATE schema_migrations SET checksum = 'deadbeef' WHERE version = 1");
  }
  auto store = SqliteSessionStore::Open(path);
  REQUIRE_FALSE(store.ok());
  CHECK(store.status().code() == StatusCode::kDataLoss);
  CHECK(store.status().message().find("migration 1") != std::string::npos);
}

TEST_CASE("A database at every earlier version upgrades with its data intact") {
  const auto& all = internal::EmbeddedMigrations();
  for (int version = 1; version < LatestSchemaVersion(); ++version) {
    DYNAMIC_SECTION("from version " << version) {
      TempDir dir;
      const std::string path = dir.File("s.db");
      {
        SQLite::Database db(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
        // As every store connection does: the migrations and triggers call them.
        REQUIRE(codex::storage::internal::RegisterStoreFunctions(db.getHandle()).ok());
        std::vector<Migration> prefix(all.begin(), all.begin() + version);
        REQUIRE(ApplyMigrations(db, path, prefix).ok());
        CHECK(codex::storage::SchemaVersion(db).value() == version);
        SeedAtVersion(db, version);
      }
      auto opened = SqliteSessionStore::Open(path);
      INFO(opened.status().ToString());
      REQUIRE(opened.ok());
      auto& store = **opened;
      CHECK(Version(path) == LatestSchemaVersion());
      auto s = store.FindSession("01900000-0000-7000-8000-0000000000aa");
      REQUIRE(s.ok());
      CHECK(s->title == "old title");
      // Sessions from before 0005 were made on the machine the file lives on.
      if (version < 5) CHECK(s->host == codex::core::CurrentProcessHolder().host);
      auto transcript = store.LoadTranscript(*s);
      REQUIRE(transcript.ok());
      REQUIRE(transcript->size() == 2);
      {
        // 0007 packed what packs: the output and the event are BLOBs now,
        // and read back as the very text that was stored.
        SQLite::Database raw(path, SQLite::OPEN_READONLY);
        CHECK(raw.execAndGet("SELECT typeof(body) FROM items WHERE kind = 'function_call_output'")
                  .getString() == "blob");
        CHECK(raw.execAndGet("SELECT typeof(payload) FROM events").getString() == "blob");
      }
      CHECK(transcript->at(1).item.body.find("giraffe output line 29") != std::string::npos);
      auto events = store.LoadEvents(s->id);
      REQUIRE(events.ok());
      REQUIRE(events->size() == 1);
      CHECK(events->at(0).payload_json == kOldEvent);
      CHECK(transcript->at(0).item.body ==
            codex::core::UserMessage("ancient zebra question of σίσυφος in 日本語のテキスト").body);
      // Data stored before search existed is searchable after the upgrade.
      auto search = [&](const char* text) {
        codex::storage::SearchQuery q;
        q.text = text;
        return store.Search(q);
      };
      auto hits = search("zebra");
      REQUIRE(hits.ok());
      REQUIRE(hits->size() == 1);
      REQUIRE(hits->at(0).sessions.size() == 1);
      CHECK(hits->at(0).sessions[0].session.id == s->id);
      CHECK(search("giraffe")->size() == 1);
      // Indexed again by today's words (0006): Greek accents folded, CJK found inside a run.
      CHECK(search("σισυφος")->size() == 1);
      CHECK(search("日本語")->size() == 1);
      CHECK(search("テキスト")->size() == 1);
      // And it keeps working for new writes.
      auto ids = store.Append(s->id, s->head_item_id, "t", {codex::core::UserMessage("new okapi")});
      REQUIRE(ids.ok());
      CHECK(search("okapi")->size() == 1);
      // Removing the session removes its words from the index (the delete trigger).
      REQUIRE(store.Remove(s->id).ok());
      CHECK(search("zebra")->empty());
      CHECK(search("okapi")->empty());
    }
  }
}
