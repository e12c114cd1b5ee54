// A brand-new SQLite store (a first run) is made whole before it gets its
// name (storage/new_sqlite_store.h): the same schema as a store migrated in
// place, no half-made store under the real name after a crash, no lost
// session when first starts race, and the old one-line errors when the
// directory cannot be written.
#include <SQLiteCpp/SQLiteCpp.h>
#include <grp.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "core/item.h"
#include "storage/migrations.h"
#include "storage/sqlite_session_store.h"
#include "testing/temp_dir.h"

using codex::storage::LatestSchemaVersion;
using codex::storage::SqliteSessionStore;
using codex::testing::TempDir;
namespace core = codex::core;

namespace {

// Everything a database file says about itself that a store depends on, one
// line each: the persistent PRAGMAs, the schema rows, the migration records.
std::vector<std::string> Describe(const std::string& path) {
  SQLite::Database db(path, SQLite::OPEN_READONLY);
  std::vector<std::string> out;
  for (const char* pragma :
       {"journal_mode", "page_size", "user_version", "application_id", "auto_vacuum", "encoding",
        "page_count", "freelist_count", "schema_version", "integrity_check"}) {
    out.push_back(std::string(pragma) + " = " +
                  db.execAndGet(std::string("PRAGMA ") + pragma).getString());
  }
  SQLite::Statement schema(
      db,
      "SELECT type, name, tbl_name, rootpage, coalesce(sql, '') FROM sqlite_master ORDER BY "
      "type, name");
  while (schema.executeStep()) {
    std::string row;
    for (int i = 0; i < 5; ++i) row += schema.getColumn(i).getString() + " | ";
    out.push_back(row);
  }
  SQLite::Statement applied(
      db, "SELECT version, name, checksum FROM schema_migrations ORDER BY version");
  while (applied.executeStep()) {
    out.push_back("migration " + applied.getColumn(0).getString() + " " +
                  applied.getColumn(1).getString() + " " + applied.getColumn(2).getString());
  }
  return out;
}

std::set<std::string> Names(const std::filesystem::path& dir) {
  std::set<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    names.insert(e.path().filename().string());
  }
  return names;
}

// True when `names` holds nothing but a store and the two files SQLite keeps
// beside an open (or uncleanly closed) WAL database.
bool OnlyStoreFiles(const std::set<std::string>& names) {
  for (const std::string& n : names) {
    if (n != "sessions.db" && n != "sessions.db-wal" && n != "sessions.db-shm") return false;
  }
  return true;
}

// A session made in a store another process may be creating at this moment.
// Exits 0 on success; never returns.
[[noreturn]] void CreateOneSession(const std::string& path, int index) {
  auto store = SqliteSessionStore::Open(path);
  if (!store.ok()) {
    std::fprintf(stderr, "child %d: %s\n", index, store.status().ToString().c_str());
    std::_Exit(1);
  }
  core::NewSession spec;
  // Its own id: a forked child shares the parent's random state.
  spec.id = "01900000-0000-7000-8000-0000000000" + std::to_string(10 + index);
  spec.cwd = "/child" + std::to_string(index);
  spec.items = {core::UserMessage("hello from " + std::to_string(index))};
  auto session = (*store)->CreateSession(spec);
  if (!session.ok()) {
    std::fprintf(stderr, "child %d: %s\n", index, session.status().ToString().c_str());
    std::_Exit(2);
  }
  std::_Exit(0);
}

}  // namespace

TEST_CASE("A new store has the schema and settings of a store migrated in place") {
  TempDir dir;
  // New: nothing at the path, the store is made aside and linked into place.
  const std::string fresh = dir.File("new/sessions.db");
  // In place: an empty file already has the name (what an older codex left
  // when it stopped right after creating it), so the migrations run in it.
  const std::string in_place = dir.File("old/sessions.db");
  std::filesystem::create_directories(dir.path() / "old");
  std::ofstream(in_place).close();
  REQUIRE(std::filesystem::file_size(in_place) == 0);
  { REQUIRE(SqliteSessionStore::Open(fresh).ok()); }
  { REQUIRE(SqliteSessionStore::Open(in_place).ok()); }

  const std::vector<std::string> a = Describe(fresh);
  const std::vector<std::string> b = Describe(in_place);
  CHECK(a == b);
  CHECK(a.at(0) == "journal_mode = wal");
  CHECK(std::count(a.begin(), a.end(), "integrity_check = ok") == 1);
  CHECK(std::count_if(a.begin(), a.end(), [](const std::string& line) {
          return line.rfind("migration ", 0) == 0;
        }) == LatestSchemaVersion());
  struct stat st {};
  REQUIRE(::stat(fresh.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  // The directory holds the store and nothing made on the way.
  CHECK(OnlyStoreFiles(Names(dir.path() / "new")));

  // Both work alike: a session written and read back, foreign keys enforced.
  for (const std::string& path : {fresh, in_place}) {
    INFO(path);
    auto store = SqliteSessionStore::Open(path);
    REQUIRE(store.ok());
    core::NewSession spec;
    spec.items = {core::UserMessage("first words")};
    auto s = (*store)->CreateSession(spec);
    REQUIRE(s.ok());
    auto transcript = (*store)->LoadTranscript(*s);
    REQUIRE(transcript.ok());
    CHECK(transcript->size() == 1);
  }
}

TEST_CASE("First starts racing to create one store all succeed, on one store") {
  constexpr int kRounds = 12;
  constexpr int kProcesses = 6;
  for (int round = 0; round < kRounds; ++round) {
    DYNAMIC_SECTION("round " << round) {
      TempDir dir;
      const std::string path = dir.File("home/sessions.db");
      // Every child waits for the pipe to close, so that they start together.
      int gate[2];
      REQUIRE(::pipe(gate) == 0);
      std::vector<pid_t> children;
      for (int i = 0; i < kProcesses; ++i) {
        const pid_t pid = ::fork();
        REQUIRE(pid >= 0);
        if (pid == 0) {
          ::close(gate[1]);
          char c;
          while (::read(gate[0], &c, 1) > 0) {
          }
          CreateOneSession(path, i);
        }
        children.push_back(pid);
      }
      ::close(gate[0]);
      ::close(gate[1]);
      int failures = 0;
      for (pid_t pid : children) {
        int status = 0;
        REQUIRE(::waitpid(pid, &status, 0) == pid);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failures;
      }
      CHECK(failures == 0);
      CHECK(OnlyStoreFiles(Names(dir.path() / "home")));
      auto store = SqliteSessionStore::Open(path);
      REQUIRE(store.ok());
      core::ListQuery q;
      q.limit = 100;
      auto page = (*store)->ListSessions(q);
      REQUIRE(page.ok());
      std::set<std::string> cwds;
      for (const auto& s : page->sessions) cwds.insert(s.cwd);
      CHECK(cwds.size() == static_cast<size_t>(kProcesses));
    }
  }
}

TEST_CASE("A first start killed while creating the store leaves no half-made store") {
  // A child creates stores one after another in h0, h1, ... until it is
  // killed, after a different delay each round; every store it left must be
  // whole, and the next run must open each place, the interrupted one too.
  constexpr int kRounds = 24;
  TempDir dir;
  int whole = 0;
  for (int round = 0; round < kRounds; ++round) {
    const std::filesystem::path base = dir.path() / ("round" + std::to_string(round));
    std::filesystem::create_directories(base);
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      for (int i = 0;; ++i) {
        const std::string path = (base / ("h" + std::to_string(i)) / "sessions.db").string();
        if (!SqliteSessionStore::Open(path).ok()) std::_Exit(1);
      }
    }
    std::this_thread::sleep_for(std::chrono::microseconds(500 + 750 * round));
    REQUIRE(::kill(pid, SIGKILL) == 0);
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    REQUIRE(WIFSIGNALED(status));  // not an early exit: the child was still creating stores
    for (const auto& home : std::filesystem::directory_iterator(base)) {
      INFO(home.path().string());
      const std::set<std::string> names = Names(home.path());
      CHECK(OnlyStoreFiles(names));
      const std::string path = (home.path() / "sessions.db").string();
      if (names.count("sessions.db")) {
        // Read as another program would, before any codex touches it again.
        {
          SQLite::Database db(path, SQLite::OPEN_READONLY);
          REQUIRE(codex::storage::SchemaVersion(db).value() == LatestSchemaVersion());
        }
        const std::vector<std::string> described = Describe(path);
        CHECK(described.at(0) == "journal_mode = wal");
        CHECK(std::count(described.begin(), described.end(), "integrity_check = ok") == 1);
        ++whole;
      }
      auto store = SqliteSessionStore::Open(path);
      INFO(store.status().ToString());
      REQUIRE(store.ok());
      core::NewSession spec;
      spec.items = {core::UserMessage("after the crash")};
      CHECK((*store)->CreateSession(spec).ok());
    }
  }
  CHECK(whole > 0);
}

TEST_CASE("A store that cannot be created says why in one line and leaves nothing") {
  if (::geteuid() != 0) {
    // As another user than root, a directory without write permission.
    TempDir dir;
    const std::filesystem::path home = dir.path() / "home";
    std::filesystem::create_directories(home);
    REQUIRE(::chmod(home.c_str(), 0500) == 0);
    const std::string path = (home / "sessions.db").string();
    auto store = SqliteSessionStore::Open(path);
    ::chmod(home.c_str(), 0700);
    REQUIRE_FALSE(store.ok());
    const std::string m(store.status().message());
    CHECK(m == "cannot open sessions database " + path +
                   ": Permission denied; check the path and its permissions");
    CHECK(Names(home).empty());
    return;
  }
  // As root: a child as nobody, in directories root owns (0755), where it may
  // neither create the store nor a missing directory.
  TempDir dir;
  const std::filesystem::path home = dir.path() / "home";
  std::filesystem::create_directories(home);
  REQUIRE(::chmod(dir.path().c_str(), 0755) == 0);
  REQUIRE(::chmod(home.c_str(), 0755) == 0);
  const std::string in_home = (home / "sessions.db").string();
  const std::string in_missing = (home / "missing" / "sessions.db").string();
  int out[2];
  REQUIRE(::pipe(out) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(out[0]);
    if (::setgroups(0, nullptr) != 0 || ::setgid(65534) != 0 || ::setuid(65534) != 0) _exit(20);
    std::string messages;
    for (const std::string& path : {in_home, in_missing}) {
      auto store = SqliteSessionStore::Open(path);
      messages += store.ok() ? std::string("opened") : std::string(store.status().message());
      messages += '\n';
    }
    const bool written =
        ::write(out[1], messages.data(), messages.size()) == static_cast<ssize_t>(messages.size());
    _exit(written ? 0 : 21);
  }
  ::close(out[1]);
  std::string messages;
  char buf[512];
  for (ssize_t n; (n = ::read(out[0], buf, sizeof buf)) > 0;) messages.append(buf, n);
  ::close(out[0]);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  ::chmod(dir.path().c_str(), 0700);
  CHECK(messages == "cannot open sessions database " + in_home +
                        ": Permission denied; check the path and its permissions\n"
                        "cannot create directory " +
                        (home / "missing").string() +
                        " for the sessions database: Permission denied\n");
  CHECK(Names(home).empty());
}
