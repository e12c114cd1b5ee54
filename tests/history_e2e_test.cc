// End-to-end tests of the history upkeep commands through the `codex`
// binary: `[history] retention_days` applied when a command starts (only
// sessions older than the limit, every directory, at most once an hour), the
// purge confirmation prompt on a terminal, and `codex compact undo` taking
// the turn lease like a turn does.
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e_checks.h"
#include "tests/e2e_support.h"
#include "tests/pty_support.h"

namespace codex::testing {
namespace {

using e2e::Db;
using e2e::SessionIdFromBanner;
using namespace std::chrono_literals;

using e2e::MakeEnv;
using e2e::Run;

// ISO 8601 UTC with milliseconds, as rollouts carry it, `days_ago` days back.
std::string DaysAgo(int days_ago) {
  const auto t = std::chrono::system_clock::now() - std::chrono::hours(24 * days_ago);
  const std::time_t tt = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S.000Z", &tm);
  return buf;
}

// Imports a one-message session `id` last updated `days_ago` days ago, made
// in `cwd` (not the directory codex runs in).
void ImportSession(CodexTestEnv& env, const std::string& id, int days_ago, const std::string& cwd) {
  const std::string ts = DaysAgo(days_ago);
  const auto file = env.root() / (id + ".jsonl");
  std::ofstream(file)
      << R"({"timestamp":")" << ts << R"(","type":"session_meta","payload":{"id":")" << id
      << R"(","timestamp":")" << ts << R"(","cwd":")" << cwd << R"(","model_provider":"fake"}})"
      << "\n"
      << R"({"timestamp":")" << ts
      << R"(","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"written )"
      << days_ago << R"( days ago"}]}})"
      << "\n";
  auto run = Run(env, {"sessions", "import", file.string()});
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
}

bool HasSession(CodexTestEnv& env, const std::string& id) {
  Db db(env.codex_home() / "sessions.db");
  REQUIRE(db.ok());
  const std::string n = db.Scalar("SELECT count(*) FROM sessions WHERE id = '" + id + "'");
  REQUIRE(db.error().empty());
  return n == "1";
}

constexpr const char* kOld1 = "01a1fca2-0000-7000-8000-000000000001";
constexpr const char* kOld2 = "01a1fca2-0000-7000-8000-000000000002";
constexpr const char* kRecent = "01a1fca2-0000-7000-8000-000000000003";

}  // namespace

TEST_CASE("retention_days: a command's start removes only older sessions, at most once an hour") {
  CodexTestEnvOptions options;
  options.extra_config = "[history]\nretention_days = 30\n";
  auto env = MakeEnv(R"({"default": {"message": "answer {{n}}"}})", options);
  ImportSession(*env, kOld1, 400, "/somewhere/else");
  ImportSession(*env, kRecent, 10, "/somewhere/else");
  // Importing is no command start: nothing removed yet.
  REQUIRE(HasSession(*env, kOld1));

  auto first = Run(*env, {"exec", "first"});
  INFO(first.err);
  REQUIRE(first.exit_code == 0);
  const std::string live = SessionIdFromBanner(first.err);
  CHECK_THAT(first.err, Catch::Contains("removed 1 sessions not updated for 30 days"));
  CHECK_FALSE(HasSession(*env, kOld1));
  CHECK(HasSession(*env, kRecent));
  CHECK(HasSession(*env, live));
  const auto marker = env->codex_home() / ".retention-checked";
  REQUIRE(std::filesystem::exists(marker));

  // Within the hour a start does not look again.
  ImportSession(*env, kOld2, 90, "/somewhere/else");
  auto second = Run(*env, {"exec", "second"});
  REQUIRE(second.exit_code == 0);
  CHECK_THAT(second.err, !Catch::Contains("removed"));
  CHECK(HasSession(*env, kOld2));

  // An hour later (the marker's time is the last check) it does.
  std::filesystem::last_write_time(marker, std::filesystem::file_time_type::clock::now() - 61min);
  auto third = Run(*env, {"exec", "third"});
  REQUIRE(third.exit_code == 0);
  CHECK_THAT(third.err, Catch::Contains("removed 1 sessions not updated for 30 days"));
  CHECK_FALSE(HasSession(*env, kOld2));
  CHECK(HasSession(*env, kRecent));
  CHECK(HasSession(*env, live));

  // --ephemeral runs leave the store alone.
  ImportSession(*env, kOld1, 400, "/somewhere/else");
  std::filesystem::last_write_time(marker, std::filesystem::file_time_type::clock::now() - 61min);
  auto ephemeral = Run(*env, {"exec", "--ephemeral", "fourth"});
  REQUIRE(ephemeral.exit_code == 0);
  CHECK(HasSession(*env, kOld1));
}

TEST_CASE("sessions purge on a terminal asks first: no keeps, yes removes") {
  auto env = MakeEnv(R"({"default": {"message": "answer"}})");
  ImportSession(*env, kOld1, 400, "/somewhere/else");
  ImportSession(*env, kRecent, 10, "/somewhere/else");
  for (const char* answer : {"n", "", "y"}) {
    INFO("answer '" << answer << "'");
    auto p =
        PtyProcess::Spawn(env->CodexCommand({"sessions", "purge", "--older-than", "30d", "--all"}));
    REQUIRE(p.ok());
    REQUIRE((*p)->WaitForText("remove them? [y/N]", 30s).ok());
    CHECK_THAT((*p)->screen().Text(), Catch::Contains(kOld1));
    CHECK_THAT((*p)->screen().Text(), !Catch::Contains(kRecent));
    REQUIRE((*p)->Write(std::string(answer) + "\r").ok());
    if (std::string(answer) == "y") {
      REQUIRE((*p)->WaitForText("purged 1 sessions", 30s).ok());
    } else {
      REQUIRE((*p)->WaitForText("nothing removed", 30s).ok());
    }
    auto code = (*p)->WaitExit(30s);
    REQUIRE(code.ok());
    CHECK(*code == 0);
    CHECK(HasSession(*env, kOld1) == (std::string(answer) != "y"));
    CHECK(HasSession(*env, kRecent));
  }
}

TEST_CASE("compact undo is refused with the busy line while a turn runs on the session") {
  auto env = MakeEnv(R"({"responses": ["first answer"],
                         "default": {"message": "answer {{n}}", "delay_ms": 4000}})");
  auto first = Run(*env, {"exec", "first"});
  REQUIRE(first.exit_code == 0);
  const std::string id = SessionIdFromBanner(first.err);
  REQUIRE(id.size() == 36);
  Db db(env->codex_home() / "sessions.db");
  const std::string head_before =
      db.Scalar("SELECT head_item_id FROM sessions WHERE id = '" + id + "'");

  auto turn = ChildProcess::Spawn(env->CodexCommand({"exec", "resume", id, "second"}));
  REQUIRE(turn.ok());
  const auto until = std::chrono::steady_clock::now() + 60s;
  while (env->server().requests_to("/responses").size() < 2 &&
         std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(10ms);
  }
  REQUIRE(env->server().requests_to("/responses").size() == 2);  // the turn holds the lease

  auto undo = Run(*env, {"compact", "undo", id});
  INFO(undo.err);
  CHECK(undo.exit_code == 3);
  CHECK(std::regex_match(undo.err,
                         std::regex("error: session " + id +
                                    " is busy: a turn is running in codex pid [0-9]+ on [^ ]+ "
                                    "since [0-2][0-9]:[0-5][0-9]; wait, or run 'codex fork " +
                                    id + "'\n")));
  CHECK(undo.out.empty());

  auto done = (*turn)->Wait(120s);
  REQUIRE(done.ok());
  CHECK(done->exit_code == 0);
  // The turn ran whole: its items follow the first turn's.
  CHECK(db.Scalar("SELECT head_item_id FROM sessions WHERE id = '" + id + "'") != head_before);

  // With the turn over, undo gets past the lease (this session has no compaction).
  auto after = Run(*env, {"compact", "undo", id});
  CHECK(after.exit_code != 0);
  CHECK(after.exit_code != 3);
  CHECK_THAT(after.err, Catch::Contains("has no compaction to undo"));
}

}  // namespace codex::testing
