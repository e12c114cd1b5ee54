// McpClient: a JSON-RPC 2.0 client of one MCP server over a Transport.
//
// Initialize() sends `initialize` (offering kProtocolVersions[0]; the
// server's answer must be one of kProtocolVersions) and then
// `notifications/initialized`. ListTools() follows `nextCursor` through every
// page. CallTool() waits for the answer until its timeout or until `cancel`
// fires; then it sends `notifications/cancelled` for the request and returns
// kCancelled / kDeadlineExceeded. Messages that are not JSON-RPC (garbage
// lines) are noted in the server's log and skipped. Server requests are
// answered: `ping` with {}, anything else with "method not found".
// `notifications/tools/list_changed` sets a flag read by TakeToolsChanged().
// When the transport closes, every waiting request fails with kUnavailable
// naming how the server ended. Thread-safe.
#pragma once

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/status.h"
#include "core/cancel.h"
#include "mcp/transport.h"

namespace codex::mcp {

using Json = nlohmann::ordered_json;

// "0.5", "10", "2.25": milliseconds as seconds for messages.
std::string FormatSeconds(int64_t ms);

inline constexpr const char* kProtocolVersions[] = {"2025-06-18", "2025-03-26", "2024-11-05"};

class McpClient {
 public:
  McpClient(std::string server_name, std::unique_ptr<Transport> transport, ServerLog* log);
  ~McpClient();
  McpClient(const McpClient&) = delete;
  McpClient& operator=(const McpClient&) = delete;

  Status Start();
  // initialize + notifications/initialized, within `timeout_ms`; gives up
  // (kCancelled) when `cancel` fires.
  Status Initialize(int64_t timeout_ms, const core::CancelToken* cancel = nullptr);
  // Every tool (the `tools` entries of all pages), within `timeout_ms`.
  Result<std::vector<Json>> ListTools(int64_t timeout_ms,
                                      const core::CancelToken* cancel = nullptr);
  // Any other request (resources/list, resources/read, ...): its result. A
  // JSON-RPC error reads as Codex words it: "Mcp error: CODE: MESSAGE".
  Result<Json> Call(const std::string& method, Json params, int64_t timeout_ms,
                    const core::CancelToken& cancel) {
    return Request(method, std::move(params), timeout_ms, &cancel, /*codex_error=*/true);
  }
  // tools/call; returns the result object.
  Result<Json> CallTool(const std::string& tool, const Json& arguments, int64_t timeout_ms,
                        const core::CancelToken& cancel);
  // True once after a notifications/tools/list_changed.
  bool TakeToolsChanged() { return tools_changed_.exchange(false); }
  bool closed() const;
  std::string close_reason() const;
  void Close();

  const std::string& protocol_version() const { return protocol_version_; }
  const Json& server_info() const { return server_info_; }
  // The `instructions` of the server's initialize answer ("" = none).
  const std::string& instructions() const { return instructions_; }
  // Whether the server's initialize answer declared `capabilities.resources`.
  bool supports_resources() const { return supports_resources_; }
  Transport& transport() { return *transport_; }

 private:
  Result<Json> Request(const std::string& method, Json params, int64_t timeout_ms,
                       const core::CancelToken* cancel, bool codex_error = false);
  Status Notify(const std::string& method, Json params);
  void OnMessage(std::string line);
  void OnClosed(std::string why);
  void Dispatch(const Json& message);

  std::string name_;
  std::unique_ptr<Transport> transport_;
  ServerLog* log_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<int64_t, Json> responses_;  // id -> the whole response message
  int64_t next_id_ = 0;
  bool closed_ = false;
  std::string close_reason_;
  std::atomic<bool> tools_changed_{false};
  std::string protocol_version_;
  Json server_info_;
  bool supports_resources_ = false;
  std::string instructions_;
};

}  // namespace codex::mcp
