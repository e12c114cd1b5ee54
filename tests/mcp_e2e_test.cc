// End-to-end tests of the MCP client through the real `codex` binary (issue
// 16): [mcp_servers] config errors, tools offered after the built-in ones in
// a byte-stable order (20 requests, two servers, and across resume), result
// mapping (text, structured, image, resource, isError), truncation, faults of
// the in-repo mcp-test-server (crash mid-call, slow start, garbage frames,
// huge output, tool timeout, Ctrl-C cancellation), stderr to the log,
// environment filtering, approvals, `codex mcp list`, Codex's resource tools
// (compared with what Codex 0.169 sent, tests/compat/), a server slow to
// start. The third-party npm servers are in mcp_npm_e2e_test.cc.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "testing/wait.h"
#include "tests/mcp/mcp_e2e_helpers.h"
#include "tests/pty_support.h"

namespace codex::testing {
namespace {

namespace fs = std::filesystem;
using e2e::InputExtends;
using e2e::JsonLines;
using namespace mcp_e2e;

TEST_CASE("MCP config: bad [mcp_servers] entries are one-line errors naming the server and key") {
  struct Case {
    std::string toml;
    std::string expect;
  };
  const std::vector<Case> cases = {
      {"[mcp_servers.fs]\ncommand = 5\n", "mcp_servers.fs.command must be a string"},
      {"[mcp_servers.fs]\ncomand = \"x\"\n",
       "needs command (a stdio server) or url (a streamable "
       "HTTP one) (it has an unknown key 'comand'; a typo?)"},
      {"[mcp_servers.fs]\ncommand = \"x\"\nurl = \"http://127.0.0.1:1/mcp\"\n",
       "mcp_servers.fs sets both command and url"},
      {"[mcp_servers.fs]\nargs = [\"a\"]\n", "mcp_servers.fs needs command"},
      {"[mcp_servers.fs]\ncommand = \"x\"\nargs = [1]\n",
       "mcp_servers.fs.args must be an array of strings"},
      {"[mcp_servers.fs]\ncommand = \"x\"\nstartup_timeout_sec = -1\n",
       "mcp_servers.fs.startup_timeout_sec must be a positive number"},
      {"[mcp_servers.fs]\ncommand = \"x\"\nenv = { A = 1 }\n",
       "mcp_servers.fs.env.A must be a string"},
      {"[mcp_servers.\"a b\"]\ncommand = \"x\"\n", "a server name may hold only"},
      {"[mcp_servers.h]\nurl = \"ftp://x\"\n", "mcp_servers.h.url must be an http"},
      {"[mcp_servers.h]\nurl = \"http://127.0.0.1:1/mcp\"\ncwd = \"/\"\n",
       "mcp_servers.h.cwd applies to stdio servers only"},
      {"mcp_servers = 3\n", "mcp_servers must be a table"},
  };
  for (const auto& c : cases) {
    auto env = MakeEnv(R"(["never reached"])", c.toml);
    auto run = Run(*env, {"exec", "hi"});
    INFO(c.toml << "\nstderr: " << run.err);
    CHECK(run.exit_code == 2);
    CHECK(run.err.find(c.expect) != std::string::npos);
    CHECK(CountLines(run.err, "\n") == 1);
    CHECK(run.err.rfind("error: ", 0) == 0);
    CHECK(env->server().requests_to("/responses").empty());
  }
}

TEST_CASE("MCP tools follow the built-in ones, sorted by server then tool, named as Codex does") {
  const std::string config =
      TestServer("zeta", {}) + TestServer("alpha", {"--page-size", "2"}) +
      TestServer("off", {}, "enabled = false") +
      TestServer("some", {},
                 "enabled_tools = [\"echo\", \"add\", \"fail\"]\ndisabled_tools = [\"fail\"]");
  auto env = MakeEnv(R"(["done"])", config);
  auto run = Run(*env, {"exec", "hi"});
  REQUIRE(run.exit_code == 0);
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 1);
  const auto names = ToolNames(requests[0]);
  const std::vector<std::string> server_tools = {
      "add", "ask", "crash", "echo", "fail", "gate", "grow", "huge", "image", "resource", "slow"};
  // Codex's resource tools come right after the command tools, then request_user_input.
  std::vector<std::string> expected = {"exec_command",
                                       "write_stdin",
                                       "list_mcp_resources",
                                       "list_mcp_resource_templates",
                                       "read_mcp_resource",
                                       "request_user_input",
                                       "view_image",
                                       "multi_agent_v1__close_agent",
                                       "multi_agent_v1__resume_agent",
                                       "multi_agent_v1__send_input",
                                       "multi_agent_v1__spawn_agent",
                                       "multi_agent_v1__wait_agent",
                                       "get_goal",
                                       "create_goal",
                                       "update_goal",
                                       "apply_patch",
                                       "update_plan"};
  for (const auto& t : server_tools) expected.push_back("mcp__alpha__" + t);
  expected.push_back("mcp__some__add");
  expected.push_back("mcp__some__echo");
  for (const auto& t : server_tools) expected.push_back("mcp__zeta__" + t);
  CHECK(names == expected);
  // Codex's namespace form (tests/compat/codex-0.169-mcp-capture.json): one
  // namespace per server holding functions whose parameters are the
  // server's inputSchema, "required" always present.
  int namespaces = 0;
  for (const auto& ns : requests[0].body["tools"]) {
    // The built-in multi_agent_v1 namespace aside.
    if (ns.value("type", "") != "namespace" || ns["name"] == "multi_agent_v1") continue;
    ++namespaces;
    if (ns["name"] != "mcp__alpha") continue;
    CHECK(ns["description"] == "Tools in the mcp__alpha namespace.");
    for (const auto& t : ns["tools"]) {
      CHECK(t["type"] == "function");
      CHECK(t["strict"] == false);
      CHECK(t["parameters"].contains("required"));
      if (t["name"] != "echo") continue;
      CHECK(t["description"] == "Echoes the text back");
      CHECK(t["parameters"]["properties"].contains("text"));
      CHECK(t["parameters"]["required"] == Json::array({"text"}));
    }
  }
  CHECK(namespaces == 3);
}

TEST_CASE(
    "MCP prefix stability: 20 requests with two servers carry byte-identical tools, also after "
    "resume") {
  const std::string config = TestServer("beta", {}) + TestServer("alpha", {"--page-size", "3"});
  std::string script = "[";
  for (int i = 0; i < 19; ++i) {
    script += R"({"output": [{"function_call": ")" +
              std::string(i % 2 ? "mcp__alpha__echo" : "mcp__beta__add") + R"(", "arguments": )" +
              (i % 2 ? R"({"text": "n)" + std::to_string(i) + R"("})" : R"({"a": 1, "b": 2})") +
              R"(, "call_id": "c)" + std::to_string(i) + R"("}]},)";
  }
  script += R"("finished", "resumed"])";
  auto env = MakeEnv(script, config);
  auto run = Run(*env, {"exec", "go"});
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  auto resumed = Run(*env, {"exec", "resume", "--last", "again"});
  REQUIRE(resumed.exit_code == 0);
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 21);
  const std::string tools = requests[0].body["tools"].dump();
  const auto names = ToolNames(requests[0]);
  CHECK(std::find(names.begin(), names.end(), "mcp__alpha__echo") != names.end());
  CHECK(std::find(names.begin(), names.end(), "mcp__beta__add") != names.end());
  for (size_t i = 1; i < requests.size(); ++i) {
    INFO("request " << i);
    CHECK(requests[i].body["tools"].dump() == tools);
    CHECK(InputExtends(requests[i - 1], requests[i]));
  }
  CHECK(McpResultText(ModelOutput(*env, "c1")) == "echo: n1");
  CHECK(McpResultText(ModelOutput(*env, "c0")) == R"({"sum":3.0})");
}

TEST_CASE(
    "MCP results: text, structured, image, resource and isError reach the model as Codex maps "
    "them") {
  const std::string config = TestServer("t", {});
  auto env = MakeEnv(R"([
    {"output": [{"function_call": "mcp__t__echo", "arguments": {"text": "hi"}, "call_id": "echo"}]},
    {"output": [{"function_call": "mcp__t__add", "arguments": {"a": 2, "b": 3}, "call_id": "add"}]},
    {"output": [{"function_call": "mcp__t__image", "arguments": "", "call_id": "img"}]},
    {"output": [{"function_call": "mcp__t__resource", "arguments": {}, "call_id": "res"}]},
    {"output": [{"function_call": "mcp__t__fail", "arguments": {}, "call_id": "fail"}]},
    {"output": [{"function_call": "mcp__t__echo", "arguments": "[1]", "call_id": "badargs"}]},
    {"output": [{"function_call": "mcp__t__huge", "arguments": {"bytes": 2000000}, "call_id": "huge"}]},
    "all done"])",
                     config);
  auto run = Run(*env, {"exec", "--json", "go"});
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  CHECK(McpResultText(ModelOutput(*env, "echo")) == "echo: hi");
  CHECK(McpResultText(ModelOutput(*env, "add")) == R"({"sum":5.0})");
  // Codex's shape: the wall-time header, then the blocks as input items.
  Json img = Json::parse(ModelOutput(*env, "img"));
  REQUIRE(img.is_array());
  REQUIRE(img.size() == 3);
  CHECK(img[0]["type"] == "input_text");
  CHECK(img[0]["text"].get<std::string>().rfind("Wall time: ", 0) == 0);
  CHECK(img[0]["text"].get<std::string>().ends_with(" seconds\nOutput:"));
  CHECK(img[1] == Json({{"type", "input_text"}, {"text", "a tiny image"}}));
  CHECK(img[2] ==
        Json({{"type", "input_image"}, {"image_url", "data:image/png;base64,iVBORw0KGgo="}}));
  const std::string res = McpResultText(ModelOutput(*env, "res"));
  CHECK(Json::parse(res)["resource"]["text"] == "resource text");
  CHECK(ModelOutput(*env, "add").rfind("Wall time: ", 0) == 0);
  CHECK(McpResultText(ModelOutput(*env, "fail")) == "the tool failed on purpose");
  CHECK(ModelOutput(*env, "badargs").find("must be a JSON object") != std::string::npos);
  // Truncated head + tail like shell output: both ends kept, a marker between.
  const std::string huge_raw = ModelOutput(*env, "huge");
  CHECK(huge_raw.size() < 12 * 1024);
  CHECK(huge_raw.find("HEAD") != std::string::npos);
  CHECK(huge_raw.find("TAIL") != std::string::npos);
  CHECK(huge_raw.find("omitted") != std::string::npos);

  // --json: mcp_tool_call items as Codex 0.169 prints them.
  auto items = CompletedItems(run.out, "mcp_tool_call");
  REQUIRE(items.size() == 7);
  CHECK(items[0]["server"] == "t");
  CHECK(items[0]["tool"] == "echo");
  CHECK(items[0]["arguments"] == Json({{"text", "hi"}}));
  CHECK(items[0]["status"] == "completed");
  CHECK(items[0]["result"]["content"][0]["text"] == "echo: hi");
  CHECK(items[0]["error"].is_null());
  CHECK(items[1]["result"]["structured_content"] == Json({{"sum", 5.0}}));
  CHECK(items[4]["status"] == "failed");
  CHECK(items[5]["status"] == "failed");
  CHECK(items[5]["error"]["message"].get<std::string>().find("JSON object") != std::string::npos);
  int started = 0;
  for (const auto& e : JsonLines(run.out)) {
    if (e.value("type", "") == "item.started" && e["item"].value("type", "") == "mcp_tool_call") {
      CHECK(e["item"]["status"] == "in_progress");
      ++started;
    }
  }
  CHECK(started == 7);
}

TEST_CASE(
    "MCP faults: a crash mid-call, a slow start, a missing program and garbage frames do not stop "
    "the session") {
  const std::string config =
      TestServer("crashy", {}) +
      TestServer("sleepy", {"--startup-delay-ms", "20000"}, "startup_timeout_sec = 0.5") +
      "[mcp_servers.missing]\ncommand = \"/nonexistent/mcp-server\"\n" +
      TestServer("noisy", {"--garbage"}) + TestServer("oldproto", {"--protocol", "1999-01-01"});
  auto env = MakeEnv(R"([
    {"output": [{"function_call": "mcp__crashy__crash", "arguments": {}, "call_id": "crash"}]},
    {"output": [{"function_call": "mcp__crashy__echo", "arguments": {"text": "again"}, "call_id": "after"}]},
    {"output": [{"function_call": "mcp__noisy__echo", "arguments": {"text": "through noise"}, "call_id": "noise"}]},
    "survived"])",
                     config);
  const auto start = std::chrono::steady_clock::now();
  auto run = Run(*env, {"exec", "go"});
  const auto seconds =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - start)
          .count();
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  CHECK(run.out == "survived\n");
  CHECK(seconds < 15);  // the sleepy server was given up after 0.5 s, not 20
  // One line per failed server.
  CHECK(CountLines(run.err, "MCP server 'sleepy' failed to start: did not start within 0.5") == 1);
  CHECK(CountLines(run.err, "MCP server 'missing' failed to start: cannot run") == 1);
  CHECK(CountLines(run.err, "MCP server 'oldproto' failed to start:") == 1);
  CHECK(run.err.find("protocol version '1999-01-01'") != std::string::npos);
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 4);
  for (const auto& name : ToolNames(requests[0])) {
    CHECK(name.rfind("mcp__sleepy", 0) != 0);
    CHECK(name.rfind("mcp__oldproto", 0) != 0);
  }
  const std::string crash = ModelOutput(*env, "crash");
  // As Codex 0.169 sends a failed call: the wall-time header and the error
  // as input_text items, not a JSON-encoded content array.
  const Json crash_items = Json::parse(crash, nullptr, false);
  REQUIRE(crash_items.is_array());
  REQUIRE(crash_items.size() == 2);
  CHECK(crash_items[0]["type"] == "input_text");
  CHECK(crash_items[0]["text"].get<std::string>().rfind("Wall time: ", 0) == 0);
  CHECK(crash_items[1]["type"] == "input_text");
  CHECK(crash_items[1]["text"].get<std::string>().rfind("tool call error: ", 0) == 0);
  CHECK(crash.find("exited with code 3") != std::string::npos);
  CHECK(ModelOutput(*env, "after").find("not running") != std::string::npos);
  CHECK(McpResultText(ModelOutput(*env, "noise")) == "echo: through noise");
  // The garbage was noted in the server's log, not on the terminal.
  CHECK(ReadFile(env->codex_home() / "log" / "mcp-noisy.log").find("not JSON-RPC") !=
        std::string::npos);
  CHECK(run.err.find("not JSON") == std::string::npos);
}

TEST_CASE("MCP tool_timeout_sec: a call that takes too long is cancelled and the model told") {
  const fs::path log =
      fs::temp_directory_path() / ("mcp-timeout-" + std::to_string(getpid()) + ".log");
  fs::remove(log);
  const std::string config = TestServer("t", {"--log", log.string()}, "tool_timeout_sec = 0.5");
  auto env = MakeEnv(R"([
    {"output": [{"function_call": "mcp__t__slow", "arguments": {"ms": 30000}, "call_id": "slow"}]},
    "ok"])",
                     config);
  auto run = Run(*env, {"exec", "go"});
  REQUIRE(run.exit_code == 0);
  CHECK(ModelOutput(*env, "slow").find("did not answer tools/call within 0.5") !=
        std::string::npos);
  const std::string server_log = ReadFile(log);
  CHECK(server_log.find("recv notifications/cancelled") != std::string::npos);
  CHECK(server_log.find("cancelled 3") != std::string::npos);  // the tools/call request's id
  fs::remove(log);
}

TEST_CASE("MCP Ctrl-C during a call sends notifications/cancelled and ends the turn interrupted") {
  const fs::path log =
      fs::temp_directory_path() / ("mcp-cancel-" + std::to_string(getpid()) + ".log");
  fs::remove(log);
  const std::string config = TestServer("t", {"--log", log.string()});
  auto env = MakeEnv(R"([
    {"output": [{"function_call": "mcp__t__slow", "arguments": {"ms": 60000}, "call_id": "slow"}]},
    "never"])",
                     config);
  auto child = ChildProcess::Spawn(env->CodexCommand({"exec", "go"}));
  REQUIRE(child.ok());
  bool calling = false;
  for (int i = 0; i < 600 && !calling; ++i) {
    calling = ReadFile(log).find("recv tools/call") != std::string::npos;
    if (!calling) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  REQUIRE(calling);
  REQUIRE((*child)->Signal(SIGINT).ok());
  auto done = (*child)->Wait(std::chrono::seconds(30));
  REQUIRE(done.ok());
  CHECK(done->exit_code == 130);
  const std::string server_log = ReadFile(log);
  CHECK(server_log.find("cancelled 3") != std::string::npos);  // initialize 1, tools/list 2
  // The server was not in codex's process group: it got the cancellation, not the SIGINT,
  // and was shut down by closing its stdin.
  CHECK(server_log.find("stdin closed") != std::string::npos);
  fs::remove(log);
}

TEST_CASE("MCP server stderr goes to the log under CODEX_HOME, and the environment is filtered") {
  const fs::path env_file = fs::temp_directory_path() / ("mcp-env-" + std::to_string(getpid()));
  fs::remove(env_file);
  const std::string config = TestServer(
      "t", {"--stderr", "a line the server wrote to stderr", "--env-file", env_file.string()},
      "env = { GIVEN = \"by-config\" }\nenv_vars = [\"PASSED_TOKEN\"]");
  auto env = MakeEnv(R"(["ok"])", config);
  auto run =
      Run(*env, {"exec", "go"},
          {{"MY_SECRET_TOKEN", "s3cr3t"}, {"PASSED_TOKEN", "explicit"}, {"PLAIN_VAR", "plain"}});
  REQUIRE(run.exit_code == 0);
  CHECK(run.err.find("a line the server wrote to stderr") == std::string::npos);
  CHECK(
      ReadFile(env->codex_home() / "log" / "mcp-t.log").find("a line the server wrote to stderr") !=
      std::string::npos);
  const std::string server_env = ReadFile(env_file);
  CHECK(server_env.find("GIVEN=by-config\n") != std::string::npos);
  CHECK(server_env.find("PASSED_TOKEN=explicit\n") != std::string::npos);
  CHECK(server_env.find("PLAIN_VAR=plain\n") != std::string::npos);
  CHECK(server_env.find("MY_SECRET_TOKEN") == std::string::npos);
  CHECK(server_env.find("SCRIPTED_API_KEY") == std::string::npos);
  // No descriptor of codex (the session database, the log) leaked into the server.
  CHECK(server_env.find("fd 0 -> pipe:") != std::string::npos);
  CHECK(server_env.find("sessions.db") == std::string::npos);
  CHECK(server_env.find("fd 2 -> " + (env->codex_home() / "log" / "mcp-t.log").string()) !=
        std::string::npos);
  fs::remove(env_file);
}

TEST_CASE(
    "MCP approvals: untrusted asks except for read-only tools; exec cannot ask, so the model is "
    "told") {
  const fs::path log =
      fs::temp_directory_path() / ("mcp-approve-" + std::to_string(getpid()) + ".log");
  fs::remove(log);
  const std::string config =
      "approval_policy = \"untrusted\"\n" + TestServer("t", {"--log", log.string()});
  auto env = MakeEnv(R"([
    {"output": [{"function_call": "mcp__t__echo", "arguments": {"text": "ro"}, "call_id": "ro"}]},
    {"output": [{"function_call": "mcp__t__add", "arguments": {"a": 1, "b": 1}, "call_id": "rw"}]},
    "ok"])",
                     config);
  auto run = Run(*env, {"exec", "go"});
  REQUIRE(run.exit_code == 0);
  CHECK(McpResultText(ModelOutput(*env, "ro")) == "echo: ro");
  CHECK(ModelOutput(*env, "rw").find("needs the user's approval") != std::string::npos);
  const std::string server_log = ReadFile(log);
  CHECK(server_log.find("\"name\":\"echo\"") != std::string::npos);
  CHECK(server_log.find("\"name\":\"add\"") == std::string::npos);  // never reached the server
  fs::remove(log);

  // on-request: only a destructive tool needs asking.
  auto env2 = MakeEnv(R"([
    {"output": [{"function_call": "mcp__t__add", "arguments": {"a": 1, "b": 1}, "call_id": "add"}]},
    {"output": [{"function_call": "mcp__t__grow", "arguments": {}, "call_id": "grow"}]},
    "ok"])",
                      "approval_policy = \"on-request\"\n" + TestServer("t", {}));
  auto run2 = Run(*env2, {"exec", "go"});
  REQUIRE(run2.exit_code == 0);
  CHECK(McpResultText(ModelOutput(*env2, "add")) == R"({"sum":2.0})");
  CHECK(ModelOutput(*env2, "grow").find("needs the user's approval") != std::string::npos);

  // Interactive (answers read from stdin): "always this session" covers that
  // server/tool; another tool is asked again and may be declined.
  auto env3 = MakeEnv(R"([
    {"output": [{"function_call": "mcp__t__add", "arguments": {"a": 1, "b": 2}, "call_id": "c1"}]},
    {"output": [{"function_call": "mcp__t__add", "arguments": {"a": 3, "b": 4}, "call_id": "c2"}]},
    {"output": [{"function_call": "mcp__t__fail", "arguments": {}, "call_id": "c3"}]},
    "done"])",
                      "approval_policy = \"untrusted\"\n" + TestServer("t", {}));
  auto run3 = env3->RunCodex({}, "go\na\nn\n");
  REQUIRE(run3.ok());
  INFO(run3->err);
  CHECK(run3->exit_code == 0);
  CHECK(CountLines(run3->err, "Allow this command?") == 2);
  CHECK(McpResultText(ModelOutput(*env3, "c1")) == R"({"sum":3.0})");
  CHECK(McpResultText(ModelOutput(*env3, "c2")) == R"({"sum":7.0})");
  CHECK(ModelOutput(*env3, "c3").find("the user declined this MCP tool call") != std::string::npos);
}

TEST_CASE("MCP list_changed mid-turn appends nothing to the tools of that turn") {
  auto env = MakeEnv(R"([
    {"output": [{"function_call": "mcp__t__grow", "arguments": {}, "call_id": "grow"}]},
    {"output": [{"function_call": "mcp__t__grown", "arguments": {}, "call_id": "grown"}]},
    "ok"])",
                     TestServer("t", {}));
  auto run = Run(*env, {"exec", "go"});
  REQUIRE(run.exit_code == 0);
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 3);
  CHECK(requests[1].body["tools"].dump() == requests[0].body["tools"].dump());
  CHECK(requests[2].body["tools"].dump() == requests[0].body["tools"].dump());
  // The tool the server added is not offered in this turn, so calling it is unknown.
  CHECK(ModelOutput(*env, "grown").find("unknown tool") != std::string::npos);
}

TEST_CASE("codex mcp list --probe shows each server's state and tools, as text and --json") {
  const std::string config = TestServer("good", {}, "enabled_tools = [\"echo\", \"add\"]") +
                             TestServer("off", {}, "enabled = false") +
                             "[mcp_servers.bad]\ncommand = \"/nonexistent/server\"\n"
                             "[mcp_servers.tok]\nurl = \"http://127.0.0.1:9/mcp\"\n"
                             "bearer_token_env_var = \"CODEX_TEST_UNSET_TOKEN\"\n";
  auto env = MakeEnv(R"([])", config);
  auto text = Run(*env, {"mcp", "list", "--probe"});
  REQUIRE(text.exit_code == 0);
  CHECK(text.out.find("good  ready  stdio") != std::string::npos);
  CHECK(text.out.find("tools (2): add, echo") != std::string::npos);
  CHECK(text.out.find("off  disabled") != std::string::npos);
  CHECK(text.out.find("bad  failed") != std::string::npos);
  CHECK(text.out.find("error: cannot run '/nonexistent/server'") != std::string::npos);
  auto json = Run(*env, {"mcp", "list", "--probe", "--json"});
  REQUIRE(json.exit_code == 0);
  Json list = Json::parse(json.out);
  REQUIRE(list.size() == 4);
  CHECK(list[0]["name"] == "bad");
  CHECK(list[0]["state"] == "failed");
  CHECK(list[1]["name"] == "good");
  CHECK(list[1]["state"] == "ready");
  CHECK(list[1]["tools"] == Json::array({"add", "echo"}));
  CHECK(list[1]["protocol_version"] == "2025-06-18");
  CHECK(list[2]["state"] == "disabled");
  CHECK(list[3]["transport"] == "http");
  CHECK(list[3]["state"] == "failed");
  CHECK(list[3]["error"].get<std::string>().find("set CODEX_TEST_UNSET_TOKEN") !=
        std::string::npos);
  CHECK(env->server().requests_to("/responses").empty());
}

TEST_CASE("a namespaced MCP call (Codex's form) reaches the tool; the flat name still works") {
  auto env = MakeEnv(R"([
    {"output": [{"type": "function_call", "namespace": "mcp__t", "name": "echo",
                 "arguments": "{\"text\":\"via namespace\"}", "call_id": "ns"}]},
    {"output": [{"function_call": "mcp__t__echo", "arguments": {"text": "via flat"}, "call_id": "flat"}]},
    {"output": [{"type": "function_call", "namespace": "mcp__nope", "name": "echo",
                 "arguments": "{}", "call_id": "bad"}]},
    "done"])",
                     TestServer("t", {}));
  auto run = Run(*env, {"exec", "go"});
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  CHECK(ModelOutput(*env, "ns").find("echo: via namespace") != std::string::npos);
  CHECK(ModelOutput(*env, "flat").find("echo: via flat") != std::string::npos);
  // Codex 0.169's words for a namespaced function it has not got.
  CHECK(ModelOutput(*env, "bad") == "unsupported call: mcp__nopeecho");
  // The namespaced call item is resent with its namespace.
  const std::string input = env->server().requests_to("/responses").back().InputItems().dump();
  CHECK(input.find("\"namespace\":\"mcp__t\"") != std::string::npos);
}

TEST_CASE("codex mcp add/get/remove edit config.toml; mcp list reads it without starting servers") {
  auto env = MakeEnv(R"([])");
  // A server that would leave a mark if it were started.
  const auto mark = env->root() / "started";
  auto add =
      Run(*env, {"mcp", "add", "srv", "--env", "A=1", "--", "sh", "-c", "touch " + mark.string()});
  REQUIRE(add.exit_code == 0);
  CHECK(add.out == "Added global MCP server 'srv'.\n");
  REQUIRE(Run(*env, {"mcp", "add", "web", "--url", "https://example.com/mcp",
                     "--bearer-token-env-var", "TOK"})
              .exit_code == 0);
  auto list = Run(*env, {"mcp", "list"});
  REQUIRE(list.exit_code == 0);
  CHECK(list.out.find("Name  Command  Args") == 0);
  CHECK(list.out.find("srv   sh       -c touch") != std::string::npos);
  CHECK(list.out.find("A=*****") != std::string::npos);
  CHECK(list.out.find("web   https://example.com/mcp  TOK") != std::string::npos);
  auto json = Run(*env, {"mcp", "list", "--json"});
  Json servers = Json::parse(json.out);
  REQUIRE(servers.size() == 2);
  CHECK(servers[0]["transport"]["type"] == "stdio");
  CHECK(servers[0]["transport"]["env"]["A"] == "1");
  CHECK(servers[1]["transport"]["type"] == "streamable_http");
  CHECK(servers[1]["auth_status"] == "bearer_token");
  auto get = Run(*env, {"mcp", "get", "srv", "--json"});
  REQUIRE(get.exit_code == 0);
  CHECK(Json::parse(get.out)["transport"]["args"] == Json::array({"-c", "touch " + mark.string()}));
  CHECK_FALSE(std::filesystem::exists(mark));  // list and get never start a server

  auto missing = Run(*env, {"mcp", "get", "nope"});
  CHECK(missing.exit_code != 0);
  CHECK(missing.err.find("No MCP server named 'nope'") != std::string::npos);
  auto both = Run(*env, {"mcp", "add", "x", "--url", "https://e/mcp", "--", "cmd"});
  CHECK(both.exit_code == 2);
  auto bad_name = Run(*env, {"mcp", "add", "a b", "--", "cmd"});
  CHECK(bad_name.exit_code == 2);

  REQUIRE(Run(*env, {"mcp", "remove", "web"}).out == "Removed global MCP server 'web'.\n");
  CHECK(Run(*env, {"mcp", "remove", "web"}).out == "No MCP server named 'web' found.\n");
  CHECK(Json::parse(Run(*env, {"mcp", "list", "--json"}).out).size() == 1);
  CHECK(env->server().requests_to("/responses").empty());
}

namespace {

// Call `i` of the capture's resource calls, as a script's function call.
Json CapturedResourceCall(const Json& calls, size_t i) {
  return {{"function_call", calls[i]["name"]},
          {"arguments", calls[i]["arguments"]},
          {"call_id", "r" + std::to_string(i)}};
}

// `codex exec go` with `script` against the capture's two servers (required:
// waited for, so both are ready for the first call); fails the test unless
// it ends well.
std::unique_ptr<CodexTestEnv> RunWithResourceServers(const Json& script) {
  auto env = MakeEnv(script.dump(), TestServer("t", {"--resources"}, "required = true") +
                                        TestServer("u", {}, "required = true"));
  auto run = Run(*env, {"exec", "go"});
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  return env;
}

// Every call's output is the same bytes as Codex 0.169's.
void CheckCapturedOutputs(CodexTestEnv& env, const Json& calls) {
  for (size_t i = 0; i < calls.size(); ++i) {
    INFO("call " << i << ": " << calls[i]["name"] << " " << calls[i]["arguments"]);
    CHECK(ModelOutput(env, "r" + std::to_string(i)) == calls[i]["output"].get<std::string>());
  }
}

}  // namespace

TEST_CASE(
    "MCP resource tools: Codex 0.169's definitions, and every output the same bytes as Codex's") {
  // What Codex 0.169 sent for the same calls against the same servers.
  const Json capture = Json::parse(ReadFile(MCP_CODEX_CAPTURE));
  const Json& calls = capture["resource_calls"];
  REQUIRE(calls.size() >= 9);
  Json script = Json::array();
  for (size_t i = 0; i < calls.size(); ++i) {
    script.push_back({{"output", Json::array({CapturedResourceCall(calls, i)})}});
  }
  script.push_back("done");
  auto env = RunWithResourceServers(script);
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == calls.size() + 1);
  // Offered right after the command tools, exactly as Codex defines them.
  const Json& tools = requests[0].body["tools"];
  REQUIRE(tools.size() > 5);
  CHECK(tools[0]["name"] == "exec_command");
  CHECK(tools[1]["name"] == "write_stdin");
  for (size_t i = 0; i < 3; ++i) {
    CHECK(tools[i + 2].dump() == capture["mcp_resource_tools"][i].dump());
  }
  CheckCapturedOutputs(*env, calls);
}

TEST_CASE("MCP resource tools: the same calls in one response run together, the same outputs") {
  // Codex runs these tools in parallel: every captured call in one response,
  // against the same servers; each output is still Codex's, in call order.
  const Json capture = Json::parse(ReadFile(MCP_CODEX_CAPTURE));
  const Json& calls = capture["resource_calls"];
  REQUIRE(calls.size() >= 9);
  Json outputs = Json::array();
  for (size_t i = 0; i < calls.size(); ++i) outputs.push_back(CapturedResourceCall(calls, i));
  auto env = RunWithResourceServers(Json::array({{{"output", outputs}}, "done"}));
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 2);
  std::vector<std::string> order;
  for (const auto& item : requests[1].body["input"]) {
    if (item.value("type", "") == "function_call_output") order.push_back(item["call_id"]);
  }
  REQUIRE(order.size() == calls.size());
  for (size_t i = 0; i < calls.size(); ++i) CHECK(order[i] == "r" + std::to_string(i));
  CheckCapturedOutputs(*env, calls);
}

TEST_CASE(
    "MCP resource tools: Codex's errors for bad arguments, an unknown server; none offered "
    "without an enabled server") {
  auto env = MakeEnv(R"([
    {"output": [{"function_call": "list_mcp_resources", "arguments": {"cursor": "abc"}, "call_id": "cursor"}]},
    {"output": [{"function_call": "read_mcp_resource", "arguments": {"uri": "test://one"}, "call_id": "noserver"}]},
    {"output": [{"function_call": "read_mcp_resource", "arguments": {"server": "nope", "uri": "x"}, "call_id": "nope"}]},
    {"output": [{"function_call": "list_mcp_resources", "arguments": "not json", "call_id": "garbage"}]},
    {"output": [{"function_call": "list_mcp_resource_templates", "arguments": {}, "call_id": "tpl"}]},
    "done"])",
                     TestServer("t", {"--resources"}, "required = true"));
  auto run = Run(*env, {"exec", "go"});
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  // The texts Codex 0.169 sends for these.
  CHECK(ModelOutput(*env, "cursor") == "cursor can only be used when a server is specified");
  CHECK(ModelOutput(*env, "noserver") ==
        "failed to parse function arguments: missing field `server`");
  CHECK(ModelOutput(*env, "nope") == "unknown MCP server 'nope'");
  CHECK(ModelOutput(*env, "garbage").rfind("failed to parse function arguments: ", 0) == 0);
  CHECK(
      ModelOutput(*env, "tpl") ==
      R"({"resourceTemplates":[{"server":"t","uriTemplate":"test://item/{id}","name":"item","description":"An item by id"}]})");

  // Only a disabled server: no resource tools, and a call is an unknown tool.
  auto off = MakeEnv(R"([
    {"output": [{"function_call": "list_mcp_resources", "arguments": {}, "call_id": "off"}]},
    "done"])",
                     TestServer("t", {"--resources"}, "enabled = false"));
  REQUIRE(Run(*off, {"exec", "go"}).exit_code == 0);
  for (const auto& name : ToolNames(off->server().requests_to("/responses")[0])) {
    CHECK(name.find("mcp") == std::string::npos);
  }
  CHECK(ModelOutput(*off, "off") == "unknown tool 'list_mcp_resources'");
}

TEST_CASE(
    "MCP a server slow to start does not hold up the first request, and its tools do not join "
    "mid-turn") {
  const fs::path dir = fs::temp_directory_path() / ("mcp-slow-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path slow_gate = dir / "slow-gate";
  const fs::path call_gate = dir / "call-gate";
  const fs::path slow_log = dir / "slow.log";
  REQUIRE(::mkfifo(slow_gate.c_str(), 0600) == 0);
  REQUIRE(::mkfifo(call_gate.c_str(), 0600) == 0);
  // The model calls fast's gate tool, which answers when the test releases
  // call_gate; meanwhile the test lets the slow server finish starting.
  Json script =
      Json::array({{{"output", Json::array({{{"function_call", "mcp__fast__gate"},
                                             {"arguments", {{"path", call_gate.string()}}},
                                             {"call_id", "gate"}}})}},
                   "done"});
  auto env = MakeEnv(
      script.dump(),
      TestServer("fast", {}, "required = true") +
          TestServer("slow", {"--wait-file", slow_gate.string(), "--log", slow_log.string()},
                     "startup_timeout_sec = 600"));
  auto child = ChildProcess::Spawn(env->CodexCommand({"exec", "go"}));
  REQUIRE(child.ok());
  // The first request arrives while the slow server is held on its FIFO.
  REQUIRE(Eventually([&] { return !env->server().requests_to("/responses").empty(); }));
  CHECK(ReadFile(slow_log).find("waiting on " + slow_gate.string()) != std::string::npos);
  CHECK(ReadFile(slow_log).find("released") == std::string::npos);
  const RecordedRequest first = env->server().requests_to("/responses")[0];
  const auto names = ToolNames(first);
  CHECK(std::find(names.begin(), names.end(), "mcp__fast__gate") != names.end());
  for (const auto& n : names) CHECK(n.rfind("mcp__slow", 0) != 0);
  // Now the slow server starts before the turn's next request, which still
  // offers the turn's tools. codex notes "ready" in its log for the server
  // once it holds the server's tools.
  REQUIRE(ReleaseFifo(slow_gate));
  const fs::path codex_log = env->codex_home() / "log" / "mcp-slow.log";
  REQUIRE(Eventually([&] { return ReadFile(codex_log).find("ready: ") != std::string::npos; }));
  REQUIRE(ReleaseFifo(call_gate));
  auto done = (*child)->Wait(std::chrono::seconds(60));
  REQUIRE(done.ok());
  INFO(done->err);
  CHECK(done->exit_code == 0);
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 2);
  CHECK(McpResultText(OutputFor(requests[1].InputItems(), "gate")) == "gate open");
  CHECK(requests[1].body["tools"].dump() == first.body["tools"].dump());
  CHECK(done->err.find("MCP server 'slow'") == std::string::npos);  // it did start
  fs::remove_all(dir);
}

TEST_CASE("MCP interactive: a server slow to start joins at the next turn") {
  const fs::path dir = fs::temp_directory_path() / ("mcp-slow-tui-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path gate = dir / "gate";
  const fs::path server_log = dir / "slow.log";
  REQUIRE(::mkfifo(gate.c_str(), 0600) == 0);
  auto env =
      MakeEnv(R"(["first answer", "second answer"])",
              TestServer("slow", {"--wait-file", gate.string(), "--log", server_log.string()},
                         "startup_timeout_sec = 600"));
  ProcessOptions options = env->CodexCommand({});
  auto tui = PtyProcess::Spawn(options);
  REQUIRE(tui.ok());
  PtyProcess& p = **tui;
  const auto wait = std::chrono::seconds(30);
  REQUIRE(p.WaitForText("›", wait).ok());
  REQUIRE(p.Write("one\r").ok());
  REQUIRE(p.WaitForText("first answer", wait).ok());
  REQUIRE(env->server().requests_to("/responses").size() == 1);
  CHECK(ReadFile(server_log).find("released") == std::string::npos);  // still held
  for (const auto& n : ToolNames(env->server().requests_to("/responses")[0])) {
    CHECK(n.rfind("mcp__slow", 0) != 0);
  }
  // /mcp tells the user what is going on.
  REQUIRE(p.Write("/mcp\r").ok());
  REQUIRE(p.WaitForText("its tools are offered from the first turn after it is ready", wait).ok());
  CHECK(p.screen().Text().find("starting") != std::string::npos);
  REQUIRE(ReleaseFifo(gate));
  const fs::path codex_log = env->codex_home() / "log" / "mcp-slow.log";
  REQUIRE(Eventually([&] { return ReadFile(codex_log).find("ready: ") != std::string::npos; }));
  REQUIRE(p.Write("/mcp\r").ok());
  REQUIRE(p.WaitForText("tools: add, ask, crash, echo", wait).ok());
  REQUIRE(p.Write("two\r").ok());
  REQUIRE(p.WaitForText("second answer", wait).ok());
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 2);
  const auto names = ToolNames(requests[1]);
  CHECK(std::find(names.begin(), names.end(), "mcp__slow__echo") != names.end());
  // The part before the MCP tools is the same bytes in both turns.
  const std::string t1 = requests[0].body["tools"].dump();
  const std::string t2 = requests[1].body["tools"].dump();
  CHECK(t2.rfind(t1.substr(0, t1.size() - 1), 0) == 0);
  REQUIRE(p.Write("\x04").ok());  // Ctrl-D
  auto code = p.WaitExit(wait);
  REQUIRE(code.ok());
  CHECK(*code == 0);
  fs::remove_all(dir);
}

TEST_CASE(
    "MCP namespace as Codex 0.169 sends it: server instructions, names to [A-Za-z0-9_], every "
    "schema shape rewritten the same bytes") {
  const Json capture = Json::parse(ReadFile(MCP_CODEX_CAPTURE));
  auto env = MakeEnv(R"([
    {"output": [{"type": "function_call", "namespace": "mcp__my_srv", "name": "rich_shape_x",
                 "arguments": "{}", "call_id": "rich"}]},
    "done"])",
                     TestServer("my-srv", {"--rich-schema"}, "required = true"));
  auto run = Run(*env, {"exec", "go"});
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 2);
  Json ns;
  for (const auto& t : requests[0].body["tools"]) {
    if (t.value("type", "") == "namespace") ns = t;
  }
  REQUIRE(ns.is_object());
  CHECK(ns.dump() == capture["rich_namespace"].dump());
  // The sanitised names reach the server's own tool.
  CHECK(ModelOutput(*env, "rich").find("unknown tool rich.shape-x") != std::string::npos);
}

}  // namespace
}  // namespace codex::testing
