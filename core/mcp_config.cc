#include <algorithm>
#include <cmath>
#include <set>

#include "core/mcp_config_parse.h"

namespace codex::core {

namespace {

Status KeyError(const std::string& server, std::string_view key, std::string_view want) {
  return InvalidArgumentError("config: mcp_servers." + server + "." + std::string(key) +
                              " must be " + std::string(want) + "; fix it in config.toml or -c");
}

Status ReadStr(const toml::table& t, const std::string& server, std::string_view key,
               std::string& out) {
  if (const toml::node* n = t.get(key)) {
    auto v = n->value<std::string>();
    if (!v) return KeyError(server, key, "a string");
    out = *v;
  }
  return OkStatus();
}

Status ReadBoolKey(const toml::table& t, const std::string& server, std::string_view key,
                   bool& out) {
  if (const toml::node* n = t.get(key)) {
    auto v = n->value<bool>();
    if (!v) return KeyError(server, key, "true or false");
    out = *v;
  }
  return OkStatus();
}

Status ReadStrList(const toml::table& t, const std::string& server, std::string_view key,
                   std::vector<std::string>& out) {
  if (const toml::node* n = t.get(key)) {
    const toml::array* arr = n->as_array();
    if (arr == nullptr) return KeyError(server, key, "an array of strings");
    for (const auto& e : *arr) {
      auto s = e.value<std::string>();
      if (!s) return KeyError(server, key, "an array of strings");
      out.push_back(*s);
    }
  }
  return OkStatus();
}

Status ReadStrMap(const toml::table& t, const std::string& server, std::string_view key,
                  std::map<std::string, std::string>& out) {
  if (const toml::node* n = t.get(key)) {
    const toml::table* tbl = n->as_table();
    if (tbl == nullptr) return KeyError(server, key, "a table of strings");
    for (auto&& [k, v] : *tbl) {
      auto s = v.value<std::string>();
      if (!s) return KeyError(server, std::string(key) + "." + std::string(k.str()), "a string");
      out[std::string(k.str())] = *s;
    }
  }
  return OkStatus();
}

// Seconds (integer or float, > 0) as milliseconds.
Status ReadSeconds(const toml::table& t, const std::string& server, std::string_view key,
                   int64_t& out_ms) {
  if (const toml::node* n = t.get(key)) {
    std::optional<double> v;
    if (auto i = n->value_exact<int64_t>()) {
      v = static_cast<double>(*i);
    } else if (auto d = n->value_exact<double>()) {
      v = *d;
    }
    if (!v || !std::isfinite(*v) || *v <= 0 || *v > 86400.0 * 365) {
      return KeyError(server, key, "a positive number of seconds");
    }
    out_ms = std::max<int64_t>(1, static_cast<int64_t>(std::llround(*v * 1000.0)));
  }
  return OkStatus();
}

bool ValidServerName(std::string_view name) {
  if (name.empty()) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
  });
}

// A server is stdio (command) or streamable HTTP (url), never both, and takes
// only its own transport's keys.
Status CheckTransport(const std::string& name, const toml::table& t, const McpServerConfig& s) {
  const bool has_command = t.get("command") != nullptr;
  const bool has_url = t.get("url") != nullptr;
  if (has_command && has_url) {
    return InvalidArgumentError("config: mcp_servers." + name +
                                " sets both command and url; keep command for a stdio server "
                                "or url for a streamable HTTP one");
  }
  if (!has_command && !has_url) {
    return InvalidArgumentError("config: mcp_servers." + name +
                                " needs command (a stdio server) or url (a streamable HTTP one)");
  }
  if (has_command && s.command.empty()) return KeyError(name, "command", "a non-empty string");
  if (has_url) {
    if (s.url.rfind("http://", 0) != 0 && s.url.rfind("https://", 0) != 0) {
      return KeyError(name, "url", "an http:// or https:// URL");
    }
    for (const char* stdio_key : {"args", "env", "env_vars", "cwd"}) {
      if (t.get(stdio_key) != nullptr) {
        return InvalidArgumentError("config: mcp_servers." + name + "." + stdio_key +
                                    " applies to stdio servers only; this one has a url");
      }
    }
  } else {
    for (const char* http_key : {"bearer_token_env_var", "http_headers", "env_http_headers"}) {
      if (t.get(http_key) != nullptr) {
        return InvalidArgumentError("config: mcp_servers." + name + "." + http_key +
                                    " applies to HTTP servers only; this one has a command");
      }
    }
  }
  return OkStatus();
}

Status ParseOne(const std::string& name, const toml::table& t, McpServerConfig& s,
                std::vector<std::string>& unsupported) {
  static const std::set<std::string, std::less<>> kKnown = {"command",
                                                            "args",
                                                            "env",
                                                            "env_vars",
                                                            "cwd",
                                                            "url",
                                                            "bearer_token_env_var",
                                                            "http_headers",
                                                            "env_http_headers",
                                                            "enabled",
                                                            "required",
                                                            "startup_timeout_sec",
                                                            "startup_timeout_ms",
                                                            "tool_timeout_sec",
                                                            "enabled_tools",
                                                            "disabled_tools"};
  // Keys Codex itself writes (codex mcp add --scopes/--oauth-resource, a
  // remembered tool approval): accepted without a word; they have no effect
  // here (no OAuth, tool approvals follow approval_policy).
  static const std::set<std::string, std::less<>> kCodexWritten = {
      "scopes", "oauth_resource", "default_tools_approval_mode", "supports_parallel_tool_calls",
      "tools"};
  std::string unknown;  // this server's unknown keys, for the transport error
  for (auto&& [k, v] : t) {
    (void)v;
    if (!kKnown.contains(k.str()) && !kCodexWritten.contains(k.str())) {
      unsupported.push_back("mcp_servers." + name + "." + std::string(k.str()));
      unknown += (unknown.empty() ? "'" : ", '") + std::string(k.str()) + "'";
    }
  }
  s.name = name;
  RETURN_IF_ERROR(ReadStr(t, name, "command", s.command));
  RETURN_IF_ERROR(ReadStrList(t, name, "args", s.args));
  RETURN_IF_ERROR(ReadStrMap(t, name, "env", s.env));
  RETURN_IF_ERROR(ReadStrList(t, name, "env_vars", s.env_vars));
  RETURN_IF_ERROR(ReadStr(t, name, "cwd", s.cwd));
  RETURN_IF_ERROR(ReadStr(t, name, "url", s.url));
  RETURN_IF_ERROR(ReadStr(t, name, "bearer_token_env_var", s.bearer_token_env_var));
  RETURN_IF_ERROR(ReadStrMap(t, name, "http_headers", s.http_headers));
  RETURN_IF_ERROR(ReadStrMap(t, name, "env_http_headers", s.env_http_headers));
  RETURN_IF_ERROR(ReadBoolKey(t, name, "enabled", s.enabled));
  RETURN_IF_ERROR(ReadBoolKey(t, name, "required", s.required));
  RETURN_IF_ERROR(ReadSeconds(t, name, "startup_timeout_sec", s.startup_timeout_ms));
  if (const toml::node* n = t.get("startup_timeout_ms")) {
    auto v = n->value_exact<int64_t>();
    if (!v || *v <= 0) return KeyError(name, "startup_timeout_ms", "a positive integer");
    s.startup_timeout_ms = *v;
  }
  RETURN_IF_ERROR(ReadSeconds(t, name, "tool_timeout_sec", s.tool_timeout_ms));
  if (t.get("enabled_tools") != nullptr) {
    std::vector<std::string> tools;
    RETURN_IF_ERROR(ReadStrList(t, name, "enabled_tools", tools));
    s.enabled_tools = std::move(tools);
  }
  RETURN_IF_ERROR(ReadStrList(t, name, "disabled_tools", s.disabled_tools));

  Status transport = CheckTransport(name, t, s);
  if (!transport.ok() && !unknown.empty()) {
    return InvalidArgumentError(transport.message() + " (it has an unknown key " + unknown +
                                "; a typo?)");
  }
  return transport;
}

}  // namespace

bool McpServerNameIsValid(std::string_view name) { return ValidServerName(name); }

bool McpServerConfig::AllowsTool(const std::string& tool) const {
  if (enabled_tools &&
      std::find(enabled_tools->begin(), enabled_tools->end(), tool) == enabled_tools->end()) {
    return false;
  }
  return std::find(disabled_tools.begin(), disabled_tools.end(), tool) == disabled_tools.end();
}

Status ParseMcpServers(const toml::table& root, std::map<std::string, McpServerConfig>& out,
                       std::vector<std::string>& unsupported) {
  const toml::node* node = root.get("mcp_servers");
  if (node == nullptr) return OkStatus();
  const toml::table* servers = node->as_table();
  if (servers == nullptr) {
    return InvalidArgumentError(
        "config: mcp_servers must be a table of [mcp_servers.NAME] tables; fix config.toml");
  }
  for (auto&& [key, value] : *servers) {
    const std::string name(key.str());
    if (!ValidServerName(name)) {
      return InvalidArgumentError("config: mcp_servers.\"" + name +
                                  "\": a server name may hold only letters, digits, '_' and "
                                  "'-'; rename it in config.toml");
    }
    const toml::table* t = value.as_table();
    if (t == nullptr) {
      return InvalidArgumentError("config: mcp_servers." + name +
                                  " must be a table ([mcp_servers." + name + "])");
    }
    McpServerConfig server;
    RETURN_IF_ERROR(ParseOne(name, *t, server, unsupported));
    out[name] = std::move(server);
  }
  return OkStatus();
}

}  // namespace codex::core
