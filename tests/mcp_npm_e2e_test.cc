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
  REQUIRE_FALSE(everything.empty());
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
  CHECK(CountLines(run2.err, "MCP server 'gone' failed to start:") == 1);
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
