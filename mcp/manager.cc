#include "mcp/manager.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <span>
#include <string_view>
#include <thread>

#include "base/json.h"
#include "base/shell.h"
#include "core/config.h"
#include "core/sandboxed_runner.h"
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

// A JSON schema as Codex 0.169 passes it on (it parses the server's schema
// into its own type and writes that out; tests/mcp/mcp_test_server.cc
// --rich-schema holds a schema of every shape, compared with what Codex sent):
// "type" (inferred from properties/items/enum/const/format/minimum when
// absent), "description", "items" (default {"type":"string"}), "enum" (a
// "const" becomes a one-value enum), "properties" (sorted by name, always
// present for an object), "required" (when given), "additionalProperties",
// "anyOf"/"oneOf"/"allOf"; everything else ("$schema", "default", "format", "title", bounds)
// is dropped, and a schema with no type and no combinator becomes {}.
Json CodexSchema(const Json& in) {
  Json out = Json::object();
  if (!in.is_object()) return out;
  Json type = in.value("type", Json());
  if (!type.is_string() && !(type.is_array() && !type.empty())) {
    type = Json();
    if (in.contains("properties") || in.contains("required") ||
        in.contains("additionalProperties")) {
      type = "object";
    } else if (in.contains("items") || in.contains("prefixItems")) {
      type = "array";
    } else if (in.contains("enum") || in.contains("const") || in.contains("format")) {
      type = "string";
    } else if (in.contains("minimum") || in.contains("maximum") ||
               in.contains("exclusiveMinimum") || in.contains("exclusiveMaximum") ||
               in.contains("multipleOf")) {
      type = "number";
    }
  }
  constexpr const char* kCombinators[] = {"anyOf", "oneOf", "allOf"};
  bool combined = false;
  for (const char* c : kCombinators) combined = combined || in.value(c, Json()).is_array();
  if (type.is_null() && !combined) return out;
  auto is = [&](const char* t) {
    if (type.is_string()) return type == t;
    for (const auto& x : type) {
      if (x == t) return true;
    }
    return false;
  };
  if (!type.is_null()) out["type"] = type;
  if (in.value("description", Json()).is_string()) out["description"] = in["description"];
  if (is("array")) {
    out["items"] = in.contains("items") ? CodexSchema(in["items"]) : Json{{"type", "string"}};
  }
  if (in.value("enum", Json()).is_array()) {
    out["enum"] = in["enum"];
  } else if (in.contains("const")) {
    out["enum"] = Json::array({in["const"]});
  }
  if (is("object")) {
    std::map<std::string, Json> sorted;
    if (in.value("properties", Json()).is_object()) {
      for (auto it = in["properties"].begin(); it != in["properties"].end(); ++it) {
        sorted[it.key()] = CodexSchema(it.value());
      }
    }
    Json props = Json::object();
    for (auto& [k, v] : sorted) props[k] = std::move(v);
    out["properties"] = std::move(props);
    if (in.value("required", Json()).is_array()) out["required"] = in["required"];
    if (in.contains("additionalProperties")) {
      const Json& ap = in["additionalProperties"];
      out["additionalProperties"] = ap.is_boolean() ? ap : CodexSchema(ap);
    }
  }
  for (const char* c : kCombinators) {
    if (!in.value(c, Json()).is_array()) continue;
    Json branches = Json::array();
    for (const auto& b : in[c]) branches.push_back(CodexSchema(b));
    out[c] = std::move(branches);
  }
  return out;
}

// The `parameters` of a tool: its inputSchema as Codex passes it on, an
// object schema.
Json Parameters(const Json& tool) {
  Json schema = tool.value("inputSchema", Json::object());
  if (!schema.is_object()) schema = Json::object();
  if (!schema.contains("type")) schema["type"] = "object";
  return CodexSchema(schema);
}

}  // namespace

std::string_view ServerStateName(ServerState state) {
  switch (state) {
    case ServerState::kDisabled:
      return "disabled";
    case ServerState::kStarting:
      return "starting";
    case ServerState::kReady:
      return "ready";
    case ServerState::kFailed:
      return "failed";
  }
  return "failed";
}

McpManager::McpManager(const core::Config& config, sandbox::EnvPolicy env_policy)
    : codex_home_(config.codex_home),
      cwd_(config.cwd),
      env_policy_(std::move(env_policy)),
      writable_roots_(core::ModelWritableRootsFor(core::SandboxPolicyFor(config), config.cwd)) {
  for (const auto& [name, c] : config.mcp_servers) {  // std::map: sorted by name
    auto s = std::make_unique<Server>();
    s->config = c;
    servers_.push_back(std::move(s));
  }
}

McpManager::~McpManager() {
  // A server still starting gives up at once (its requests watch shutdown_).
  shutdown_.Cancel();
  for (auto& t : starters_) t.join();
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
  auto log = std::make_unique<ServerLog>(
      (std::filesystem::path(codex_home_) / "log" / ("mcp-" + c.name + ".log")).string());
  ServerLog* log_ptr = log.get();
  {
    std::lock_guard<std::mutex> lock(mu_);
    s.log = std::move(log);
  }
  log_ptr->Note("starting MCP server '" + c.name + "'");
  std::unique_ptr<Transport> transport;
  if (c.is_http()) {
    transport = std::make_unique<HttpTransport>(HttpOptions{c, log_ptr});
  } else {
    transport = std::make_unique<StdioTransport>(
        StdioOptions{c, cwd_, env_policy_, log_ptr, writable_roots_});
  }
  auto client = std::make_unique<McpClient>(c.name, std::move(transport), log_ptr);
  const auto start = std::chrono::steady_clock::now();
  auto left = [&] {
    return std::max<int64_t>(
        1, c.startup_timeout_ms - std::chrono::duration_cast<std::chrono::milliseconds>(
                                      std::chrono::steady_clock::now() - start)
                                      .count());
  };
  Status st = client->Start();
  if (st.ok()) st = client->Initialize(left(), &shutdown_);
  Result<std::vector<Json>> tools =
      st.ok() ? client->ListTools(left(), &shutdown_) : Result<std::vector<Json>>(st);
  if (!tools.ok()) {
    std::string error = tools.status().message();
    if (tools.status().code() == StatusCode::kDeadlineExceeded) {
      error = "did not start within " + FormatSeconds(c.startup_timeout_ms) +
              " s (startup_timeout_sec)";
    }
    if (shutdown_.cancelled()) error = "codex ended before it started";
    log_ptr->Note("failed to start: " + error);
    client->Close();
    std::lock_guard<std::mutex> lock(mu_);
    s.state = ServerState::kFailed;
    s.error = std::move(error);
    s.reported = shutdown_.cancelled();  // nobody is left to tell
    settled_.notify_all();
    return;
  }
  std::lock_guard<std::mutex> lock(mu_);
  SetTools(s, std::move(*tools));
  s.client = std::move(client);
  s.state = ServerState::kReady;
  log_ptr->Note("ready: protocol " + s.client->protocol_version() + ", " +
                std::to_string(s.tools.size()) + " tools");
  settled_.notify_all();
}

std::string McpManager::FailureLine(const Server& s) const {
  return "MCP server '" + s.config.name + "' failed to start: " + s.error +
         " (log: " + (s.log ? s.log->path() : std::string("-")) + ")";
}

void McpManager::WaitSettled(std::unique_lock<std::mutex>& lock, bool required_only) {
  settled_.wait(lock, [&] {
    for (const auto& s : servers_) {
      if (s->state == ServerState::kStarting && (!required_only || s->config.required)) {
        return false;
      }
    }
    return true;
  });
}

Status McpManager::Start() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!starters_.empty()) return OkStatus();
    for (auto& s : servers_) {
      if (!s->config.enabled) continue;
      s->state = ServerState::kStarting;
    }
  }
  for (auto& s : servers_) {
    if (!s->config.enabled) continue;
    Server* p = s.get();
    starters_.emplace_back([this, p] { StartOne(*p); });
  }
  std::unique_lock<std::mutex> lock(mu_);
  // Servers ready within the grace are in the first turn (Codex 0.169 reaches
  // its first request about a second after it starts, and offers what is
  // ready by then); the required ones are waited for.
  settled_.wait_for(lock, std::chrono::milliseconds(kFirstTurnGraceMs), [&] {
    for (const auto& s : servers_) {
      if (s->state == ServerState::kStarting) return false;
    }
    return true;
  });
  WaitSettled(lock, /*required_only=*/true);
  for (auto& s : servers_) {
    if (s->state == ServerState::kFailed && s->config.required) {
      s->reported = true;
      return UnavailableError(FailureLine(*s) +
                              "; it is required (required = true in config.toml)");
    }
  }
  return OkStatus();
}

Result<std::vector<std::string>> McpManager::StartAll() {
  RETURN_IF_ERROR(Start());
  {
    std::unique_lock<std::mutex> lock(mu_);
    WaitSettled(lock, /*required_only=*/false);
  }
  return TakeNotices(false);
}

std::vector<std::string> McpManager::TakeNotices(bool at_exit) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> lines;
  for (auto& s : servers_) {
    if (s->state == ServerState::kFailed && !s->reported) {
      s->reported = true;
      lines.push_back(FailureLine(*s));
    } else if (at_exit && s->state == ServerState::kStarting && !s->reported) {
      s->reported = true;
      lines.push_back("MCP server '" + s->config.name +
                      "' was still starting when codex finished; its tools were not offered");
    }
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
    info.namespace_description = refs[i].first->client->instructions();
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

Result<McpClient*> McpManager::ResourceServer(const std::string& name, int64_t* timeout_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& s : servers_) {
    if (s->config.name != name) continue;
    if (s->state == ServerState::kStarting) {
      return UnavailableError("MCP server '" + name + "' is still starting; try again later");
    }
    if (s->state != ServerState::kReady || !s->client) {
      return UnavailableError("MCP server '" + name + "' is not running" +
                              (s->error.empty() ? std::string() : ": " + s->error));
    }
    *timeout_ms = s->config.tool_timeout_ms;
    return s->client.get();
  }
  return NotFoundError("unknown MCP server '" + name + "'");
}

namespace {

// The model's arguments for a resource tool: an object of string fields.
// Codex's messages for what it cannot use.
Result<Json> ResourceArgs(const std::string& text, std::initializer_list<const char*> required) {
  const bool blank = text.find_first_not_of(" \t\r\n") == std::string::npos;
  Json args = blank ? Json::object() : Json::parse(text, nullptr, false);
  if (args.is_discarded()) {
    return InvalidArgumentError("failed to parse function arguments: not valid JSON");
  }
  if (args.is_null()) args = Json::object();
  if (!args.is_object()) {
    return InvalidArgumentError("failed to parse function arguments: expected an object");
  }
  for (const char* key : required) {
    if (!args.contains(key)) {
      return InvalidArgumentError(
          std::string("failed to parse function arguments: missing field `") + key + "`");
    }
  }
  for (auto& [key, value] : args.items()) {
    if (value.is_null()) continue;
    if (!value.is_string()) {
      return InvalidArgumentError("failed to parse function arguments: `" + key +
                                  "` must be a string");
    }
  }
  return args;
}

std::string StringArg(const Json& args, const char* key) {
  auto it = args.find(key);
  return it != args.end() && it->is_string() ? it->get<std::string>() : "";
}

// The fields Codex 0.169 keeps of a resource, a template and a resource's
// contents, in the order it writes them (it parses the server's answer into
// its own types and writes those out; other fields are dropped).
constexpr std::string_view kResourceFields[] = {"uri",  "name",  "title", "description", "mimeType",
                                                "size", "icons", "_meta", "annotations"};
constexpr std::string_view kTemplateFields[] = {"uriTemplate", "name",  "title", "description",
                                                "mimeType",    "icons", "_meta", "annotations"};
constexpr std::string_view kContentsFields[] = {"uri", "mimeType", "text", "blob", "_meta"};

Json Reordered(const Json& item, std::span<const std::string_view> fields) {
  Json out = Json::object();
  for (std::string_view f : fields) {
    auto it = item.find(std::string(f));
    if (it != item.end() && !it->is_null()) out[std::string(f)] = *it;
  }
  return out;
}

// Each entry of `items` with "server" first, as Codex lists them.
void AppendWithServer(Json& out, const Json& items, const std::string& server, bool templates) {
  if (!items.is_array()) return;
  for (const auto& item : items) {
    if (!item.is_object()) continue;
    const Json kept =
        Reordered(item, templates ? std::span<const std::string_view>(kTemplateFields)
                                  : std::span<const std::string_view>(kResourceFields));
    Json entry = {{"server", server}};
    for (auto it = kept.begin(); it != kept.end(); ++it) entry[it.key()] = it.value();
    out.push_back(std::move(entry));
  }
}

}  // namespace

Result<std::string> McpManager::ListResources(const Json& args, bool templates,
                                              const core::CancelToken& cancel) {
  const std::string method = templates ? "resources/templates/list" : "resources/list";
  const char* key = templates ? "resourceTemplates" : "resources";
  const std::string server = StringArg(args, "server");
  const std::string cursor = StringArg(args, "cursor");
  // Codex's wording: "resources/list failed: resources/list failed for `S`: ...".
  auto failed = [&](const std::string& name, const Status& st) {
    return Status(st.code(),
                  method + " failed: " + method + " failed for `" + name + "`: " + st.message());
  };
  if (server.empty()) {
    if (!cursor.empty()) {
      return InvalidArgumentError("cursor can only be used when a server is specified");
    }
    // Every ready server that declared resources, by name, every page.
    std::vector<std::string> names;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (auto& s : servers_) {
        if (s->state == ServerState::kReady && s->client && s->client->supports_resources()) {
          names.push_back(s->config.name);
        }
      }
    }
    Json all = Json::array();
    for (const std::string& name : names) {
      int64_t timeout_ms = 60'000;
      ASSIGN_OR_RETURN(McpClient * c, ResourceServer(name, &timeout_ms));
      std::string next;
      for (int page = 0; page < 1000; ++page) {
        Json params = next.empty() ? Json() : Json{{"cursor", next}};
        auto result = c->Call(method, std::move(params), timeout_ms, cancel);
        if (!result.ok()) return failed(name, result.status());
        AppendWithServer(all, result->value(key, Json::array()), name, templates);
        const Json n = result->value("nextCursor", Json());
        if (!n.is_string() || n.get<std::string>().empty() || n.get<std::string>() == next) break;
        next = n.get<std::string>();
      }
    }
    return Dump(Json{{key, all}});
  }
  int64_t timeout_ms = 60'000;
  ASSIGN_OR_RETURN(McpClient * c, ResourceServer(server, &timeout_ms));
  Json params = cursor.empty() ? Json() : Json{{"cursor", cursor}};
  auto result = c->Call(method, std::move(params), timeout_ms, cancel);
  if (!result.ok()) return failed(server, result.status());
  Json out = {{"server", server}, {key, Json::array()}};
  AppendWithServer(out[key], result->value(key, Json::array()), server, templates);
  const Json n = result->is_object() ? result->value("nextCursor", Json()) : Json();
  if (n.is_string()) out["nextCursor"] = n;
  return Dump(out);
}

Result<std::string> McpManager::CallResourceTool(const std::string& name,
                                                 const std::string& arguments_json,
                                                 const core::CancelToken& cancel) {
  if (name == "read_mcp_resource") {
    ASSIGN_OR_RETURN(Json args, ResourceArgs(arguments_json, {"server", "uri"}));
    const std::string server = StringArg(args, "server");
    const std::string uri = StringArg(args, "uri");
    int64_t timeout_ms = 60'000;
    ASSIGN_OR_RETURN(McpClient * c, ResourceServer(server, &timeout_ms));
    auto result = c->Call("resources/read", {{"uri", uri}}, timeout_ms, cancel);
    if (!result.ok()) {
      return Status(result.status().code(), "resources/read failed: resources/read failed for `" +
                                                server + "` (" + uri +
                                                "): " + result.status().message());
    }
    Json contents = Json::array();
    const Json given = result->is_object() ? result->value("contents", Json()) : Json();
    if (given.is_array()) {
      for (const auto& part : given) {
        if (part.is_object()) contents.push_back(Reordered(part, kContentsFields));
      }
    }
    Json out = {{"server", server}, {"uri", uri}, {"contents", std::move(contents)}};
    if (result->is_object() && result->contains("_meta")) out["_meta"] = (*result)["_meta"];
    return Dump(out);
  }
  const bool templates = name == "list_mcp_resource_templates";
  if (!templates && name != "list_mcp_resources") {
    return NotFoundError("unknown resource tool '" + name + "'");
  }
  ASSIGN_OR_RETURN(Json args, ResourceArgs(arguments_json, {}));
  return ListResources(args, templates, cancel);
}

}  // namespace codex::mcp
