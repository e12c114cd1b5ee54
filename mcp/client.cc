#include "mcp/client.h"

#include <chrono>

#include "base/json.h"

namespace codex::mcp {

namespace {

std::string Clip(const std::string& s, size_t n = 200) {
  return s.size() <= n ? s : s.substr(0, n) + "…";
}

}  // namespace

std::string FormatSeconds(int64_t ms) {
  std::string out = std::to_string(ms / 1000);
  int64_t frac = ms % 1000;
  if (frac != 0) {
    std::string f = std::to_string(1000 + frac).substr(1);
    while (!f.empty() && f.back() == '0') f.pop_back();
    out += "." + f;
  }
  return out;
}

McpClient::McpClient(std::string server_name, std::unique_ptr<Transport> transport, ServerLog* log)
    : name_(std::move(server_name)), transport_(std::move(transport)), log_(log) {}

McpClient::~McpClient() { Close(); }

Status McpClient::Start() {
  return transport_->Start([this](std::string line) { OnMessage(std::move(line)); },
                           [this](std::string why) { OnClosed(std::move(why)); });
}

void McpClient::Close() {
  transport_->Close();
  std::lock_guard<std::mutex> lock(mu_);
  if (!closed_) {
    closed_ = true;
    close_reason_ = "the client closed the connection";
  }
  cv_.notify_all();
}

bool McpClient::closed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return closed_;
}

std::string McpClient::close_reason() const {
  std::lock_guard<std::mutex> lock(mu_);
  return close_reason_;
}

void McpClient::OnClosed(std::string why) {
  if (log_ != nullptr) log_->Note(why);
  std::lock_guard<std::mutex> lock(mu_);
  if (!closed_) {
    closed_ = true;
    close_reason_ = std::move(why);
  }
  cv_.notify_all();
}

void McpClient::OnMessage(std::string line) {
  Json message = Json::parse(line, nullptr, false);
  if (message.is_array()) {  // a JSON-RPC batch
    for (const auto& m : message) Dispatch(m);
    return;
  }
  Dispatch(message);
  (void)line;
}

void McpClient::Dispatch(const Json& message) {
  if (!message.is_object() || StringField(message, "jsonrpc") != "2.0") {
    if (log_ != nullptr) {
      log_->Note("ignored a message that is not JSON-RPC 2.0: " +
                 Clip(message.is_discarded() ? std::string("(not JSON)") : Dump(message)));
    }
    return;
  }
  const bool has_method = message.contains("method") && message["method"].is_string();
  const bool has_id = message.contains("id") && !message["id"].is_null();
  if (has_method && has_id) {
    // A request from the server.
    const std::string method = message["method"];
    Json reply = {{"jsonrpc", "2.0"}, {"id", message["id"]}};
    if (method == "ping") {
      reply["result"] = Json::object();
    } else {
      reply["error"] = {{"code", -32601}, {"message", "method not found: " + method}};
    }
    (void)transport_->Send(Dump(reply), 5'000, nullptr);
    return;
  }
  if (has_method) {
    const std::string method = message["method"];
    if (method == "notifications/tools/list_changed") {
      tools_changed_.store(true);
    } else if (method == "notifications/message" && log_ != nullptr) {
      log_->Note("server log: " + Clip(Dump(message.value("params", Json::object())), 2000));
    }
    return;
  }
  if (has_id && message["id"].is_number_integer() &&
      (message.contains("result") || message.contains("error"))) {
    std::lock_guard<std::mutex> lock(mu_);
    responses_[message["id"].get<int64_t>()] = message;
    cv_.notify_all();
    return;
  }
  if (log_ != nullptr) log_->Note("ignored an unexpected message: " + Clip(Dump(message)));
}

Status McpClient::Notify(const std::string& method, Json params) {
  Json m = {{"jsonrpc", "2.0"}, {"method", method}};
  if (!params.is_null()) m["params"] = std::move(params);
  return transport_->Send(Dump(m), 5'000, nullptr);
}

Result<Json> McpClient::Request(const std::string& method, Json params, int64_t timeout_ms,
                                const core::CancelToken* cancel, bool codex_error) {
  int64_t id;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return UnavailableError("MCP server '" + name_ + "': " + close_reason_);
    id = ++next_id_;
  }
  Json m = {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}};
  if (!params.is_null()) m["params"] = std::move(params);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  auto abort = [&] {
    return (cancel != nullptr && cancel->cancelled()) ||
           std::chrono::steady_clock::now() > deadline;
  };
  Status sent = transport_->Send(Dump(m), timeout_ms, abort);
  std::unique_lock<std::mutex> lock(mu_);
  if (!sent.ok() && responses_.find(id) == responses_.end()) {
    if (cancel != nullptr && cancel->cancelled()) {
      lock.unlock();
      (void)Notify("notifications/cancelled", {{"requestId", id}, {"reason", "interrupted"}});
      return CancelledError("interrupted");
    }
    // A server that died closes its input first; wait a moment for the
    // reader to report how it ended, which says more than "broken pipe".
    if (sent.code() == StatusCode::kUnavailable) {
      cv_.wait_for(lock, std::chrono::seconds(2), [&] { return closed_; });
    }
    if (closed_) return UnavailableError("MCP server '" + name_ + "': " + close_reason_);
    return sent;
  }
  while (true) {
    if (auto it = responses_.find(id); it != responses_.end()) {
      Json response = std::move(it->second);
      responses_.erase(it);
      if (response.contains("error")) {
        const Json& e = response["error"];
        std::string text = e.is_object() ? e.value("message", Dump(e)) : Dump(e);
        if (codex_error) {
          const Json code = e.is_object() ? e.value("code", Json()) : Json();
          return InternalError("Mcp error: " + (code.is_null() ? std::string("?") : Dump(code)) +
                               ": " + text);
        }
        return InternalError("MCP server '" + name_ + "' answered " + method +
                             " with error: " + text);
      }
      return response["result"];
    }
    if (closed_) return UnavailableError("MCP server '" + name_ + "': " + close_reason_);
    const bool cancelled = cancel != nullptr && cancel->cancelled();
    const bool expired = std::chrono::steady_clock::now() >= deadline;
    if (cancelled || expired) {
      lock.unlock();
      (void)Notify("notifications/cancelled",
                   {{"requestId", id}, {"reason", cancelled ? "interrupted" : "timed out"}});
      if (cancelled) return CancelledError("interrupted");
      return DeadlineExceededError("MCP server '" + name_ + "' did not answer " + method +
                                   " within " + FormatSeconds(timeout_ms) + " s");
    }
    cv_.wait_for(lock, std::chrono::milliseconds(50));
  }
}

Status McpClient::Initialize(int64_t timeout_ms, const core::CancelToken* cancel) {
  Json params = {{"protocolVersion", kProtocolVersions[0]},
                 {"capabilities", Json::object()},
                 {"clientInfo", {{"name", "codex"}, {"title", "codex"}, {"version", "0.1.0"}}}};
  ASSIGN_OR_RETURN(Json result, Request("initialize", std::move(params), timeout_ms, cancel));
  if (!result.is_object()) {
    return InvalidArgumentError("MCP server '" + name_ + "' sent an initialize result that is " +
                                "not an object");
  }
  std::string version = result.value("protocolVersion", Json()).is_string()
                            ? result["protocolVersion"].get<std::string>()
                            : "";
  bool supported = false;
  for (const char* v : kProtocolVersions) supported = supported || version == v;
  if (!supported) {
    return InvalidArgumentError("MCP server '" + name_ + "' speaks protocol version '" + version +
                                "', which codex does not support (it speaks " +
                                kProtocolVersions[0] + ", " + kProtocolVersions[1] + " and " +
                                kProtocolVersions[2] + ")");
  }
  protocol_version_ = version;
  server_info_ = result.value("serverInfo", Json::object());
  if (result.value("instructions", Json()).is_string()) {
    // Trimmed, as Codex 0.169 sends them (server-everything's end in "\n").
    instructions_ = result["instructions"].get<std::string>();
    const size_t b = instructions_.find_first_not_of(" \t\r\n");
    const size_t e = instructions_.find_last_not_of(" \t\r\n");
    instructions_ = b == std::string::npos ? "" : instructions_.substr(b, e - b + 1);
  }
  const Json caps = result.value("capabilities", Json::object());
  supports_resources_ =
      caps.is_object() && caps.contains("resources") && caps["resources"].is_object();
  if (auto* http = dynamic_cast<HttpTransport*>(transport_.get())) {
    http->set_protocol_version(version);
  }
  return Notify("notifications/initialized", Json());
}

Result<std::vector<Json>> McpClient::ListTools(int64_t timeout_ms,
                                               const core::CancelToken* cancel) {
  std::vector<Json> tools;
  std::string cursor;
  const auto start = std::chrono::steady_clock::now();
  for (int page = 0; page < 1000; ++page) {
    const int64_t spent = std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::steady_clock::now() - start)
                              .count();
    Json params = cursor.empty() ? Json() : Json{{"cursor", cursor}};
    ASSIGN_OR_RETURN(Json result, Request("tools/list", params,
                                          std::max<int64_t>(1, timeout_ms - spent), cancel));
    if (!result.is_object() || !result.value("tools", Json()).is_array()) {
      return InvalidArgumentError("MCP server '" + name_ + "' sent a tools/list result without " +
                                  "a tools array");
    }
    for (auto& t : result["tools"]) {
      if (t.is_object() && t.value("name", Json()).is_string()) tools.push_back(t);
    }
    const Json next = result.value("nextCursor", Json());
    if (!next.is_string() || next.get<std::string>().empty()) return tools;
    if (next.get<std::string>() == cursor) {
      return InvalidArgumentError("MCP server '" + name_ + "' repeated the tools/list cursor");
    }
    cursor = next.get<std::string>();
  }
  return InvalidArgumentError("MCP server '" + name_ + "' sent over 1000 pages of tools");
}

Result<Json> McpClient::CallTool(const std::string& tool, const Json& arguments, int64_t timeout_ms,
                                 const core::CancelToken& cancel) {
  ASSIGN_OR_RETURN(Json result, Request("tools/call", {{"name", tool}, {"arguments", arguments}},
                                        timeout_ms, &cancel));
  if (!result.is_object()) {
    return InvalidArgumentError("MCP server '" + name_ + "' sent a tools/call result that is " +
                                "not an object");
  }
  return result;
}

}  // namespace codex::mcp
