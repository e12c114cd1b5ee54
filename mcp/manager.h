// McpManager: the user's MCP servers for one run of codex, offered to the
// tool router through core::McpTools.
//
// Start() starts every enabled server at once (one thread each: initialize,
// then tools/list, within its startup_timeout_sec) and waits for them at most
// kFirstTurnGraceMs, except for `required` servers, which it waits for: the
// first request is not held up by a server that is slow to start. A server's tools are offered from
// the first ToolsForTurn() after it became ready, so they join at a turn boundary and the tools of
// one turn never change. StartAll() (mcp list --probe) waits for every server. A server that fails
// or times out is stopped, reported in one line (TakeNotices), and left out; the others serve the
// session. The resource tools (core::kMcpResourceToolNames) ask the ready
// servers. Tool lists pass enabled_tools /
// disabled_tools, are ordered by server then tool name and named as Codex
// does (core/mcp_tools.h). Server stderr goes to $CODEX_HOME/log/mcp-<name>.log.
// MCP servers run outside the sandbox (as in Codex) with codex's environment
// filtered by the environment policy. Thread-safe.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/config.h"
#include "core/mcp_tools.h"
#include "mcp/client.h"
#include "sandbox/environment.h"

namespace codex::mcp {

// How long Start() waits for servers that are not required.
inline constexpr int64_t kFirstTurnGraceMs = 1000;

enum class ServerState { kDisabled, kStarting, kReady, kFailed };
std::string_view ServerStateName(ServerState state);

struct ServerStatus {
  std::string name;
  std::string transport;  // "stdio" | "http"
  std::string target;     // the command line or the url
  ServerState state = ServerState::kDisabled;
  std::string error;               // kFailed: why
  std::vector<std::string> tools;  // the server's tool names, after the filter, sorted
  std::string protocol_version;    // negotiated
  std::string log_path;
};

class McpManager final : public core::McpTools {
 public:
  McpManager(const core::Config& config, sandbox::EnvPolicy env_policy);
  ~McpManager() override;

  // Starts the servers in the background and waits only for the required
  // ones: a required server that failed gives kUnavailable. Failures show in
  // TakeNotices().
  Status Start();
  // Starts the servers and waits for all of them; returns one line per
  // server that failed (not repeated by TakeNotices). A required server that
  // failed gives kUnavailable instead.
  Result<std::vector<std::string>> StartAll();
  // The failure lines not yet taken; with `at_exit`, also one line per
  // server still starting (its tools were never offered).
  std::vector<std::string> TakeNotices(bool at_exit);
  std::vector<std::string> TakeNotices() override { return TakeNotices(false); }
  std::vector<ServerStatus> Servers() const;
  bool empty() const { return servers_.empty(); }

  std::vector<core::McpToolInfo> ToolsForTurn() override;
  Result<std::string> CallTool(const std::string& server, const std::string& tool,
                               const std::string& arguments_json,
                               const core::CancelToken& cancel) override;
  Result<std::string> CallResourceTool(const std::string& name, const std::string& arguments_json,
                                       const core::CancelToken& cancel) override;

 private:
  struct Server {
    core::McpServerConfig config;
    ServerState state = ServerState::kDisabled;
    std::string error;
    std::unique_ptr<ServerLog> log;
    std::unique_ptr<McpClient> client;
    std::vector<Json> tools;  // filtered, sorted by name
    bool reported = false;    // its failure line was handed out
  };
  void StartOne(Server& s);
  void SetTools(Server& s, std::vector<Json> tools);
  std::string FailureLine(const Server& s) const;
  // kStarting servers settled (all, or the required ones only); mu_ held.
  void WaitSettled(std::unique_lock<std::mutex>& lock, bool required_only);
  // The ready server `name` for a resource call, or the error to tell the model.
  Result<McpClient*> ResourceServer(const std::string& name, int64_t* timeout_ms);
  Result<std::string> ListResources(const Json& args, bool templates,
                                    const core::CancelToken& cancel);

  std::string codex_home_;
  std::string cwd_;
  sandbox::EnvPolicy env_policy_;
  std::vector<std::string> writable_roots_;  // skipped by the PATH lookup of `command`
  mutable std::mutex mu_;
  std::condition_variable settled_;               // a server left kStarting
  std::vector<std::unique_ptr<Server>> servers_;  // by name
  std::vector<std::thread> starters_;
  core::CancelToken shutdown_;  // the destructor stops servers still starting
};

}  // namespace codex::mcp
