#include "cli/mcp_cmd.h"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/config_overrides.h"
#include "cli/engine.h"
#include "cli/terminal_text.h"
#include "mcp/manager.h"

namespace codex::cli {

namespace {

using Json = nlohmann::ordered_json;

Status RunList(const GlobalOptions& global, bool json) {
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

}  // namespace

void RegisterMcpCommands(CLI::App& app, const GlobalOptions& global, CommandOutcome& result) {
  CLI::App* mcp = app.add_subcommand("mcp", "Inspect the configured MCP servers ([mcp_servers])");
  mcp->require_subcommand(1);
  static bool json = false;
  CLI::App* list =
      mcp->add_subcommand("list", "Start each configured server and show its state and tools");
  list->add_flag("--json", json, "Print JSON");
  list->callback([&global, &result] { result.Set(RunList(global, json)); });
}

}  // namespace codex::cli
