#include "core/config.h"

#include <pwd.h>
#include <toml++/toml.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/file.h"
#include "base/json.h"
#include "base/path.h"
#include "core/mcp_config_parse.h"
#include "core/project_context.h"
#include "core/project_trust.h"
#include "core/shell_snapshot.h"

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
    // Exact: toml++'s value<bool>() reads an integer as a bool (`= 1` was true).
    auto v = node->value_exact<bool>();
    if (!v) return TypeError(where, key, "true or false");
    out = *v;
  }
  return OkStatus();
}

// An optional table key: nullptr when absent, an error when it is not a table
// (`history = 1` was read as "no [history]" and warned about as unsupported).
Result<const toml::table*> ReadTable(const toml::table& t, std::string_view where,
                                     std::string_view key) {
  const toml::node* node = t.get(key);
  if (node == nullptr) return static_cast<const toml::table*>(nullptr);
  if (const toml::table* table = node->as_table()) return table;
  return TypeError(where, key, "a table");
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

// [shell_environment_policy] (see sandbox/environment.h for the semantics).
Status ReadShellEnvironmentPolicy(const toml::node& node, sandbox::EnvPolicy& policy) {
  constexpr std::string_view kWhere = "shell_environment_policy.";
  const toml::table* t = node.as_table();
  if (t == nullptr) return TypeError("", "shell_environment_policy", "a table");
  for (auto&& [k, v] : *t) {
    const std::string_view key = k.str();
    if (key == "inherit") {
      auto name = v.is_string() ? v.value<std::string>() : std::nullopt;
      auto inherit = name ? sandbox::ParseEnvInherit(*name) : std::nullopt;
      if (!inherit) return TypeError(kWhere, key, "one of \"all\", \"core\", \"none\"");
      policy.inherit = *inherit;
    } else if (key == "ignore_default_excludes") {
      const toml::value<bool>* b = v.as_boolean();  // value<bool>() would accept 1
      if (b == nullptr) return TypeError(kWhere, key, "true or false");
      policy.secrets =
          b->get() ? sandbox::SecretFilter::kKeep : sandbox::SecretFilter::kDropSecretLike;
    } else if (key == "exclude" || key == "include_only") {
      auto& out = key == "exclude" ? policy.exclude : policy.include_only;
      const toml::array* arr = v.as_array();
      if (arr == nullptr) return TypeError(kWhere, key, "an array of glob patterns");
      out.clear();
      for (auto&& p : *arr) {
        auto s = p.is_string() ? p.value<std::string>() : std::nullopt;
        if (!s) return TypeError(kWhere, key, "an array of glob patterns (strings)");
        out.push_back(*s);
      }
    } else if (key == "set") {
      policy.set.clear();
      RETURN_IF_ERROR(ReadStringMap(*t, kWhere, key, policy.set));
    } else if (key == "experimental_use_profile" || key == "use_profile") {
      if (!v.is_boolean()) return TypeError(kWhere, key, "true or false");  // accepted, unused
    } else {
      return InvalidArgumentError(
          "config: unknown key 'shell_environment_policy." + std::string(key) +
          "'; the keys are inherit, ignore_default_excludes, exclude, include_only, set");
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

// Copies every key of `src` into `dst`, merging tables that exist in both.
void MergeTables(toml::table& dst, const toml::table& src) {
  for (auto&& [k, v] : src) {
    toml::node* existing = dst.get(k.str());
    if (existing != nullptr && existing->is_table() && v.is_table()) {
      MergeTables(*existing->as_table(), *v.as_table());
    } else {
      const std::string key(k.str());
      v.visit([&](auto&& n) { dst.insert_or_assign(key, n); });
    }
  }
}

// The config keys this codex reads. "k" covers k and everything under it;
// "k.sub" covers only that sub-key of table k. Any other key (including the
// Codex keys we do not implement) is warned about once and ignored, or
// rejected under --strict-config. Adding a key is one line here.
constexpr std::string_view kKnownKeys[] = {
    "model",
    "model_provider",
    "model_providers",
    "model_reasoning_effort",
    "model_reasoning_summary",
    "model_verbosity",
    "model_context_window",
    "model_auto_compact_token_limit",
    "model_auto_compact_soft_token_limit",
    "instructions",
    "approval_policy",
    "sandbox_mode",
    "sandbox_workspace_write.network_access",  // [sandbox_workspace_write] key by key (issue 23)
    "sandbox_workspace_write.writable_roots",
    "sandbox_workspace_write.exclude_slash_tmp",
    "sandbox_workspace_write.exclude_tmpdir_env_var",
    "shell_timeout_ms",
    "history.persistence",
    "history.retention_days",
    "profile",
    "profiles",
    "notify",
    "project_doc_max_bytes",
    "hide_agent_reasoning",
    "parallel_tool_calls",
    "features.unified_exec",     // uexec (issue 24)
    "features.shell_snapshot",   // shell snapshot (issue 24)
    "tools.view_image",          // uexec (issue 24)
    "tools.web_search",          // uexec (issue 24)
    "shell_environment_policy",  // sandbox-cls (issue 10)
    "mcp_servers",               // mcp (issue 16)
    "compaction",                // compaction (issue 12)
    "retention_days",            // store (issue 11)
    "session_store",             // PostgreSQL (issue 15)
    "model_prices",              // sessions usage (issue 28)
};

// Keys Codex 0.169 itself writes into config.toml (trusting a project, the
// TUI's notices and settings, /experimental feature toggles): accepted
// without a warning, since a Codex user's file always has them. They have no
// effect here, except what `features` maps (docs/codex-compat.md).
constexpr std::string_view kCodexWrittenKeys[] = {
    "projects", "notice", "tui", "features", "windows_wsl_setup_acknowledged",
};

// Codex keys this codex honours with Codex's meaning (issue 25).
constexpr std::string_view kCodexHonouredKeys[] = {
    "history.max_bytes",
    "compact_prompt",
    "experimental_compact_prompt_file",
    "web_search",
    "model_catalog_json",
    "tool_output_token_limit",
    "developer_instructions",
    "model_instructions_file",
    "project_doc_fallback_filenames",
    "show_raw_agent_reasoning",
    "file_opener",
};

bool IsKnownKey(std::string_view path) {
  for (std::string_view k : kCodexWrittenKeys) {
    if (k == path) return true;
  }
  for (std::string_view k : kCodexHonouredKeys) {
    if (k == path) return true;
  }
  for (std::string_view k : kKnownKeys) {
    if (k == path) return true;
  }
  return false;
}

bool HasKnownSubKeys(std::string_view table) {
  for (std::string_view k : kKnownKeys) {
    if (k.size() > table.size() && k.substr(0, table.size()) == table && k[table.size()] == '.') {
      return true;
    }
  }
  return false;
}

// The unsupported keys under `table` ("history.max_bytes", ...), sorted by key.
void CollectUnsupported(const toml::table& table, const std::string& prefix,
                        std::vector<std::string>& out) {
  for (auto&& [k, v] : table) {
    const std::string path = prefix + std::string(k.str());
    if (IsKnownKey(path)) continue;
    if (v.is_table() && HasKnownSubKeys(path)) {
      CollectUnsupported(*v.as_table(), path + ".", out);
      continue;
    }
    out.push_back(path);
  }
}

Status ReadEnum(const toml::table& t, std::string_view where, std::string_view key,
                std::initializer_list<std::string_view> allowed, std::string& out) {
  std::string value = out;
  RETURN_IF_ERROR(ReadString(t, where, key, value));
  if (t.get(key) != nullptr) {
    RETURN_IF_ERROR(CheckEnum(std::string(where) + std::string(key), value, allowed));
  }
  out = value;
  return OkStatus();
}

// session_store: -c beats CODEX_SESSION_STORE, which beats config.toml.
Status ReadSessionStore(const toml::table& root, const ConfigOverrides& overrides,
                        const std::string& codex_home, StoreLocation& out) {
  std::string setting;
  RETURN_IF_ERROR(ReadString(root, "", "session_store", setting));
  std::string source = "session_store";
  bool from_dash_c = false;
  for (const std::string& kv : overrides.dash_c) {
    const std::string key = kv.substr(0, kv.find('='));
    if (key.find_first_not_of(' ') != std::string::npos &&
        key.substr(0, key.find_last_not_of(' ') + 1) == "session_store") {
      from_dash_c = true;
    }
  }
  const std::string env = Getenv("CODEX_SESSION_STORE");
  if (!from_dash_c && !env.empty()) {
    setting = env;
    source = "CODEX_SESSION_STORE";
  }
  ASSIGN_OR_RETURN(out, ParseStoreLocation(setting, codex_home, source));
  return OkStatus();
}

}  // namespace

Status CheckEnum(std::string_view key, std::string_view value,
                 std::initializer_list<std::string_view> allowed) {
  std::string names;
  for (std::string_view a : allowed) {
    if (a == value) return OkStatus();
    if (!names.empty()) names += ", ";
    names += a;
  }
  return InvalidArgumentError("config: " + std::string(key) + " '" + std::string(value) +
                              "' is not one of " + names + "; fix it in config.toml or -c");
}

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

SandboxPolicy SandboxPolicyFor(const Config& config) {
  SandboxPolicy policy;
  policy.mode = config.sandbox_mode;
  policy.workspace_root = config.cwd;
  policy.writable_roots = config.writable_roots;
  policy.network = config.sandbox_network_access;
  policy.exclude_slash_tmp = config.sandbox_exclude_slash_tmp;
  policy.exclude_tmpdir_env_var = config.sandbox_exclude_tmpdir_env_var;
  policy.private_paths = config.sandbox_private_paths;
  if (config.shell_snapshot && !config.codex_home.empty()) {
    policy.read_only_paths.push_back(ShellSnapshotDir(config.codex_home));
  }
  return policy;
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

namespace {

// config.toml's table; an empty one when the file does not exist.
Result<toml::table> ReadConfigFile(const fs::path& path) {
  toml::table root;
  std::error_code ec;
  if (fs::exists(path, ec)) {
    const auto text = ReadWholeFile(path.string());
    if (!text.ok()) {
      return InvalidArgumentError("cannot read " + text.status().message() +
                                  "; fix it or move it aside");
    }
    try {
      root = toml::parse(*text, path.string());
    } catch (const toml::parse_error& e) {
      return InvalidArgumentError(path.string() + ":" + std::to_string(e.source().begin.line) +
                                  ": " + std::string(e.description()) +
                                  "; fix the file or move it aside");
    }
  }
  return root;
}

// Layers the chosen profile over `root`: -p NAME, else `profile = "NAME"`.
Status ApplyProfile(const std::string& codex_home, const fs::path& path,
                    const ConfigOverrides& overrides, toml::table& root, Config& config) {
  std::error_code ec;
  // Its [profiles.NAME] table
  // (and $CODEX_HOME/NAME.config.toml, which Codex 0.169 layers the same way)
  // goes over the file; -c overrides are applied again on top.
  std::string profile = overrides.profile.value_or("");
  if (profile.empty()) RETURN_IF_ERROR(ReadString(root, "", "profile", profile));
  RETURN_IF_ERROR(ReadTable(root, "", "profiles").status());
  if (!profile.empty()) {
    bool found = false;
    if (auto* profiles = root.get("profiles")) {
      if (!profiles->is_table()) return TypeError("", "profiles", "a table of tables");
      if (auto* p = profiles->as_table()->get(profile)) {
        if (!p->is_table()) return TypeError("profiles.", profile, "a table");
        const toml::table chosen = *p->as_table();
        MergeTables(root, chosen);
        found = true;
      }
    }
    const fs::path layer = fs::path(codex_home) / (profile + ".config.toml");
    if (profile.find('/') == std::string::npos && fs::is_regular_file(layer, ec)) {
      try {
        MergeTables(root, toml::parse_file(layer.string()));
      } catch (const toml::parse_error& e) {
        return InvalidArgumentError(layer.string() + ":" + std::to_string(e.source().begin.line) +
                                    ": " + std::string(e.description()) + "; fix the file");
      }
      found = true;
    }
    if (!found) {
      return InvalidArgumentError("config: profile '" + profile +
                                  "' is not defined; add [profiles." + profile + "] to " +
                                  path.string());
    }
    for (const auto& kv : overrides.dash_c) RETURN_IF_ERROR(ApplyOverride(root, kv));
    config.profile = profile;
  }
  return OkStatus();
}

// The model, policy and sandbox keys of the merged table.
Status ReadModelAndPolicyKeys(const toml::table& root, Config& config) {
  RETURN_IF_ERROR(ReadString(root, "", "model", config.model));
  RETURN_IF_ERROR(ReadString(root, "", "model_provider", config.model_provider_id));
  RETURN_IF_ERROR(ReadEnum(root, "", "model_reasoning_effort",
                           {"none", "minimal", "low", "medium", "high", "xhigh"},
                           config.model_reasoning_effort));
  RETURN_IF_ERROR(ReadEnum(root, "", "model_reasoning_summary",
                           {"auto", "concise", "detailed", "none"},
                           config.model_reasoning_summary));
  RETURN_IF_ERROR(
      ReadEnum(root, "", "model_verbosity", {"low", "medium", "high"}, config.model_verbosity));
  RETURN_IF_ERROR(ReadBool(root, "", "parallel_tool_calls", config.parallel_tool_calls));
  // Codex's [features] flags (--enable/--disable F) that have a counterpart
  // here; the others are accepted and change nothing (docs/codex-compat.md).
  ASSIGN_OR_RETURN(const toml::table* features, ReadTable(root, "", "features"));
  if (features != nullptr) {
    RETURN_IF_ERROR(ReadBool(*features, "features.", "unified_exec", config.unified_exec));
    RETURN_IF_ERROR(ReadBool(*features, "features.", "shell_snapshot", config.shell_snapshot));
    RETURN_IF_ERROR(ReadBool(*features, "features.", "view_image", config.view_image));
    RETURN_IF_ERROR(ReadBool(*features, "features.", "default_mode_request_user_input",
                             config.default_mode_request_user_input));
    RETURN_IF_ERROR(ReadBool(*features, "features.", "multi_agent", config.multi_agent));
    RETURN_IF_ERROR(ReadBool(*features, "features.", "web_search_request", config.web_search));
    RETURN_IF_ERROR(ReadBool(*features, "features.", "web_search_cached", config.web_search));
  }
  // Codex's top-level web_search ("live" | "cached" | "disabled"; --search is "live").
  std::string web_search;
  RETURN_IF_ERROR(ReadEnum(root, "", "web_search", {"live", "cached", "disabled"}, web_search));
  if (!web_search.empty()) config.web_search = web_search != "disabled";
  ASSIGN_OR_RETURN(const toml::table* tools, ReadTable(root, "", "tools"));
  if (tools != nullptr) {
    RETURN_IF_ERROR(ReadBool(*tools, "tools.", "view_image", config.view_image));
    RETURN_IF_ERROR(ReadBool(*tools, "tools.", "web_search", config.web_search));
  }
  RETURN_IF_ERROR(ReadBool(root, "", "hide_agent_reasoning", config.hide_agent_reasoning));
  RETURN_IF_ERROR(ReadBool(root, "", "show_raw_agent_reasoning", config.show_raw_agent_reasoning));
  RETURN_IF_ERROR(ReadEnum(root, "", "file_opener",
                           {"vscode", "vscode-insiders", "windsurf", "cursor", "none"},
                           config.file_opener));
  if (root.get("tool_output_token_limit")) {
    int64_t limit = 0;
    RETURN_IF_ERROR(ReadInt(root, "", "tool_output_token_limit", limit));
    if (limit <= 0) {
      return InvalidArgumentError("config: tool_output_token_limit must be a positive number");
    }
    config.tool_output_token_limit = limit;
  }
  if (root.get("project_doc_max_bytes")) {
    int64_t max_bytes = 0;
    RETURN_IF_ERROR(ReadInt(root, "", "project_doc_max_bytes", max_bytes));
    if (max_bytes < 0) {
      return InvalidArgumentError("config: project_doc_max_bytes must be 0 or more");
    }
    config.project_doc_max_bytes = max_bytes;
  }
  if (auto* notify = root.get("notify")) {
    auto* arr = notify->as_array();
    if (arr == nullptr) return TypeError("", "notify", "an array of strings (program, args...)");
    for (auto&& a : *arr) {
      auto v = a.value<std::string>();
      if (!v) return TypeError("", "notify", "an array of strings (program, args...)");
      config.notify.push_back(*v);
    }
  }
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
  ASSIGN_OR_RETURN(const toml::table* sww, ReadTable(root, "", "sandbox_workspace_write"));
  if (sww != nullptr) {
    RETURN_IF_ERROR(ReadBool(*sww, "sandbox_workspace_write.", "network_access",
                             config.sandbox_network_access));
    RETURN_IF_ERROR(ReadBool(*sww, "sandbox_workspace_write.", "exclude_slash_tmp",
                             config.sandbox_exclude_slash_tmp));
    RETURN_IF_ERROR(ReadBool(*sww, "sandbox_workspace_write.", "exclude_tmpdir_env_var",
                             config.sandbox_exclude_tmpdir_env_var));
    if (auto* roots = sww->get("writable_roots")) {
      auto* arr = roots->as_array();
      if (!arr) return TypeError("sandbox_workspace_write.", "writable_roots", "an array");
      for (auto&& r : *arr) {
        auto s = r.value<std::string>();
        if (!s) return TypeError("sandbox_workspace_write.", "writable_roots", "strings");
        config.writable_roots.push_back(*s);
      }
    }
  }
  if (auto* sep = root.get("shell_environment_policy")) {
    RETURN_IF_ERROR(ReadShellEnvironmentPolicy(*sep, config.shell_environment_policy));
  }
  return OkStatus();
}

// The context, compaction, shell and history keys of the merged table.
Status ReadLimitKeys(const toml::table& root, Config& config) {
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
  if (root.get("model_auto_compact_soft_token_limit")) {
    RETURN_IF_ERROR(ReadInt(root, "", "model_auto_compact_soft_token_limit", n));
    if (n <= 0) {
      return InvalidArgumentError("config: model_auto_compact_soft_token_limit must be positive");
    }
    config.model_auto_compact_soft_token_limit = n;
  }
  RETURN_IF_ERROR(ReadString(root, "", "compaction", config.compaction));
  if (config.compaction != "auto" && config.compaction != "inline" &&
      config.compaction != "endpoint" && config.compaction != "local") {
    return InvalidArgumentError("config: compaction '" + config.compaction +
                                "' is not one of auto, inline, endpoint, local");
  }
  RETURN_IF_ERROR(ReadInt(root, "", "shell_timeout_ms", config.shell_timeout_ms));
  ASSIGN_OR_RETURN(const toml::table* hist, ReadTable(root, "", "history"));
  if (hist != nullptr) {
    if (hist->get("retention_days")) {
      RETURN_IF_ERROR(ReadInt(*hist, "history.", "retention_days", n));
      // Sessions older than this are removed at start: a value an int cannot
      // hold must not wrap to a few days.
      if (n < 0 || n > std::numeric_limits<int>::max()) {
        return InvalidArgumentError(
            "config: history.retention_days must be a number of days from 0 to " +
            std::to_string(std::numeric_limits<int>::max()) + "; fix it in config.toml or -c");
      }
      config.history_retention_days = static_cast<int>(n);
    }
    if (hist->get("max_bytes")) {
      int64_t max_bytes = 0;
      RETURN_IF_ERROR(ReadInt(*hist, "history.", "max_bytes", max_bytes));
      if (max_bytes <= 0) {
        return InvalidArgumentError("config: history.max_bytes must be a positive number");
      }
      config.history_max_bytes = max_bytes;
    }
    std::string persistence = "save-all";
    RETURN_IF_ERROR(ReadEnum(*hist, "history.", "persistence", {"save-all", "none"}, persistence));
    config.history_persistence = persistence != "none";
  }
  return OkStatus();
}

// The built-in providers with [model_providers.*] over them.
Status ReadProviders(const toml::table& root, Config& config) {
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
  return OkStatus();
}

// [model_prices.<model>] tables: input, cached_input, output (USD per
// million tokens, numbers >= 0); any other key is a mistake worth naming.
Status ReadModelPrices(const toml::table& root, Config& config) {
  auto* node = root.get("model_prices");
  if (node == nullptr) return OkStatus();
  auto* t = node->as_table();
  if (t == nullptr)
    return TypeError("", "model_prices", "a table of [model_prices.<model>] tables");
  for (auto&& [model, entry] : *t) {
    const std::string where = "model_prices." + std::string(model.str()) + ".";
    auto* pt = entry.as_table();
    if (pt == nullptr) return TypeError("model_prices.", model.str(), "a table");
    ModelPrice price;
    bool cached_set = false;
    for (auto&& [key, value] : *pt) {
      auto number = value.value<double>();
      if (!number || *number < 0) {
        return TypeError(where, key.str(), "a number of US dollars per million tokens (>= 0)");
      }
      if (key.str() == "input") {
        price.input = *number;
      } else if (key.str() == "cached_input") {
        price.cached_input = *number;
        cached_set = true;
      } else if (key.str() == "output") {
        price.output = *number;
      } else {
        return InvalidArgumentError("config: unknown key '" + where + std::string(key.str()) +
                                    "'; a price table has input, cached_input and output");
      }
    }
    if (!cached_set) price.cached_input = price.input;
    config.model_prices[std::string(model.str())] = price;
  }
  return OkStatus();
}

// The command line's flags over the file, then the provider and the working
// directory they select.
Status ApplyCommandLine(const ConfigOverrides& overrides, Config& config) {
  std::error_code ec;
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
  const std::string abs = CanonicalPath(cwd);  // base/path.h: where --cwd matches it too
  if (!fs::is_directory(abs, ec)) {
    // A file there is not "missing": say which it is, and what -C wants.
    const bool exists = fs::exists(abs, ec);
    return InvalidArgumentError("working directory '" + cwd + "' " +
                                (exists ? "is not a directory" : "does not exist") +
                                "; give -C an existing directory");
  }
  config.cwd = abs;
  for (auto& root_dir : config.writable_roots) {
    root_dir = fs::absolute(fs::path(config.cwd) / root_dir, ec).lexically_normal().string();
  }
  return OkStatus();
}

}  // namespace

// The path a file key names: relative to $CODEX_HOME (where config.toml
// is), "~/" to $HOME; "" when the key is absent.
std::string FileKeyPath(const toml::table& root, const std::string& codex_home, const char* key) {
  const auto file = root[key].value<std::string>();
  if (!file || file->empty()) return {};
  fs::path path(*file);
  if (file->rfind("~/", 0) == 0) path = fs::path(Getenv("HOME")) / file->substr(2);
  if (path.is_relative()) path = fs::path(codex_home) / path;
  return path.string();
}

// The text of the file a key names (model_instructions_file and the like);
// nullopt when the key is absent. A file that cannot be read or is empty is
// one line naming the key, the path and the cause.
Result<std::optional<std::string>> ReadKeyFile(const toml::table& root,
                                               const std::string& codex_home, const char* key) {
  std::string file;
  RETURN_IF_ERROR(ReadString(root, "", key, file));
  if (file.empty()) return std::optional<std::string>();
  const std::string path = FileKeyPath(root, codex_home, key);
  auto text = ReadWholeFile(path);
  if (!text.ok() || text->empty()) {
    return InvalidArgumentError(std::string("config: ") + key + " " +
                                (text.ok() ? path + ": is empty" : text.status().message()) +
                                "; fix the path or remove the key");
  }
  return std::optional<std::string>(std::move(*text));
}

// developer_instructions, model_instructions_file and
// project_doc_fallback_filenames, with Codex's meaning.
Status ReadCodexInstructionKeys(const toml::table& root, const std::string& codex_home,
                                Config& config) {
  RETURN_IF_ERROR(ReadString(root, "", "developer_instructions", config.developer_instructions));
  ASSIGN_OR_RETURN(std::optional<std::string> instructions,
                   ReadKeyFile(root, codex_home, "model_instructions_file"));
  if (instructions) config.instructions = std::move(*instructions);
  RETURN_IF_ERROR(ReadString(root, "", "compact_prompt", config.compact_prompt));
  ASSIGN_OR_RETURN(std::optional<std::string> compact_prompt,
                   ReadKeyFile(root, codex_home, "experimental_compact_prompt_file"));
  if (compact_prompt) config.compact_prompt = std::move(*compact_prompt);
  if (const toml::node* n = root.get("project_doc_fallback_filenames")) {
    const toml::array* arr = n->as_array();
    if (arr == nullptr) {
      return TypeError("", "project_doc_fallback_filenames", "an array of file names");
    }
    for (auto&& a : *arr) {
      auto v = a.value<std::string>();
      if (!v || v->empty() || v->find('/') != std::string::npos) {
        return TypeError("", "project_doc_fallback_filenames",
                         "an array of file names (no '/'), e.g. [\"CLAUDE.md\"]");
      }
      config.project_doc_fallback_filenames.push_back(*v);
    }
  }
  return OkStatus();
}

// Codex's model_catalog_json: a JSON file {"models":[{"slug":…,
// "default_reasoning_level":…, "default_reasoning_summary":…,
// "default_verbosity":…, "support_verbosity":…}, …]} whose entry for the
// session's model gives the reasoning effort, summary and verbosity that
// config.toml, the profile and -c leave unset, as Codex 0.169 takes them (it
// has no built-in table: without a catalog it sends only summary "auto").
Status ApplyModelCatalog(const toml::table& root, const std::string& codex_home, Config& config) {
  ASSIGN_OR_RETURN(const std::optional<std::string> text,
                   ReadKeyFile(root, codex_home, "model_catalog_json"));
  if (!text) return OkStatus();
  const std::string path = FileKeyPath(root, codex_home, "model_catalog_json");
  const nlohmann::json catalog = nlohmann::json::parse(*text, nullptr, false);
  if (!catalog.is_object() || !catalog.contains("models") || !catalog["models"].is_array()) {
    return InvalidArgumentError("config: model_catalog_json '" + path +
                                "' is not a JSON object with a \"models\" array");
  }
  for (const nlohmann::json& m : catalog["models"]) {
    if (!m.is_object() || StringField(m, "slug") != config.model) continue;
    auto text_of = [&](const char* key) {
      auto it = m.find(key);
      return it != m.end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    if (root.get("model_reasoning_effort") == nullptr) {
      config.model_reasoning_effort = text_of("default_reasoning_level");
    }
    if (root.get("model_reasoning_summary") == nullptr &&
        !text_of("default_reasoning_summary").empty()) {
      config.model_reasoning_summary = text_of("default_reasoning_summary");
    }
    const bool verbosity = m.value("support_verbosity", false);
    if (root.get("model_verbosity") == nullptr && verbosity) {
      config.model_verbosity = text_of("default_verbosity");
    }
    break;
  }
  return OkStatus();
}

// The layers in order: config.toml, -c, the profile, -c again, then the
// command line's flags; see config.h.
Result<Config> LoadConfig(const std::string& codex_home, const ConfigOverrides& overrides) {
  Config config;
  config.codex_home = codex_home;
  const fs::path path = fs::path(codex_home) / "config.toml";
  toml::table root;
  // --ignore-user-config (Codex's exec flag): config.toml is not read; -c,
  // the profile and the flags still apply.
  if (!overrides.ignore_user_config) {
    ASSIGN_OR_RETURN(root, ReadConfigFile(path));
  }
  for (const auto& kv : overrides.dash_c) RETURN_IF_ERROR(ApplyOverride(root, kv));
  RETURN_IF_ERROR(ApplyProfile(codex_home, path, overrides, root, config));

  std::vector<std::string> unsupported;
  CollectUnsupported(root, "", unsupported);
  RETURN_IF_ERROR(ParseMcpServers(root, config.mcp_servers, unsupported));
  for (const std::string& key : unsupported) {
    if (overrides.strict) {
      return InvalidArgumentError("config key '" + key +
                                  "' is not supported (--strict-config); remove it");
    }
    config.warnings.push_back("config key '" + key + "' is not supported; it is ignored");
  }

  RETURN_IF_ERROR(ReadModelAndPolicyKeys(root, config));
  RETURN_IF_ERROR(ReadLimitKeys(root, config));
  RETURN_IF_ERROR(ReadCodexInstructionKeys(root, codex_home, config));
  RETURN_IF_ERROR(ReadSessionStore(root, overrides, codex_home, config.session_store));
  RETURN_IF_ERROR(ReadProviders(root, config));
  RETURN_IF_ERROR(ReadModelPrices(root, config));
  RETURN_IF_ERROR(ApplyCommandLine(overrides, config));
  RETURN_IF_ERROR(ApplyModelCatalog(root, codex_home, config));  // for the final model
  return config;
}

Result<ProjectTrust> LoadProjectTrust(const std::string& codex_home,
                                      const ConfigOverrides& overrides, const std::string& cwd) {
  const fs::path path = fs::path(codex_home) / "config.toml";
  toml::table root;
  if (!overrides.ignore_user_config) {
    ASSIGN_OR_RETURN(root, ReadConfigFile(path));
  }
  for (const auto& kv : overrides.dash_c) RETURN_IF_ERROR(ApplyOverride(root, kv));
  Config scratch;
  scratch.codex_home = codex_home;
  RETURN_IF_ERROR(ApplyProfile(codex_home, path, overrides, root, scratch));
  ProjectTrust trust;
  trust.project = ProjectRoot(cwd);
  trust.sandbox_mode_named = root.contains("sandbox_mode") || overrides.sandbox_mode.has_value();
  trust.approval_policy_named =
      root.contains("approval_policy") || overrides.approval_policy.has_value();
  const toml::table* projects = root["projects"].as_table();
  if (projects == nullptr) return trust;
  for (const std::string& dir : {cwd, trust.project}) {
    const toml::table* project = (*projects)[dir].as_table();
    if (project == nullptr) continue;
    std::string level;
    RETURN_IF_ERROR(ReadString(*project, "projects.\"" + dir + "\".", "trust_level", level));
    if (level.empty()) continue;
    if (level != "trusted" && level != "untrusted") {
      return InvalidArgumentError("config: projects.\"" + dir + "\".trust_level '" + level +
                                  "' is not one of trusted, untrusted");
    }
    trust.level = level;
    break;
  }
  return trust;
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
