// McpServerConfig: one `[mcp_servers.<name>]` table of config.toml, in the
// Codex format. A server is either stdio (`command`, `args`, `env`,
// `env_vars`, `cwd`) or streamable HTTP (`url`, `bearer_token_env_var`,
// `http_headers`, `env_http_headers`); every server takes `enabled`,
// `required`, `startup_timeout_sec` (or `startup_timeout_ms`),
// `tool_timeout_sec`, `enabled_tools` and `disabled_tools`. Parsing
// (core/mcp_config_parse.h) rejects an unknown key, a wrong type, a name
// outside [A-Za-z0-9_-], and a table with both or neither of command/url, with
// an error naming the server and the key. Plain data; thread-compatible.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace codex::core {

struct McpServerConfig {
  std::string name;
  // stdio
  std::string command;  // "" for an HTTP server
  std::vector<std::string> args;
  std::map<std::string, std::string> env;  // set for the server (wins over the filter)
  std::vector<std::string> env_vars;       // names copied from codex's environment as they are
  std::string cwd;                         // "" = the session's cwd
  // streamable HTTP
  std::string url;  // "" for a stdio server
  std::string bearer_token_env_var;
  std::map<std::string, std::string> http_headers;
  std::map<std::string, std::string> env_http_headers;  // header -> env var name
  // both
  bool enabled = true;
  bool required = false;  // a failed start ends the run instead of being reported
  int64_t startup_timeout_ms = 10'000;
  int64_t tool_timeout_ms = 60'000;
  std::optional<std::vector<std::string>> enabled_tools;  // nullopt = all
  std::vector<std::string> disabled_tools;

  bool is_http() const { return !url.empty(); }
  // Whether the filter lets `tool` through (enabled_tools, then disabled_tools).
  bool AllowsTool(const std::string& tool) const;
};

// Whether `name` may name a server: letters, digits, '-' and '_' (as Codex).
bool McpServerNameIsValid(std::string_view name);

}  // namespace codex::core
