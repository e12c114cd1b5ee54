// End-to-end tests of the turn lease through the `codex` binary: eight
// processes continuing one session at once, SIGKILL of the holder mid-turn
// (the next run takes the lease over), the heartbeat while a long tool runs,
// the exact refusal line, and a session created only with its first message.
#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e_checks.h"
#include "tests/e2e_support.h"

namespace codex::testing {
namespace {

using e2e::ChainSql;
using e2e::Db;
using e2e::SessionIdFromBanner;

using e2e::MakeEnv;
using e2e::Run;
using e2e::WaitForRequests;

// The refusal line for `id`, any pid, host and time.
std::regex BusyLine(const std::string& id) {
  return std::regex("error: session " + id +
                    " is busy: a turn is running in codex pid [0-9]+ on [^ ]+ since "
                    "[0-2][0-9]:[0-5][0-9]; wait, or run 'codex fork " +
                    id + "'\n");
}

// (role, text) of the messages on the session's chain, oldest first,
// injected context left out.
std::vector<std::pair<std::string, std::string>> ChainMessages(Db& db, const std::string& id) {
  auto rows = db.Query(
      "SELECT i.role, json_extract(codex_text(i.body), '$.content[0].text') FROM (" + ChainSql(id) +
      ") c JOIN items i ON i.id = c.id WHERE i.kind = 'message' ORDER BY c.id");
  REQUIRE(db.error().empty());
  std::vector<std::pair<std::string, std::string>> out;
  for (auto& r : rows) {
    if (r[0] == "user" && r[1].rfind("<", 0) == 0) continue;  // context
    if (r[0] != "user" && r[0] != "assistant") continue;
    out.emplace_back(r[0], r[1]);
  }
  return out;
}

}  // namespace

TEST_CASE("lease: 8 concurrent 'exec resume' of one session: whole turns, refusals exit 3") {
  constexpr int kProcs = 8;
  auto env = MakeEnv(R"({"responses": ["first answer"],
                         "default": {"message": "answer {{n}}", "delay_ms": 4000}})");
  auto first = Run(*env, {"exec", "first"});
  REQUIRE(first.exit_code == 0);
  const std::string id = SessionIdFromBanner(first.err);
  REQUIRE(id.size() == 36);

  std::vector<std::unique_ptr<ChildProcess>> procs;
  for (int i = 0; i < kProcs; ++i) {
    auto p = ChildProcess::Spawn(
        env->CodexCommand({"exec", "resume", id, "same session " + std::to_string(i)}));
    REQUIRE(p.ok());
    procs.push_back(std::move(*p));
  }
  std::set<std::string> winners, losers;
  for (int i = 0; i < kProcs; ++i) {
    auto done = procs[static_cast<size_t>(i)]->Wait(std::chrono::seconds(120));
    REQUIRE(done.ok());
    INFO("process " << i << " exit " << done->exit_code << "\nstderr: " << done->err);
    const std::string prompt = "same session " + std::to_string(i);
    if (done->exit_code == 0) {
      winners.insert(prompt);
      CHECK_THAT(done->out, Catch::StartsWith("answer "));
    } else {
      CHECK(done->exit_code == 3);
      CHECK(std::regex_match(done->err, BusyLine(id)));  // exactly one line
      CHECK(done->out.empty());
      losers.insert(prompt);
    }
  }
  CHECK(winners.size() >= 1);
  CHECK(losers.size() >= 1);  // the 4 s answer keeps the lease busy while the others start
  WARN(winners.size() << " processes ran their turn, " << losers.size() << " were refused");

  // No request carries a refused process's prompt or another process's
  // unfinished turn: in every request each earlier user message is answered.
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 1 + winners.size());
  for (size_t r = 1; r < requests.size(); ++r) {
    std::vector<std::pair<std::string, std::string>> seq;
    for (const Json& item : ItemsOfType(requests[r], "message")) {
      const std::string role = item.value("role", "");
      if (role != "user" && role != "assistant") continue;
      const std::string text = item["content"][0].value("text", "");
      if (role == "user" && text.rfind("<", 0) == 0) continue;
      seq.emplace_back(role, text);
    }
    REQUIRE(!seq.empty());
    CHECK(seq.back().first == "user");
    CHECK(winners.count(seq.back().second) == 1);
    for (size_t k = 0; k + 1 < seq.size(); ++k) {
      INFO("request " << r << " item " << k << ": " << seq[k].second);
      CHECK(losers.count(seq[k].second) == 0);
      if (seq[k].first == "user") CHECK(seq[k + 1].first == "assistant");
    }
  }

  Db db(env->codex_home() / "sessions.db");
  REQUIRE(db.ok());
  CHECK(db.Scalar("PRAGMA integrity_check") == "ok");
  // The transcript: whole turns only, every winner's exactly once, no loser's.
  auto chain = ChainMessages(db, id);
  std::set<std::string> seen;
  for (size_t k = 0; k < chain.size(); ++k) {
    if (chain[k].first != "user") continue;
    INFO(chain[k].second);
    REQUIRE(k + 1 < chain.size());
    CHECK(chain[k + 1].first == "assistant");
    CHECK(seen.insert(chain[k].second).second);
  }
  seen.erase("first");
  CHECK(seen == winners);
  CHECK(db.Scalar("SELECT count(*) FROM session_leases") == "0");
}

TEST_CASE("lease: the holder killed mid-turn; the next run takes the lease over") {
  auto env = MakeEnv(R"({"responses": ["first answer", {"message": "never", "delay_ms": 60000},
                                       "after the crash"]})");
  auto first = Run(*env, {"exec", "first"});
  REQUIRE(first.exit_code == 0);
  const std::string id = SessionIdFromBanner(first.err);

  auto holder = ChildProcess::Spawn(env->CodexCommand({"exec", "resume", id, "slow"}));
  REQUIRE(holder.ok());
  REQUIRE(WaitForRequests(*env, 2));
  // While it runs: refused, naming its pid.
  auto refused = Run(*env, {"exec", "resume", id, "too early"});
  CHECK(refused.exit_code == 3);
  CHECK(std::regex_match(refused.err, BusyLine(id)));
  CHECK(refused.err.find("codex pid " + std::to_string((*holder)->pid()) + " on ") !=
        std::string::npos);
  CHECK(env->server().requests_to("/responses").size() == 2);

  REQUIRE((*holder)->Signal(SIGKILL).ok());
  auto killed = (*holder)->Wait(std::chrono::seconds(60));
  REQUIRE(killed.ok());
  CHECK(killed->term_signal == SIGKILL);
  {
    Db db(env->codex_home() / "sessions.db");
    CHECK(db.Scalar("SELECT pid FROM session_leases WHERE session_id = '" + id + "'") ==
          std::to_string((*holder)->pid()));
  }
  auto after = Run(*env, {"exec", "resume", id, "after"});
  INFO(after.err);
  CHECK(after.exit_code == 0);
  CHECK(after.out == "after the crash\n");
  Db db(env->codex_home() / "sessions.db", Db::Access::kReadWrite);
  CHECK(db.Scalar("PRAGMA integrity_check") == "ok");
  CHECK(db.Scalar("SELECT count(*) FROM session_leases") == "0");
}

TEST_CASE("lease: the heartbeat goes on while a long tool runs") {
  auto env = MakeEnv(R"([
    "first answer",
    {"output": [{"shell": ["sh", "-c", "while [ ! -e release ]; do sleep 0.05; done; echo ok"],
                 "timeout_ms": 120000}]},
    "tool done"])");
  auto first = Run(*env, {"exec", "first"});
  REQUIRE(first.exit_code == 0);
  const std::string id = SessionIdFromBanner(first.err);
  auto holder = ChildProcess::Spawn(
      env->CodexCommand({"exec", "--full-auto", "resume", id, "run the long tool"}));
  REQUIRE(holder.ok());
  REQUIRE(WaitForRequests(*env, 2));
  // The heartbeat (every 5 s) moves past the start while the tool blocks.
  bool advanced = false;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!advanced && std::chrono::steady_clock::now() < until) {
    Db db(env->codex_home() / "sessions.db");
    auto row = db.Query("SELECT started_at_ms, heartbeat_at_ms FROM session_leases");
    if (row.size() == 1) advanced = std::stoll(row[0][1]) > std::stoll(row[0][0]);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  CHECK(advanced);
  std::ofstream(env->workdir() / "release").put('\n');
  auto done = (*holder)->Wait(std::chrono::seconds(60));
  REQUIRE(done.ok());
  INFO(done->err);
  CHECK(done->exit_code == 0);
  CHECK(done->out == "tool done\n");
}

TEST_CASE("sessions: starting and failing before any message stores nothing") {
  auto env = MakeEnv(R"(["only answer"])");
  // No prompt: refused before anything is stored.
  auto none = Run(*env, {"exec", ""});
  CHECK(none.exit_code == 2);
  // Interactive without a terminal: no input at all, then EOF.
  auto quit = env->RunCodex({}, std::string());
  REQUIRE(quit.ok());
  CHECK(quit->exit_code == 0);
  CHECK(quit->err.find("resume this session") == std::string::npos);
  auto slash = env->RunCodex({}, std::string("/new\n/status\n"));
  REQUIRE(slash.ok());
  CHECK(slash->exit_code == 0);
  CHECK(slash->err.find("resume this session") == std::string::npos);
  {
    Db db(env->codex_home() / "sessions.db");
    CHECK(db.Scalar("SELECT count(*) FROM sessions") == "0");
    CHECK(db.Scalar("SELECT count(*) FROM items") == "0");
  }
  auto last = Run(*env, {"exec", "resume", "--last", "--existing", "anything"});
  CHECK(last.exit_code == 4);
  auto real = Run(*env, {"exec", "a real question"});
  REQUIRE(real.exit_code == 0);
  auto list = Run(*env, {"sessions", "list", "--all", "--json"});
  CHECK(e2e::JsonLines(list.out).size() == 1);
}

}  // namespace codex::testing

namespace codex::testing {
namespace {

// The refusal line of rm / archive for `id`, any pid, host and time.
std::regex RemovalBusyLine(const std::string& id, const std::string& advice) {
  return std::regex("error: session " + id +
                    " is busy: a turn is running in codex pid [0-9]+ on [^ ]+ since "
                    "[0-2][0-9]:[0-5][0-9]; " +
                    advice + "\n");
}

constexpr const char* kLongToolScript = R"([
    "first answer",
    "other answer",
    {"output": [{"shell": ["sh", "-c", "while [ ! -e release ]; do sleep 0.05; done; echo ok"],
                 "timeout_ms": 120000}]},
    "tool done"])";

}  // namespace

TEST_CASE("lease: sessions rm, archive and purge refuse a session a running turn holds") {
  auto env = MakeEnv(kLongToolScript);
  auto first = Run(*env, {"exec", "first"});
  REQUIRE(first.exit_code == 0);
  const std::string id = SessionIdFromBanner(first.err);
  auto second = Run(*env, {"exec", "another session"});
  REQUIRE(second.exit_code == 0);
  const std::string other = SessionIdFromBanner(second.err);
  // A real turn, held open mid-turn by its tool (its call already committed).
  auto holder = ChildProcess::Spawn(
      env->CodexCommand({"exec", "--full-auto", "resume", id, "run the long tool"}));
  REQUIRE(holder.ok());
  REQUIRE(WaitForRequests(*env, 3));

  auto rm = Run(*env, {"sessions", "rm", id});
  CHECK(rm.exit_code == 3);
  CHECK(std::regex_match(rm.err, RemovalBusyLine(id, "wait for it to end, then run this again")));
  CHECK(rm.out.empty());
  CHECK(rm.err.find("codex pid " + std::to_string((*holder)->pid()) + " on ") != std::string::npos);
  auto archive = Run(*env, {"sessions", "archive", id.substr(0, 13)});
  CHECK(archive.exit_code == 3);
  CHECK(std::regex_match(archive.err,
                         RemovalBusyLine(id, "wait for it to end, then run this again")));
  // The dry run names what it would skip; the purge removes the other
  // session, skips the held one with one line, and exits 3.
  auto dry = Run(*env, {"sessions", "purge", "--older-than", "0s", "--dry-run"});
  CHECK(dry.exit_code == 0);
  CHECK(dry.out.find("would skip " + id) != std::string::npos);
  auto purge = Run(*env, {"sessions", "purge", "--older-than", "0s", "--yes"});
  CHECK(purge.exit_code == 3);
  CHECK(std::regex_match(
      purge.err, RemovalBusyLine(id, "purge skipped it; run purge again once the turn has ended")));
  CHECK(purge.out.find("purged 1 sessions") != std::string::npos);
  {
    Db db(env->codex_home() / "sessions.db");
    CHECK(db.Scalar("SELECT count(*) FROM sessions WHERE id = '" + other + "'") == "0");
    CHECK(db.Scalar("SELECT archived FROM sessions WHERE id = '" + id + "'") == "0");
  }

  // The turn then completes with all its items.
  std::ofstream(env->workdir() / "release").put('\n');
  auto done = (*holder)->Wait(std::chrono::seconds(60));
  REQUIRE(done.ok());
  INFO(done->err);
  CHECK(done->exit_code == 0);
  CHECK(done->out == "tool done\n");
  Db db(env->codex_home() / "sessions.db");
  CHECK(db.Scalar("PRAGMA integrity_check") == "ok");
  auto chain = ChainMessages(db, id);
  CHECK(chain == std::vector<std::pair<std::string, std::string>>{{"user", "first"},
                                                                  {"assistant", "first answer"},
                                                                  {"user", "run the long tool"},
                                                                  {"assistant", "tool done"}});
  CHECK(db.Scalar("SELECT count(*) FROM (" + ChainSql(id) +
                  ") c JOIN items i ON i.id = c.id WHERE i.kind IN ('function_call',"
                  " 'function_call_output')") == "2");
  CHECK(db.Scalar("SELECT count(*) FROM session_leases") == "0");
  // Once it has ended, rm goes through.
  auto after = Run(*env, {"sessions", "rm", id});
  CHECK(after.exit_code == 0);
}

TEST_CASE("lease: a killed holder's lease does not block sessions rm") {
  auto env = MakeEnv(R"(["first answer", {"message": "never", "delay_ms": 60000}])");
  auto first = Run(*env, {"exec", "first"});
  REQUIRE(first.exit_code == 0);
  const std::string id = SessionIdFromBanner(first.err);
  auto holder = ChildProcess::Spawn(env->CodexCommand({"exec", "resume", id, "slow"}));
  REQUIRE(holder.ok());
  REQUIRE(WaitForRequests(*env, 2));
  CHECK(Run(*env, {"sessions", "rm", id}).exit_code == 3);
  REQUIRE((*holder)->Signal(SIGKILL).ok());
  REQUIRE((*holder)->Wait(std::chrono::seconds(60)).ok());
  auto rm = Run(*env, {"sessions", "rm", id});
  INFO(rm.err);
  CHECK(rm.exit_code == 0);
  Db db(env->codex_home() / "sessions.db");
  CHECK(db.Scalar("SELECT count(*) FROM sessions") == "0");
  CHECK(db.Scalar("SELECT count(*) FROM session_leases") == "0");
}

}  // namespace codex::testing
