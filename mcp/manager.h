// McpManager: the user's MCP servers for one run of codex, offered to the
// tool router through core::McpTools.
//
// StartAll() starts every enabled server at once (one thread each) and waits
// for each until its startup_timeout_sec: initialize, then tools/list. A
// server that fails or times out is stopped, reported in one line, and left
// out; the others serve the session. Tool lists pass enabled_tools /
// disabled_tools, are ordered by server then tool name and named as Codex
// does (core/mcp_tools.h). Server stderr goes to $CODEX_HOME/log/mcp-<name>.log.
// MCP servers run outside the sandbox (as in Codex) with codex's environment
// filtered by the environment policy. Thread-safe.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/mcp_tools.h"
#include "mcp/client.h"
#include "sandbox/environment.h"

namespace codex::mcp {

enum class ServerState { kDisabled, kReady, kFailed };
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

  // Starts the servers; returns one line per server that failed. A required
  // server that failed gives kUnavailable instead.
  Result<std::vector<std::string>> StartAll();
  std::vector<ServerStatus> Servers() const;
  bool empty() const { return servers_.empty(); }

  std::vector<core::McpToolInfo> ToolsForTurn() override;
  Result<std::string> CallTool(const std::string& server, const std::string& tool,
                               const std::string& arguments_json,
                               const core::CancelToken& cancel) override;

 private:
  struct Server {
    core::McpServerConfig config;
    ServerState state = ServerState::kDisabled;
    std::string error;
    std::unique_ptr<ServerLog> log;
    std::unique_ptr<McpClient> client;
    std::vector<Json> tools;  // filtered, sorted by name
  };
  void StartOne(Server& s);
  void SetTools(Server& s, std::vector<Json> tools);

  std::string codex_home_;
  std::string cwd_;
  sandbox::EnvPolicy env_policy_;
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<Server>> servers_;  // by name
};

}  // namespace codex::mcp
