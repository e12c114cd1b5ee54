#include "core/config.h"

#include <pwd.h>
#include <toml++/toml.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace codex::core {

namespace fs = std::filesystem;

namespace {

std::string Getenv(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

std::string TrimSlash(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url;
}

// Splits "a.b.c" into keys; quoted segments ("a.b".c) keep their dots.
std::vector<std::string> SplitDotted(std::string_view key) {
  std::vector<std::string> parts;
  std::string cur;
  bool quoted = false;
  for (char c : key) {
    if (c == '"') {
      quoted = !quoted;
    } else if (c == '.' && !quoted) {
      parts.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  parts.push_back(cur);
  return parts;
}

// Applies one -c key=value to `root`. The value is parsed as TOML; when that
// fails it is taken as a bare string (as Codex does).
Status ApplyOverride(toml::table& root, const std::string& kv) {
  auto eq = kv.find('=');
  if (eq == std::string::npos || eq == 0) {
    return InvalidArgumentError("-c expects key=value, got '" + kv + "'");
  }
  std::string key = kv.substr(0, eq);
  std::string value = kv.substr(eq + 1);
  while (!key.empty() && key.back() == ' ') key.pop_back();
  while (!value.empty() && value.front() == ' ') value.erase(value.begin());
  toml::table parsed;
  try {
    parsed = toml::parse("v = " + value);
  } catch (const toml::parse_error&) {
    parsed = toml::table{};
    parsed.insert("v", value);
  }
  auto parts = SplitDotted(key);
  toml::table* table = &root;
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    toml::node* next = table->get(parts[i]);
    if (next == nullptr) {
      table->insert(parts[i], toml::table{});
      next = table->get(parts[i]);
    }
    if (!next->is_table()) {
      return InvalidArgumentError("-c " + key + ": '" + parts[i] + "' is not a table");
    }
    table = next->as_table();
  }
  toml::node* v = parsed.get("v");
  if (v == nullptr) return InvalidArgumentError("-c " + key + ": missing value");
  const std::string last = parts.back();
  v->visit([&](auto&& n) { table->insert_or_assign(last, std::move(n)); });
  return OkStatus();
}

template <typename T>
std::optional<T> Get(const toml::table& t, std::string_view key) {
  if (auto* node = t.get(key)) {
    if (auto v = node->value<T>()) return v;
  }
  return std::nullopt;
}

Status TypeError(std::string_view where, std::string_view key, std::string_view want) {
  return InvalidArgumentError("config: '" + std::string(where) + std::string(key) + "' must be " +
                              std::string(want) + "; fix it in config.toml or -c");
}

// Reads an optional string key, failing when present with another type.
Status ReadString(const toml::table& t, std::string_view where, std::string_view key,
                  std::string& out) {
  if (auto* node = t.get(key)) {
    auto v = node->value<std::string>();
    if (!v) return TypeError(where, key, "a string");
    out = *v;
  }
  return OkStatus();
}

Status ReadInt(const toml::table& t, std::string_view where, std::string_view key, int64_t& out) {
  if (auto* node = t.get(key)) {
    auto v = node->value<int64_t>();
    if (!v) return TypeError(where, key, "an integer");
    out = *v;
  }
  return OkStatus();
}

Status ReadBool(const toml::table& t, std::string_view where, std::string_view key, bool& out) {
  if (auto* node = t.get(key)) {
    auto v = node->value<bool>();
    if (!v) return TypeError(where, key, "true or false");
    out = *v;
  }
  return OkStatus();
}

Status ReadStringMap(const toml::table& t, std::string_view where, std::string_view key,
                     std::map<std::string, std::string>& out) {
  if (auto* node = t.get(key)) {
    auto* tbl = node->as_table();
    if (tbl == nullptr) return TypeError(where, key, "a table of strings");
    for (auto&& [k, v] : *tbl) {
      auto s = v.value<std::string>();
      if (!s) return TypeError(std::string(where) + std::string(key) + ".", k.str(), "a string");
      out[std::string(k.str())] = *s;
    }
  }
  return OkStatus();
}

Status ReadProvider(const std::string& id, const toml::table& t, ProviderInfo& p) {
  const std::string where = "model_providers." + id + ".";
  p.id = id;
  RETURN_IF_ERROR(ReadString(t, where, "name", p.name));
  RETURN_IF_ERROR(ReadString(t, where, "base_url", p.base_url));
  p.base_url = TrimSlash(p.base_url);
  RETURN_IF_ERROR(ReadString(t, where, "env_key", p.env_key));
  std::string wire = "responses";
  RETURN_IF_ERROR(ReadString(t, where, "wire_api", wire));
  if (wire == "responses") {
    p.wire_api = WireApi::kResponses;
  } else if (wire == "chat") {
    p.wire_api = WireApi::kChat;
  } else {
    return InvalidArgumentError("config: '" + where +
                                "wire_api' must be \"responses\" or \"chat\"");
  }
  RETURN_IF_ERROR(ReadStringMap(t, where, "query_params", p.query_params));
  RETURN_IF_ERROR(ReadStringMap(t, where, "http_headers", p.http_headers));
  RETURN_IF_ERROR(ReadStringMap(t, where, "env_http_headers", p.env_http_headers));
  int64_t n = p.request_max_retries;
  RETURN_IF_ERROR(ReadInt(t, where, "request_max_retries", n));
  p.request_max_retries = static_cast<int>(std::clamp<int64_t>(n, 0, 100));
  n = p.stream_max_retries;
  RETURN_IF_ERROR(ReadInt(t, where, "stream_max_retries", n));
  p.stream_max_retries = static_cast<int>(std::clamp<int64_t>(n, 0, 100));
  RETURN_IF_ERROR(ReadInt(t, where, "stream_idle_timeout_ms", p.stream_idle_timeout_ms));
  RETURN_IF_ERROR(ReadBool(t, where, "send_item_ids", p.send_item_ids));
  RETURN_IF_ERROR(ReadBool(t, where, "supports_compact", p.supports_compact));
  std::string tool_type;
  RETURN_IF_ERROR(ReadString(t, where, "apply_patch_tool_type", tool_type));
  if (tool_type == "function") {
    p.apply_patch_tool_type = ApplyPatchToolType::kFunction;
  } else if (tool_type == "freeform" || tool_type.empty()) {
    p.apply_patch_tool_type = ApplyPatchToolType::kFreeform;
  } else {
    return InvalidArgumentError("config: '" + where +
                                "apply_patch_tool_type' must be \"freeform\" or \"function\"");
  }
  if (p.wire_api == WireApi::kChat) {
    return InvalidArgumentError("config: provider '" + id +
                                "' uses wire_api = \"chat\"; only \"responses\" is supported");
  }
  return OkStatus();
}

}  // namespace

std::string_view ApprovalPolicyName(ApprovalPolicy policy) {
  switch (policy) {
    case ApprovalPolicy::kUntrusted:
      return "untrusted";
    case ApprovalPolicy::kOnFailure:
      return "on-failure";
    case ApprovalPolicy::kOnRequest:
      return "on-request";
    case ApprovalPolicy::kNever:
      return "never";
  }
  return "never";
}

std::optional<ApprovalPolicy> ParseApprovalPolicy(std::string_view name) {
  if (name == "untrusted") return ApprovalPolicy::kUntrusted;
  if (name == "on-failure") return ApprovalPolicy::kOnFailure;
  if (name == "on-request") return ApprovalPolicy::kOnRequest;
  if (name == "never") return ApprovalPolicy::kNever;
  return std::nullopt;
}

std::string_view SandboxModeName(SandboxMode mode) {
  switch (mode) {
    case SandboxMode::kReadOnly:
      return "read-only";
    case SandboxMode::kWorkspaceWrite:
      return "workspace-write";
    case SandboxMode::kDangerFullAccess:
      return "danger-full-access";
  }
  return "read-only";
}

std::optional<SandboxMode> ParseSandboxMode(std::string_view name) {
  if (name == "read-only") return SandboxMode::kReadOnly;
  if (name == "workspace-write") return SandboxMode::kWorkspaceWrite;
  if (name == "danger-full-access") return SandboxMode::kDangerFullAccess;
  return std::nullopt;
}

std::string DefaultCodexHome() {
  std::string home = Getenv("CODEX_HOME");
  if (!home.empty()) {
    std::error_code ec;
    auto abs = fs::absolute(home, ec);
    return ec ? home : abs.lexically_normal().string();
  }
  std::string user_home = Getenv("HOME");
  if (user_home.empty()) {
    if (const passwd* pw = getpwuid(getuid())) user_home = pw->pw_dir;
  }
  return (fs::path(user_home) / ".codex").string();
}

std::map<std::string, ProviderInfo> BuiltInProviders() {
  std::map<std::string, ProviderInfo> out;
  ProviderInfo openai;
  openai.id = "openai";
  openai.name = "OpenAI";
  openai.base_url = Getenv("OPENAI_BASE_URL");
  if (openai.base_url.empty()) openai.base_url = "https://api.openai.com/v1";
  openai.base_url = TrimSlash(openai.base_url);
  openai.env_key = "OPENAI_API_KEY";
  openai.supports_compact = true;
  out["openai"] = openai;
  ProviderInfo oss;
  oss.id = "oss";
  oss.name = "gpt-oss";
  oss.base_url = TrimSlash(Getenv("CODEX_OSS_BASE_URL"));
  if (oss.base_url.empty()) oss.base_url = "http://localhost:11434/v1";
  oss.apply_patch_tool_type = ApplyPatchToolType::kFunction;
  out["oss"] = oss;
  return out;
}

Result<Config> LoadConfig(const std::string& codex_home, const ConfigOverrides& overrides) {
  Config config;
  config.codex_home = codex_home;
  const fs::path path = fs::path(codex_home) / "config.toml";
  toml::table root;
  std::error_code ec;
  if (fs::exists(path, ec)) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      return InvalidArgumentError("cannot read " + path.string() + "; check its permissions");
    }
    std::stringstream ss;
    ss << in.rdbuf();
    try {
      root = toml::parse(ss.str(), path.string());
    } catch (const toml::parse_error& e) {
      return InvalidArgumentError(path.string() + ":" + std::to_string(e.source().begin.line) +
                                  ": " + std::string(e.description()) +
                                  "; fix the file or move it aside");
    }
  }
  for (const auto& kv : overrides.dash_c) RETURN_IF_ERROR(ApplyOverride(root, kv));

  RETURN_IF_ERROR(ReadString(root, "", "model", config.model));
  RETURN_IF_ERROR(ReadString(root, "", "model_provider", config.model_provider_id));
  RETURN_IF_ERROR(ReadString(root, "", "model_reasoning_effort", config.model_reasoning_effort));
  RETURN_IF_ERROR(ReadString(root, "", "model_reasoning_summary", config.model_reasoning_summary));
  RETURN_IF_ERROR(ReadString(root, "", "instructions", config.instructions));
  std::string policy;
  RETURN_IF_ERROR(ReadString(root, "", "approval_policy", policy));
  if (!policy.empty()) {
    auto p = ParseApprovalPolicy(policy);
    if (!p) {
      return InvalidArgumentError("config: approval_policy '" + policy +
                                  "' is not one of untrusted, on-failure, on-request, never");
    }
    config.approval_policy = *p;
  }
  std::string mode;
  RETURN_IF_ERROR(ReadString(root, "", "sandbox_mode", mode));
  if (!mode.empty()) {
    auto m = ParseSandboxMode(mode);
    if (!m) {
      return InvalidArgumentError("config: sandbox_mode '" + mode +
                                  "' is not one of read-only, workspace-write, danger-full-access");
    }
    config.sandbox_mode = *m;
  }
  if (auto* sww = root.get("sandbox_workspace_write")) {
    if (auto* t = sww->as_table()) {
      RETURN_IF_ERROR(ReadBool(*t, "sandbox_workspace_write.", "network_access",
                               config.sandbox_network_access));
      if (auto* roots = t->get("writable_roots")) {
        auto* arr = roots->as_array();
        if (!arr) return TypeError("sandbox_workspace_write.", "writable_roots", "an array");
        for (auto&& r : *arr) {
          auto s = r.value<std::string>();
          if (!s) return TypeError("sandbox_workspace_write.", "writable_roots", "strings");
          config.writable_roots.push_back(*s);
        }
      }
    }
  }
  int64_t n = 0;
  if (root.get("model_context_window")) {
    RETURN_IF_ERROR(ReadInt(root, "", "model_context_window", n));
    if (n <= 0) return InvalidArgumentError("config: model_context_window must be positive");
    config.model_context_window = n;
  }
  if (root.get("model_auto_compact_token_limit")) {
    RETURN_IF_ERROR(ReadInt(root, "", "model_auto_compact_token_limit", n));
    if (n <= 0) {
      return InvalidArgumentError("config: model_auto_compact_token_limit must be positive");
    }
    config.model_auto_compact_token_limit = n;
  }
  RETURN_IF_ERROR(ReadString(root, "", "compaction", config.compaction));
  if (config.compaction != "auto" && config.compaction != "inline" &&
      config.compaction != "endpoint" && config.compaction != "local") {
    return InvalidArgumentError("config: compaction '" + config.compaction +
                                "' is not one of auto, inline, endpoint, local");
  }
  RETURN_IF_ERROR(ReadInt(root, "", "shell_timeout_ms", config.shell_timeout_ms));
  if (auto* hist = root.get("history")) {
    if (auto* t = hist->as_table()) {
      if (t->get("retention_days")) {
        RETURN_IF_ERROR(ReadInt(*t, "history.", "retention_days", n));
        config.history_retention_days = static_cast<int>(n);
      }
    }
  }

  config.providers = BuiltInProviders();
  if (auto* provs = root.get("model_providers")) {
    auto* t = provs->as_table();
    if (!t) return TypeError("", "model_providers", "a table");
    for (auto&& [id, node] : *t) {
      auto* pt = node.as_table();
      if (!pt) return TypeError("model_providers.", id.str(), "a table");
      ProviderInfo p;
      auto builtin = config.providers.find(std::string(id.str()));
      if (builtin != config.providers.end()) p = builtin->second;
      RETURN_IF_ERROR(ReadProvider(std::string(id.str()), *pt, p));
      if (p.base_url.empty()) {
        return InvalidArgumentError("config: model_providers." + std::string(id.str()) +
                                    " needs base_url");
      }
      config.providers[p.id] = p;
    }
  }

  if (overrides.model) config.model = *overrides.model;
  if (overrides.oss) config.model_provider_id = "oss";
  if (overrides.provider) config.model_provider_id = *overrides.provider;
  if (overrides.sandbox_mode) config.sandbox_mode = *overrides.sandbox_mode;
  if (overrides.approval_policy) config.approval_policy = *overrides.approval_policy;
  for (const auto& d : overrides.add_dirs) config.writable_roots.push_back(d);

  auto it = config.providers.find(config.model_provider_id);
  if (it == config.providers.end()) {
    return InvalidArgumentError("config: model_provider '" + config.model_provider_id +
                                "' is not defined; add [model_providers." +
                                config.model_provider_id + "] to config.toml");
  }
  config.provider = it->second;

  std::string cwd = overrides.cwd.value_or("");
  if (cwd.empty()) {
    cwd = fs::current_path(ec).string();
    if (ec) return InternalError("cannot read the current directory: " + ec.message());
  }
  auto abs = fs::weakly_canonical(fs::absolute(cwd, ec), ec);
  if (ec || !fs::is_directory(abs, ec)) {
    return InvalidArgumentError("working directory '" + cwd + "' does not exist");
  }
  config.cwd = abs.string();
  for (auto& root_dir : config.writable_roots) {
    root_dir = fs::absolute(fs::path(config.cwd) / root_dir, ec).lexically_normal().string();
  }
  return config;
}

Result<std::string> ResolveApiKey(const ProviderInfo& provider) {
  if (provider.env_key.empty()) return std::string();
  std::string key = Getenv(provider.env_key.c_str());
  if (key.empty()) {
    return UnauthenticatedError("no API key: set " + provider.env_key + " for provider '" +
                                provider.id + "' (or choose another model_provider)");
  }
  return key;
}

}  // namespace codex::core
