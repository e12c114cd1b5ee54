// Sub-agents end to end (core/agent_tools.h, cli/sub_agents.h): the real
// `codex exec` against the scripted server, which answers the parent's and
// each agent's requests by the text of their user messages (`routes`), since
// they arrive in any order. Compared with what Codex 0.169 sends and answers
// (tests/compat/codex-0.169-multi-agent-capture.json): the tool's definition
// less its prose and its place, every call's output, the agent's first
// request, the notifications; then what a user needs to rely on: agents run
// side by side, take more input, time out, close, stay inside the parent's
// sandbox and approval policy, are stored as the parent's children and can
// be resumed, and a killed codex leaves a store that resumes.
#include <signal.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "sandbox/landlock.h"
#include "testing/files.h"
#include "testing/json_prose.h"
#include "testing/skip.h"
#include "testing/temp_dir.h"
#include "tests/e2e_checks.h"
#include "tests/e2e_support.h"

namespace codex::testing {
namespace {

namespace fs = std::filesystem;
using e2e::MakeEnv;
using e2e::OutputFor;
using e2e::RunChecked;
using e2e::SessionIdFromBanner;

constexpr char kOn[] = "[features]\nmulti_agent = true\n";

// A multi_agent_v1 call as the model makes it.
Json Call(const std::string& name, const Json& args, const std::string& call_id) {
  return Json{{"type", "function_call"},
              {"namespace", "multi_agent_v1"},
              {"name", name},
              {"arguments", args.dump()},
              {"call_id", call_id}};
}
Json Calls(std::vector<Json> calls) {
  Json output = Json::array();
  for (auto& c : calls) output.push_back(std::move(c));
  return Json{{"output", std::move(output)}};
}
// The id spawn_agent returned for `call_id`, as the script writes it.
std::string IdOf(const std::string& call_id) { return "{{output:" + call_id + ":agent_id}}"; }

// A script: the parent's answers routed by `parent_marker`, each agent's by its task text.
std::string Script(const std::string& parent_marker, Json parent,
                   std::vector<std::pair<std::string, Json>> agents) {
  Json routes = Json::array();
  routes.push_back(Json{{"when", parent_marker}, {"responses", std::move(parent)}});
  for (auto& [when, responses] : agents) {
    routes.push_back(Json{{"when", when}, {"responses", std::move(responses)}});
  }
  return Json{{"routes", std::move(routes)}}.dump();
}

ProcessResult Exec(CodexTestEnv& env, std::vector<std::string> args, const fs::path& cwd = {}) {
  std::vector<std::string> argv = {"exec"};
  for (auto& a : args) argv.push_back(std::move(a));
  ProcessOptions p = env.CodexCommand(std::move(argv));
  if (!cwd.empty()) p.cwd = cwd;
  return RunChecked(p);
}

bool IsAgentRequest(const RecordedRequest& r) {
  auto it = r.headers.find("x-openai-subagent");
  return it != r.headers.end() && it->second == "collab_spawn";
}
std::string Header(const RecordedRequest& r, const std::string& name) {
  auto it = r.headers.find(name);
  return it == r.headers.end() ? "" : it->second;
}
// The requests of one thread (by its thread-id header), in arrival order.
std::vector<RecordedRequest> ThreadRequests(CodexTestEnv& env, const std::string& thread) {
  std::vector<RecordedRequest> out;
  for (auto& r : env.server().requests_to("/responses")) {
    if (Header(r, "thread-id") == thread) out.push_back(r);
  }
  return out;
}
// The output for `call_id` in the parent's last request.
std::string Output(CodexTestEnv& env, const std::string& parent, const std::string& call_id) {
  auto requests = ThreadRequests(env, parent);
  REQUIRE_FALSE(requests.empty());
  return OutputFor(requests.back().InputItems(), call_id);
}
std::string AgentIdOf(CodexTestEnv& env, const std::string& parent, const std::string& call_id) {
  const Json j = Json::parse(Output(env, parent, call_id), nullptr, false);
  INFO("spawn output: " << j.dump());
  REQUIRE(j.is_object());
  return j.value("agent_id", "");
}

Json Load(const fs::path& p) { return Json::parse(ReadFile(p)); }
Json Capture() {
  return Load(fs::path(CODEX_SOURCE_DIR) / "tests/compat/codex-0.169-multi-agent-capture.json");
}

std::vector<std::string> ToolNames(const RecordedRequest& r) {
  std::vector<std::string> names;
  for (const auto& t : r.body["tools"]) names.push_back(t.value("name", t.value("type", "")));
  return names;
}
Json OfferedTool(const RecordedRequest& r, const std::string& name) {
  for (const auto& t : r.body["tools"]) {
    if (t.value("name", "") == name) return t;
  }
  return Json();
}

std::vector<std::string> UserTextsOf(const RecordedRequest& r) { return UserTexts(r); }
bool HasUserText(const RecordedRequest& r, const std::string& text) {
  for (const auto& t : UserTexts(r)) {
    if (t == text) return true;
  }
  return false;
}

TEST_CASE(
    "agents: Codex's definition less its prose, in its place, on by default; off by [features]") {
  const Json capture = Capture();
  auto env = MakeEnv(
      Script(
          "LEAD",
          Json::array({Calls({Call("spawn_agent", {{"message", "HELPER"}}, "s")}),
                       Calls({Call("wait_agent", {{"targets", {IdOf("s")}}}, "w")}), "lead done"}),
          {{"HELPER", Json::array({Calls({Call("spawn_agent", {{"message", "DEEPER"}}, "g")}),
                                   "helper done"})}}),
      "");  // offered by default, as in Codex 0.169
  auto run = Exec(*env, {"LEAD"});
  REQUIRE(run.exit_code == 0);
  const std::string parent = SessionIdFromBanner(run.err);
  auto requests = ThreadRequests(*env, parent);
  REQUIRE(requests.size() == 3);
  const RecordedRequest& first = requests[0];
  CHECK(WithoutProse(OfferedTool(first, "multi_agent_v1")).dump() ==
        WithoutProse(capture["tool"]).dump());
  // Codex's place: after view_image, before the goal tools.
  std::vector<std::string> names = ToolNames(first);
  auto at = std::find(names.begin(), names.end(), "multi_agent_v1");
  REQUIRE(at != names.end());
  CHECK(*(at - 1) == "view_image");
  CHECK(*(at + 1) == "get_goal");
  // The agent gets the parent's tools but this one (as in Codex), and its
  // spawn_agent is answered as Codex answers it.
  const std::string agent = AgentIdOf(*env, parent, "s");
  auto agent_requests = ThreadRequests(*env, agent);
  REQUIRE(agent_requests.size() == 2);
  std::vector<std::string> agent_names = ToolNames(agent_requests[0]);
  names.erase(at);
  CHECK(agent_names == names);
  CHECK(OutputFor(agent_requests[1].InputItems(), "g") ==
        capture["grandchild_attempt_output"].get<std::string>());

  // [features] multi_agent = false: not offered, and a call is unsupported.
  auto off = MakeEnv(
      Script("LEAD",
             Json::array({Calls({Call("spawn_agent", {{"message", "X"}}, "s")}), "lead done"}), {}),
      "[features]\nmulti_agent = false\n");
  auto off_run = Exec(*off, {"LEAD"});
  REQUIRE(off_run.exit_code == 0);
  auto off_requests = off->server().requests_to("/responses");
  REQUIRE(off_requests.size() == 2);
  names = ToolNames(off_requests[0]);
  CHECK(std::find(names.begin(), names.end(), "multi_agent_v1") == names.end());
  CHECK(OutputFor(off_requests[1].InputItems(), "s") ==
        "unsupported call: multi_agent_v1spawn_agent");
}

TEST_CASE("agents: spawn, wait, close as Codex answers them; the agent's first request") {
  const Json capture = Capture();
  const std::string bogus = "019a0000-0000-7000-8000-000000000000";
  auto env = MakeEnv(
      Script("LEAD",
             Json::array(
                 {Calls({Call("spawn_agent", {{"message", "HELPER: count the files"}}, "s")}),
                  Calls({Call("wait_agent", {{"targets", {IdOf("s")}}}, "w")}),
                  Calls({Call("close_agent", {{"target", IdOf("s")}}, "c")}),
                  Calls({Call("close_agent", {{"target", IdOf("s")}}, "c2")}),
                  Calls({Call("wait_agent", {{"targets", {"no-such-agent"}}}, "wb")}),
                  Calls({Call("send_input", {{"target", bogus}, {"message", "x"}}, "sb")}),
                  Calls({Call("spawn_agent", Json::object(), "se")}),
                  Calls({Call("wait_agent", {{"targets", Json::array()}}, "we")}), "lead done"}),
             {{"HELPER", Json::array({"there are three files"})}}),
      kOn);
  auto run = Exec(*env, {"LEAD"});
  REQUIRE(run.exit_code == 0);
  CHECK(run.out == "lead done\n");
  const std::string parent = SessionIdFromBanner(run.err);
  const std::string agent = AgentIdOf(*env, parent, "s");
  REQUIRE(agent.size() == 36);
  CHECK(agent != parent);
  const Json spawned = Json::parse(Output(*env, parent, "s"));
  CHECK(spawned.size() == 2);
  CHECK_FALSE(spawned.value("nickname", "").empty());
  CHECK(Output(*env, parent, "w") ==
        R"({"status":{")" + agent +
            R"(":{"completed":"there are three files"}},"timed_out":false})");
  CHECK(Output(*env, parent, "c") ==
        R"({"previous_status":{"completed":"there are three files"}})");
  CHECK(Output(*env, parent, "c2") == "agent with id " + agent + " not found");
  CHECK_THAT(Output(*env, parent, "wb"), Catch::StartsWith("invalid agent id no-such-agent: "));
  CHECK(Output(*env, parent, "sb") == "agent with id " + bogus + " not found");
  CHECK(Output(*env, parent, "se") == "Provide one of: message or items");
  CHECK(Output(*env, parent, "we") == "agent ids must be non-empty");

  // The notification, in Codex's words, after the wait's output.
  auto parent_requests = ThreadRequests(*env, parent);
  const std::string note = "<subagent_notification>\n{\"agent_path\":\"" + agent +
                           "\",\"status\":{\"completed\":\"there are three files\"}}\n"
                           "</subagent_notification>";
  CHECK(HasUserText(parent_requests.back(), note));

  // The agent's request: the parent's context and its task, its own thread
  // under the parent's session, the parent's cache key.
  auto agent_requests = ThreadRequests(*env, agent);
  REQUIRE(agent_requests.size() == 1);
  const RecordedRequest& a = agent_requests[0];
  const RecordedRequest& p = parent_requests[0];
  CHECK(Header(a, "session-id") == parent);
  CHECK(Header(a, "x-client-request-id") == agent);
  CHECK(Header(a, "x-codex-parent-thread-id") == parent);
  CHECK(IsAgentRequest(a));
  CHECK_FALSE(IsAgentRequest(p));
  CHECK(a.body["prompt_cache_key"] == p.body["prompt_cache_key"]);
  CHECK(a.body["instructions"] == p.body["instructions"]);
  CHECK(a.body["model"] == p.body["model"]);
  const Json a_in = a.InputItems();
  const Json p_in = p.InputItems();
  REQUIRE(a_in.size() == p_in.size());
  for (size_t i = 0; i + 1 < a_in.size(); ++i) CHECK(a_in[i] == p_in[i]);
  CHECK(UserTextsOf(a).back() == "HELPER: count the files");
}

TEST_CASE("agents: send_input queues for a running agent, or interrupts it") {
  auto env = MakeEnv(
      Script(
          "LEAD",
          Json::array(
              {Calls({Call("spawn_agent", {{"message", "SLOW-HELPER"}}, "s")}),
               Calls({Call("send_input", {{"target", IdOf("s")}, {"message", "AND-THEN"}}, "i")}),
               Calls({Call("wait_agent", {{"targets", {IdOf("s")}}}, "w")}),
               Calls({Call("spawn_agent", {{"message", "STUCK-HELPER"}}, "s2")}),
               Calls({Call("send_input",
                           {{"target", IdOf("s2")}, {"message", "INSTEAD"}, {"interrupt", true}},
                           "i2")}),
               Calls({Call("wait_agent", {{"targets", {IdOf("s2")}}}, "w2")}), "lead done"}),
          {{"AND-THEN", Json::array({"second answer"})},
           {"SLOW-HELPER", Json::array({Json{{"message", "first answer"}, {"delay_ms", 2000}}})},
           {"INSTEAD", Json::array({"instead answer"})},
           {"STUCK-HELPER", Json::array({Json{{"message", "never"}, {"delay_ms", 600000}}})}}),
      kOn);
  auto run = Exec(*env, {"LEAD"});
  REQUIRE(run.exit_code == 0);
  const std::string parent = SessionIdFromBanner(run.err);
  const std::string agent = AgentIdOf(*env, parent, "s");
  const Json submitted = Json::parse(Output(*env, parent, "i"));
  CHECK(submitted.size() == 1);
  CHECK(submitted.value("submission_id", "").size() == 36);
  // The wait is for the message sent, not for the task before it.
  CHECK(Output(*env, parent, "w") ==
        R"({"status":{")" + agent + R"(":{"completed":"second answer"}},"timed_out":false})");
  auto agent_requests = ThreadRequests(*env, agent);
  REQUIRE(agent_requests.size() == 2);
  const auto texts = UserTextsOf(agent_requests[1]);
  REQUIRE(texts.size() >= 2);
  CHECK(texts[texts.size() - 2] == "SLOW-HELPER");
  CHECK(texts.back() == "AND-THEN");

  // interrupt=true: the stuck turn stops, the new message is answered.
  const std::string stuck = AgentIdOf(*env, parent, "s2");
  CHECK(Output(*env, parent, "w2") ==
        R"({"status":{")" + stuck + R"(":{"completed":"instead answer"}},"timed_out":false})");
  auto stuck_requests = ThreadRequests(*env, stuck);
  REQUIRE(stuck_requests.size() == 2);
  CHECK(UserTextsOf(stuck_requests[1]).back() == "INSTEAD");
}

TEST_CASE("agents: two run side by side; the limit of open agents is Codex's") {
  const Json capture = Capture();
  Json parent = Json::array();
  // One slow and one quick agent spawned together: the wait on both returns
  // the quick one while the slow one is still in its request.
  parent.push_back(Calls({Call("spawn_agent", {{"message", "SLOW-ONE"}}, "a"),
                          Call("spawn_agent", {{"message", "QUICK-ONE"}}, "b")}));
  parent.push_back(Calls({Call("wait_agent", {{"targets", {IdOf("a"), IdOf("b")}}}, "w")}));
  // Four more make six open agents; the seventh is refused until one closes.
  parent.push_back(Calls({Call("spawn_agent", {{"message", "MORE-1"}}, "m1"),
                          Call("spawn_agent", {{"message", "MORE-2"}}, "m2"),
                          Call("spawn_agent", {{"message", "MORE-3"}}, "m3"),
                          Call("spawn_agent", {{"message", "MORE-4"}}, "m4"),
                          Call("spawn_agent", {{"message", "MORE-5"}}, "m5")}));
  parent.push_back(Calls({Call("close_agent", {{"target", IdOf("b")}}, "cb")}));
  parent.push_back(Calls({Call("spawn_agent", {{"message", "MORE-6"}}, "m6")}));
  parent.push_back("lead done");
  auto env =
      MakeEnv(Script("LEAD", parent,
                     {{"SLOW-ONE", Json::array({Json{{"message", "slow"}, {"delay_ms", 600000}}})},
                      {"QUICK-ONE", Json::array({"quick"})},
                      {"MORE-", Json::array({"more", "more", "more", "more", "more"})}}),
              kOn);
  auto run = Exec(*env, {"LEAD"});
  REQUIRE(run.exit_code == 0);
  const std::string lead = SessionIdFromBanner(run.err);
  const std::string quick = AgentIdOf(*env, lead, "b");
  CHECK(Output(*env, lead, "w") ==
        R"({"status":{")" + quick + R"(":{"completed":"quick"}},"timed_out":false})");
  const std::string limit = capture["limit"]["outputs"][6].get<std::string>();
  CHECK(limit == "collab spawn failed: agent thread limit reached");
  CHECK(Output(*env, lead, "m5") == limit);
  CHECK(Output(*env, lead, "cb") == R"({"previous_status":{"completed":"quick"}})");
  CHECK(Json::parse(Output(*env, lead, "m6")).contains("agent_id"));
}

TEST_CASE("agents: a wait times out (at least 10 s, as Codex); closing a running agent") {
  auto env = MakeEnv(
      Script("LEAD",
             Json::array(
                 {Calls({Call("spawn_agent", {{"message", "STUCK"}}, "s")}),
                  Calls({Call("wait_agent", {{"targets", {IdOf("s")}}, {"timeout_ms", 1}}, "w")}),
                  Calls({Call("close_agent", {{"target", IdOf("s")}}, "c")}), "lead done"}),
             {{"STUCK", Json::array({Json{{"message", "never"}, {"delay_ms", 600000}}, "after"})}}),
      kOn);
  auto run = Exec(*env, {"LEAD"});
  REQUIRE(run.exit_code == 0);
  const std::string parent = SessionIdFromBanner(run.err);
  const std::string agent = AgentIdOf(*env, parent, "s");
  CHECK(Output(*env, parent, "w") == R"({"status":{},"timed_out":true})");
  CHECK(Output(*env, parent, "c") == R"({"previous_status":"running"})");
  auto requests = ThreadRequests(*env, parent);
  CHECK(HasUserText(requests.back(), "<subagent_notification>\n{\"agent_path\":\"" + agent +
                                         "\",\"status\":\"shutdown\"}\n</subagent_notification>"));
  // The closed agent's turn was interrupted: resumed, its model is told so.
  auto resumed = RunChecked(env->CodexCommand({"exec", "resume", agent, "STUCK again"}));
  CHECK(resumed.exit_code == 0);
  CHECK(resumed.out == "after\n");
  auto again = ThreadRequests(*env, agent);
  REQUIRE(again.size() == 2);
  const auto texts = UserTextsOf(again[1]);
  REQUIRE(texts.size() >= 3);
  CHECK(texts[texts.size() - 3] == "STUCK");
  CHECK_THAT(texts[texts.size() - 2], Catch::Contains("<turn_aborted>"));
}

TEST_CASE("agents: exec --json reports each call as Codex's collab_tool_call") {
  const Json capture = Capture();
  const std::string bogus = "019a0000-0000-7000-8000-000000000000";
  auto env = MakeEnv(
      Script("LEAD",
             Json::array({Calls({Call("spawn_agent", {{"message", "HELPER"}}, "s")}),
                          Calls({Call("wait_agent", {{"targets", {IdOf("s")}}}, "w")}),
                          Calls({Call("close_agent", {{"target", IdOf("s")}}, "c")}),
                          Calls({Call("send_input", {{"target", bogus}, {"message", "x"}}, "b")}),
                          "lead done"}),
             {{"HELPER", Json::array({"helped"})}}),
      kOn);
  auto run = Exec(*env, {"--json", "LEAD"});
  REQUIRE(run.exit_code == 0);
  std::vector<Json> started;
  std::vector<Json> completed;
  std::string thread;
  for (const Json& e : e2e::JsonLines(run.out)) {
    if (e.value("type", "") == "thread.started") thread = e.value("thread_id", "");
    const Json item = e.value("item", Json());
    if (!item.is_object() || item.value("type", "") != "collab_tool_call") continue;
    (e["type"] == "item.started" ? started : completed).push_back(item);
  }
  REQUIRE(completed.size() == 4);
  REQUIRE(started.size() == 4);
  const std::string agent = completed[0]["receiver_thread_ids"][0];
  // Codex's keys, in its order, for every item.
  const Json codex_spawn = capture["exec_json_collab_items"]["events"][1]["item"];
  auto keys = [](const Json& j) {
    std::vector<std::string> k;
    for (const auto& [key, value] : j.items()) k.push_back(key);
    return k;
  };
  for (const Json& item : completed) CHECK(keys(item) == keys(codex_spawn));
  for (const Json& item : started) CHECK(item["status"] == "in_progress");
  CHECK(completed[0]["tool"] == "spawn_agent");
  CHECK(completed[0]["sender_thread_id"] == thread);
  CHECK(completed[0]["prompt"] == "HELPER");
  CHECK(completed[0]["agents_states"] ==
        Json{{agent, {{"status", "pending_init"}, {"message", nullptr}}}});
  CHECK(completed[0]["status"] == "completed");
  CHECK(completed[1]["tool"] == "wait");
  CHECK(completed[1]["prompt"].is_null());
  CHECK(completed[1]["agents_states"] ==
        Json{{agent, {{"status", "completed"}, {"message", "helped"}}}});
  CHECK(completed[2]["tool"] == "close_agent");
  CHECK(completed[2]["agents_states"] ==
        Json{{agent, {{"status", "completed"}, {"message", "helped"}}}});
  // An unknown agent: not_found, the call failed (as Codex reports it).
  CHECK(completed[3]["tool"] == "send_input");
  CHECK(completed[3]["receiver_thread_ids"] == Json::array({bogus}));
  CHECK(completed[3]["agents_states"] ==
        Json{{bogus, {{"status", "not_found"}, {"message", nullptr}}}});
  CHECK(completed[3]["status"] == "failed");
}

TEST_CASE("agents: closing an agent stops the commands it left running") {
  // The agent starts a loop that keeps rewriting a file and finishes its
  // turn with the loop still running (a unified exec session); the parent
  // looks whether the file still changes, closes the agent, looks again.
  auto exec = [](const std::string& cmd, const std::string& call_id, int yield_ms) {
    return Json{
        {"output", Json::array({Json{{"function_call", "exec_command"},
                                     {"arguments", {{"cmd", cmd}, {"yield_time_ms", yield_ms}}},
                                     {"call_id", call_id}}})}};
  };
  const std::string look =
      "a=$(cat beat); sleep 1; b=$(cat beat); if [ \"$a\" = \"$b\" ]; then echo stopped; else "
      "echo changing; fi";
  auto env = MakeEnv(
      Script("LEAD",
             Json::array({Calls({Call("spawn_agent", {{"message", "BEATER"}}, "s")}),
                          Calls({Call("wait_agent", {{"targets", {IdOf("s")}}}, "w")}),
                          exec(look, "before", 10000),
                          Calls({Call("close_agent", {{"target", IdOf("s")}}, "c")}),
                          exec(look, "after", 10000), "lead done"}),
             {{"BEATER",
               Json::array({exec("while true; do date +%s%N > beat; sleep 0.05; done", "loop", 300),
                            "loop started"})}}),
      kOn);
  auto run = Exec(*env, {"-s", "workspace-write", "LEAD"});
  REQUIRE(run.exit_code == 0);
  const std::string parent = SessionIdFromBanner(run.err);
  const std::string agent = AgentIdOf(*env, parent, "s");
  auto agent_requests = ThreadRequests(*env, agent);
  REQUIRE(agent_requests.size() == 2);
  CHECK_THAT(OutputFor(agent_requests[1].InputItems(), "loop"),
             Catch::Contains("Process running with session ID"));
  CHECK_THAT(Output(*env, parent, "before"), Catch::Contains("changing"));
  CHECK(Output(*env, parent, "c") == R"({"previous_status":{"completed":"loop started"}})");
  CHECK_THAT(Output(*env, parent, "after"), Catch::Contains("stopped"));
}

bool HaveLandlock() {
  if (sandbox::landlock::AbiVersion() > 0) return true;
  SkipPart("Landlock is missing on this kernel: sandbox enforcement not tested here");
  return false;
}

TEST_CASE("agents: an agent cannot leave the parent's sandbox nor get approvals it could not") {
  if (!HaveLandlock()) return;
  TempDir dir("agents-e2e-", NonTempBase());
  if (UnderTemp(dir.path())) {
    WARN("the build tree " << dir.path() << " is under /tmp or $TMPDIR; skipped");
    return;
  }
  const fs::path ws = dir.path() / "ws";
  const fs::path outside = dir.path() / "outside";
  fs::create_directories(ws);
  fs::create_directories(outside);
  auto touch = [](const fs::path& p, const std::string& call_id) {
    return Json{{"output", Json::array({Json{{"function_call", "exec_command"},
                                             {"arguments", {{"cmd", "touch " + p.string()}}},
                                             {"call_id", call_id}}})}};
  };
  auto env = MakeEnv(
      Script(
          "LEAD",
          Json::array({Calls({Call("spawn_agent", {{"message", "WRITER"}}, "s")}),
                       Calls({Call("wait_agent", {{"targets", {IdOf("s")}}}, "w")}), "lead done"}),
          {{"WRITER", Json::array({touch(ws / "inside", "in"), touch(outside / "escaped", "out"),
                                   "writer done"})}}),
      kOn);
  auto run = Exec(*env, {"-s", "workspace-write", "LEAD"}, ws);
  REQUIRE(run.exit_code == 0);
  const std::string parent = SessionIdFromBanner(run.err);
  const std::string agent = AgentIdOf(*env, parent, "s");
  CHECK(fs::exists(ws / "inside"));  // the agent's commands do run
  CHECK_FALSE(fs::exists(outside / "escaped"));
  auto agent_requests = ThreadRequests(*env, agent);
  REQUIRE_FALSE(agent_requests.empty());
  CHECK_THAT(OutputFor(agent_requests.back().InputItems(), "out"),
             Catch::Contains("Permission denied") || Catch::Contains("Read-only file system"));

  // Under -a untrusted nobody can approve in exec: the agent's write is declined too.
  auto asks = MakeEnv(
      Script(
          "LEAD",
          Json::array({Calls({Call("spawn_agent", {{"message", "WRITER"}}, "s")}),
                       Calls({Call("wait_agent", {{"targets", {IdOf("s")}}}, "w")}), "lead done"}),
          {{"WRITER", Json::array({touch(ws / "approved", "ask"), "writer done"})}}),
      kOn);
  auto untrusted = Exec(*asks, {"-a", "untrusted", "-s", "workspace-write", "LEAD"}, ws);
  REQUIRE(untrusted.exit_code == 0);
  const std::string asker = AgentIdOf(*asks, SessionIdFromBanner(untrusted.err), "s");
  CHECK_FALSE(fs::exists(ws / "approved"));
  auto asker_requests = ThreadRequests(*asks, asker);
  REQUIRE_FALSE(asker_requests.empty());
  CHECK_THAT(OutputFor(asker_requests.back().InputItems(), "ask"), Catch::Contains("approval"));
}

TEST_CASE("agents: stored as the parent's children, resumable, reopened by resume_agent") {
  auto env = MakeEnv(
      Script("LEAD",
             Json::array(
                 {Calls({Call("spawn_agent", {{"message", "NOTE-TAKER"}}, "s")}),
                  Calls({Call("wait_agent", {{"targets", {IdOf("s")}}}, "w")}),
                  Calls({Call("close_agent", {{"target", IdOf("s")}}, "c")}),
                  Calls({Call("resume_agent", {{"id", IdOf("s")}}, "r")}),
                  Calls({Call("send_input", {{"target", IdOf("s")}, {"message", "RECALL"}}, "i")}),
                  Calls({Call("wait_agent", {{"targets", {IdOf("s")}}}, "w2")}), "lead done"}),
             {{"RECALL", Json::array({"recalled"})},
              {"NOTE-TAKER", Json::array({"noted", "by hand"})}}),
      kOn);
  auto run = Exec(*env, {"LEAD"});
  REQUIRE(run.exit_code == 0);
  const std::string parent = SessionIdFromBanner(run.err);
  const std::string agent = AgentIdOf(*env, parent, "s");
  CHECK(Output(*env, parent, "r") == R"({"status":"pending_init"})");
  CHECK(Output(*env, parent, "w2") ==
        R"({"status":{")" + agent + R"(":{"completed":"recalled"}},"timed_out":false})");
  // Reopened with its history: the second request carries the first turn.
  auto agent_requests = ThreadRequests(*env, agent);
  REQUIRE(agent_requests.size() == 2);
  CHECK(HasUserText(agent_requests[1], "NOTE-TAKER"));

  auto tree = RunChecked(env->CodexCommand({"sessions", "tree", parent}));
  CHECK(tree.exit_code == 0);
  CHECK_THAT(tree.out, Catch::Contains(agent) && Catch::Contains("(sub-agent)"));
  auto list = RunChecked(env->CodexCommand({"sessions", "list", "--json"}));
  CHECK_THAT(list.out, Catch::Contains("\"id\":\"" + agent + "\""));
  CHECK_THAT(list.out, Catch::Contains("\"source\":\"subagent\""));

  // The user resumes the agent's session directly.
  auto resumed = RunChecked(env->CodexCommand({"exec", "resume", agent, "NOTE-TAKER again"}));
  CHECK(resumed.exit_code == 0);
  CHECK(resumed.out == "by hand\n");
  auto last = env->server().requests_to("/responses").back();
  CHECK(HasUserText(last, "RECALL"));
}

TEST_CASE("agents: codex killed while an agent runs leaves a store that resumes") {
  auto env = MakeEnv(
      Script("LEAD",
             Json::array({Calls({Call("spawn_agent", {{"message", "LONG-JOB"}}, "s")}),
                          Calls({Call("wait_agent",
                                      {{"targets", {IdOf("s")}}, {"timeout_ms", 3600000}}, "w")}),
                          "lead done", "lead again"}),
             {{"LONG-JOB",
               Json::array({Json{{"message", "never"}, {"delay_ms", 600000}}, "job resumed"})}}),
      kOn);
  auto child = ChildProcess::Spawn(env->CodexCommand({"exec", "LEAD"}));
  REQUIRE(child.ok());
  // Killed once the agent's request is in flight.
  std::string agent;
  for (int i = 0; i < 600 && agent.empty(); ++i) {
    for (auto& r : env->server().requests_to("/responses")) {
      if (IsAgentRequest(r)) agent = Header(r, "thread-id");
    }
    if (agent.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  REQUIRE_FALSE(agent.empty());
  REQUIRE((*child)->Signal(SIGKILL).ok());
  auto killed = (*child)->Wait(std::chrono::seconds(30));
  REQUIRE(killed.ok());
  const std::string parent = SessionIdFromBanner(killed->err);
  REQUIRE_FALSE(parent.empty());

  // Both sessions are there, the agent under its parent; each resumes.
  auto tree = RunChecked(env->CodexCommand({"sessions", "tree", parent}));
  CHECK(tree.exit_code == 0);
  CHECK_THAT(tree.out, Catch::Contains(agent));
  auto agent_run = RunChecked(env->CodexCommand({"exec", "resume", agent, "LONG-JOB again"}));
  CHECK(agent_run.exit_code == 0);
  CHECK(agent_run.out == "job resumed\n");
  auto parent_run = RunChecked(env->CodexCommand({"exec", "resume", parent, "LEAD again"}));
  CHECK(parent_run.exit_code == 0);
  CHECK(parent_run.out == "lead done\n");
  // The interrupted calls were closed: every call has its output.
  CHECK(e2e::PairingProblem(env->server().requests_to("/responses").back().InputItems()) == "");
}

}  // namespace
}  // namespace codex::testing
