// Parsing of the `mcp_servers` table (see core/mcp_config.h). Private to
// core/config.cc and its tests: it exposes toml++.
#pragma once

#include <toml++/toml.h>

#include <map>
#include <string>

#include "base/status.h"
#include "core/mcp_config.h"

namespace codex::core {

// Reads root["mcp_servers"] (absent = none) into `out`, keyed by name.
Status ParseMcpServers(const toml::table& root, std::map<std::string, McpServerConfig>& out);

}  // namespace codex::core
