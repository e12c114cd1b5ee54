// FindSession against a name that reads as an id prefix, as a database from
// before Rename refused such names may hold.
#include <SQLiteCpp/SQLiteCpp.h>

#include <catch2/catch.hpp>

#include "core/item.h"
#include "storage/sqlite_session_store.h"
#include "testing/temp_dir.h"

using codex::StatusCode;
using codex::storage::SqliteSessionStore;
using codex::testing::TempDir;
namespace core = codex::core;

TEST_CASE("A legacy hex name does not shadow the ids it prefixes; alone it still resolves") {
  TempDir dir;
  const std::string path = dir.File("s.db");
  auto store = SqliteSessionStore::Open(path);
  REQUIRE(store.ok());
  auto create = [&](const std::string& id) {
    core::NewSession spec;
    spec.id = id;
    spec.cwd = "/w";
    spec.items = {core::UserMessage("hello " + id)};
    auto s = (*store)->CreateSession(spec);
    REQUIRE(s.ok());
  };
  const std::string named = "01900000-0000-7000-8000-000000000001";
  const std::string other = "0abc0000-0000-7000-8000-000000000002";
  create(named);
  create(other);
  {
    SQLite::Database db(path, SQLite::OPEN_READWRITE);
    db.exec("UPDATE sessions SET name = '0abc' WHERE id = '" + named + "'");
    db.exec("UPDATE sessions SET name = 'beef' WHERE id = '" + other + "'");
  }
  // '0abc' is both a name and the prefix of another id: ambiguous, both listed.
  auto both = (*store)->FindSession("0abc");
  REQUIRE_FALSE(both.ok());
  CHECK(both.status().code() == StatusCode::kInvalidArgument);
  CHECK(both.status().message().find(named) != std::string::npos);
  CHECK(both.status().message().find(other) != std::string::npos);
  // 'beef' prefixes no id: the name resolves.
  auto beef = (*store)->FindSession("beef");
  REQUIRE(beef.ok());
  CHECK(beef->id == other);
  // Exact ids and longer prefixes are unaffected.
  CHECK((*store)->FindSession(other)->id == other);
  CHECK((*store)->FindSession("0abc0")->id == other);
  CHECK((*store)->FindSession("0190")->id == named);
}
