#include "mcp/manager.h"

#include <algorithm>
#include <filesystem>
#include <thread>

#include "base/json.h"
#include "base/shell.h"
#include "core/tool_router.h"

namespace codex::mcp {

namespace {

std::optional<bool> Hint(const Json& tool, const char* key) {
  auto a = tool.find("annotations");
  if (a == tool.end() || !a->is_object()) return std::nullopt;
  auto v = a->find(key);
  if (v == a->end() || !v->is_boolean()) return std::nullopt;
  return v->get<bool>();
}

// The `parameters` of a tool: its inputSchema, made an object schema.
Json Parameters(const Json& tool) {
  Json schema = tool.value("inputSchema", Json::object());
  if (!schema.is_object()) schema = Json::object();
  if (!schema.contains("type")) {
    Json typed = {{"type", "object"}};
    for (auto& [k, v] : schema.items()) typed[k] = v;
    schema = std::move(typed);
  }
  if (schema["type"] == "object" && !schema.contains("properties")) {
    schema["properties"] = Json::object();
  }
  // As Codex 0.169: no "$schema", and "required" always present.
  schema.erase("$schema");
  if (schema["type"] == "object" && !schema.contains("required")) {
    schema["required"] = Json::array();
  }
  return schema;
}

}  // namespace

std::string_view ServerStateName(ServerState state) {
  switch (state) {
    case ServerState::kDisabled:
      return "disabled";
    case ServerState::kReady:
      return "ready";
    case ServerState::kFailed:
      return "failed";
  }
  return "failed";
}

McpManager::McpManager(const core::Config& config, sandbox::EnvPolicy env_policy)
    : codex_home_(config.codex_home), cwd_(config.cwd), env_policy_(std::move(env_policy)) {
  for (const auto& [name, c] : config.mcp_servers) {  // std::map: sorted by name
    auto s = std::make_unique<Server>();
    s->config = c;
    servers_.push_back(std::move(s));
  }
}

McpManager::~McpManager() {
  std::vector<std::thread> closers;
  for (auto& s : servers_) {
    if (s->client) closers.emplace_back([&s] { s->client->Close(); });
  }
  for (auto& t : closers) t.join();
}

void McpManager::SetTools(Server& s, std::vector<Json> tools) {
  std::vector<Json> kept;
  for (auto& t : tools) {
    if (s.config.AllowsTool(t["name"].get<std::string>())) kept.push_back(std::move(t));
  }
  std::stable_sort(kept.begin(), kept.end(), [](const Json& a, const Json& b) {
    return a["name"].get<std::string>() < b["name"].get<std::string>();
  });
  s.tools = std::move(kept);
}

void McpManager::StartOne(Server& s) {
  const core::McpServerConfig& c = s.config;
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(codex_home_) / "log", ec);
  s.log = std::make_unique<ServerLog>(
      (std::filesystem::path(codex_home_) / "log" / ("mcp-" + c.name + ".log")).string());
  s.log->Note("starting MCP server '" + c.name + "'");
  std::unique_ptr<Transport> transport;
  if (c.is_http()) {
    transport = std::make_unique<HttpTransport>(HttpOptions{c, s.log.get()});
  } else {
    transport = std::make_unique<StdioTransport>(StdioOptions{c, cwd_, env_policy_, s.log.get()});
  }
  auto client = std::make_unique<McpClient>(c.name, std::move(transport), s.log.get());
  const auto start = std::chrono::steady_clock::now();
  auto left = [&] {
    return std::max<int64_t>(
        1, c.startup_timeout_ms - std::chrono::duration_cast<std::chrono::milliseconds>(
                                      std::chrono::steady_clock::now() - start)
                                      .count());
  };
  Status st = client->Start();
  if (st.ok()) st = client->Initialize(left());
  Result<std::vector<Json>> tools =
      st.ok() ? client->ListTools(left()) : Result<std::vector<Json>>(st);
  if (!tools.ok()) {
    s.state = ServerState::kFailed;
    s.error = tools.status().message();
    if (tools.status().code() == StatusCode::kDeadlineExceeded) {
      s.error = "did not start within " + FormatSeconds(c.startup_timeout_ms) +
                " s (startup_timeout_sec)";
    }
    s.log->Note("failed to start: " + s.error);
    client->Close();
    return;
  }
  SetTools(s, std::move(*tools));
  s.client = std::move(client);
  s.state = ServerState::kReady;
  s.log->Note("ready: protocol " + s.client->protocol_version() + ", " +
              std::to_string(s.tools.size()) + " tools");
}

Result<std::vector<std::string>> McpManager::StartAll() {
  std::vector<std::thread> threads;
  for (auto& s : servers_) {
    if (!s->config.enabled) continue;
    Server* p = s.get();
    threads.emplace_back([this, p] { StartOne(*p); });
  }
  for (auto& t : threads) t.join();
  std::vector<std::string> lines;
  for (auto& s : servers_) {
    if (s->state != ServerState::kFailed) continue;
    std::string line = "MCP server '" + s->config.name + "' failed to start: " + s->error +
                       " (log: " + (s->log ? s->log->path() : std::string("-")) + ")";
    if (s->config.required) {
      return UnavailableError(line + "; it is required (required = true in config.toml)");
    }
    lines.push_back(std::move(line));
  }
  return lines;
}

std::vector<ServerStatus> McpManager::Servers() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<ServerStatus> out;
  for (const auto& s : servers_) {
    ServerStatus st;
    st.name = s->config.name;
    st.transport = s->config.is_http() ? "http" : "stdio";
    if (s->config.is_http()) {
      st.target = s->config.url;
    } else {
      std::vector<std::string> argv = {s->config.command};
      argv.insert(argv.end(), s->config.args.begin(), s->config.args.end());
      st.target = ShellJoin(argv);
    }
    st.state = s->state;
    st.error = s->error;
    for (const auto& t : s->tools) st.tools.push_back(t["name"].get<std::string>());
    if (s->client) st.protocol_version = s->client->protocol_version();
    if (s->log) st.log_path = s->log->path();
    out.push_back(std::move(st));
  }
  return out;
}

std::vector<core::McpToolInfo> McpManager::ToolsForTurn() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::pair<std::string, std::string>> names;
  std::vector<std::pair<const Server*, const Json*>> refs;
  for (auto& s : servers_) {
    if (s->state != ServerState::kReady) continue;
    if (s->client->TakeToolsChanged()) {
      auto tools = s->client->ListTools(s->config.startup_timeout_ms);
      if (tools.ok()) {
        SetTools(*s, std::move(*tools));
      } else {
        s->log->Note("tools/list after list_changed failed: " + tools.status().message());
      }
    }
    for (const auto& t : s->tools) {
      names.emplace_back(s->config.name, t["name"].get<std::string>());
      refs.emplace_back(s.get(), &t);
    }
  }
  const std::vector<std::string> qualified = core::QualifyMcpToolNames(names);
  std::vector<core::McpToolInfo> out;
  for (size_t i = 0; i < refs.size(); ++i) {
    if (qualified[i].empty()) continue;
    const Json& t = *refs[i].second;
    core::McpToolInfo info;
    info.qualified_name = qualified[i];
    info.server = names[i].first;
    info.tool = names[i].second;
    info.read_only_hint = Hint(t, "readOnlyHint");
    info.destructive_hint = Hint(t, "destructiveHint");
    info.open_world_hint = Hint(t, "openWorldHint");
    info.namespace_name = core::SanitizeMcpName("mcp__" + info.server);
    info.function_name = core::SanitizeMcpName(info.tool);
    Json def = {{"type", "function"},
                {"name", info.function_name},
                {"description", t.value("description", Json()).is_string()
                                    ? t["description"].get<std::string>()
                                    : std::string()},
                {"strict", false},
                {"parameters", Parameters(t)}};
    info.definition_json = Dump(def);
    out.push_back(std::move(info));
  }
  return out;
}

Result<std::string> McpManager::CallTool(const std::string& server, const std::string& tool,
                                         const std::string& arguments_json,
                                         const core::CancelToken& cancel) {
  McpClient* client = nullptr;
  int64_t timeout_ms = 60'000;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& s : servers_) {
      if (s->config.name != server) continue;
      if (s->state != ServerState::kReady || !s->client) {
        return UnavailableError("MCP server '" + server + "' is not running");
      }
      if (!s->config.AllowsTool(tool)) {
        return InvalidArgumentError("tool '" + tool + "' is disabled for MCP server '" + server +
                                    "'");
      }
      client = s->client.get();
      timeout_ms = s->config.tool_timeout_ms;
    }
  }
  if (client == nullptr) return NotFoundError("unknown MCP server '" + server + "'");
  if (client->closed()) {
    return UnavailableError("MCP server '" + server +
                            "' is not running: " + client->close_reason());
  }
  Json args = Json::parse(arguments_json, nullptr, false);
  if (!args.is_object()) return InvalidArgumentError("the arguments must be a JSON object");
  ASSIGN_OR_RETURN(Json result, client->CallTool(tool, args, timeout_ms, cancel));
  return Dump(result);
}

}  // namespace codex::mcp
