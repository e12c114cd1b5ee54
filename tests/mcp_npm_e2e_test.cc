// End-to-end tests of codex against MCP servers nobody here wrote:
// @modelcontextprotocol/server-everything (stdio and streamable HTTP) and
// @modelcontextprotocol/server-filesystem from npm, installed at pinned
// versions into <build>/mcp-servers by scripts/install-mcp-test-servers.sh.
// Without Node or the packages the binary prints why and exits 4 (skipped).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "testing/skip.h"
#include "tests/catch_run.h"
#include "tests/mcp/mcp_e2e_helpers.h"

namespace codex::testing {
namespace {

using namespace mcp_e2e;

std::string NpmServer(const std::string& package) {
  const fs::path index = fs::path(MCP_NPM_SERVERS_DIR) / "node_modules" / "@modelcontextprotocol" /
                         package / "dist" / "index.js";
  return fs::exists(index) ? index.string() : "";
}

bool HaveNode() { return std::system("node --version >/dev/null 2>&1") == 0; }

TEST_CASE("npm @modelcontextprotocol/server-everything and server-filesystem through codex") {
  const std::string everything = NpmServer("server-everything");
  const std::string filesystem = NpmServer("server-filesystem");
  REQUIRE_FALSE(everything.empty());
  REQUIRE_FALSE(filesystem.empty());
  auto env = MakeEnv(
      R"([
    {"output": [{"function_call": "mcp__everything__echo", "arguments": {"message": "hello npm"}, "call_id": "echo"}]},
    {"output": [{"function_call": "mcp__everything__get-sum", "arguments": {"a": 40, "b": 2}, "call_id": "sum"}]},
    {"output": [{"function_call": "mcp__everything__get-tiny-image", "arguments": {}, "call_id": "img"}]},
    {"output": [{"function_call": "mcp__files__read_text_file", "arguments": {"path": "notes.txt"}, "call_id": "read"}]},
    {"output": [{"function_call": "mcp__files__read_text_file", "arguments": {"path": "/etc/hostname"}, "call_id": "outside"}]},
    "done"])",
      "[mcp_servers.everything]\ncommand = \"node\"\nargs = [" + Quoted(everything) +
          ", \"stdio\"]\nstartup_timeout_sec = 60\nrequired = true\n[mcp_servers.files]\ncommand = "
          "\"node\"\n"
          "args = [" +
          Quoted(filesystem) + ", \".\"]\nstartup_timeout_sec = 60\nrequired = true\n");
  // required = true: codex waits for them (node takes longer than the one
  // second a server that is not required is waited for).
  { std::ofstream(env->workdir() / "notes.txt") << "notes for the filesystem server\n"; }
  auto run = Run(*env, {"exec", "--json", "go"});
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 6);
  const auto names = ToolNames(requests[0]);
  CHECK(std::find(names.begin(), names.end(), "mcp__everything__echo") != names.end());
  CHECK(std::find(names.begin(), names.end(), "mcp__files__read_text_file") != names.end());
  // server-everything's namespace, the same bytes as Codex 0.169 sent (its
  // instructions as the description, get-sum as get_sum, schemas rewritten),
  // less the two elicitation tools the server offers only to a client that
  // declares elicitation, as Codex does.
  {
    Json expected = Json::parse(ReadFile(MCP_CODEX_CAPTURE))["everything_namespace"];
    Json kept = Json::array();
    for (const auto& t : expected["tools"]) {
      if (t["name"].get<std::string>().find("elicitation") == std::string::npos) kept.push_back(t);
    }
    expected["tools"] = kept;
    Json offered;
    for (const auto& t : requests[0].body["tools"]) {
      if (t.value("name", "") == "mcp__everything") offered = t;
    }
    CHECK(offered.dump() == expected.dump());
  }
  // Sorted by server, then tool, after the built-in tools.
  const auto first_mcp = std::find_if(
      names.begin(), names.end(), [](const std::string& n) { return n.rfind("mcp__", 0) == 0; });
  CHECK(first_mcp != names.begin());  // the built-in tools come first
  std::vector<std::string> mcp(first_mcp, names.end());
  REQUIRE_FALSE(mcp.empty());
  for (const auto& n : mcp) CHECK(n.rfind("mcp__", 0) == 0);
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

  auto list = Run(*env, {"mcp", "list", "--probe", "--json"});
  REQUIRE(list.exit_code == 0);
  Json servers = Json::parse(list.out);
  REQUIRE(servers.size() == 2);
  for (const auto& s : servers) CHECK(s["state"] == "ready");
}

// The major version of the `node` on PATH ("v18.20.4" -> 18), 0 if unknown.
int NodeMajorVersion() {
  ProcessOptions node;
  node.argv = {"node", "--version"};
  auto r = RunProcess(node);
  if (!r.ok() || r->exit_code != 0 || r->out.size() < 2 || r->out[0] != 'v') return 0;
  return std::atoi(r->out.c_str() + 1);
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

TEST_CASE(
    "npm server-everything's resources through Codex's resource tools, as Codex 0.169 "
    "returns them") {
  const std::string everything = NpmServer("server-everything");
  REQUIRE_FALSE(everything.empty());
  const Json capture = Json::parse(ReadFile(MCP_CODEX_CAPTURE));
  const Json& calls = capture["everything_resource_calls"];
  REQUIRE(calls.size() == 3);
  Json script = Json::array();
  for (size_t i = 0; i < calls.size(); ++i) {
    script.push_back({{"output", Json::array({{{"function_call", calls[i]["name"]},
                                               {"arguments", calls[i]["arguments"]},
                                               {"call_id", "r" + std::to_string(i)}}})}});
  }
  script.push_back(
      {{"output",
        Json::array(
            {{{"function_call", "read_mcp_resource"},
              {"arguments", {{"server", "everything"}, {"uri", "demo://resource/dynamic/blob/7"}}},
              {"call_id", "blob"}}})}});
  script.push_back("done");
  auto env = MakeEnv(script.dump(),
                     "[mcp_servers.everything]\ncommand = \"node\"\nargs = [" + Quoted(everything) +
                         ", \"stdio\"]\nstartup_timeout_sec = 60\nrequired = true\n");
  auto run = Run(*env, {"exec", "go"});
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  for (size_t i = 0; i < calls.size(); ++i) {
    INFO("call " << i << ": " << calls[i]["name"] << " " << calls[i]["arguments"]);
    CHECK(ModelOutput(*env, "r" + std::to_string(i)) == calls[i]["output"].get<std::string>());
  }
  // A blob (its text names the time it was made): Codex's shape, base64 kept.
  Json blob = Json::parse(ModelOutput(*env, "blob"), nullptr, false);
  REQUIRE(blob.is_object());
  CHECK(blob["server"] == "everything");
  CHECK(blob["uri"] == "demo://resource/dynamic/blob/7");
  REQUIRE(blob["contents"].size() == 1);
  CHECK(blob["contents"][0]["blob"].is_string());
  CHECK_FALSE(blob["contents"][0].contains("text"));
}

TEST_CASE("streamable HTTP: server-everything over HTTP (POST, SSE answers, Mcp-Session-Id)") {
  const std::string everything = NpmServer("server-everything");
  REQUIRE_FALSE(everything.empty());
  const int port = FreePort();
  ProcessOptions server;
  // Node 18 (Debian 12's) has the global `crypto` the SDK's HTTP server calls
  // only behind this flag (scripts/install-mcp-test-servers.sh says more).
  server.argv = {"node"};
  if (NodeMajorVersion() == 18) server.argv.push_back("--experimental-global-webcrypto");
  server.argv.insert(server.argv.end(), {everything, "streamableHttp"});
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
  auto env = MakeEnv(
      R"([
    {"output": [{"function_call": "mcp__web__echo", "arguments": {"message": "over http"}, "call_id": "echo"}]},
    {"output": [{"function_call": "mcp__web__get-sum", "arguments": {"a": 1, "b": 2}, "call_id": "sum"}]},
    "done"])",
      "[mcp_servers.web]\nurl = " + Quoted(url) +
          "\nhttp_headers = { X-Test = \"yes\" }\nstartup_timeout_sec = 30\nrequired = true\n");
  auto run = Run(*env, {"exec", "go"});
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 3);
  const auto names = ToolNames(requests[0]);
  CHECK(std::find(names.begin(), names.end(), "mcp__web__echo") != names.end());
  CHECK(ModelOutput(*env, "echo").find("over http") != std::string::npos);
  CHECK(ModelOutput(*env, "sum").find("3") != std::string::npos);
  auto list = Run(*env, {"mcp", "list", "--probe", "--json"});
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
  // One line: failed, or (when the turn was over before the connection
  // attempts gave up) still starting.
  INFO(run2.err);
  CHECK(CountLines(run2.err, "MCP server 'gone'") == 1);
  CHECK(CountLines(run2.err, "MCP server 'gone' failed to start:") +
            CountLines(run2.err, "MCP server 'gone' was still starting") ==
        1);
}

}  // namespace
}  // namespace codex::testing

int main(int argc, char** argv) {
  using codex::testing::HaveNode;
  using codex::testing::NpmServer;
  if (!HaveNode()) {
    codex::testing::SkipTest("node is not installed (scripts/install-deps.sh installs it)");
  }
  if (NpmServer("server-everything").empty() || NpmServer("server-filesystem").empty()) {
    codex::testing::SkipTest(std::string("the npm MCP servers are not in ") + MCP_NPM_SERVERS_DIR +
                             "; run scripts/install-mcp-test-servers.sh");
  }
  return codex::testing::RunCatch(argc, argv);
}
