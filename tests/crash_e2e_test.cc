// The promise "a crash at any moment loses nothing that was committed",
// attacked with SIGKILL at the worst moments of the commands that write
// (docs/threat-model.md, "Crashes"). Each kill point is chosen from progress
// the test observes (a file growing in the process's open descriptors, rows
// appearing in the store), never from elapsed time; each case kills at
// several points and then checks what a user would find: the old file or the
// whole new one, every session whole or absent, a rerun that finishes with
// nothing doubled.
#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "storage/open_database.h"
#include "storage/rollout.h"
#include "storage/sqlite_session_store.h"
#include "testing/pg_test_server.h"
#include "testing/skip.h"
#include "testing/store_test_support.h"
#include "tests/e2e_checks.h"
#include "tests/e2e_support.h"

namespace codex::testing {
namespace {

using e2e::Db;
using e2e::MakeEnv;
using e2e::Run;

// The sanitizer build's codex is slower: its big sessions are a third the
// size (the kill points are fractions of the whole, so they still land
// while the file or the transaction is written), which keeps this test well
// inside the ASan job's per-test timeout.
#if defined(__SANITIZE_ADDRESS__)
constexpr int kBigDivisor = 3;
#else
constexpr int kBigDivisor = 1;
#endif

std::unique_ptr<storage::SessionDatabase> OpenSqlite(const std::filesystem::path& path) {
  return storage::testing::OpenOrDie<storage::SqliteSessionStore>(path.string());
}

// A store a case runs against: the SQLite file of CODEX_HOME, or a fresh
// database on the private PostgreSQL server (testing/pg_test_server.h).
struct Store {
  bool postgres = false;
  std::string location;  // the file, or the postgresql:// URL

  // The session_store setting naming it ("" for CODEX_HOME's own file).
  std::string Config() const { return postgres ? "session_store = \"" + location + "\"\n" : ""; }
  std::unique_ptr<storage::SessionDatabase> Open() const {
    core::StoreLocation loc;
    if (postgres) {
      loc.kind = core::StoreLocation::Kind::kPostgres;
      loc.url = location;
    } else {
      loc.path = location;
    }
    auto db = storage::OpenDatabase(loc);
    INFO(db.status().ToString());
    REQUIRE(db.ok());
    return std::move(*db);
  }
  // Rows of `table` (0 while the SQLite file does not exist yet).
  int64_t Count(const std::string& table) const {
    if (postgres) return storage::testing::QueryInt(location, "SELECT count(*) FROM " + table);
    if (!std::filesystem::exists(location)) return 0;
    Db db(location);
    const std::string v = db.ok() ? db.Scalar("SELECT count(*) FROM " + table) : "";
    return v.empty() ? 0 : std::stoll(v);
  }
  // SQLite's own check of the file ("ok"); PostgreSQL checks its own pages.
  std::string Integrity() const {
    if (postgres) return "ok";
    Db db(location);
    return db.Scalar("PRAGMA integrity_check");
  }
};

// A fresh database on the private server, or "" (the part is skipped, saying why).
std::string PgUrl() {
  std::string why;
  storage::testing::PgTestServer* server = storage::testing::PgTestServer::Get(&why);
  if (server == nullptr) {
    SkipPart(why);
    return "";
  }
  return server->NewDatabase();
}

// An environment whose store is CODEX_HOME's SQLite file or a fresh
// PostgreSQL database; nullptr when PostgreSQL cannot run here (skipped).
std::unique_ptr<CodexTestEnv> EnvOn(bool postgres, Store* store) {
  store->postgres = postgres;
  if (postgres) {
    store->location = PgUrl();
    if (store->location.empty()) return nullptr;
  }
  auto env = MakeEnv(R"(["unused"])", store->Config());
  if (!postgres) store->location = (env->codex_home() / "sessions.db").string();
  if (postgres) store->Open();  // the schema, for the test's counts before codex first runs
  return env;
}

// Every session of `store` (live and archived): id -> its item count and
// every item body of its transcript, root to head, in order.
std::map<std::string, std::string> Contents(storage::SessionDatabase& store) {
  std::map<std::string, std::string> out;
  for (const bool archived : {false, true}) {
    core::ListQuery q;
    q.archived = archived;
    q.limit = 1000;
    for (;;) {
      auto page = store.ListSessions(q);
      REQUIRE(page.ok());
      for (const core::SessionInfo& s : page->sessions) {
        auto history = store.LoadHistory(s);
        REQUIRE(history.ok());
        std::string text = std::to_string(history->size()) + " items";
        for (const core::StoredItem& it : *history) text += "\n" + it.item.body;
        out[s.id] = std::move(text);
      }
      if (page->next_cursor.empty()) break;
      q.cursor = page->next_cursor;
    }
  }
  return out;
}

// Each session of `got` is whole: the same transcript as in `whole` (a
// session cut by a kill would have fewer items, or other bodies).
void CheckEachWhole(const std::map<std::string, std::string>& got,
                    const std::map<std::string, std::string>& whole) {
  for (const auto& [id, text] : got) {
    INFO("session " << id);
    auto it = whole.find(id);
    REQUIRE(it != whole.end());
    CHECK(text.substr(0, text.find('\n')) == it->second.substr(0, it->second.find('\n')));
    CHECK(text == it->second);
  }
}

// One session of `items` user/assistant messages of about 2 KB of words each; its id.
std::string SeedBigSession(storage::SessionDatabase& store, int items) {
  core::NewSession spec;
  spec.cwd = "/w";
  spec.items = {core::UserMessage("the first question")};
  spec.turn_id = "t1";
  auto s = store.CreateSession(spec);
  REQUIRE(s.ok());
  std::vector<core::Item> batch;
  uint64_t x = 88172645463325252ULL;  // words from a xorshift: text that does not compress away
  for (int i = 0; i < items; ++i) {
    std::string text = "item " + std::to_string(i);
    while (text.size() < 2000) {
      text += ' ';
      for (int len = 3 + static_cast<int>(x % 8); len > 0; --len) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        text += static_cast<char>('a' + x % 26);
      }
    }
    batch.push_back(i % 2 == 0 ? core::AssistantMessage(text) : core::UserMessage(text));
  }
  REQUIRE(store.Append(s->id, s->head_item_id, "t1", batch).ok());
  return s->id;
}

std::string ReadAll(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// True once `pid` has exited (a zombie not yet reaped counts).
bool Exited(pid_t pid) {
  const std::string stat = ReadAll("/proc/" + std::to_string(pid) + "/stat");
  const size_t paren = stat.rfind(')');
  return paren == std::string::npos || paren + 2 >= stat.size() || stat[paren + 2] == 'Z';
}

// The size of the largest regular file `pid` holds open under `dir` (a file
// being written there, named or not); -1 when none.
int64_t OpenFileSizeUnder(pid_t pid, const std::filesystem::path& dir) {
  const std::string fds = "/proc/" + std::to_string(pid) + "/fd";
  DIR* d = ::opendir(fds.c_str());
  if (d == nullptr) return -1;
  int64_t largest = -1;
  const std::string prefix = dir.string() + "/";
  while (dirent* e = ::readdir(d)) {
    if (e->d_name[0] == '.') continue;
    const std::string link = fds + "/" + e->d_name;
    char target[4096];
    const ssize_t n = ::readlink(link.c_str(), target, sizeof target - 1);
    if (n <= 0) continue;
    if (std::string(target, static_cast<size_t>(n)).rfind(prefix, 0) != 0) continue;
    struct stat st {};
    if (::stat(link.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      largest = std::max<int64_t>(largest, st.st_size);
    }
  }
  ::closedir(d);
  return largest;
}

// The bytes `pid` has written so far (files, the store's socket, pipes):
// "wchar" of /proc/PID/io; -1 once it has gone.
int64_t BytesWritten(pid_t pid) {
  const std::string io = ReadAll("/proc/" + std::to_string(pid) + "/io");
  const size_t at = io.find("wchar: ");
  return at == std::string::npos ? -1 : std::stoll(io.substr(at + 7));
}

// Polls `ready` until it holds, then SIGKILLs `child`; returns true when the
// kill landed on a running process (false: it ended first). Bounded: a
// child that neither gets there nor ends within five minutes fails the test.
bool KillWhen(ChildProcess& child, const std::function<bool()>& ready) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::minutes(5);
  while (!ready()) {
    if (Exited(child.pid())) return false;
    if (std::chrono::steady_clock::now() > until) FAIL("the kill point never came");
    std::this_thread::yield();
  }
  REQUIRE(child.Signal(SIGKILL).ok());
  return true;
}

// Runs codex to the end with room for a slow machine (an ASan build): the
// big exports, imports and copies here take a while.
ProcessResult RunLong(CodexTestEnv& env, std::vector<std::string> args,
                      const std::map<std::string, std::string>& extra_env = {}) {
  ProcessOptions options = env.CodexCommand(std::move(args));
  options.timeout = std::chrono::minutes(10);
  for (const auto& [k, v] : extra_env) options.env[k] = v;
  auto run = RunProcess(options);
  REQUIRE(run.ok());
  REQUIRE_FALSE(run->timed_out);
  return *run;
}

// The names in `dir`.
std::set<std::string> Names(const std::filesystem::path& dir) {
  std::set<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    names.insert(e.path().filename().string());
  }
  return names;
}

// ---------------------------------------------------------------------------
// Door 3: sessions export -o FILE.

TEST_CASE("crash: export killed while writing never leaves a cut file or destroys the old one") {
  auto env = MakeEnv(R"(["unused"])");
  std::string id;
  {
    auto store = OpenSqlite(env->codex_home() / "sessions.db");
    id = SeedBigSession(*store, 12'000 / kBigDivisor);  // about 25 MB of export
  }
  const auto out_dir = env->root() / "exports";
  std::filesystem::create_directories(out_dir);
  for (const std::string format : {"jsonl", "markdown"}) {
    SECTION(format) {
      // The whole export, for comparing.
      const auto reference = env->root() / ("reference." + format);
      auto whole =
          RunLong(*env, {"sessions", "export", id, "--format", format, "-o", reference.string()});
      INFO(whole.err);
      REQUIRE(whole.exit_code == 0);
      const std::string complete = ReadAll(reference);
      REQUIRE(complete.size() > 20'000'000 / kBigDivisor);
      // The user's earlier file under the name, private.
      const auto out = out_dir / ("session." + format);
      const std::string precious = "an earlier export the user keeps\n";
      std::ofstream(out, std::ios::binary) << precious;
      std::filesystem::permissions(
          out, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
      // Kill once the file being written holds 1 byte, a quarter, a half,
      // three quarters of the export.
      int landed = 0;
      for (const int64_t at : {int64_t{1}, static_cast<int64_t>(complete.size() / 4),
                               static_cast<int64_t>(complete.size() / 2),
                               static_cast<int64_t>(complete.size() * 3 / 4)}) {
        auto child = ChildProcess::Spawn(
            env->CodexCommand({"sessions", "export", id, "--format", format, "-o", out.string()}));
        REQUIRE(child.ok());
        const pid_t pid = (*child)->pid();
        const bool killed =
            KillWhen(**child, [&] { return OpenFileSizeUnder(pid, out_dir) >= at; });
        auto ended = (*child)->Wait(std::chrono::seconds(60));
        REQUIRE(ended.ok());
        INFO("kill point " << at << " of " << complete.size() << " bytes");
        if (killed && ended->term_signal == SIGKILL) ++landed;
        // The name holds the old file or the whole export, never a part.
        const std::string now = ReadAll(out);
        CHECK((now == precious || now == complete));
        if (ended->exit_code == 0) CHECK(now == complete);
        // No half-written file left beside it either. (A kill landing in the
        // microseconds between naming the finished temporary and renaming it
        // leaves that whole temporary, ".NAME.tmp-PID-N": tolerated, named.)
        for (const std::string& name : Names(out_dir)) {
          if (name == out.filename().string()) continue;
          INFO("left beside it: " << name);
          CHECK(name.rfind("." + out.filename().string() + ".tmp-", 0) == 0);
          CHECK(ReadAll(out_dir / name) == complete);
          std::filesystem::remove(out_dir / name);
        }
        // The rerun's result must be checked against the old file each time.
        std::ofstream(out, std::ios::binary | std::ios::trunc) << precious;
      }
      WARN(format << ": " << landed << " of 4 kills landed while the export was written");
      auto rerun =
          RunLong(*env, {"sessions", "export", id, "--format", format, "-o", out.string()});
      INFO(rerun.err);
      REQUIRE(rerun.exit_code == 0);
      CHECK(ReadAll(out) == complete);
      // The replaced file keeps the mode the user gave it.
      CHECK((std::filesystem::status(out).permissions() & std::filesystem::perms::all) ==
            (std::filesystem::perms::owner_read | std::filesystem::perms::owner_write));
    }
  }
}

// ---------------------------------------------------------------------------
// Door 1: sessions import, of a directory of many rollouts and of one big one.

// `n` sessions of 2..40 items each, in a SQLite store at `path`, each
// exported as a rollout into `dir`.
void WriteRollouts(const std::filesystem::path& path, const std::filesystem::path& dir, int n) {
  auto store = OpenSqlite(path);
  std::filesystem::create_directories(dir);
  for (int i = 0; i < n; ++i) {
    const auto s = storage::testing::NewQuestionSession(*store, i);
    std::vector<core::Item> more;
    for (int k = 0; k < 1 + i % 39; ++k) {
      more.push_back(k % 2 == 0 ? core::AssistantMessage("answer " + std::to_string(k))
                                : core::UserMessage("more " + std::to_string(k)));
    }
    REQUIRE(store->Append(s.id, s.head_item_id, "t1", more).ok());
    auto text = storage::ExportSession(*store, s.id, storage::ExportFormat::kJsonl);
    REQUIRE(text.ok());
    std::ofstream(dir / (s.id + ".jsonl"), std::ios::binary) << *text;
  }
}

// The whole import of `rollouts` into a fresh SQLite store: what each
// session must look like after any kill and rerun.
std::map<std::string, std::string> ReferenceImport(CodexTestEnv& env,
                                                   const std::filesystem::path& rollouts) {
  const auto reference = env.root() / "reference.db";
  auto done = RunLong(env, {"sessions", "import", rollouts.string()},
                      {{"CODEX_SESSION_STORE", "sqlite:" + reference.string()}});
  INFO(done.err);
  REQUIRE(done.exit_code == 0);
  return Contents(*OpenSqlite(reference));
}

void ImportKilledAndRerun(bool postgres) {
  Store store;
  auto env = EnvOn(postgres, &store);
  if (!env) return;
  constexpr int kRollouts = 240;
  const auto rollouts = env->root() / "rollouts";
  WriteRollouts(env->root() / "source.db", rollouts, kRollouts);
  const auto whole = ReferenceImport(*env, rollouts);
  REQUIRE(whole.size() == kRollouts);
  // Killed once the store holds 1 session, then (a rerun) half of them.
  int landed = 0;
  for (const int64_t at : {int64_t{1}, int64_t{kRollouts / 2}}) {
    auto child = ChildProcess::Spawn(env->CodexCommand({"sessions", "import", rollouts.string()}));
    REQUIRE(child.ok());
    if (KillWhen(**child, [&] { return store.Count("sessions") >= at; })) ++landed;
    REQUIRE((*child)->Wait(std::chrono::seconds(60)).ok());
    INFO("killed at " << at << " sessions");
    CHECK(store.Integrity() == "ok");
    CheckEachWhole(Contents(*store.Open()), whole);
  }
  WARN(landed << " of 2 kills landed mid-import (" << store.Count("sessions") << " of " << kRollouts
              << " imported)");
  const int64_t before = store.Count("sessions");
  auto rerun = RunLong(*env, {"sessions", "import", rollouts.string()});
  INFO(rerun.err);
  REQUIRE(rerun.exit_code == 0);
  CHECK(rerun.err.find(std::to_string(kRollouts - before) + " imported, " + std::to_string(before) +
                       " already present, 0 failed") != std::string::npos);
  CHECK(store.Integrity() == "ok");
  CHECK(Contents(*store.Open()) == whole);  // every session, once, whole
  CHECK(store.Count("sessions") == kRollouts);
}

void ImportBigKilledAndRerun(bool postgres) {
  Store store;
  auto env = EnvOn(postgres, &store);
  if (!env) return;
  const auto rollouts = env->root() / "big";
  std::filesystem::create_directories(rollouts);
  std::string id;
  {
    auto source = OpenSqlite(env->root() / "source.db");
    // 25 MB; 8 MB on PostgreSQL, whose search index of so many distinct words is large.
    id = SeedBigSession(*source, (postgres ? 4'000 : 12'000) / kBigDivisor);
    auto text = storage::ExportSession(*source, id, storage::ExportFormat::kJsonl);
    REQUIRE(text.ok());
    std::ofstream(rollouts / "big.jsonl", std::ios::binary) << *text;
  }
  const auto whole = ReferenceImport(*env, rollouts);
  REQUIRE(whole.size() == 1);
  // How far the one transaction has gone: on SQLite the bytes codex wrote
  // (its WAL), out of about the rollout's size; on PostgreSQL the growth of
  // the database's files (rows written, not yet committed), out of what a
  // whole import into a scratch database grew it by.
  auto database_bytes = [](const std::string& url) {
    return storage::testing::QueryInt(url, "SELECT pg_database_size(current_database())");
  };
  int64_t full = static_cast<int64_t>(std::filesystem::file_size(rollouts / "big.jsonl"));
  if (postgres) {
    Store scratch{true, PgUrl()};
    scratch.Open();
    const int64_t base = database_bytes(scratch.location);
    auto done = RunLong(*env, {"sessions", "import", rollouts.string()},
                        {{"CODEX_SESSION_STORE", scratch.location}});
    REQUIRE(done.exit_code == 0);
    full = database_bytes(scratch.location) - base;
  }
  // Killed at a tenth, a third, two thirds of the way.
  int landed = 0;
  for (const int64_t at : {full / 10, full / 3, full * 2 / 3}) {
    const int64_t base = postgres ? database_bytes(store.location) : 0;
    auto child = ChildProcess::Spawn(env->CodexCommand({"sessions", "import", rollouts.string()}));
    REQUIRE(child.ok());
    const pid_t pid = (*child)->pid();
    const bool killed = KillWhen(**child, [&] {
      return (postgres ? database_bytes(store.location) - base : BytesWritten(pid)) >= at;
    });
    auto ended = (*child)->Wait(std::chrono::seconds(60));
    REQUIRE(ended.ok());
    if (killed && ended->term_signal == SIGKILL) ++landed;
    INFO("killed after " << at << " of " << full << " bytes");
    CHECK(store.Integrity() == "ok");
    // Absent, or whole: never listed with part of its transcript.
    const auto now = Contents(*store.Open());
    CheckEachWhole(now, whole);
    if (ended->exit_code == 0) CHECK(now == whole);
  }
  WARN(landed << " of 3 kills landed mid-import of one rollout (" << full << " bytes)");
  auto rerun = RunLong(*env, {"sessions", "import", rollouts.string()});
  INFO(rerun.err);
  REQUIRE(rerun.exit_code == 0);
  CHECK(store.Integrity() == "ok");
  CHECK(Contents(*store.Open()) == whole);
  CHECK(store.Count("sessions") == 1);
}

TEST_CASE("crash: import of one big rollout killed mid-transaction, then rerun: once and whole") {
  SECTION("sqlite") { ImportBigKilledAndRerun(false); }
  SECTION("postgresql") { ImportBigKilledAndRerun(true); }
}

TEST_CASE("crash: import of a directory killed twice, then rerun: every session once and whole") {
  SECTION("sqlite") { ImportKilledAndRerun(false); }
  SECTION("postgresql") { ImportKilledAndRerun(true); }
}

// ---------------------------------------------------------------------------
// Door 2: sessions migrate, SQLite to PostgreSQL and back
// (store_backend_e2e_test kills SQLite to SQLite).

// Kills `migrate --from FROM --to TO` at 1 and at half the sessions seen in
// `to`, then runs it to the end; `to` then holds what `from` holds.
void MigrateKilledAndRerun(CodexTestEnv& env, const Store& from, const Store& to,
                           const std::map<std::string, std::string>& whole) {
  const std::string to_arg = to.postgres ? to.location : "sqlite:" + to.location;
  const std::string from_arg = from.postgres ? from.location : "sqlite:" + from.location;
  const std::vector<std::string> args = {"sessions", "migrate", "--from", from_arg, "--to", to_arg};
  const auto total = static_cast<int64_t>(whole.size());
  int landed = 0;
  for (const int64_t at : {int64_t{1}, total / 2}) {
    auto child = ChildProcess::Spawn(env.CodexCommand(args));
    REQUIRE(child.ok());
    const bool killed = KillWhen(**child, [&] { return to.Count("sessions") >= at; });
    auto ended = (*child)->Wait(std::chrono::seconds(60));
    REQUIRE(ended.ok());
    if (killed && ended->term_signal == SIGKILL) ++landed;
    INFO("killed at " << at << " sessions");
    CHECK(to.Integrity() == "ok");
    CheckEachWhole(Contents(*to.Open()), whole);
    CHECK(Contents(*from.Open()) == whole);  // the source untouched
  }
  WARN(landed << " of 2 kills landed mid-migration (" << to.Count("sessions") << " of " << total
              << ")");
  const int64_t there = to.Count("sessions");
  auto rerun = RunLong(env, args);
  INFO(rerun.err);
  REQUIRE(rerun.exit_code == 0);
  CHECK(rerun.out.find("migrated " + std::to_string(total - there) + " sessions (" +
                       std::to_string(there) + " already there)") != std::string::npos);
  CHECK(to.Integrity() == "ok");
  CHECK(Contents(*to.Open()) == whole);  // none lost, none doubled
  CHECK(to.Count("sessions") == total);
}

TEST_CASE("crash: migrate to PostgreSQL and back killed mid-copy: the rerun finishes, both open") {
  Store pg{true, PgUrl()};
  if (pg.location.empty()) return;
  pg.Open();  // the schema, for the counts before codex first runs
  auto env = MakeEnv(R"(["unused"])");
  Store sqlite{false, (env->codex_home() / "sessions.db").string()};
  {
    auto store = sqlite.Open();
    for (int i = 0; i < 400; ++i) {
      const auto s = storage::testing::NewQuestionSession(*store, i);
      REQUIRE(store
                  ->Append(s.id, s.head_item_id, "t1",
                           {core::AssistantMessage("answer " + std::to_string(i)),
                            core::UserMessage("again"), core::AssistantMessage("done")})
                  .ok());
      if (i % 5 == 0) REQUIRE(store->Fork(s.id, 1).ok());  // forks share their parent's items
      if (i % 7 == 0) REQUIRE(store->Archive(s.id).ok());
    }
  }
  const auto whole = Contents(*sqlite.Open());
  REQUIRE(whole.size() == 480);
  SECTION("sqlite to postgresql") { MigrateKilledAndRerun(*env, sqlite, pg, whole); }
  SECTION("postgresql to sqlite") {
    REQUIRE(RunLong(*env, {"sessions", "migrate", "--to", pg.location}).exit_code == 0);
    REQUIRE(Contents(*pg.Open()) == whole);
    Store back{false, (env->root() / "back.db").string()};
    MigrateKilledAndRerun(*env, pg, back, whole);
  }
}

// ---------------------------------------------------------------------------
// Door 4: fork, sessions rm and purge killed inside their transaction.

// True while another connection to `url` has a write transaction under way
// (it has written a row: its transaction id is assigned).
bool WriteUnderWay(const std::string& url) {
  return storage::testing::QueryInt(
             url,
             "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
             " AND pid <> pg_backend_pid() AND backend_xid IS NOT NULL") > 0;
}

// Kills `args` at each of `points` (SQLite: bytes codex has written, its
// WAL; PostgreSQL: once its write transaction is under way), checking after
// each kill that the store holds `before` (rolled back) or `after` (the kill
// came after the commit), never anything between.
int KillAt(CodexTestEnv& env, const Store& store, const std::vector<std::string>& args,
           const std::vector<int64_t>& points, const std::map<std::string, std::string>& before,
           const std::map<std::string, std::string>& after) {
  int landed = 0;
  for (const int64_t at : points) {
    auto child = ChildProcess::Spawn(env.CodexCommand(args));
    REQUIRE(child.ok());
    const pid_t pid = (*child)->pid();
    const bool killed = KillWhen(**child, [&] {
      return store.postgres ? WriteUnderWay(store.location) : BytesWritten(pid) >= at;
    });
    auto ended = (*child)->Wait(std::chrono::seconds(60));
    REQUIRE(ended.ok());
    INFO("killed at " << at << "; exit " << ended->exit_code << ": " << ended->err);
    CHECK(store.Integrity() == "ok");
    const auto now = Contents(*store.Open());
    CHECK((now == before || now == after));
    if (now == after) break;  // done: the next points have nothing left to cut
    if (killed && ended->term_signal == SIGKILL) ++landed;
  }
  return landed;
}

void RmAndPurgeKilled(bool postgres) {
  Store store;
  auto env = EnvOn(postgres, &store);
  if (!env) return;
  std::string parent, fork;
  {
    auto db = store.Open();
    // A parent whose second turn holds 3,000 items of 2 KB, forked after its
    // first turn (the fork shares that turn's items), and 300 small sessions.
    core::NewSession spec;
    spec.cwd = env->workdir().string();
    spec.items = {core::UserMessage("first question")};
    spec.turn_id = "t1";
    auto s = db->CreateSession(spec);
    REQUIRE(s.ok());
    auto head = db->Append(s->id, s->head_item_id, "t1", {core::AssistantMessage("first answer")});
    REQUIRE(head.ok());
    parent = s->id;
    auto f = db->Fork(parent, 1);
    REQUIRE(f.ok());
    fork = f->id;
    std::vector<core::Item> big;
    for (int i = 0; i < 3'000; ++i) {
      big.push_back(core::UserMessage("turn two " + std::to_string(i) + std::string(2'000, 'x')));
    }
    REQUIRE(db->Append(parent, head->back(), "t2", big).ok());
    for (int i = 0; i < 300; ++i) {
      spec.items = {core::UserMessage("small " + std::to_string(i))};
      REQUIRE(db->CreateSession(spec).ok());
    }
  }
  auto whole = Contents(*store.Open());
  REQUIRE(whole.size() == 302);
  // fork --at-turn 1, killed once it has written (SQLite: a page of WAL;
  // PostgreSQL: its transaction under way): no fork, or a whole one whose
  // transcript is the parent's first turn, as the earlier fork's is.
  for (const int64_t at : {int64_t{1}, int64_t{4096}}) {
    auto child = ChildProcess::Spawn(env->CodexCommand({"fork", parent, "--at-turn", "1"}));
    REQUIRE(child.ok());
    const pid_t pid = (*child)->pid();
    KillWhen(**child, [&] {
      return store.postgres ? WriteUnderWay(store.location) : BytesWritten(pid) >= at;
    });
    REQUIRE((*child)->Wait(std::chrono::seconds(60)).ok());
    CHECK(store.Integrity() == "ok");
    for (const auto& [id, text] : Contents(*store.Open())) {
      INFO("session " << id);
      if (whole.count(id)) {
        CHECK(text == whole.at(id));
      } else {
        CHECK(text == whole.at(fork));  // a new fork, whole
        REQUIRE(Run(*env, {"sessions", "rm", id}).exit_code == 0);
      }
    }
  }
  // rm of the parent, killed while it deletes its 3,000 items.
  auto without_parent = whole;
  without_parent.erase(parent);
  int landed =
      KillAt(*env, store, {"sessions", "rm", parent}, {64 << 10, 1 << 20}, whole, without_parent);
  WARN(landed << " of 2 kills landed inside sessions rm and left it undone");
  if (Contents(*store.Open()) == whole) {
    auto rm = Run(*env, {"sessions", "rm", parent});
    INFO(rm.err);
    REQUIRE(rm.exit_code == 0);
  }
  whole = without_parent;
  CHECK(Contents(*store.Open()) == whole);  // the fork keeps the items it shares
  // purge of everything, killed inside its one transaction.
  const std::vector<std::string> purge = {"sessions",     "purge", "--all",
                                          "--older-than", "0s",    "--yes"};
  landed = KillAt(*env, store, purge, {16 << 10, 256 << 10}, whole, {});
  WARN(landed << " of 2 kills landed inside sessions purge and left it undone");
  auto purged = Run(*env, purge);
  INFO(purged.err);
  REQUIRE(purged.exit_code == 0);
  CHECK(store.Integrity() == "ok");
  CHECK(Contents(*store.Open()).empty());
  CHECK(store.Count("items") == 0);  // nothing left that no session reaches
}

TEST_CASE("crash: fork, rm and purge killed inside their transaction leave each session whole") {
  SECTION("sqlite") { RmAndPurgeKilled(false); }
  SECTION("postgresql") { RmAndPurgeKilled(true); }
}

// ---------------------------------------------------------------------------
// Door 5 on PostgreSQL: exec killed in its tool loop (SQLite:
// store_e2e_test's 100 kills, parallel_calls_e2e_test).

TEST_CASE("crash: exec on PostgreSQL killed while a call runs resumes with every call answered") {
  const std::string url = PgUrl();
  if (url.empty()) return;
  // The first call ends and its output is committed; the second never ends.
  const std::string script = R"({"responses": [
    {"output": [{"shell": ["sh", "-c", "echo first done"]}]},
    {"output": [{"shell": ["sh", "-c", "echo > started; exec sleep 60"], "timeout_ms": 120000}]},
    "after the crash"]})";
  auto env = MakeEnv(script, "session_store = \"" + url + "\"\n");
  auto child =
      ChildProcess::Spawn(env->CodexCommand({"exec", "-s", "workspace-write", "do two things"}));
  REQUIRE(child.ok());
  REQUIRE(KillWhen(**child, [&] { return std::filesystem::exists(env->workdir() / "started"); }));
  auto killed = (*child)->Wait(std::chrono::seconds(60));
  REQUIRE(killed.ok());
  REQUIRE(killed->term_signal == SIGKILL);
  const std::string id = e2e::SessionIdFromBanner(killed->err);
  REQUIRE(id.size() == 36);
  // The same host, the holder's pid gone: the lease is taken at once.
  auto resumed = Run(*env, {"exec", "resume", id, "go on"});
  INFO(resumed.err);
  REQUIRE(resumed.exit_code == 0);
  CHECK(resumed.out == "after the crash\n");
  const auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 3);
  const Json input = requests[2].InputItems();
  INFO(input.dump().substr(0, 3000));
  CHECK(e2e::PairingProblem(input) == "");  // every call has its output, as Codex repairs it
  // The committed output kept as it was; the cut call answered.
  std::vector<std::string> outputs;
  for (const Json& item : input) {
    if (item.value("type", "") != "function_call_output") continue;
    outputs.push_back(e2e::OutputFor(input, item.value("call_id", "")));
  }
  REQUIRE(outputs.size() == 2);
  CHECK(outputs[0].find("first done") != std::string::npos);
  CHECK(outputs[1].find("first done") == std::string::npos);
  const std::vector<std::string> users = UserTexts(requests[2]);
  CHECK(Contains(users, "do two things"));
  CHECK(users.back() == "go on");
}

// ---------------------------------------------------------------------------
// A PostgreSQL store's schema made by a first run killed again and again
// (a SQLite store's first start: storage/new_store_test.cc).

TEST_CASE("crash: a new PostgreSQL store's first runs killed mid-migration, then it opens") {
  const std::string url = PgUrl();
  if (url.empty()) return;
  CodexTestEnvOptions options;
  options.extra_config = "session_store = \"" + url + "\"\n";
  auto env = MakeEnv(R"(["stored"])", options);
  auto versions = [&] {
    const bool made = storage::testing::QueryInt(url,
                                                 "SELECT count(*) FROM pg_tables WHERE tablename ="
                                                 " 'schema_migrations'") == 1;
    return made ? storage::testing::QueryInt(url, "SELECT count(*) FROM schema_migrations") : 0;
  };
  auto highest = [&] {
    return versions() == 0
               ? 0
               : storage::testing::QueryInt(url, "SELECT max(version) FROM schema_migrations");
  };
  // Run N is killed once N migrations are committed and a transaction of
  // the next has written; each run finds the ones before it whole.
  int landed = 0;
  for (int round = 0; round < 12; ++round) {
    auto child = ChildProcess::Spawn(env->CodexCommand({"sessions", "list", "--all"}));
    REQUIRE(child.ok());
    const bool killed =
        KillWhen(**child, [&] { return versions() >= round && WriteUnderWay(url); });
    auto ended = (*child)->Wait(std::chrono::seconds(60));
    REQUIRE(ended.ok());
    INFO("round " << round << ": " << ended->err);
    if (!killed || ended->term_signal != SIGKILL) {
      CHECK(ended->exit_code == 0);
      break;  // the schema was already whole
    }
    ++landed;
    CHECK(versions() == highest());  // 1..N applied, none half
  }
  WARN(landed << " first runs killed while the schema was being made (" << versions()
              << " migrations applied then)");
  auto made = Run(*env, {"exec", "hello"});
  INFO(made.err);
  CHECK(made.exit_code == 0);
  CHECK(made.out == "stored\n");
  CHECK(storage::testing::QueryInt(url, "SELECT count(*) FROM sessions") == 1);
}

}  // namespace
}  // namespace codex::testing
