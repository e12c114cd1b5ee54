// AgentPool (core/agent_tools.h) with agents whose turns answer at once, or
// block until interrupted: which session reaches which agent, the limit per
// session, interrupts, notifications. The real sessions and the wire are
// tests/agents_e2e_test's.
#include "core/agent_tools.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/uuid.h"

namespace codex::core {
namespace {

using Json = nlohmann::ordered_json;

// A turn answers "done: TEXT", except for a text starting with "block",
// which waits for its cancel.
class FakeSession final : public AgentSession {
 public:
  FakeSession() : id_(NewUuidV7()) {}
  const std::string& id() const override { return id_; }
  Result<std::string> RunTurn(const std::string& text, const CancelToken& cancel) override {
    if (text.rfind("block", 0) == 0) {
      while (!cancel.cancelled()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
      return CancelledError("interrupted");
    }
    return "done: " + text;
  }

 private:
  std::string id_;
};

class FakeFactory final : public AgentFactory {
 public:
  Result<std::unique_ptr<AgentSession>> Spawn(const SpawnRequest&) override {
    return std::unique_ptr<AgentSession>(std::make_unique<FakeSession>());
  }
  Result<std::unique_ptr<AgentSession>> Reopen(const std::string&, const std::string& id) override {
    return NotFoundError("no " + id);
  }
};

std::string Out(Result<std::string> r) { return r.ok() ? *r : r.status().message(); }

std::string SpawnId(AgentPool& pool, const std::string& parent, const std::string& task) {
  const std::string out =
      Out(pool.Call(parent, "spawn_agent", Json{{"message", task}}.dump(), CancelToken()));
  const Json j = Json::parse(out, nullptr, false);
  INFO(out);
  REQUIRE(j.is_object());
  return j.value("agent_id", "");
}

std::string Wait(AgentPool& pool, const std::string& parent, const std::string& id) {
  return Out(pool.Call(parent, "wait_agent", Json{{"targets", {id}}}.dump(), CancelToken()));
}

TEST_CASE("agent pool: a session reaches only its own agents and notifications") {
  FakeFactory factory;
  AgentPool pool(factory);
  const std::string a = NewUuidV7();
  const std::string b = NewUuidV7();
  const std::string agent = SpawnId(pool, a, "task");
  CHECK(Wait(pool, b, agent) == "agent with id " + agent + " not found");
  CHECK(Out(pool.Call(b, "close_agent", Json{{"target", agent}}.dump(), CancelToken())) ==
        "agent with id " + agent + " not found");
  CHECK(Out(pool.Call(b, "send_input", Json{{"target", agent}, {"message", "x"}}.dump(),
                      CancelToken())) == "agent with id " + agent + " not found");
  CHECK(Wait(pool, a, agent) ==
        R"({"status":{")" + agent + R"(":{"completed":"done: task"}},"timed_out":false})");
  CHECK(pool.TakeNotifications(b).empty());
  const auto notes = pool.TakeNotifications(a);
  REQUIRE(notes.size() == 1);
  CHECK(notes[0] == "<subagent_notification>\n{\"agent_path\":\"" + agent +
                        "\",\"status\":{\"completed\":\"done: task\"}}\n</subagent_notification>");
  CHECK(pool.TakeNotifications(a).empty());  // once
}

TEST_CASE("agent pool: six open agents per session; closing one makes room") {
  FakeFactory factory;
  AgentPool pool(factory);
  const std::string a = NewUuidV7();
  std::vector<std::string> ids;
  for (int i = 0; i < kMaxOpenAgents; ++i) ids.push_back(SpawnId(pool, a, "t"));
  CHECK(Out(pool.Call(a, "spawn_agent", R"({"message":"one more"})", CancelToken())) ==
        "collab spawn failed: agent thread limit reached");
  // Another session has its own six.
  CHECK_FALSE(SpawnId(pool, NewUuidV7(), "t").empty());
  REQUIRE(Out(pool.Call(a, "close_agent", Json{{"target", ids[0]}}.dump(), CancelToken()))
              .starts_with("{\"previous_status\":"));
  CHECK_FALSE(SpawnId(pool, a, "t").empty());
}

TEST_CASE("agent pool: interrupt stops the running turn only; close announces shutdown") {
  FakeFactory factory;
  AgentPool pool(factory);
  const std::string a = NewUuidV7();
  const std::string agent = SpawnId(pool, a, "block forever");
  // The interrupting message is answered; the blocked turn ended interrupted.
  CHECK(Out(pool.Call(a, "send_input",
                      Json{{"target", agent}, {"message", "now"}, {"interrupt", true}}.dump(),
                      CancelToken()))
            .starts_with("{\"submission_id\":"));
  CHECK(Wait(pool, a, agent) ==
        R"({"status":{")" + agent + R"(":{"completed":"done: now"}},"timed_out":false})");
  // A queued message waits for the running turn; close stops it.
  (void)pool.TakeNotifications(a);
  CHECK(Out(pool.Call(a, "send_input", Json{{"target", agent}, {"message", "block again"}}.dump(),
                      CancelToken()))
            .starts_with("{\"submission_id\":"));
  CHECK(Out(pool.Call(a, "close_agent", Json{{"target", agent}}.dump(), CancelToken())) ==
        R"({"previous_status":"running"})");
  const auto notes = pool.TakeNotifications(a);
  REQUIRE(notes.size() == 1);
  CHECK(notes[0] == "<subagent_notification>\n{\"agent_path\":\"" + agent +
                        "\",\"status\":\"shutdown\"}\n</subagent_notification>");
}

TEST_CASE("agent pool: a wait the caller interrupts ends with kCancelled") {
  FakeFactory factory;
  AgentPool pool(factory);
  const std::string a = NewUuidV7();
  const std::string agent = SpawnId(pool, a, "block");
  CancelToken cancel;
  cancel.Cancel();
  auto r = pool.Call(a, "wait_agent", Json{{"targets", {agent}}}.dump(), cancel);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::kCancelled);
}

}  // namespace
}  // namespace codex::core
