// A read-only CODEX_HOME read by a user who cannot write it, after the last
// writer closed cleanly (its -wal and -shm files are gone): list, find and
// search work without creating anything. A read-only opening that fails
// names the file.
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>

#include "core/item.h"
#include "storage/sqlite_session_store.h"
#include "testing/temp_dir.h"

using codex::storage::SqliteSessionStore;
using codex::testing::TempDir;
namespace core = codex::core;

namespace {

// 0 when `path` opens (read-only, chosen by Open itself) and `id` and the
// word "walrus" are found; a distinct non-zero code per failing step.
int ReadBack(const std::string& path, const std::string& id) {
  auto store = SqliteSessionStore::Open(path);
  if (!store.ok()) return 10;
  if (!(*store)->read_only()) return 11;
  if (!(*store)->FindSession(id).ok()) return 12;
  codex::storage::SearchQuery q;
  q.text = "walrus";
  auto hits = (*store)->Search(q);
  if (!hits.ok() || hits->size() != 1) return 13;
  if (!(*store)->ListSessions({}).ok()) return 14;
  return 0;
}

}  // namespace

TEST_CASE("Another user reads a read-only CODEX_HOME whose -wal and -shm files are gone") {
  TempDir dir;
  const std::string path = dir.File("sessions.db");
  std::string id;
  {
    auto store = SqliteSessionStore::Open(path);
    REQUIRE(store.ok());
    core::NewSession spec;
    spec.cwd = "/w";
    spec.items = {core::UserMessage("hello walrus")};
    auto s = (*store)->CreateSession(spec);
    REQUIRE(s.ok());
    id = s->id;
  }
  REQUIRE_FALSE(std::filesystem::exists(path + "-wal"));
  REQUIRE_FALSE(std::filesystem::exists(path + "-shm"));
  int code = -1;
  if (::geteuid() == 0) {
    // Root writes anywhere: read as another user (nobody) in a child.
    REQUIRE(::chmod(dir.path().c_str(), 0755) == 0);
    REQUIRE(::chmod(path.c_str(), 0644) == 0);
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      if (::setgroups(0, nullptr) != 0 || ::setgid(65534) != 0 || ::setuid(65534) != 0) _exit(20);
      _exit(ReadBack(path, id));
    }
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    REQUIRE(WIFEXITED(status));
    code = WEXITSTATUS(status);
  } else {
    REQUIRE(::chmod(dir.path().c_str(), 0555) == 0);
    REQUIRE(::chmod(path.c_str(), 0444) == 0);
    code = ReadBack(path, id);
  }
  ::chmod(dir.path().c_str(), 0700);
  ::chmod(path.c_str(), 0600);
  CHECK(code == 0);
  CHECK_FALSE(std::filesystem::exists(path + "-wal"));
  CHECK_FALSE(std::filesystem::exists(path + "-shm"));
}

TEST_CASE("A read-only opening of a file that is not a database names the file") {
  TempDir dir;
  const std::string path = dir.File("junk.db");
  FILE* f = std::fopen(path.c_str(), "w");
  REQUIRE(f);
  std::fputs("this is not sqlite at all, just some text that is long enough to matter\n", f);
  std::fclose(f);
  codex::storage::StoreOptions ro;
  ro.read_only = true;
  auto store = SqliteSessionStore::Open(path, ro);
  REQUIRE_FALSE(store.ok());
  INFO(store.status().ToString());
  CHECK(store.status().message().find(path) != std::string::npos);
}

TEST_CASE("A database this user may not read is named as such, not as missing") {
  TempDir dir;
  const std::string path = dir.File("sessions.db");
  {
    auto store = SqliteSessionStore::Open(path);
    REQUIRE(store.ok());
    core::NewSession spec;
    spec.cwd = "/w";
    spec.items = {core::UserMessage("hello")};
    REQUIRE((*store)->CreateSession(spec).ok());
  }
  // 1: opened; 2: "no database yet"; 3: another error naming the file, the
  // reason and what to do; 4: another error.
  const auto try_open = [&path]() -> int {
    auto store = SqliteSessionStore::Open(path);
    if (store.ok()) return 1;
    const std::string m(store.status().message());
    if (m.find("yet") != std::string::npos) return 2;
    if (m.find(path) != std::string::npos && m.find("Permission denied") != std::string::npos &&
        m.find("CODEX_HOME") != std::string::npos) {
      return 3;
    }
    return 4;
  };
  int code = -1;
  if (::geteuid() == 0) {
    // The database stays 0600 and root's: nobody may see the directory but not the file.
    REQUIRE(::chmod(dir.path().c_str(), 0755) == 0);
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      if (::setgroups(0, nullptr) != 0 || ::setgid(65534) != 0 || ::setuid(65534) != 0) _exit(20);
      _exit(try_open());
    }
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    REQUIRE(WIFEXITED(status));
    code = WEXITSTATUS(status);
  } else {
    REQUIRE(::chmod(path.c_str(), 0) == 0);
    code = try_open();
    ::chmod(path.c_str(), 0600);
  }
  ::chmod(dir.path().c_str(), 0700);
  CHECK(code == 3);
}
