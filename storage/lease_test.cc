// The turn lease, bounded lock waits and read-only opening of
// SqliteSessionStore, with real processes sharing one database file.
#include <SQLiteCpp/SQLiteCpp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <thread>
#include <vector>

#include "base/time.h"
#include "core/item.h"
#include "core/session_lease.h"
#include "storage/sqlite_session_store.h"
#include "testing/manual_clock.h"
#include "testing/store_test_support.h"
#include "testing/temp_dir.h"

using codex::NowMs;
using codex::StatusCode;
using codex::storage::SessionDatabase;
using codex::storage::StoreOptions;
using codex::storage::testing::InsertLease;
using codex::storage::testing::OpenOrDie;
using codex::storage::testing::OpenStore;
using codex::storage::testing::StoreDir;
using codex::testing::TempDir;
namespace core = codex::core;

namespace {

// Runs `child` in a forked process; returns its exit code.
template <typename F>
int InChild(F child) {
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) std::_Exit(child());
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  return WEXITSTATUS(status);
}

constexpr const char* kSession = "01900000-0000-7000-8000-000000000001";

}  // namespace

TEST_CASE("Lease: a second process is refused while the turn runs, and gets it after") {
  StoreDir dir;
  const std::string path = dir.Store("s.db");
  auto store = OpenOrDie(path);
  auto lease = store->AcquireTurnLease(kSession);
  REQUIRE(lease.ok());
  const core::LeaseHolder me = (*lease)->holder();
  CHECK(me.pid == ::getpid());
  auto recorded = store->CurrentLease(kSession);
  REQUIRE(recorded.ok());
  REQUIRE(recorded->has_value());
  CHECK((*recorded)->pid == me.pid);
  CHECK((*recorded)->host == me.host);

  // Another process: refused with the one-line message, reason session_busy.
  const std::string busy_file = dir.File("busy.txt");
  CHECK(InChild([&] {
          auto other = OpenStore(path);
          if (!other.ok()) return 10;
          auto l = (*other)->AcquireTurnLease(kSession);
          if (l.ok()) return 11;
          FILE* f = std::fopen(busy_file.c_str(), "w");
          std::fputs(l.status().message().c_str(), f);
          std::fclose(f);
          return l.status().reason() == codex::core::reason::kSessionBusy ? 0 : 12;
        }) == 0);
  std::string message(std::filesystem::file_size(busy_file), '\0');
  FILE* f = std::fopen(busy_file.c_str(), "r");
  REQUIRE(std::fread(message.data(), 1, message.size(), f) == message.size());
  std::fclose(f);
  const std::string expected_start = std::string("session ") + kSession +
                                     " is busy: a turn is running in codex pid " +
                                     std::to_string(::getpid()) + " on " + me.host + " since ";
  CHECK(message.rfind(expected_start, 0) == 0);
  CHECK(message.substr(expected_start.size() + 5) ==
        std::string("; wait, or run 'codex fork ") + kSession + "'");
  // Another session is not affected.
  CHECK(InChild([&] {
          auto other = OpenStore(path);
          return other.ok() && (*other)->AcquireTurnLease("other-session").ok() ? 0 : 1;
        }) == 0);

  lease->reset();  // released
  recorded = store->CurrentLease(kSession);
  REQUIRE(recorded.ok());
  CHECK_FALSE(recorded->has_value());
  CHECK(InChild([&] {
          auto other = OpenStore(path);
          return other.ok() && (*other)->AcquireTurnLease(kSession).ok() ? 0 : 1;
        }) == 0);
}

TEST_CASE("Lease: a dead holder's lease is taken over") {
  StoreDir dir;
  const std::string path = dir.Store("s.db");
  auto store = OpenOrDie(path);
  const std::string host = core::CurrentProcessHolder().host;

  SECTION("same host, the pid is gone") {
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) std::_Exit(0);
    REQUIRE(::waitpid(pid, nullptr, 0) == pid);  // reaped: the pid no longer runs
    InsertLease(path, kSession, pid, host, NowMs());
    CHECK(store->AcquireTurnLease(kSession).ok());
  }
  SECTION("same host, the pid now runs another process") {
    const pid_t parent = ::getppid();
    InsertLease(path, kSession, parent, host, NowMs(), "1");  // not its start time
    // Checked from a child, so the recorded pid is not the checker's own.
    CHECK(InChild([&] {
            auto other = OpenStore(path);
            return other.ok() && (*other)->AcquireTurnLease(kSession).ok() ? 0 : 1;
          }) == 0);
  }
  SECTION("same host, the holder runs: busy however old its heartbeat") {
    const core::LeaseHolder parent_holder = [] {
      core::LeaseHolder h = core::CurrentProcessHolder();
      return h;
    }();
    InsertLease(path, kSession, parent_holder.pid, host, NowMs() - 3'600'000,
                parent_holder.process_start);
    CHECK(InChild([&] {
            auto other = OpenStore(path);
            if (!other.ok()) return 1;
            auto l = (*other)->AcquireTurnLease(kSession);
            return !l.ok() && l.status().reason() == codex::core::reason::kSessionBusy ? 0 : 2;
          }) == 0);
  }
  SECTION("another host: live while the heartbeat is fresh, taken over when stale") {
    InsertLease(path, kSession, 4242, "some-other-host", NowMs() - 5'000);
    auto l = store->AcquireTurnLease(kSession);
    REQUIRE_FALSE(l.ok());
    CHECK(l.status().reason() == codex::core::reason::kSessionBusy);
    CHECK(l.status().message().find("codex pid 4242 on some-other-host since") !=
          std::string::npos);
    InsertLease(path, kSession, 4242, "some-other-host", NowMs() - core::kLeaseStaleMs - 1'000);
    CHECK(store->AcquireTurnLease(kSession).ok());
  }
}

TEST_CASE("Lease: another host's lease lives exactly kLeaseStaleMs past its last heartbeat") {
  // Time passes without waiting: SQLite judges by the clock it was given
  // (moved forward here); PostgreSQL by the server's clock, so there the
  // row's heartbeat is moved back by as much, which is what a holder that
  // stopped beating that long ago leaves behind.
  codex::testing::ManualClock clock(NowMs());
  StoreOptions options;
  options.clock = &clock;
  StoreDir dir;
  const std::string path = dir.Store("s.db");
  auto store = OpenOrDie(path, options);
  // The clock starts at the real time: the PostgreSQL server (on this host)
  // reads the same wall clock.
  const int64_t beat = clock.NowMs();
  InsertLease(path, kSession, 4242, "some-other-host", beat);
  auto pass = [&](int64_t ms) {
    if (codex::storage::testing::IsPostgres()) {
      codex::storage::testing::QueryInt(
          path,
          "UPDATE session_leases SET heartbeat_at_ms = heartbeat_at_ms - " + std::to_string(ms));
    } else {
      clock.Advance(ms);
    }
  };
  auto busy = [&] {
    auto l = store->AcquireTurnLease(kSession);
    return !l.ok() && l.status().reason() == core::reason::kSessionBusy;
  };
  CHECK(busy());
  pass(core::kLeaseStaleMs - 10'000);
  CHECK(busy());  // 50 s without a heartbeat: still live
  pass(9'000);
  CHECK(busy());  // 59 s
  pass(2'000);    // 61 s: the holder is gone
  auto taken = store->AcquireTurnLease(kSession);
  REQUIRE(taken.ok());
  CHECK((*taken)->holder().host == core::CurrentProcessHolder().host);
  if (!codex::storage::testing::IsPostgres()) {
    CHECK((*taken)->holder().started_at_ms == clock.NowMs());  // stamped by the given clock
  }
}

TEST_CASE("Lease: on SQLite the heartbeat is written with the store's clock") {
  CODEX_SQLITE_ONLY();
  codex::testing::ManualClock clock(5'000);
  StoreOptions options;
  options.clock = &clock;
  options.lease_heartbeat_ms = 20;
  StoreDir dir;
  const std::string path = dir.Store("s.db");
  auto store = OpenOrDie(path, options);
  auto lease = store->AcquireTurnLease(kSession);
  REQUIRE(lease.ok());
  CHECK((*lease)->holder().heartbeat_at_ms == 5'000);
  clock.Advance(3'600'000);
  int64_t beat = 0;
  for (int i = 0; i < 1'000 && beat != 3'605'000; ++i) {  // the next tick writes it (10 s at most)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    auto now = store->CurrentLease(kSession);
    REQUIRE(now.ok());
    REQUIRE(now->has_value());
    beat = (*now)->heartbeat_at_ms;
  }
  CHECK(beat == 3'605'000);
}

TEST_CASE("Lease: the heartbeat advances while the lease is held") {
  StoreDir dir;
  const std::string path = dir.Store("s.db");
  StoreOptions options;
  options.lease_heartbeat_ms = 50;
  auto store = OpenOrDie(path, options);
  auto lease = store->AcquireTurnLease(kSession);
  REQUIRE(lease.ok());
  const int64_t started = (*lease)->holder().heartbeat_at_ms;
  int64_t beat = started;
  for (int i = 0; i < 200 && beat <= started; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    auto now = store->CurrentLease(kSession);
    REQUIRE(now.ok());
    REQUIRE(now->has_value());
    beat = (*now)->heartbeat_at_ms;
  }
  CHECK(beat > started);
}

TEST_CASE("A write meeting a lock waits once, says so once, then fails clearly; reads go on") {
  CODEX_SQLITE_ONLY();
  StoreDir dir;
  const std::string path = dir.Store("s.db");
  std::atomic<int> notices{0};
  StoreOptions options;
  options.busy_timeout_ms = 1'500;
  options.wait_notice_ms = 200;
  std::string holder;
  options.on_wait = [&](const std::string& h) {
    ++notices;
    holder = h;
  };
  auto store = OpenOrDie(path, options);
  core::NewSession spec;
  spec.items = {core::UserMessage("hello")};
  auto s = store->CreateSession(spec);
  REQUIRE(s.ok());

  SQLite::Database locker(path, SQLite::OPEN_READWRITE);
  locker.exec("BEGIN IMMEDIATE");
  // Reads do not wait for the writer: no wait notice.
  core::ListQuery q;
  auto page = store->ListSessions(q);
  REQUIRE(page.ok());
  CHECK(page->sessions.size() == 1);
  auto found = store->FindSession(s->id);
  CHECK(found.ok());
  CHECK(notices == 0);

  const auto t1 = std::chrono::steady_clock::now();
  codex::Status renamed = store->Rename(s->id, "my-name");
  const auto write_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t1)
          .count();
  REQUIRE_FALSE(renamed.ok());
  CHECK(renamed.code() == StatusCode::kUnavailable);
  // The holder is another connection of this test, not a codex: said so, not "codex".
  CHECK(renamed.message().find("another connection of this process kept the database locked") !=
        std::string::npos);
  CHECK(notices == 1);
  CHECK(holder == "another connection of this process");
  CHECK(write_ms >= 1'400);  // it waited for the lock before giving up ...
  // ... once (one notice above), not in a retry loop.
  locker.exec("ROLLBACK");
  CHECK(store->Rename(s->id, "my-name").ok());
}

TEST_CASE("Read-only opening: no file is created or changed, reads work, writes are refused") {
  CODEX_SQLITE_ONLY();
  StoreDir dir;
  const std::string path = dir.Store("s.db");
  StoreOptions ro;
  ro.read_only = true;
  auto missing = OpenStore(path, ro);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == StatusCode::kNotFound);
  CHECK_FALSE(std::filesystem::exists(path));
  std::string id;
  {
    auto store = OpenOrDie(path);
    core::NewSession spec;
    spec.items = {core::UserMessage("hello walrus")};
    id = store->CreateSession(spec)->id;
  }
  auto store = OpenOrDie(path, ro);
  CHECK(store->read_only());
  CHECK(store->FindSession(id).ok());
  codex::storage::SearchQuery q;
  q.text = "walrus";
  CHECK(store->Search(q)->size() == 1);
  CHECK_FALSE(store->Rename(id, "x-name").ok());
  CHECK_FALSE(store->AcquireTurnLease(id).ok());

  if (::geteuid() == 0) {
    WARN("running as root: a chmod'ed CODEX_HOME stays writable; skipping that part");
    return;
  }
  REQUIRE(::chmod(dir.path().c_str(), 0500) == 0);
  REQUIRE(::chmod(path.c_str(), 0400) == 0);
  auto auto_ro = OpenStore(path);
  ::chmod(dir.path().c_str(), 0700);
  ::chmod(path.c_str(), 0600);
  INFO(auto_ro.status().ToString());
  REQUIRE(auto_ro.ok());
  CHECK((*auto_ro)->read_only());
}

namespace {

// A stored session in `cwd` with one user message.
core::SessionInfo MakeSession(SessionDatabase& store, const std::string& text) {
  core::NewSession spec;
  spec.cwd = "/w";
  spec.model = "m";
  spec.items = {core::UserMessage(text)};
  auto s = store.CreateSession(spec);
  REQUIRE(s.ok());
  return *s;
}

codex::storage::PurgeQuery PurgeEverything(bool dry_run) {
  codex::storage::PurgeQuery q;
  q.updated_before_ms = NowMs() + 60'000;
  q.dry_run = dry_run;
  return q;
}

}  // namespace

TEST_CASE("Lease: rm and archive refuse a session a live turn holds; purge skips it") {
  StoreDir dir;
  const std::string path = dir.Store("s.db");
  auto store = OpenOrDie(path);
  const core::SessionInfo held = MakeSession(*store, "held");
  const core::SessionInfo other = MakeSession(*store, "other");
  // The turn runs on its own store object, as another process would.
  auto turn_store = OpenOrDie(path);
  auto lease = turn_store->AcquireTurnLease(held.id);
  REQUIRE(lease.ok());

  auto rm = store->Remove(held.id);
  REQUIRE_FALSE(rm.ok());
  CHECK(rm.status().reason() == codex::core::reason::kSessionBusy);
  CHECK(rm.status().message().rfind("session " + held.id +
                                        " is busy: a turn is running in codex pid " +
                                        std::to_string(::getpid()) + " on ",
                                    0) == 0);
  CHECK(rm.status().message().find("wait for it to end, then run this again") != std::string::npos);
  auto archived = store->Archive(held.id);
  CHECK(archived.reason() == codex::core::reason::kSessionBusy);
  // Nothing changed: the session, its item and its lease are all there.
  auto still = store->FindSession(held.id);
  REQUIRE(still.ok());
  CHECK_FALSE(still->archived);
  CHECK(store->LoadTranscript(*still)->size() == 1);
  CHECK(store->CurrentLease(held.id)->has_value());

  // Purge, dry or not: the held session is skipped and named, the other goes.
  for (bool dry : {true, false}) {
    codex::storage::RemoveStats stats;
    auto purged = store->Purge(PurgeEverything(dry), &stats);
    REQUIRE(purged.ok());
    REQUIRE(purged->size() == 1);
    CHECK((*purged)[0].id == other.id);
    REQUIRE(stats.busy.size() == 1);
    CHECK(stats.busy[0].session.id == held.id);
    CHECK(stats.busy[0].holder.pid == ::getpid());
  }
  CHECK(store->FindSession(held.id).ok());
  CHECK(store->FindSession(other.id).status().code() == StatusCode::kNotFound);

  // Once the turn ends, rm goes through.
  lease->reset();
  CHECK(store->Archive(held.id).ok());
  CHECK(store->Remove(held.id).ok());
  CHECK(store->FindSession(held.id).status().code() == StatusCode::kNotFound);
}

TEST_CASE("Lease: a gone holder's lease does not block rm, archive or purge") {
  StoreDir dir;
  const std::string path = dir.Store("s.db");
  auto store = OpenOrDie(path);
  const std::string host = core::CurrentProcessHolder().host;
  const core::SessionInfo a = MakeSession(*store, "a");
  const core::SessionInfo b = MakeSession(*store, "b");
  const core::SessionInfo c = MakeSession(*store, "c");
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) std::_Exit(0);
  REQUIRE(::waitpid(pid, nullptr, 0) == pid);  // reaped: the pid no longer runs
  InsertLease(path, a.id, pid, host, NowMs());
  InsertLease(path, b.id, 4242, "some-other-host", NowMs() - core::kLeaseStaleMs - 1'000);
  InsertLease(path, c.id, 4242, "some-other-host", NowMs() - 1'000);  // fresh: live
  CHECK(store->Archive(a.id).ok());
  CHECK(store->Remove(a.id).ok());
  CHECK(store->Archive(b.id).ok());
  auto live = store->Remove(c.id);
  CHECK(live.status().reason() == codex::core::reason::kSessionBusy);
  CHECK(live.status().message().find("codex pid 4242 on some-other-host") != std::string::npos);
  codex::storage::RemoveStats stats;
  auto purged = store->Purge(PurgeEverything(false), &stats);
  REQUIRE(purged.ok());
  REQUIRE(purged->size() == 1);
  CHECK((*purged)[0].id == b.id);
  REQUIRE(stats.busy.size() == 1);
  CHECK(stats.busy[0].session.id == c.id);
  CHECK(store->FindSession(c.id).ok());
}

// The check and the delete are one step: a turn that holds the lease never
// sees its session vanish. A second thread takes and holds the lease of each
// session in turn and checks the session is there all along while this one
// removes them all as fast as it can (retrying the busy ones).
TEST_CASE("Lease: no session vanishes while a turn holds its lease (racing rm)") {
  StoreDir dir;
  const std::string path = dir.Store("s.db");
  auto store = OpenOrDie(path);
  constexpr int kSessions = 40;
  std::vector<std::string> ids;
  for (int i = 0; i < kSessions; ++i)
    ids.push_back(MakeSession(*store, "s" + std::to_string(i)).id);
  std::atomic<int> vanished{0}, held_turns{0};
  std::atomic<bool> done{false};
  std::thread turns([&] {
    auto mine = OpenOrDie(path);
    while (!done) {
      for (const std::string& id : ids) {
        auto lease = mine->AcquireTurnLease(id);
        if (!lease.ok()) continue;
        if (!mine->FindSession(id).ok()) continue;  // removed before the lease: fine
        ++held_turns;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        if (!mine->FindSession(id).ok()) ++vanished;  // removed under the lease: the bug
      }
    }
  });
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (held_turns < 5 && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  size_t removed = 0;
  int refused = 0;
  std::vector<bool> gone(ids.size(), false);
  while (removed < ids.size() && std::chrono::steady_clock::now() < until) {
    for (size_t i = ids.size(); i-- > 0;) {  // against the turns' order: they meet
      if (gone[i]) continue;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      auto r = store->Remove(ids[i]);
      if (r.ok()) {
        gone[i] = true;
        ++removed;
      } else {
        REQUIRE(r.status().reason() == codex::core::reason::kSessionBusy);
        ++refused;
      }
    }
  }
  done = true;
  turns.join();
  CHECK(removed == ids.size());
  CHECK(vanished == 0);
  // Whether removals met a held lease depends on the scheduler (on a loaded
  // machine the two threads may take turns); the refusal itself is pinned
  // deterministically by "Lease: rm and archive refuse a session a live
  // turn holds; purge skips it". Here the claim is that none vanished.
  WARN(held_turns.load() << " leases held, " << refused << " removals refused");
}
