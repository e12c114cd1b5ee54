// End-to-end tests of the session_store setting and `codex sessions migrate`
// through the `codex` binary: every command reaches the store the setting
// names (config.toml, CODEX_SESSION_STORE, -c), a bad setting is one line
// that never shows a password, and a migration killed at any moment is
// finished by running it again, with verified counts.
#include <signal.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "storage/open_database.h"
#include "testing/store_test_support.h"
#include "tests/e2e_checks.h"
#include "tests/e2e_support.h"

namespace codex::testing {
namespace {

using e2e::Db;
using e2e::ErrorLines;
using e2e::JsonLines;
using e2e::MakeEnv;
using e2e::Run;
using e2e::SessionIdFromBanner;

std::unique_ptr<storage::SessionDatabase> OpenSqlite(const std::filesystem::path& path) {
  core::StoreLocation loc;
  loc.path = path.string();
  auto db = storage::OpenDatabase(loc);
  INFO(db.status().ToString());
  REQUIRE(db.ok());
  return std::move(*db);
}

// `n` sessions of two turns each, every fifth one forked.
void Seed(storage::SessionDatabase& store, int n) {
  for (int i = 0; i < n; ++i) {
    const core::SessionInfo s = codex::storage::testing::NewQuestionSession(store, i);
    auto ids = store.Append(s.id, s.head_item_id, "t1",
                            {core::AssistantMessage("answer " + std::to_string(i)),
                             core::UserMessage("again " + std::to_string(i)),
                             core::AssistantMessage("done " + std::to_string(i))});
    REQUIRE(ids.ok());
    REQUIRE(store.RecordUsage(ids->back(), 40 + i).ok());
    if (i % 5 == 0) REQUIRE(store.Fork(s.id, 1).ok());
  }
}

int64_t Count(const std::filesystem::path& db_path, const std::string& table) {
  Db db(db_path);
  if (!db.ok()) return 0;
  const std::string v = db.Scalar("SELECT count(*) FROM " + table);
  return v.empty() ? 0 : std::stoll(v);
}

TEST_CASE("store backend: exec, resume, list and fork all use the store session_store names") {
  auto env = MakeEnv(R"(["first answer", "second answer"])");
  const auto other = env->root() / "team" / "shared.db";
  ProcessOptions exec = env->CodexCommand({"exec", "hello there"});
  exec.env["CODEX_SESSION_STORE"] = "sqlite:" + other.string();
  auto first = RunProcess(exec);
  REQUIRE(first.ok());
  INFO(first->err);
  REQUIRE(first->exit_code == 0);
  const std::string id = SessionIdFromBanner(first->err);
  REQUIRE(id.size() == 36);
  CHECK(Count(other, "sessions") == 1);
  // Nothing in $CODEX_HOME/sessions.db.
  CHECK(Count(env->codex_home() / "sessions.db", "sessions") == 0);
  // -c names the same store for resume; list and fork see it.
  auto resumed = Run(*env, {"-c", "session_store=" + other.string(), "exec", "resume", id, "more"});
  INFO(resumed.err);
  CHECK(resumed.exit_code == 0);
  auto list = Run(*env, {"-c", "session_store=sqlite://" + other.string(), "sessions", "list",
                         "--all", "--json"});
  CHECK(list.exit_code == 0);
  CHECK(list.out.find(id) != std::string::npos);
  auto fork = Run(*env, {"-c", "session_store=" + other.string(), "fork", id});
  CHECK(fork.exit_code == 0);
  CHECK(Count(other, "sessions") == 2);
  // Without the setting the default store is empty.
  auto none = Run(*env, {"sessions", "list", "--all"});
  CHECK(none.out.find(id) == std::string::npos);
}

TEST_CASE("store backend: a bad setting is one line naming its source, never the password") {
  auto env = MakeEnv(R"(["unused"])");
  struct Case {
    std::string where;  // "env", "config", "-c"
    std::string value;
  };
  for (const Case& c : {Case{"env", "postgresql://alice:hunter2@db:99999/team"},
                        Case{"config", "postgresql://alice:hunter2@db/team?sslmode=maybe"},
                        Case{"-c", "mysql://alice:hunter2@db/team"},
                        // libpq's password runs to the '@': '?' is part of it, not a query.
                        Case{"-c", "postgresql://alice:hun?ter2@db:99999/team"}}) {
    ProcessOptions opts = env->CodexCommand({"sessions", "list"});
    if (c.where == "env") opts.env["CODEX_SESSION_STORE"] = c.value;
    if (c.where == "config") REQUIRE(env->WriteConfig("session_store = \"" + c.value + "\"").ok());
    if (c.where == "-c")
      opts = env->CodexCommand({"-c", "session_store=" + c.value, "sessions", "list"});
    auto run = RunProcess(opts);
    REQUIRE(run.ok());
    INFO(c.where << ": " << run->err);
    CHECK(run->exit_code == 2);
    auto errors = ErrorLines(run->err);
    REQUIRE(errors.size() == 1);
    CHECK(errors[0].find(c.where == "env" ? "CODEX_SESSION_STORE" : "session_store") !=
          std::string::npos);
    CHECK(run->err.find("ter2") == std::string::npos);
    CHECK(run->out.find("ter2") == std::string::npos);
    // exec refuses the same way, before any request.
    opts.argv = {env->codex_binary(), "exec", "hi"};
    if (c.where == "-c")
      opts.argv = {env->codex_binary(), "-c", "session_store=" + c.value, "exec", "hi"};
    auto exec = RunProcess(opts);
    REQUIRE(exec.ok());
    CHECK(exec->exit_code == 2);
    CHECK(exec->err.find("ter2") == std::string::npos);
    REQUIRE(env->WriteConfig("").ok());
  }
  CHECK(env->server().requests_to("/responses").empty());
}

TEST_CASE("store backend: migrate copies everything, verifies, and is idempotent") {
  auto env = MakeEnv(R"(["unused"])");
  {
    auto src = OpenSqlite(env->codex_home() / "sessions.db");
    Seed(*src, 12);
  }
  const auto dest = env->root() / "copy.db";
  auto run = Run(*env, {"sessions", "migrate", "--to", "sqlite:" + dest.string()});
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  CHECK(run.out.find("migrated 15 sessions (0 already there)") != std::string::npos);
  CHECK(run.out.find("verified: source 15 sessions, 48 items, 0 turns, 0 events; destination 15 "
                     "sessions, 48 items") != std::string::npos);
  CHECK(Count(dest, "sessions") == 15);
  CHECK(Count(dest, "items") == 48);  // forks share their parent's items, as in the source
  auto again = Run(*env, {"sessions", "migrate", "--to", dest.string()});
  CHECK(again.exit_code == 0);
  CHECK(again.out.find("migrated 0 sessions (15 already there)") != std::string::npos);
  CHECK(Count(dest, "items") == 48);
  // And back: --from the copy into a fresh file.
  const auto back = env->root() / "back.db";
  auto reverse = Run(
      *env, {"sessions", "migrate", "--from", dest.string(), "--to", "sqlite:" + back.string()});
  CHECK(reverse.exit_code == 0);
  CHECK(Count(back, "items") == 48);
  // --json: no progress or chatter, one summary object.
  const auto third = env->root() / "third.db";
  auto json = Run(*env, {"sessions", "migrate", "--json", "--to", "sqlite:" + third.string()});
  CHECK(json.exit_code == 0);
  CHECK(json.err.empty());
  REQUIRE(std::count(json.out.begin(), json.out.end(), '\n') == 1);
  auto summary = nlohmann::json::parse(json.out);
  CHECK(summary["copied"] == 15);
  CHECK(summary["already_there"] == 0);
  CHECK(summary["verified"] == true);
  CHECK(summary["destination"]["items"] == 48);
  // The same store on both sides, a bad --to: one line each.
  auto same =
      Run(*env, {"sessions", "migrate", "--to", (env->codex_home() / "sessions.db").string()});
  CHECK(same.exit_code == 2);
  CHECK(ErrorLines(same.err).size() == 1);
  auto bad = Run(*env, {"sessions", "migrate", "--to", "postgresql://u:hunter2@h:0/db"});
  CHECK(bad.exit_code == 2);
  REQUIRE(ErrorLines(bad.err).size() == 1);
  CHECK(ErrorLines(bad.err)[0].find("--to") != std::string::npos);
  CHECK(bad.err.find("hunter2") == std::string::npos);
}

// `sessions` seeded into env's store (and a fifth as many forks: `total`),
// and `codex sessions migrate` of them into a new SQLite file, started.
struct StartedMigrate {
  int total = 0;
  std::filesystem::path dest;
  Result<std::unique_ptr<ChildProcess>> child;
};
StartedMigrate StartMigrate(const CodexTestEnv& env, int sessions) {
  {
    auto src = OpenSqlite(env.codex_home() / "sessions.db");
    Seed(*src, sessions);
  }
  const auto dest = env.root() / "copy.db";
  return {sessions + sessions / 5, dest,
          ChildProcess::Spawn(
              env.CodexCommand({"sessions", "migrate", "--to", "sqlite:" + dest.string()}))};
}

TEST_CASE("store backend: migrate killed mid-copy is finished by running it again") {
  auto env = MakeEnv(R"(["unused"])");
  constexpr int kSessions = 1500;
  auto [total, dest, child] = StartMigrate(*env, kSessions);
  REQUIRE(child.ok());
  // SIGKILL once some sessions are committed (whatever the machine's speed,
  // the kill lands somewhere; the rerun must finish either way).
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  int64_t seen = 0;
  while (std::chrono::steady_clock::now() < until && seen == 0) {
    if (std::filesystem::exists(dest)) seen = Count(dest, "sessions");
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  REQUIRE((*child)->Signal(SIGKILL).ok());
  auto killed = (*child)->Wait(std::chrono::seconds(30));
  REQUIRE(killed.ok());
  const int64_t at_kill = Count(dest, "sessions");
  if (killed->term_signal == SIGKILL) {
    WARN("killed with " << at_kill << " of " << total << " sessions copied");
  } else {
    WARN("the copy finished before the kill landed (" << at_kill << " sessions)");
  }
  auto rerun = Run(*env, {"sessions", "migrate", "--to", "sqlite:" + dest.string()});
  INFO(rerun.err);
  REQUIRE(rerun.exit_code == 0);
  const std::string expect = "migrated " + std::to_string(total - at_kill) + " sessions (" +
                             std::to_string(at_kill) + " already there)";
  CHECK(rerun.out.find(expect) != std::string::npos);
  CHECK(rerun.out.find("destination " + std::to_string(total) + " sessions, " +
                       std::to_string(kSessions * 4) + " items") != std::string::npos);
  CHECK(Count(dest, "sessions") == total);
  CHECK(Count(dest, "items") == kSessions * 4);  // nothing duplicated by the rerun
  Db db(dest);
  CHECK(db.Scalar("PRAGMA integrity_check") == "ok");
}

TEST_CASE("store backend: Ctrl-C stops migrate between sessions and says how far it got") {
  auto env = MakeEnv(R"(["unused"])");
  constexpr int kSessions = 400;  // the copy outlasts the few ms the test takes to lock
  auto [total, dest, child] = StartMigrate(*env, kSessions);
  REQUIRE(child.ok());
  // Once a session is in, a process that is not codex holds the destination's write lock:
  // the copy waits there, and SIGINT lands mid-run whatever the machine's speed.
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  std::unique_ptr<Db> lock;
  while (std::chrono::steady_clock::now() < until && !lock) {
    if (std::filesystem::exists(dest) && Count(dest, "sessions") > 0) {
      lock = std::make_unique<Db>(dest, Db::Access::kReadWrite);
      lock->Query("BEGIN IMMEDIATE");
      if (!lock->error().empty()) lock.reset();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  REQUIRE(lock);
  const int64_t before = Count(dest, "sessions");
  REQUIRE(before < total);
  REQUIRE((*child)->Signal(SIGINT).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  lock->Query("ROLLBACK");
  auto stopped = (*child)->Wait(std::chrono::seconds(60));
  REQUIRE(stopped.ok());
  INFO(stopped->err);
  CHECK(stopped->exit_code == 130);
  const int64_t copied = Count(dest, "sessions");
  CHECK(copied < total);
  const auto errors = ErrorLines(stopped->err);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].find("stopped: interrupted after " + std::to_string(copied) + " of " +
                       std::to_string(total) + " sessions (" + std::to_string(copied) +
                       " copied, 0 already there); what was copied stays, run the same command "
                       "again to finish") != std::string::npos);
  auto rerun = Run(*env, {"sessions", "migrate", "--to", "sqlite:" + dest.string()});
  INFO(rerun.err);
  REQUIRE(rerun.exit_code == 0);
  CHECK(rerun.out.find("migrated " + std::to_string(total - copied) + " sessions (" +
                       std::to_string(copied) + " already there)") != std::string::npos);
}

// Polls until the source holds `text` in an item (the running turn's user
// message is committed; its answer is not).
bool WaitForItem(const std::filesystem::path& db_path, const std::string& text) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < until) {
    if (Count(db_path, "items WHERE CAST(body AS TEXT) LIKE '%" + text + "%'") > 0) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

std::vector<std::string> Texts(storage::SessionDatabase& store, const std::string& id) {
  auto s = store.FindSession(id);
  REQUIRE(s.ok());
  auto h = store.LoadHistory(*s);
  REQUIRE(h.ok());
  std::vector<std::string> out;
  for (const core::StoredItem& it : *h) {
    if (it.item.kind != core::ItemKind::kMessage) continue;
    const std::string text = core::MessageText(it.item);
    if (it.item.role == "user" && text.rfind("<", 0) == 0) continue;
    if (it.item.role == "user" || it.item.role == "assistant") out.push_back(text);
  }
  return out;
}

TEST_CASE("store backend: migrate waits for a running turn and copies it whole") {
  auto env = MakeEnv(R"({"responses": [{"message": "first answer"},
      {"message": "second answer", "delay_ms": 3000}]})");
  auto first = Run(*env, {"exec", "first question"});
  REQUIRE(first.exit_code == 0);
  const std::string id = SessionIdFromBanner(first.err);
  const auto source = env->codex_home() / "sessions.db";
  auto turn = ChildProcess::Spawn(env->CodexCommand({"exec", "resume", id, "second question"}));
  REQUIRE(turn.ok());
  REQUIRE(WaitForItem(source, "second question"));
  // The turn is half-way (its question committed, the answer 3 s away).
  const auto dest = env->root() / "copy.db";
  auto run = Run(*env, {"sessions", "migrate", "--to", "sqlite:" + dest.string()});
  INFO(run.err);
  CHECK(run.exit_code == 0);
  auto ended = (*turn)->Wait(std::chrono::seconds(60));
  REQUIRE(ended.ok());
  CHECK(ended->exit_code == 0);
  auto copy = OpenSqlite(dest);
  CHECK(Texts(*copy, id) == std::vector<std::string>{"first question", "first answer",
                                                     "second question", "second answer"});
}

TEST_CASE("store backend: migrate does not copy half a turn; a later run copies what is there") {
  auto env = MakeEnv(R"({"responses": [{"message": "first answer"},
      {"message": "never sent", "delay_ms": 60000}]})");
  auto first = Run(*env, {"exec", "first question"});
  REQUIRE(first.exit_code == 0);
  const std::string id = SessionIdFromBanner(first.err);
  {
    auto src = OpenSqlite(env->codex_home() / "sessions.db");
    Seed(*src, 3);
  }
  const auto source = env->codex_home() / "sessions.db";
  auto turn = ChildProcess::Spawn(env->CodexCommand({"exec", "resume", id, "second question"}));
  REQUIRE(turn.ok());
  REQUIRE(WaitForItem(source, "second question"));
  const auto dest = env->root() / "copy.db";
  auto run = Run(*env, {"sessions", "migrate", "--to", "sqlite:" + dest.string()});
  INFO(run.err);
  // After its bounded wait (10 s): one line, exit 3; the other sessions are copied.
  CHECK(run.exit_code == 3);
  auto errors = ErrorLines(run.err);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].find("1 session not copied while a turn runs on it") != std::string::npos);
  CHECK(errors[0].find("session " + id + " is busy") != std::string::npos);
  CHECK(errors[0].find("run the same command again") != std::string::npos);
  CHECK(Count(dest, "sessions") == 3 + 1);  // the seeded ones and a fork; not the busy one
  // The turn's process dies mid-turn; its lease goes with it.
  REQUIRE((*turn)->Signal(SIGKILL).ok());
  REQUIRE((*turn)->Wait(std::chrono::seconds(30)).ok());
  auto rerun = Run(*env, {"sessions", "migrate", "--to", "sqlite:" + dest.string()});
  INFO(rerun.err);
  REQUIRE(rerun.exit_code == 0);
  CHECK(rerun.out.find("migrated 1 sessions (4 already there)") != std::string::npos);
  auto copy = OpenSqlite(dest);
  CHECK(Texts(*copy, id) ==
        std::vector<std::string>{"first question", "first answer", "second question"});
}

}  // namespace
}  // namespace codex::testing
