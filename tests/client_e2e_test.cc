// End-to-end tests of the client behaviour of `codex exec` through the real
// binary: a byte-stable request prefix over a long session, dropped streams,
// rate limits, fatal stream failures and Ctrl-C. Each test has its own
// temporary CODEX_HOME and ScriptedServer.
#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "testing/files.h"
#include "testing/processes.h"
#include "tests/e2e_checks.h"
#include "tests/e2e_support.h"

namespace codex::testing {
namespace {

using e2e::CheckWireRules;
using e2e::Db;
using e2e::ErrorLines;
using e2e::InputExtends;
using e2e::JsonLines;
using e2e::MakeEnv;
using e2e::OutputFor;
using e2e::PairingProblem;
using e2e::Run;
using e2e::SessionIdFromBanner;

// Waits (generously) until the server has seen `n` /responses requests.
bool WaitForRequests(CodexTestEnv& env, size_t n) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < until) {
    if (env.server().requests_to("/responses").size() >= n) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// The texts of the assistant messages of a request's input.
std::vector<std::string> AssistantTexts(const Json& input) {
  std::vector<std::string> out;
  for (const auto& item : input) {
    if (item.value("type", "message") == "message" && item.value("role", "") == "assistant") {
      out.push_back(item["content"][0].value("text", ""));
    }
  }
  return out;
}

// Whether any process's command line is exactly `argv` (joined by NULs).
bool ProcessRunning(const std::vector<std::string>& argv) {
  std::string want;
  for (const auto& a : argv) want += a + '\0';
  for (const auto& process : Processes()) {
    if (process.command_line == want) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("client: each request's input is a byte prefix of the next over 20 requests") {
  // Turn 1: 14 tool calls then an answer; turn 2 (resumed): 4 more, then an answer.
  auto env = MakeEnv(R"({"responses": [
    {"repeat": 14, "entries": [{"output": [{"reasoning": "step {{n}}"},
                                           {"shell": ["echo", "out {{n}}"]}]}]},
    "first turn done",
    {"repeat": 4, "entries": [{"output": [{"shell": ["printf", "%s\\n", "more {{n}}"]}]}]},
    "second turn done"]})");
  auto first = Run(*env, {"exec", "do fourteen things"});
  INFO("stderr: " << first.err);
  REQUIRE(first.exit_code == 0);
  CHECK(first.out == "first turn done\n");
  const std::string id = SessionIdFromBanner(first.err);
  auto second = Run(*env, {"exec", "resume", "--last", "four more"});
  REQUIRE(second.exit_code == 0);
  CHECK(second.out == "second turn done\n");

  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 20);
  for (size_t k = 0; k < requests.size(); ++k) {
    INFO("request " << k);
    CHECK(requests[k].status == 200);
    CheckWireRules(requests[k], id);
    if (k > 0) CHECK(InputExtends(requests[k - 1], requests[k]));
  }
  auto calls = ItemsOfType(requests.back(), "function_call");
  REQUIRE(calls.size() == 18);
  CHECK_THAT(OutputFor(requests.back().InputItems(), calls[13].value("call_id", "")),
             Catch::Contains("out 14"));
  CHECK_THAT(OutputFor(requests.back().InputItems(), calls[17].value("call_id", "")),
             Catch::Contains("more 4"));
}

TEST_CASE("client: dropped streams are retried without losing or duplicating items") {
  // Event counts of the rendered streams: 2 (created, in_progress), then
  // reasoning "x" = 6 events, the shell call = 5; so drop_after 8 ends right
  // after the reasoning item, 13 right after the call.
  auto env = MakeEnv(R"([
    {"output": [{"reasoning": "x"}, {"shell": ["echo", "never run"]}], "drop_after": 8},
    {"output": [{"reasoning": "y"}, {"shell": ["echo", "run once"]}], "drop_after": 13},
    {"message": "partial answer that is cut", "drop_after": 6},
    "recovered",
    "bye"])");
  auto run = Run(*env, {"exec", "go"});
  INFO("stderr: " << run.err);
  CHECK(run.exit_code == 0);
  CHECK(run.out == "recovered\n");
  CHECK_THAT(run.err, Catch::Contains("Reconnecting 1/"));
  CHECK_THAT(run.err, Catch::Contains("Reconnecting 2/"));
  const std::string id = SessionIdFromBanner(run.err);

  // The next turn's request holds the whole stored transcript.
  auto next = Run(*env, {"exec", "resume", "--last", "check"});
  CHECK(next.exit_code == 0);
  CHECK(next.out == "bye\n");
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() >= 5);
  const RecordedRequest& last = requests.back();
  CheckWireRules(last, id);
  const Json input = last.InputItems();
  CHECK(PairingProblem(input) == "");
  std::vector<std::string> reasoning;
  for (const auto& r : ItemsOfType(last, "reasoning")) {
    reasoning.push_back(r["summary"][0].value("text", ""));
  }
  CHECK(reasoning == std::vector<std::string>{"x", "y"});
  auto calls = ItemsOfType(last, "function_call");
  REQUIRE(calls.size() == 1);  // the call cut before its .done was never committed
  CHECK_THAT(calls[0].value("arguments", ""), Catch::Contains("run once"));
  CHECK_THAT(OutputFor(input, calls[0].value("call_id", "")), Catch::Contains("run once\\n"));
  CHECK(AssistantTexts(input) == std::vector<std::string>{"recovered"});
  for (size_t k = 1; k < requests.size(); ++k) {
    if (requests[k - 1].status == 200 && requests[k].status == 200) {
      CHECK(InputExtends(requests[k - 1], requests[k]));
    }
  }
}

TEST_CASE("client: HTTP 429 with Retry-After is waited out, then the turn succeeds") {
  auto env = MakeEnv(R"([{"http_error": {"status": 429, "retry_after": 1}}, "after the wait"])");
  auto run = Run(*env, {"exec", "hello"});
  INFO("stderr: " << run.err);
  CHECK(run.exit_code == 0);
  CHECK(run.out == "after the wait\n");
  CHECK_THAT(run.err, Catch::Contains("Reconnecting 1/"));
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 2);
  CHECK(requests[0].outcome == "http_error:429");
  CHECK(requests[0].InputItems() == requests[1].InputItems());
}

TEST_CASE("client: a rate_limit_exceeded failed event is retried, then the turn succeeds") {
  auto env = MakeEnv(R"([
    {"failed": {"code": "rate_limit_exceeded", "message": "Rate limit reached. Please try again in 0.05s."}},
    "after the rate limit"])");
  auto run = Run(*env, {"exec", "hello"});
  INFO("stderr: " << run.err);
  CHECK(run.exit_code == 0);
  CHECK(run.out == "after the rate limit\n");
  CHECK_THAT(run.err, Catch::Contains("Reconnecting 1/"));
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 2);
  CHECK(requests[0].outcome == "failed:rate_limit_exceeded");
}

TEST_CASE("client: insufficient_quota is fatal with a clear message") {
  auto env = MakeEnv(R"([{"failed": "insufficient_quota"}, "never sent"])");
  auto run = Run(*env, {"exec", "hello"});
  INFO("stderr: " << run.err);
  CHECK(run.exit_code != 0);
  auto errors = ErrorLines(run.err);
  REQUIRE(errors.size() == 1);
  CHECK_THAT(errors[0], Catch::Contains("quota"));
  CHECK(run.out.empty());
  CHECK(env->server().requests_to("/responses").size() == 1);  // not retried
  CHECK_THAT(run.err, !Catch::Contains("Reconnecting"));
}

TEST_CASE("client: Ctrl-C while the stream stalls exits 130 and the session resumes") {
  auto env = MakeEnv(R"([{"message": "too late", "delay_ms": 120000}, "resumed fine"])");
  auto child = ChildProcess::Spawn(env->CodexCommand({"exec", "wait for it"}));
  REQUIRE(child.ok());
  REQUIRE(WaitForRequests(*env, 1));
  REQUIRE((*child)->Signal(SIGINT).ok());
  auto done = (*child)->Wait(std::chrono::seconds(60));
  REQUIRE(done.ok());
  INFO("stderr: " << done->err);
  CHECK_FALSE(done->timed_out);
  CHECK(done->exit_code == 130);
  CHECK(done->out.empty());
  CHECK_THAT(done->err, Catch::Contains("interrupted"));
  const std::string id = SessionIdFromBanner(done->err);
  REQUIRE(!id.empty());

  {
    Db db(env->codex_home() / "sessions.db");
    REQUIRE(db.ok());
    CHECK(db.Scalar("SELECT status FROM turns WHERE session_id = '" + id + "'") == "interrupted");
  }
  auto resumed = Run(*env, {"exec", "resume", "--last", "again"});
  INFO("stderr: " << resumed.err);
  CHECK(resumed.exit_code == 0);
  CHECK(resumed.out == "resumed fine\n");
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 2);
  CheckWireRules(requests[1], id);
  CHECK(InputExtends(requests[0], requests[1]));
}

TEST_CASE("client: Ctrl-C while a tool runs aborts the calls, kills the tool, resumes cleanly") {
  // A sleep with a unique duration, so the test can look for it in /proc.
  std::mt19937 rng(static_cast<unsigned>(::getpid()));
  const std::string duration = "30." + std::to_string(100 + rng() % 900);
  const std::vector<std::string> sleeper = {"sleep", duration};
  auto env = MakeEnv(R"([
    {"output": [{"shell": ["sleep", ")" +
                     duration + R"("], "timeout_ms": 120000},
                {"shell": ["echo", "never runs"]}]},
    "resumed after the tool"])");
  auto child = ChildProcess::Spawn(env->CodexCommand({"exec", "--json", "sleep a while"}));
  REQUIRE(child.ok());
  // Wait for the command to start (its item.started event).
  bool started = false;
  while (!started) {
    auto line = (*child)->ReadStdoutLine(std::chrono::seconds(60));
    REQUIRE(line.ok());
    Json e = Json::parse(*line, nullptr, false);
    started = e.is_object() && e.value("type", "") == "item.started" &&
              e["item"].value("command", "").find("sleep") != std::string::npos;
  }
  bool running = false;
  for (int i = 0; i < 500 && !running; ++i) {
    running = ProcessRunning(sleeper);
    if (!running) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  REQUIRE(running);
  // Only codex gets the signal: it must stop its own child.
  REQUIRE(::kill((*child)->pid(), SIGINT) == 0);
  auto done = (*child)->Wait(std::chrono::seconds(60));
  REQUIRE(done.ok());
  INFO("stdout: " << done->out << "\nstderr: " << done->err);
  CHECK_FALSE(done->timed_out);
  CHECK(done->exit_code == 130);
  auto events = JsonLines(done->out);
  REQUIRE(!events.empty());
  const std::string id = events[0].value("thread_id", "");
  REQUIRE(!id.empty());
  CHECK(events.back().value("type", "") == "turn.failed");
  // The tool's process is gone (give the kernel a moment to reap it).
  bool still_running = true;
  for (int i = 0; i < 500 && still_running; ++i) {
    still_running = ProcessRunning(sleeper);
    if (still_running) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  CHECK_FALSE(still_running);

  {
    Db db(env->codex_home() / "sessions.db");
    REQUIRE(db.ok());
    CHECK(db.Scalar("SELECT status FROM turns WHERE session_id = '" + id + "'") == "interrupted");
    auto calls = db.Query("SELECT call_id FROM items WHERE session_id = '" + id +
                          "' AND kind = 'function_call' ORDER BY id");
    REQUIRE(calls.size() == 2);
    for (const auto& call : calls) {
      auto outputs = db.Query(
          "SELECT codex_text(body) FROM items WHERE kind = 'function_call_output' AND "
          "call_id = '" +
          call[0] + "'");
      REQUIRE(outputs.size() == 1);
      CHECK_THAT(outputs[0][0], !Catch::Contains("never runs"));
    }
    // The call that never started was answered "aborted".
    auto second = db.Query(
        "SELECT codex_text(body) FROM items WHERE kind = 'function_call_output' AND "
        "call_id = '" +
        calls[1][0] + "'");
    REQUIRE(second.size() == 1);
    CHECK_THAT(second[0][0], Catch::Contains("aborted"));
  }

  auto resumed = Run(*env, {"exec", "resume", "--last", "go on"});
  INFO("stderr: " << resumed.err);
  CHECK(resumed.exit_code == 0);
  CHECK(resumed.out == "resumed after the tool\n");
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 2);
  CHECK(requests[1].status == 200);
  CheckWireRules(requests[1], id);
  CHECK(ItemsOfType(requests[1], "function_call_output").size() == 2);
}

// The client retries a 5xx / 429 / connect failure request_max_retries
// times; the turn loop must not start over on top of that (it retries only a
// stream dropped after delivery or a response.failed event).
TEST_CASE("a persistent HTTP 500 is requested request_max_retries + 1 times, no more") {
  auto env = MakeEnv(R"({"responses": [], "default": {"http_error": 500}})");
  auto run = Run(*env, {"-c", "model_providers.scripted.request_max_retries=1", "exec", "hello"});
  INFO("stderr: " << run.err);
  CHECK(run.exit_code == 1);
  CHECK(env->server().requests_to("/responses").size() == 2);
}

}  // namespace codex::testing
