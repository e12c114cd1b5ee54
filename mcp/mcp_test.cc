// Unit tests of the MCP pieces below the CLI: Codex's tool-name
// qualification, the result mapping, the approval rule, and McpManager with
// the tool router against the real mcp-test-server process (pagination,
// list_changed applied at the next turn only, cancellation, a crash), and
// what the streamable HTTP transport sends and makes of a server's refusal.
#include <fcntl.h>
#include <httplib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/mcp_tools.h"
#include "core/tool_router.h"
#include "mcp/manager.h"
#include "mcp/transport.h"
#include "testing/files.h"
#include "testing/loopback_http_server.h"
#include "testing/temp_dir.h"
#include "testing/wait.h"

namespace codex::mcp {
namespace {

namespace fs = std::filesystem;
using codex::testing::Eventually;
using codex::testing::ReleaseFifo;

TEST_CASE(
    "Qualified names: mcp__server__tool, sanitised, hashed past 64 bytes, duplicates skipped") {
  auto names = core::QualifyMcpToolNames({
      {"fs", "read_file"},
      {"srv", "tool.with.dots_and_a_really_long_name_that_goes_on_and_on"},
      {"a", "b.c"},
      {"a", "b_c"},         // sanitises to the same name as b.c: skipped
      {"fs", "read_file"},  // exact repeat: skipped
      {"x", ""},
  });
  REQUIRE(names.size() == 6);
  CHECK(names[0] == "mcp__fs__read_file");
  CHECK(names[1] == "mcp__srv__tool_with_dots2c99afa9697e5ccc54d48fba48447bd5fe229364");
  CHECK(names[1].size() == 64);
  CHECK(names[2] == "mcp__a__b_c");
  CHECK(names[3].empty());
  CHECK(names[4].empty());
  CHECK(names[5] == "mcp__x__");
  // The namespace form (Codex 0.169) keeps only [A-Za-z0-9_].
  CHECK(core::SanitizeMcpName("mcp__my-srv") == "mcp__my_srv");
  CHECK(core::SanitizeMcpName("rich.shape-x") == "rich_shape_x");
}

TEST_CASE("Result mapping as Codex 0.169: wall-time header, structured as text, else input items") {
  using J = nlohmann::ordered_json;
  const std::string header = "Wall time: 0.0125 seconds\nOutput:";
  auto out = core::FormatMcpResult(
      R"({"content":[{"type":"text","text":"t"}],"structuredContent":{"k":1}})", 10240, 0.0125);
  CHECK(out.output_json == J(header + "\n{\"k\":1}").dump());
  CHECK(out.success);
  out = core::FormatMcpResult(R"({"content":[{"type":"text","text":"bad"}],"isError":true})", 10240,
                              0.0125);
  CHECK(out.output_json == J::array({{{"type", "input_text"}, {"text", header}},
                                     {{"type", "input_text"}, {"text", "bad"}}})
                               .dump());
  CHECK_FALSE(out.success);
  out = core::FormatMcpResult(
      R"({"content":[{"type":"image","data":"data:image/gif;base64,R0","mimeType":"image/gif"},{"type":"audio","data":"x"}]})",
      10240, 2);
  CHECK(
      out.output_json ==
      R"([{"type":"input_text","text":"Wall time: 2.0000 seconds\nOutput:"},{"type":"input_image","image_url":"data:image/gif;base64,R0"},{"type":"input_text","text":"{\"type\":\"audio\",\"data\":\"x\"}"}])");
  out = core::FormatMcpResult(
      R"({"content":[{"type":"text","text":")" + std::string(50000, 'y') + R"("}]})", 1000, 0);
  CHECK(out.output_json.size() < 1400);
  CHECK(out.output_json.find("omitted") != std::string::npos);
  out = core::FormatMcpResult("[]", 10240, 0);
  CHECK_FALSE(out.success);
  // An error as Codex 0.169 sends it: the header, then the text, not a
  // JSON-encoded content array.
  out = core::FormatMcpError("tool call error: boom", 0.5);
  CHECK(out.output_json ==
        J::array({{{"type", "input_text"}, {"text", "Wall time: 0.5000 seconds\nOutput:"}},
                  {{"type", "input_text"}, {"text", "tool call error: boom"}}})
            .dump());
  CHECK_FALSE(out.success);
}

TEST_CASE("Approval rule for MCP calls") {
  using core::ApprovalPolicy;
  using core::SandboxMode;
  core::McpToolInfo plain;
  core::McpToolInfo ro;
  ro.read_only_hint = true;
  core::McpToolInfo destructive;
  destructive.destructive_hint = true;
  core::McpToolInfo open_world;
  open_world.read_only_hint = false;
  open_world.open_world_hint = true;
  const auto ws = SandboxMode::kWorkspaceWrite;
  CHECK_FALSE(core::McpCallNeedsApproval(ApprovalPolicy::kNever, ws, destructive));
  CHECK(core::McpCallNeedsApproval(ApprovalPolicy::kUntrusted, ws, plain));
  CHECK_FALSE(core::McpCallNeedsApproval(ApprovalPolicy::kUntrusted, ws, ro));
  CHECK(core::McpCallNeedsApproval(ApprovalPolicy::kOnRequest, ws, destructive));
  CHECK(core::McpCallNeedsApproval(ApprovalPolicy::kOnFailure, ws, open_world));
  CHECK_FALSE(core::McpCallNeedsApproval(ApprovalPolicy::kOnRequest, ws, plain));
  CHECK_FALSE(core::McpCallNeedsApproval(ApprovalPolicy::kOnRequest, SandboxMode::kDangerFullAccess,
                                         destructive));
  CHECK(core::McpCallNeedsApproval(ApprovalPolicy::kUntrusted, SandboxMode::kDangerFullAccess,
                                   plain));
}

struct Fixture {
  Fixture(std::vector<std::string> args, int64_t tool_timeout_ms = 60'000) {
    home = dir.str();
    config.codex_home = home;
    config.cwd = home;
    core::McpServerConfig s;
    s.name = "t";
    s.command = MCP_TEST_SERVER;
    s.args = std::move(args);
    s.tool_timeout_ms = tool_timeout_ms;
    config.mcp_servers["t"] = s;
  }
  codex::testing::TempDir dir{"mcp-test-"};
  std::string home;
  core::Config config;
};

class NullObserver : public core::TurnObserver {};

// Collects the notices the router shows when a turn starts.
class NoticeObserver : public core::TurnObserver {
 public:
  void OnNotice(std::string_view message) override { notices.emplace_back(message); }
  std::vector<std::string> notices;
};

class NullRunner : public core::CommandRunner {
 public:
  Result<core::CommandResult> Run(const core::CommandSpec&, const core::CancelToken&) override {
    return InternalError("no commands here");
  }
};

TEST_CASE("McpManager: paginated list, list_changed applied at the next turn, through the router") {
  Fixture f({"--page-size", "2"});
  McpManager manager(f.config, sandbox::EnvPolicy{});
  auto failures = manager.StartAll();
  REQUIRE(failures.ok());
  CHECK(failures->empty());
  NullRunner runner;
  NullObserver observer;
  core::ToolRouter router(f.config, runner, nullptr, observer);
  const std::string builtin = router.ToolsJson();
  router.set_mcp_tools(&manager);
  CHECK(router.ToolsJson() == builtin);  // nothing changes before a turn starts
  router.BeginTurn();
  const std::string turn1 = router.ToolsJson();
  CHECK(turn1.size() > builtin.size());
  CHECK(turn1.find(R"("type":"namespace","name":"mcp__t")") != std::string::npos);
  CHECK(turn1.find(R"("name":"slow")") != std::string::npos);
  CHECK(turn1.find(R"("name":"grown")") == std::string::npos);

  core::Item call;
  call.kind = core::ItemKind::kFunctionCall;
  call.call_id = "c1";
  call.body = R"({"type":"function_call","name":"mcp__t__grow","arguments":"{}","call_id":"c1"})";
  core::CancelToken cancel;
  auto out = router.Dispatch(call, cancel);
  REQUIRE(out.ok());
  CHECK(out->output.body.find("grown") != std::string::npos);
  // The server sent notifications/tools/list_changed before this answer, on
  // the same stream, read in order by one thread: it has arrived. The tools
  // stay as they were for this turn.
  CHECK(router.ToolsJson() == turn1);
  router.BeginTurn();
  CHECK(router.ToolsJson().find(R"("name":"grown")") != std::string::npos);
  // And the next turn without a change is the same bytes again.
  const std::string turn2 = router.ToolsJson();
  router.BeginTurn();
  CHECK(router.ToolsJson() == turn2);
}

TEST_CASE("McpManager: cancel and crash during calls") {
  Fixture f({});
  const std::string log = f.home + "/t.log";
  f.config.mcp_servers["t"].args = {"--log", log};
  McpManager manager(f.config, sandbox::EnvPolicy{});
  REQUIRE(manager.StartAll().ok());
  core::CancelToken cancel;
  // Cancelled once the server has the call (its log says so): the call is
  // interrupted in flight, not refused before it was sent.
  bool server_had_it = false;
  std::thread canceller([&] {
    server_had_it = Eventually([&] {
      return codex::testing::ReadFile(log).find(R"("name":"slow")") != std::string::npos;
    });
    cancel.Cancel();
  });
  auto slow = manager.CallTool("t", "slow", R"({"ms":30000})", cancel);
  canceller.join();
  CHECK(server_had_it);
  REQUIRE_FALSE(slow.ok());
  CHECK(slow.status().code() == StatusCode::kCancelled);
  // And the server was told: it dropped that pending call ("cancelled <id>").
  CHECK(Eventually(
      [&] { return codex::testing::ReadFile(log).find("\ncancelled ") != std::string::npos; }));
  core::CancelToken fresh;
  auto echo = manager.CallTool("t", "echo", R"({"text":"still here"})", fresh);
  REQUIRE(echo.ok());
  CHECK(echo->find("still here") != std::string::npos);
  auto crash = manager.CallTool("t", "crash", "{}", fresh);
  REQUIRE_FALSE(crash.ok());
  CHECK(crash.status().code() == StatusCode::kUnavailable);
  CHECK(crash.status().message().find("exited with code 3") != std::string::npos);
  auto after = manager.CallTool("t", "echo", R"({"text":"x"})", fresh);
  REQUIRE_FALSE(after.ok());
  auto unknown = manager.CallTool("nope", "echo", "{}", fresh);
  CHECK(unknown.status().message().find("unknown MCP server 'nope'") != std::string::npos);
  CHECK(unknown.status().code() == StatusCode::kNotFound);
}

TEST_CASE(
    "McpManager answers the server's requests: ping with {}, the rest with method not found") {
  Fixture f({});
  McpManager manager(f.config, sandbox::EnvPolicy{});
  REQUIRE(manager.StartAll().ok());
  core::CancelToken cancel;
  auto asked = manager.CallTool("t", "ask", "{}", cancel);
  REQUIRE(asked.ok());
  CHECK(asked->find("srv-1=result:{}") != std::string::npos);
  CHECK(asked->find("srv-2=error:method not found: sampling/createMessage") != std::string::npos);
}

TEST_CASE(
    "McpManager: a server that exits at once, or speaks another protocol, fails in one line") {
  Fixture f({"--exit-at-start", "7"});
  core::McpServerConfig other = f.config.mcp_servers["t"];
  other.name = "u";
  other.args = {"--protocol", "2023-01-01"};
  f.config.mcp_servers["u"] = other;
  McpManager manager(f.config, sandbox::EnvPolicy{});
  auto lines = manager.StartAll();
  REQUIRE(lines.ok());
  REQUIRE(lines->size() == 2);
  CHECK((*lines)[0].find("MCP server 't' failed to start:") == 0);
  CHECK((*lines)[0].find("exited with code 7") != std::string::npos);
  CHECK((*lines)[1].find("protocol version '2023-01-01'") != std::string::npos);
  CHECK(manager.ToolsForTurn().empty());
  // required = true turns a failure into an error for the whole run.
  f.config.mcp_servers["t"].required = true;
  McpManager strict(f.config, sandbox::EnvPolicy{});
  auto failed = strict.StartAll();
  REQUIRE_FALSE(failed.ok());
  CHECK(failed.status().message().find("required") != std::string::npos);
}

TEST_CASE(
    "HTTP transport: what a POST carries, and a refusal names the server's reason in one line") {
  std::mutex mu;
  httplib::Headers seen;
  std::string seen_body;
  codex::testing::LoopbackHttpServer<> http;  // after what its handler uses: stopped first
  http.server().Post("/mcp", [&](const httplib::Request& req, httplib::Response& res) {
    std::lock_guard<std::mutex> lock(mu);
    seen = req.headers;
    seen_body = req.body;
    const std::string kind = req.get_header_value("X-Kind");
    if (kind == "jsonrpc") {
      // What @modelcontextprotocol/sdk >= 1.25 answered on Node 18.
      res.status = 400;
      res.set_content(R"({"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error",)"
                      R"("data":"ReferenceError: crypto is not defined"},"id":null})",
                      "application/json");
    } else if (kind == "text") {
      res.status = 503;
      res.set_content("  upstream down\r\n\tretry later\n", "text/plain");
    } else if (kind == "long") {
      std::string body;
      for (int i = 0; i < 400; ++i) body += "\xc3\xa9";  // "é": 2 bytes
      res.status = 500;
      res.set_content(body, "text/plain");
    } else if (kind == "empty") {
      res.status = 400;
    } else {
      res.set_content(R"({"jsonrpc":"2.0","id":1,"result":{}})", "application/json");
    }
  });
  REQUIRE(http.Start());
  const int port = http.port();
  auto send = [&](const std::string& kind, std::vector<std::string>* messages = nullptr) {
    HttpOptions options;
    options.config.name = "web";
    options.config.url = "http://127.0.0.1:" + std::to_string(port) + "/mcp";
    options.config.http_headers["X-Kind"] = kind;
    HttpTransport transport(options);
    REQUIRE(transport
                .Start(
                    [&](std::string m) {
                      if (messages != nullptr) messages->push_back(std::move(m));
                    },
                    [](std::string) {})
                .ok());
    return transport.Send(R"({"jsonrpc":"2.0","id":1,"method":"ping"})", 5000, nullptr);
  };

  std::vector<std::string> messages;
  REQUIRE(send("ok", &messages).ok());
  REQUIRE(messages.size() == 1);
  CHECK(messages[0] == R"({"jsonrpc":"2.0","id":1,"result":{}})");
  {
    std::lock_guard<std::mutex> lock(mu);
    auto header = [&](const char* name) {
      auto it = seen.find(name);
      return it == seen.end() ? std::string("(absent)") : it->second;
    };
    // The streamable HTTP transport's rule: the client accepts both answers.
    CHECK(header("Accept") == "application/json, text/event-stream");
    CHECK(header("Content-Type") == "application/json");
    CHECK(header("X-Kind") == "ok");
    CHECK(seen_body == R"({"jsonrpc":"2.0","id":1,"method":"ping"})");
    // Before initialize there is no session and no negotiated version to send.
    CHECK(header("Mcp-Session-Id") == "(absent)");
    CHECK(header("MCP-Protocol-Version") == "(absent)");
  }

  const std::string url = "POST http://127.0.0.1:" + std::to_string(port) + "/mcp answered HTTP ";
  Status rpc = send("jsonrpc");
  CHECK(rpc.code() == StatusCode::kUnavailable);
  CHECK(rpc.message() == url + "400: Parse error: ReferenceError: crypto is not defined");
  CHECK(send("text").message() == url + "503: upstream down retry later");
  CHECK(send("empty").message() == url + "400");
  const std::string cut = send("long").message();
  CHECK(cut.find('\n') == std::string::npos);
  CHECK(cut.rfind(url + "500: \xc3\xa9", 0) == 0);
  CHECK(cut.size() <= url.size() + 5 + 300 + 3);
  CHECK(cut.substr(cut.size() - 5) == "\xc3\xa9...");  // cut between characters, not inside one
}

TEST_CASE("McpManager starts the servers in parallel") {
  // Four servers that each hold their answer to initialize until the test
  // releases them: one after the other, the second would never be asked
  // before the first answered. All four asked at once is the proof.
  Fixture f({});
  std::vector<std::string> gates, logs;
  for (const char* name : {"t", "b", "c", "d"}) {
    const std::string gate = f.home + "/" + name + "-gate";
    REQUIRE(::mkfifo(gate.c_str(), 0600) == 0);
    gates.push_back(gate);
    logs.push_back(f.home + "/" + name + ".log");
    core::McpServerConfig s = f.config.mcp_servers["t"];
    s.name = name;
    s.args = {"--wait-file", gate, "--log", logs.back()};
    f.config.mcp_servers[name] = s;
  }
  McpManager manager(f.config, sandbox::EnvPolicy{});
  Result<std::vector<std::string>> lines = std::vector<std::string>{};
  std::thread starter([&] { lines = manager.StartAll(); });
  const bool all_asked = Eventually([&] {
    for (const std::string& log : logs) {
      if (codex::testing::ReadFile(log).find("waiting on") == std::string::npos) return false;
    }
    return true;
  });
  for (const std::string& gate : gates) ReleaseFifo(gate);
  starter.join();
  CHECK(all_asked);
  REQUIRE(lines.ok());
  CHECK(lines->empty());
  CHECK(manager.ToolsForTurn().size() == 44);  // 11 tools each
}

TEST_CASE(
    "McpManager: a server slow to start does not hold up the first turn; its tools join at the "
    "next turn boundary, never mid-turn") {
  Fixture f({});
  const std::string gate = f.home + "/slow-gate";
  const std::string log = f.home + "/slow.log";
  REQUIRE(::mkfifo(gate.c_str(), 0600) == 0);
  core::McpServerConfig slow = f.config.mcp_servers["t"];
  slow.name = "slow";
  slow.args = {"--wait-file", gate, "--log", log};
  f.config.mcp_servers["slow"] = slow;
  f.config.mcp_servers["t"].required = true;  // the fast one is waited for
  McpManager manager(f.config, sandbox::EnvPolicy{});
  REQUIRE(manager.Start().ok());  // returns while "slow" is blocked on its FIFO
  NullRunner runner;
  NoticeObserver observer;
  core::ToolRouter router(f.config, runner, nullptr, observer);
  router.set_mcp_tools(&manager);
  router.BeginTurn();
  const std::string turn1 = router.ToolsJson();
  CHECK(turn1.find(R"("name":"mcp__t")") != std::string::npos);
  CHECK(turn1.find(R"("name":"mcp__slow")") == std::string::npos);
  // The resource tools are there from the start: they do not depend on timing.
  CHECK(turn1.find(R"("name":"list_mcp_resources")") != std::string::npos);
  CHECK(codex::testing::ReadFile(log).find("waiting on " + gate) != std::string::npos);
  // Its resources are not there yet either; the model is told why.
  core::CancelToken cancel;
  auto early = manager.CallResourceTool("list_mcp_resources", R"({"server":"slow"})", cancel);
  REQUIRE_FALSE(early.ok());
  CHECK(early.status().message() == "MCP server 'slow' is still starting; try again later");

  REQUIRE(ReleaseFifo(gate));
  REQUIRE(Eventually([&] {
    for (const auto& s : manager.Servers()) {
      if (s.name == "slow") return s.state == ServerState::kReady;
    }
    return false;
  }));
  CHECK(router.ToolsJson() == turn1);  // the turn under way keeps its tools
  router.BeginTurn();
  const std::string turn2 = router.ToolsJson();
  CHECK(turn2.find(R"("name":"mcp__slow")") != std::string::npos);
  // Everything before the first namespace (the built-in and resource tools)
  // is the same bytes; "slow" sorts before "t".
  const size_t ns = turn1.find(R"({"type":"namespace")");
  REQUIRE(ns != std::string::npos);
  CHECK(turn2.compare(0, ns, turn1, 0, ns) == 0);
  CHECK(turn2.find(R"("name":"mcp__slow")") < turn2.find(R"("name":"mcp__t")"));
  CHECK(observer.notices.empty());
}

TEST_CASE("McpManager: a failure after the first turn started is told when the next one starts") {
  Fixture f({});
  const std::string gate = f.home + "/gate";
  REQUIRE(::mkfifo(gate.c_str(), 0600) == 0);
  // Blocked on the FIFO, then answers initialize with a protocol codex refuses.
  f.config.mcp_servers["t"].args = {"--wait-file", gate, "--protocol", "1999-01-01"};
  McpManager manager(f.config, sandbox::EnvPolicy{});
  REQUIRE(manager.Start().ok());
  NullRunner runner;
  NoticeObserver observer;
  core::ToolRouter router(f.config, runner, nullptr, observer);
  router.set_mcp_tools(&manager);
  router.BeginTurn();
  CHECK(observer.notices.empty());
  REQUIRE(ReleaseFifo(gate));
  REQUIRE(Eventually([&] { return manager.Servers()[0].state == ServerState::kFailed; }));
  router.BeginTurn();
  REQUIRE(observer.notices.size() == 1);
  CHECK(observer.notices[0].find("MCP server 't' failed to start:") == 0);
  CHECK(observer.notices[0].find("1999-01-01") != std::string::npos);
  router.BeginTurn();
  CHECK(observer.notices.size() == 1);  // told once
}

TEST_CASE(
    "McpManager: a server still starting at exit is named once; the destructor does not wait") {
  Fixture f({});
  const std::string gate = f.home + "/never";
  REQUIRE(::mkfifo(gate.c_str(), 0600) == 0);
  f.config.mcp_servers["t"].args = {"--wait-file", gate};
  f.config.mcp_servers["t"].startup_timeout_ms = 3'600'000;
  {
    McpManager manager(f.config, sandbox::EnvPolicy{});
    REQUIRE(manager.Start().ok());
    auto lines = manager.TakeNotices(/*at_exit=*/true);
    REQUIRE(lines.size() == 1);
    CHECK(lines[0] ==
          "MCP server 't' was still starting when codex finished; its tools were not offered");
    CHECK(manager.TakeNotices(true).empty());
  }  // the server never answers; destroying the manager stops it all the same
}

}  // namespace
}  // namespace codex::mcp

namespace codex::mcp {
namespace {

TEST_CASE("A result whose blocks have the wrong JSON types is shown, never a crash") {
  // A server may send anything: a block whose `type` is a number, a text
  // that is not a string, a block that is not an object.
  const core::McpOutput out = core::FormatMcpResult(
      R"({"content":[{"type":5,"text":"x"},{"type":"text","text":7},3,{"type":"text","text":"ok"}]})",
      4096, 0.1);
  CHECK(out.output_json.find("ok") != std::string::npos);
}

}  // namespace
}  // namespace codex::mcp
