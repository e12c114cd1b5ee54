// End-to-end tests of the MCP client through the real `codex` binary (issue
// 16): [mcp_servers] config errors, tools offered after the built-in ones in
// a byte-stable order (20 requests, two servers, and across resume), result
// mapping (text, structured, image, resource, isError), truncation, faults of
// the in-repo mcp-test-server (crash mid-call, slow start, garbage frames,
// huge output, tool timeout, Ctrl-C cancellation), stderr to the log,
// environment filtering, approvals, `codex mcp list`, and the third-party
// npm servers @modelcontextprotocol/server-everything and server-filesystem
// (skipped with a printed reason when Node or the packages are absent).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e_checks.h"
#include "tests/e2e_support.h"

namespace codex::testing {
namespace {

namespace fs = std::filesystem;
using e2e::InputExtends;
using e2e::JsonLines;
using e2e::OutputFor;

std::string Quoted(const std::string& s) { return Json(s).dump(); }

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// A [mcp_servers.NAME] table running mcp-test-server with `args`.
std::string TestServer(const std::string& name, const std::vector<std::string>& args,
                       const std::string& extra = "") {
  std::string a = "[";
  for (size_t i = 0; i < args.size(); ++i) a += (i ? ", " : "") + Quoted(args[i]);
  a += "]";
  return "[mcp_servers." + name + "]\ncommand = " + Quoted(MCP_TEST_SERVER) + "\nargs = " + a +
         "\n" + extra + "\n";
}

std::unique_ptr<CodexTestEnv> MakeEnv(std::string_view script, const std::string& config) {
  CodexTestEnvOptions options;
  options.extra_config = config;
  auto env = CodexTestEnv::Create(script, options);
  REQUIRE(env.ok());
  return std::move(*env);
}

ProcessResult Run(CodexTestEnv& env, std::vector<std::string> args,
                  std::map<std::string, std::string> extra_env = {}) {
  ProcessOptions p = env.CodexCommand(std::move(args));
  for (auto& [k, v] : extra_env) p.env[k] = v;
  auto run = RunProcess(p);
  REQUIRE(run.ok());
  INFO("stdout: " << run->out << "\nstderr: " << run->err);
  REQUIRE_FALSE(run->timed_out);
  return *run;
}

std::string ModelOutput(CodexTestEnv& env, const std::string& call_id) {
  auto requests = env.server().requests_to("/responses");
  REQUIRE_FALSE(requests.empty());
  return OutputFor(requests.back().InputItems(), call_id);
}

std::vector<std::string> ToolNames(const RecordedRequest& r) {
  std::vector<std::string> names;
  for (const auto& t : r.body.value("tools", Json::array())) names.push_back(t.value("name", ""));
  return names;
}

std::vector<Json> CompletedItems(const std::string& out, const std::string& type) {
  std::vector<Json> items;
  for (const auto& e : JsonLines(out)) {
    if (e.is_object() && e.value("type", "") == "item.completed" &&
        e["item"].value("type", "") == type) {
      items.push_back(e["item"]);
    }
  }
  return items;
}

int CountLines(const std::string& text, const std::string& needle) {
  int n = 0;
  size_t pos = 0;
  while ((pos = text.find(needle, pos)) != std::string::npos) {
    ++n;
    pos += needle.size();
  }
  return n;
}

TEST_CASE("MCP config: bad [mcp_servers] entries are one-line errors naming the server and key") {
  struct Case {
    std::string toml;
    std::string expect;
  };
  const std::vector<Case> cases = {
      {"[mcp_servers.fs]\ncommand = 5\n", "mcp_servers.fs.command must be a string"},
      {"[mcp_servers.fs]\ncomand = \"x\"\n", "mcp_servers.fs has an unknown key 'comand'"},
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
  const std::vector<std::string> server_tools = {"add",  "crash", "echo",     "fail", "grow",
                                                 "huge", "image", "resource", "slow"};
  std::vector<std::string> expected = {"shell", "apply_patch", "update_plan"};
  for (const auto& t : server_tools) expected.push_back("mcp__alpha__" + t);
  expected.push_back("mcp__some__add");
  expected.push_back("mcp__some__echo");
  for (const auto& t : server_tools) expected.push_back("mcp__zeta__" + t);
  CHECK(names == expected);
  // The definition: a function whose parameters are the server's inputSchema.
  for (const auto& t : requests[0].body["tools"]) {
    if (t.value("name", "") != "mcp__alpha__echo") continue;
    CHECK(t["type"] == "function");
    CHECK(t["description"] == "Echoes the text back");
    CHECK(t["parameters"]["properties"].contains("text"));
    CHECK(t["strict"] == false);
  }
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
  CHECK(tools.find("mcp__alpha__echo") != std::string::npos);
  CHECK(tools.find("mcp__beta__add") != std::string::npos);
  for (size_t i = 1; i < requests.size(); ++i) {
    INFO("request " << i);
    CHECK(requests[i].body["tools"].dump() == tools);
    CHECK(InputExtends(requests[i - 1], requests[i]));
  }
  CHECK(ModelOutput(*env, "c1") == R"([{"type":"text","text":"echo: n1"}])");
  CHECK(ModelOutput(*env, "c0") == R"({"sum":3.0})");
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
  CHECK(ModelOutput(*env, "echo") == R"([{"type":"text","text":"echo: hi"}])");
  CHECK(ModelOutput(*env, "add") == R"({"sum":5.0})");
  Json img = Json::parse(ModelOutput(*env, "img"));
  REQUIRE(img.is_array());
  REQUIRE(img.size() == 2);
  CHECK(img[0] == Json({{"type", "input_text"}, {"text", "a tiny image"}}));
  CHECK(img[1] ==
        Json({{"type", "input_image"}, {"image_url", "data:image/png;base64,iVBORw0KGgo="}}));
  const std::string res = ModelOutput(*env, "res");
  CHECK(Json::parse(res)[0]["resource"]["text"] == "resource text");
  CHECK(ModelOutput(*env, "fail") == R"([{"type":"text","text":"the tool failed on purpose"}])");
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
  CHECK(crash.find("tool call error") != std::string::npos);
  CHECK(crash.find("exited with code 3") != std::string::npos);
  CHECK(ModelOutput(*env, "after").find("not running") != std::string::npos);
  CHECK(ModelOutput(*env, "noise") == R"([{"type":"text","text":"echo: through noise"}])");
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
  CHECK(ModelOutput(*env, "ro") == R"([{"type":"text","text":"echo: ro"}])");
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
  CHECK(ModelOutput(*env2, "add") == R"({"sum":2.0})");
  CHECK(ModelOutput(*env2, "grow").find("needs the user's approval") != std::string::npos);
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

TEST_CASE("codex mcp list shows each server's state and tools, as text and --json") {
  const std::string config = TestServer("good", {}, "enabled_tools = [\"echo\", \"add\"]") +
                             TestServer("off", {}, "enabled = false") +
                             "[mcp_servers.bad]\ncommand = \"/nonexistent/server\"\n";
  auto env = MakeEnv(R"([])", config);
  auto text = Run(*env, {"mcp", "list"});
  REQUIRE(text.exit_code == 0);
  CHECK(text.out.find("good  ready  stdio") != std::string::npos);
  CHECK(text.out.find("tools (2): add, echo") != std::string::npos);
  CHECK(text.out.find("off  disabled") != std::string::npos);
  CHECK(text.out.find("bad  failed") != std::string::npos);
  CHECK(text.out.find("error: cannot run '/nonexistent/server'") != std::string::npos);
  auto json = Run(*env, {"mcp", "list", "--json"});
  REQUIRE(json.exit_code == 0);
  Json list = Json::parse(json.out);
  REQUIRE(list.size() == 3);
  CHECK(list[0]["name"] == "bad");
  CHECK(list[0]["state"] == "failed");
  CHECK(list[1]["name"] == "good");
  CHECK(list[1]["state"] == "ready");
  CHECK(list[1]["tools"] == Json::array({"add", "echo"}));
  CHECK(list[1]["protocol_version"] == "2025-06-18");
  CHECK(list[2]["state"] == "disabled");
  CHECK(env->server().requests_to("/responses").empty());
}

// ---- third-party servers from npm ----

std::string NpmServer(const std::string& package) {
  const fs::path index = fs::path(MCP_NPM_SERVERS_DIR) / "node_modules" / "@modelcontextprotocol" /
                         package / "dist" / "index.js";
  return fs::exists(index) ? index.string() : "";
}

bool HaveNode() { return std::system("node --version >/dev/null 2>&1") == 0; }

TEST_CASE("npm @modelcontextprotocol/server-everything and server-filesystem through codex") {
  const std::string everything = NpmServer("server-everything");
  const std::string filesystem = NpmServer("server-filesystem");
  if (!HaveNode() || everything.empty() || filesystem.empty()) {
    WARN(
        "skipped: node or the npm MCP servers are absent; run scripts/install-mcp-test-servers.sh");
    return;
  }
  auto env = MakeEnv(
      R"([
    {"output": [{"function_call": "mcp__everything__echo", "arguments": {"message": "hello npm"}, "call_id": "echo"}]},
    {"output": [{"function_call": "mcp__everything__get-sum", "arguments": {"a": 40, "b": 2}, "call_id": "sum"}]},
    {"output": [{"function_call": "mcp__everything__get-tiny-image", "arguments": {}, "call_id": "img"}]},
    {"output": [{"function_call": "mcp__files__read_text_file", "arguments": {"path": "notes.txt"}, "call_id": "read"}]},
    {"output": [{"function_call": "mcp__files__read_text_file", "arguments": {"path": "/etc/hostname"}, "call_id": "outside"}]},
    "done"])",
      "[mcp_servers.everything]\ncommand = \"node\"\nargs = [" + Quoted(everything) +
          ", \"stdio\"]\nstartup_timeout_sec = 60\n[mcp_servers.files]\ncommand = \"node\"\n"
          "args = [" +
          Quoted(filesystem) + ", \".\"]\nstartup_timeout_sec = 60\n");
  { std::ofstream(env->workdir() / "notes.txt") << "notes for the filesystem server\n"; }
  auto run = Run(*env, {"exec", "--json", "go"});
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 6);
  const auto names = ToolNames(requests[0]);
  CHECK(std::find(names.begin(), names.end(), "mcp__everything__echo") != names.end());
  CHECK(std::find(names.begin(), names.end(), "mcp__files__read_text_file") != names.end());
  // Sorted by server, then tool, after the built-in tools.
  std::vector<std::string> mcp(names.begin() + 3, names.end());
  CHECK(std::is_sorted(mcp.begin(), mcp.end()));
  CHECK(mcp.front().rfind("mcp__everything__", 0) == 0);
  CHECK(mcp.back().rfind("mcp__files__", 0) == 0);
  for (size_t i = 1; i < requests.size(); ++i) {
    CHECK(requests[i].body["tools"].dump() == requests[0].body["tools"].dump());
  }
  CHECK(ModelOutput(*env, "echo").find("hello npm") != std::string::npos);
  CHECK(ModelOutput(*env, "sum").find("42") != std::string::npos);
  Json img = Json::parse(ModelOutput(*env, "img"));
  bool image = false;
  for (const auto& part : img) {
    image = image || (part.value("type", "") == "input_image" &&
                      part.value("image_url", "").rfind("data:image/png;base64,", 0) == 0);
  }
  CHECK(image);
  CHECK(ModelOutput(*env, "read").find("notes for the filesystem server") != std::string::npos);
  const std::string outside = ModelOutput(*env, "outside");
  CHECK(outside.find("notes for") == std::string::npos);
  CHECK(outside.find("denied") != std::string::npos);
  auto items = CompletedItems(run.out, "mcp_tool_call");
  REQUIRE(items.size() == 5);
  CHECK(items[0]["server"] == "everything");
  CHECK(items[0]["status"] == "completed");
  CHECK(items[4]["server"] == "files");
  CHECK(items[4]["status"] == "failed");

  auto list = Run(*env, {"mcp", "list", "--json"});
  REQUIRE(list.exit_code == 0);
  Json servers = Json::parse(list.out);
  REQUIRE(servers.size() == 2);
  for (const auto& s : servers) CHECK(s["state"] == "ready");
}

// A free TCP port on 127.0.0.1 (bound, read, released).
int FreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  socklen_t len = sizeof addr;
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
  ::close(fd);
  return ntohs(addr.sin_port);
}

bool Accepts(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return ok;
}

TEST_CASE("streamable HTTP: server-everything over HTTP (POST, SSE answers, Mcp-Session-Id)") {
  const std::string everything = NpmServer("server-everything");
  if (!HaveNode() || everything.empty()) {
    WARN(
        "skipped: node or @modelcontextprotocol/server-everything is absent; run "
        "scripts/install-mcp-test-servers.sh");
    return;
  }
  const int port = FreePort();
  ProcessOptions server;
  server.argv = {"node", everything, "streamableHttp"};
  server.env["PORT"] = std::to_string(port);
  auto child = ChildProcess::Spawn(server);
  REQUIRE(child.ok());
  bool up = false;
  for (int i = 0; i < 600 && !up; ++i) {
    up = Accepts(port);
    if (!up) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  REQUIRE(up);
  const std::string url = "http://127.0.0.1:" + std::to_string(port) + "/mcp";
  auto env = MakeEnv(R"([
    {"output": [{"function_call": "mcp__web__echo", "arguments": {"message": "over http"}, "call_id": "echo"}]},
    {"output": [{"function_call": "mcp__web__get-sum", "arguments": {"a": 1, "b": 2}, "call_id": "sum"}]},
    "done"])",
                     "[mcp_servers.web]\nurl = " + Quoted(url) +
                         "\nhttp_headers = { X-Test = \"yes\" }\nstartup_timeout_sec = 30\n");
  auto run = Run(*env, {"exec", "go"});
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 3);
  const auto names = ToolNames(requests[0]);
  CHECK(std::find(names.begin(), names.end(), "mcp__web__echo") != names.end());
  CHECK(ModelOutput(*env, "echo").find("over http") != std::string::npos);
  CHECK(ModelOutput(*env, "sum").find("3") != std::string::npos);
  auto list = Run(*env, {"mcp", "list", "--json"});
  REQUIRE(list.exit_code == 0);
  Json servers = Json::parse(list.out);
  REQUIRE(servers.size() == 1);
  CHECK(servers[0]["transport"] == "http");
  CHECK(servers[0]["url"] == url);
  CHECK(servers[0]["state"] == "ready");

  // A url nobody serves fails in one line; the session goes on.
  auto env2 = MakeEnv(R"(["fine"])", "[mcp_servers.gone]\nurl = \"http://127.0.0.1:" +
                                         std::to_string(FreePort()) + "/mcp\"\n");
  auto run2 = Run(*env2, {"exec", "go"});
  REQUIRE(run2.exit_code == 0);
  CHECK(CountLines(run2.err, "MCP server 'gone' failed to start:") == 1);
}

}  // namespace
}  // namespace codex::testing
