#include "cli/mcp_cmd.h"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/config_overrides.h"
#include "cli/engine.h"
#include "cli/terminal_text.h"
#include "core/mcp_config_edit.h"
#include "mcp/manager.h"

namespace codex::cli {

namespace {

using Json = nlohmann::ordered_json;

Status RunProbe(const GlobalOptions& global, bool json) {
  const core::ConfigOverrides overrides = GlobalOverrides(global);
  ASSIGN_OR_RETURN(const core::Config config,
                   core::LoadConfig(core::DefaultCodexHome(), overrides));
  mcp::McpManager manager(config, McpEnvironmentPolicy(config));
  auto started = manager.StartAll();  // a required server's failure is shown, not fatal here
  (void)started;
  const auto servers = manager.Servers();
  if (json) {
    Json out = Json::array();
    for (const auto& s : servers) {
      Json tools = Json::array();
      for (const auto& t : s.tools) tools.push_back(t);
      out.push_back(
          {{"name", s.name},
           {"transport", s.transport},
           {s.transport == "http" ? "url" : "command", s.target},
           {"state", mcp::ServerStateName(s.state)},
           {"error", s.error.empty() ? Json() : Json(s.error)},
           {"protocol_version", s.protocol_version.empty() ? Json() : Json(s.protocol_version)},
           {"tools", tools},
           {"log", s.log_path.empty() ? Json() : Json(s.log_path)}});
    }
    PrintF(stdout, "%s\n", out.dump(2, ' ', false, Json::error_handler_t::replace).c_str());
    return OkStatus();
  }
  if (servers.empty()) {
    PrintF(stdout, "No MCP servers configured; add [mcp_servers.NAME] to %s/config.toml\n",
           config.codex_home.c_str());
    return OkStatus();
  }
  for (const auto& s : servers) {
    PrintF(stdout, "%s  %s  %s  %s\n", s.name.c_str(),
           std::string(mcp::ServerStateName(s.state)).c_str(), s.transport.c_str(),
           s.target.c_str());
    if (s.state == mcp::ServerState::kFailed) PrintF(stdout, "  error: %s\n", s.error.c_str());
    if (s.state == mcp::ServerState::kReady) {
      std::string line;
      for (const auto& t : s.tools) line += (line.empty() ? "" : ", ") + t;
      PrintF(stdout, "  tools (%zu): %s\n", s.tools.size(), line.empty() ? "(none)" : line.c_str());
    }
  }
  return OkStatus();
}

// Codex's "A=*****, B=*****" for a server's env and env_vars.
std::string MaskedEnv(const core::McpServerConfig& s) {
  std::string out;
  for (const auto& [k, v] : s.env) out += (out.empty() ? "" : ", ") + k + "=*****";
  for (const auto& k : s.env_vars) out += (out.empty() ? "" : ", ") + k + "=*****";
  return out.empty() ? "-" : out;
}

std::string Joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& a : v) out += (out.empty() ? "" : " ") + a;
  return out.empty() ? "-" : out;
}

std::string AuthLabel(const core::McpServerConfig& s) {
  return s.is_http() && !s.bearer_token_env_var.empty() ? "Bearer token" : "Unsupported";
}

// Codex's padded table: every column as wide as its widest cell, two spaces apart.
void PrintTable(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width(rows[0].size(), 0);
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      if (i > 0) line += "  ";
      line += row[i] + std::string(width[i] - row[i].size(), ' ');
    }
    PrintF(stdout, "%s\n", line.c_str());
  }
}

Json OrNull(const std::string& s) { return s.empty() ? Json() : Json(s); }

// The `transport` object of Codex's mcp list/get --json.
Json TransportJson(const core::McpServerConfig& s) {
  if (s.is_http()) {
    Json headers = Json();
    if (!s.http_headers.empty()) headers = Json(s.http_headers);
    Json env_headers = Json();
    if (!s.env_http_headers.empty()) env_headers = Json(s.env_http_headers);
    return {{"type", "streamable_http"},
            {"url", s.url},
            {"bearer_token_env_var", OrNull(s.bearer_token_env_var)},
            {"http_headers", headers},
            {"env_http_headers", env_headers},
            {"http_headers_helper", Json()}};
  }
  return {{"type", "stdio"},        {"command", s.command},
          {"args", s.args},         {"env", s.env.empty() ? Json() : Json(s.env)},
          {"env_vars", s.env_vars}, {"cwd", OrNull(s.cwd)}};
}

// Seconds as Codex prints them: a float (5.0), null unless set (ours always
// has a value, so the defaults print as null).
Json Seconds(int64_t ms, int64_t default_ms) {
  if (ms == default_ms) return Json();
  return Json(static_cast<double>(ms) / 1000.0);
}

Result<core::Config> LoadForMcp(const GlobalOptions& global) {
  return core::LoadConfig(core::DefaultCodexHome(), GlobalOverrides(global));
}

// codex mcp list: the configured servers, from config.toml only (as Codex's).
Status RunList(const GlobalOptions& global, bool json) {
  ASSIGN_OR_RETURN(const core::Config config, LoadForMcp(global));
  const core::McpServerConfig defaults;
  if (json) {
    Json out = Json::array();
    for (const auto& [name, s] : config.mcp_servers) {
      out.push_back(
          {{"name", name},
           {"enabled", s.enabled},
           {"disabled_reason", Json()},
           {"transport", TransportJson(s)},
           {"startup_timeout_sec", Seconds(s.startup_timeout_ms, defaults.startup_timeout_ms)},
           {"tool_timeout_sec", Seconds(s.tool_timeout_ms, defaults.tool_timeout_ms)},
           {"auth_status",
            s.is_http() && !s.bearer_token_env_var.empty() ? "bearer_token" : "unsupported"}});
    }
    PrintF(stdout, "%s\n", out.dump(2, ' ', false, Json::error_handler_t::replace).c_str());
    return OkStatus();
  }
  if (config.mcp_servers.empty()) {
    PrintF(stdout, "No MCP servers configured yet. Try `codex mcp add my-tool -- my-command`.\n");
    return OkStatus();
  }
  std::vector<std::vector<std::string>> stdio = {
      {"Name", "Command", "Args", "Env", "Cwd", "Status", "Auth"}};
  std::vector<std::vector<std::string>> http = {
      {"Name", "Url", "Bearer Token Env Var", "Status", "Auth"}};
  for (const auto& [name, s] : config.mcp_servers) {
    const std::string status = s.enabled ? "enabled" : "disabled";
    if (s.is_http()) {
      http.push_back({name, s.url, s.bearer_token_env_var.empty() ? "-" : s.bearer_token_env_var,
                      status, AuthLabel(s)});
    } else {
      stdio.push_back({name, s.command, Joined(s.args), MaskedEnv(s), s.cwd.empty() ? "-" : s.cwd,
                       status, AuthLabel(s)});
    }
  }
  if (stdio.size() > 1) PrintTable(stdio);
  if (stdio.size() > 1 && http.size() > 1) PrintF(stdout, "\n");
  if (http.size() > 1) PrintTable(http);
  return OkStatus();
}

// codex mcp get NAME [--json], in Codex's shape.
Status RunGet(const GlobalOptions& global, const std::string& name, bool json) {
  ASSIGN_OR_RETURN(const core::Config config, LoadForMcp(global));
  auto it = config.mcp_servers.find(name);
  if (it == config.mcp_servers.end()) {
    return NotFoundError("No MCP server named '" + name + "' found; 'codex mcp list' shows them");
  }
  const core::McpServerConfig& s = it->second;
  const core::McpServerConfig defaults;
  if (json) {
    Json out = {{"name", name},
                {"enabled", s.enabled},
                {"disabled_reason", Json()},
                {"transport", TransportJson(s)},
                {"enabled_tools", s.enabled_tools ? Json(*s.enabled_tools) : Json()},
                {"disabled_tools", s.disabled_tools.empty() ? Json() : Json(s.disabled_tools)},
                {"startup_timeout_sec", Seconds(s.startup_timeout_ms, defaults.startup_timeout_ms)},
                {"tool_timeout_sec", Seconds(s.tool_timeout_ms, defaults.tool_timeout_ms)}};
    PrintF(stdout, "%s\n", out.dump(2, ' ', false, Json::error_handler_t::replace).c_str());
    return OkStatus();
  }
  if (!s.enabled) {
    PrintF(stdout, "%s (disabled)\n", name.c_str());
    return OkStatus();
  }
  PrintF(stdout, "%s\n  enabled: true\n", name.c_str());
  if (s.is_http()) {
    PrintF(stdout, "  transport: streamable_http\n  url: %s\n  bearer_token_env_var: %s\n",
           s.url.c_str(), s.bearer_token_env_var.empty() ? "-" : s.bearer_token_env_var.c_str());
    std::string headers, env_headers;
    for (const auto& [k, v] : s.http_headers)
      headers += (headers.empty() ? "" : ", ") + k + "=*****";
    for (const auto& [k, v] : s.env_http_headers) {
      env_headers += (env_headers.empty() ? "" : ", ") + k + "=" + v;
    }
    PrintF(stdout, "  http_headers: %s\n  env_http_headers: %s\n  http_headers_helper: -\n",
           headers.empty() ? "-" : headers.c_str(),
           env_headers.empty() ? "-" : env_headers.c_str());
  } else {
    PrintF(stdout, "  transport: stdio\n  command: %s\n  args: %s\n  cwd: %s\n  env: %s\n",
           s.command.c_str(), Joined(s.args).c_str(), s.cwd.empty() ? "-" : s.cwd.c_str(),
           MaskedEnv(s).c_str());
  }
  if (s.startup_timeout_ms != defaults.startup_timeout_ms) {
    PrintF(stdout, "  startup_timeout_sec: %s\n",
           Seconds(s.startup_timeout_ms, defaults.startup_timeout_ms).dump().c_str());
  }
  if (s.tool_timeout_ms != defaults.tool_timeout_ms) {
    PrintF(stdout, "  tool_timeout_sec: %s\n",
           Seconds(s.tool_timeout_ms, defaults.tool_timeout_ms).dump().c_str());
  }
  PrintF(stdout, "  remove: codex mcp remove %s\n", name.c_str());
  return OkStatus();
}

struct AddArgs {
  std::string name;
  std::vector<std::string> command;
  std::vector<std::string> env;
  std::string url;
  std::string bearer_token_env_var;
};

// codex mcp add NAME (--url URL | -- COMMAND...), written in Codex's format.
Status RunAdd(const GlobalOptions& global, const AddArgs& a) {
  core::McpServerConfig s;
  s.name = a.name;
  if (!core::McpServerNameIsValid(a.name)) {
    return InvalidArgumentError("mcp add: server name '" + a.name +
                                "' may hold only letters, digits, '-' and '_'");
  }
  if (a.url.empty() == a.command.empty()) {
    return InvalidArgumentError(
        "mcp add needs either --url URL (a streamable HTTP server) or -- COMMAND... (stdio)");
  }
  if (!a.url.empty()) {
    if (!a.env.empty()) return InvalidArgumentError("mcp add: --env applies to stdio servers only");
    if (a.url.rfind("http://", 0) != 0 && a.url.rfind("https://", 0) != 0) {
      return InvalidArgumentError("mcp add: --url '" + a.url + "' is not an http(s) URL");
    }
    s.url = a.url;
    s.bearer_token_env_var = a.bearer_token_env_var;
  } else {
    if (!a.bearer_token_env_var.empty()) {
      return InvalidArgumentError("mcp add: --bearer-token-env-var applies to --url servers only");
    }
    s.command = a.command[0];
    s.args.assign(a.command.begin() + 1, a.command.end());
    for (const std::string& kv : a.env) {
      const size_t eq = kv.find('=');
      if (eq == std::string::npos || eq == 0) {
        return InvalidArgumentError("mcp add: --env '" + kv + "' is not KEY=VALUE");
      }
      s.env[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
  }
  // The file must load before and after (a broken config.toml is not edited).
  ASSIGN_OR_RETURN(const core::Config config, LoadForMcp(global));
  RETURN_IF_ERROR(core::WriteMcpServer(config.codex_home, s));
  PrintF(stdout, "Added global MCP server '%s'.\n", a.name.c_str());
  return OkStatus();
}

Status RunRemove(const GlobalOptions& global, const std::string& name) {
  ASSIGN_OR_RETURN(const core::Config config, LoadForMcp(global));
  ASSIGN_OR_RETURN(const bool removed, core::RemoveMcpServer(config.codex_home, name));
  if (removed) {
    PrintF(stdout, "Removed global MCP server '%s'.\n", name.c_str());
  } else {
    PrintF(stdout, "No MCP server named '%s' found.\n", name.c_str());
  }
  return OkStatus();
}

}  // namespace

void RegisterMcpCommands(CLI::App& app, const GlobalOptions& global, CommandOutcome& result) {
  CLI::App* mcp = app.add_subcommand(
      "mcp", "Manage the MCP servers of config.toml ([mcp_servers]), as Codex's mcp does");
  mcp->require_subcommand(1);
  struct McpArgs {
    bool json = false;
    bool probe = false;
    std::string name;
    AddArgs add;
  };
  auto args = std::make_shared<McpArgs>();
  CLI::App* list = mcp->add_subcommand(
      "list", "List the configured servers (from config.toml; --probe starts each one)");
  list->add_flag("--json", args->json, "Print JSON");
  list->add_flag("--probe", args->probe,
                 "Start each server and show its state, protocol version and tools");
  list->callback([&global, &result, args] {
    result.Set(args->probe ? RunProbe(global, args->json) : RunList(global, args->json));
  });

  CLI::App* get = mcp->add_subcommand("get", "Show one configured server");
  get->add_option("NAME", args->name, "The server's name")->required();
  get->add_flag("--json", args->json, "Print JSON");
  get->callback([&global, &result, args] { result.Set(RunGet(global, args->name, args->json)); });

  CLI::App* add =
      mcp->add_subcommand("add", "Add a server to config.toml: NAME (--url URL | -- COMMAND...)");
  add->add_option("NAME", args->add.name, "The server's name")->required();
  add->add_option("COMMAND", args->add.command,
                  "The command that starts a stdio server (after --)");
  add->add_option("--env", args->add.env, "KEY=VALUE for a stdio server (repeatable)")
      ->allow_extra_args(false);
  add->add_option("--url", args->add.url, "URL of a streamable HTTP server");
  add->add_option("--bearer-token-env-var", args->add.bearer_token_env_var,
                  "Environment variable holding the bearer token (--url servers)");
  add->callback([&global, &result, args] { result.Set(RunAdd(global, args->add)); });

  CLI::App* remove = mcp->add_subcommand("remove", "Remove a server from config.toml");
  remove->add_option("NAME", args->name, "The server's name")->required();
  remove->callback([&global, &result, args] { result.Set(RunRemove(global, args->name)); });
}

}  // namespace codex::cli
