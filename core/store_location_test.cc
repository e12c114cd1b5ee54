#include "core/store_location.h"

#include <stdlib.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "core/config.h"
#include "testing/scoped_env.h"
#include "testing/temp_dir.h"

using namespace codex::core;
namespace fs = std::filesystem;
using codex::testing::ScopedEnv;
using codex::testing::TempHome;

TEST_CASE("No setting means SQLite in CODEX_HOME") {
  auto loc = ParseStoreLocation("", "/home/u/.codex");
  REQUIRE(loc.ok());
  CHECK(loc->kind == StoreLocation::Kind::kSqlite);
  CHECK(loc->path == "/home/u/.codex/sessions.db");
}

TEST_CASE("PostgreSQL URLs are recognised and kept as given") {
  for (const char* url : {"postgresql://alice@db.example:5432/codex?sslmode=verify-full",
                          "postgres://alice:s3cret@[::1]:6543/codex",
                          "postgresql://%2Ftmp%2Fpg/codex", "postgresql:///codex?host=/tmp/x",
                          "postgresql://a@h1:5432,h2:5433/db?sslmode=disable&connect_timeout=3",
                          // libpq takes '?' and '#' in a password (its '@' comes before any '/').
                          "postgresql://alice:Se?cret#PW@127.0.0.1:1/db?sslmode=disable"}) {
    auto loc = ParseStoreLocation(url, "/h");
    INFO(url);
    REQUIRE(loc.ok());
    CHECK(loc->kind == StoreLocation::Kind::kPostgres);
    CHECK(loc->url == url);
  }
}

TEST_CASE("SQLite paths: sqlite:PATH, sqlite://PATH, a plain path, a directory") {
  TempHome home;
  auto a = ParseStoreLocation("sqlite:" + (home.path / "a.db").string(), "/h");
  REQUIRE(a.ok());
  CHECK(a->kind == StoreLocation::Kind::kSqlite);
  CHECK(a->path == (home.path / "a.db").string());
  auto b = ParseStoreLocation("sqlite://" + (home.path / "b.db").string(), "/h");
  REQUIRE(b.ok());
  CHECK(b->path == (home.path / "b.db").string());
  auto dir = ParseStoreLocation(home.path.string(), "/h");
  REQUIRE(dir.ok());
  CHECK(dir->path == (home.path / "sessions.db").string());
  auto rel = ParseStoreLocation("rel.db", "/h");
  REQUIRE(rel.ok());
  CHECK(fs::path(rel->path).is_absolute());
}

TEST_CASE("A bad setting is one line naming its source, what is wrong and what to do") {
  struct Case {
    const char* setting;
    const char* says;
  };
  for (const Case& c :
       {Case{"postgresql://u:hunter2@h:99999/db", "port"},
        Case{"postgresql://u:hunter2@h:abc/db", "port"},
        Case{"postgresql://u:hunter2@h/db?sslmode=sometimes", "sslmode"},
        Case{"postgresql://u:hunter2@h/db?sslmode", "name=value"},
        Case{"postgresql://u:hunter2@h/d%zzb", "'%'"},
        Case{"postgresql://:hunter2@h/db", "user name"},
        Case{"mysql://u:hunter2@h/db", "unknown scheme"}, Case{"sqlite:", "empty"}}) {
    auto loc = ParseStoreLocation(c.setting, "/h", "CODEX_SESSION_STORE");
    INFO(c.setting);
    REQUIRE_FALSE(loc.ok());
    const std::string& m = loc.status().message();
    CHECK(m.find("CODEX_SESSION_STORE") == 0);
    CHECK(m.find(c.says) != std::string::npos);
    CHECK(m.find("postgresql://USER@HOST") != std::string::npos);  // what to do
    CHECK(m.find("hunter2") == std::string::npos);
    CHECK(m.find('\n') == std::string::npos);
    CHECK(loc.status().code() == codex::StatusCode::kInvalidArgument);
  }
}

TEST_CASE("RedactSecrets hides every form of the password and keeps the rest") {
  CHECK(RedactSecrets("postgresql://alice:s3cret@db:5432/codex") ==
        "postgresql://alice:***@db:5432/codex");
  CHECK(RedactSecrets("postgres://alice@db/codex") == "postgres://alice@db/codex");
  CHECK(RedactSecrets("cannot connect to postgresql://a:p%40ss@h/db: refused") ==
        "cannot connect to postgresql://a:***@h/db: refused");
  CHECK(RedactSecrets("postgresql://a@h/db?sslmode=require&password=top&x=1") ==
        "postgresql://a@h/db?sslmode=require&password=***&x=1");
  CHECK(RedactSecrets("host=h password=top dbname=d") == "host=h password=*** dbname=d");
  // The password quoted elsewhere (e.g. in a libpq message), raw or decoded.
  const std::string url = "postgresql://a:p%40ss@h/db";
  CHECK(RedactSecrets("invalid token \"p@ss\" and p%40ss", url) == "invalid token \"***\" and ***");
  // Two URLs in one message.
  CHECK(RedactSecrets("from postgresql://a:x1@h/db to postgres://b:y2@g/db") ==
        "from postgresql://a:***@h/db to postgres://b:***@g/db");
  // A password holding ':' or '@' (libpq splits at the last '@').
  CHECK(RedactSecrets("postgresql://a:b:c@d@h/db") == "postgresql://a:***@h/db");
  // libpq reads credentials up to an '@' before the first '/': '?' and '#' may be in them.
  CHECK(RedactSecrets("postgresql://alice:Se?cret#PW@127.0.0.1:1/db") ==
        "postgresql://alice:***@127.0.0.1:1/db");
  CHECK(RedactSecrets("at postgres://alice:Se?cret@h?sslmode=require: refused") ==
        "at postgres://alice:***@h?sslmode=require: refused");
  CHECK(RedactSecrets("quoted Se?cret", "postgresql://alice:Se?cret@h/db") == "quoted ***");
  CHECK(DescribeStoreLocation(*ParseStoreLocation("postgresql://a:zz@h/db", "/h")) ==
        "postgresql://a:***@h/db");
}

TEST_CASE("session_store: config.toml, then CODEX_SESSION_STORE, then -c") {
  TempHome home;
  ScopedEnv clear("CODEX_SESSION_STORE", std::nullopt);
  {
    auto config = LoadConfig(home.path.string(), {});
    REQUIRE(config.ok());
    CHECK(config->session_store.kind == StoreLocation::Kind::kSqlite);
    CHECK(config->session_store.path == (home.path / "sessions.db").string());
    CHECK(config->warnings.empty());
  }
  home.Write("session_store = \"postgresql://file@h/db\"\n");
  {
    auto config = LoadConfig(home.path.string(), {});
    REQUIRE(config.ok());
    CHECK(config->session_store.url == "postgresql://file@h/db");
    CHECK(config->warnings.empty());  // a known key
  }
  ScopedEnv env("CODEX_SESSION_STORE", "postgresql://env@h/db");
  {
    auto config = LoadConfig(home.path.string(), {});
    REQUIRE(config.ok());
    CHECK(config->session_store.url == "postgresql://env@h/db");
  }
  {
    ConfigOverrides o;
    o.dash_c = {"session_store=postgresql://flag@h/db"};
    auto config = LoadConfig(home.path.string(), o);
    REQUIRE(config.ok());
    CHECK(config->session_store.url == "postgresql://flag@h/db");
  }
  {
    ConfigOverrides o;
    o.dash_c = {"session_store=" + (home.path / "x.db").string()};
    auto config = LoadConfig(home.path.string(), o);
    REQUIRE(config.ok());
    CHECK(config->session_store.kind == StoreLocation::Kind::kSqlite);
    CHECK(config->session_store.path == (home.path / "x.db").string());
  }
}

TEST_CASE("A bad session_store fails loading the config, naming the key, never the password") {
  TempHome home;
  ScopedEnv clear("CODEX_SESSION_STORE", std::nullopt);
  home.Write("session_store = \"postgresql://u:hunter2@h/db?sslmode=bogus\"\n");
  auto config = LoadConfig(home.path.string(), {});
  REQUIRE_FALSE(config.ok());
  CHECK(config.status().message().find("session_store") == 0);
  CHECK(config.status().message().find("hunter2") == std::string::npos);
  home.Write("session_store = 5\n");
  auto typed = LoadConfig(home.path.string(), {});
  REQUIRE_FALSE(typed.ok());
  CHECK(typed.status().message().find("session_store") != std::string::npos);
  ScopedEnv env("CODEX_SESSION_STORE", "postgresql://u:hunter2@h:0/db");
  home.Write("");
  auto from_env = LoadConfig(home.path.string(), {});
  REQUIRE_FALSE(from_env.ok());
  CHECK(from_env.status().message().find("CODEX_SESSION_STORE") == 0);
  CHECK(from_env.status().message().find("hunter2") == std::string::npos);
}
