// Parsing of the `mcp_servers` table (see core/mcp_config.h). Private to
// core/config.cc and its tests: it exposes toml++.
#pragma once

#include <toml++/toml.h>

#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "core/mcp_config.h"

namespace codex::core {

// Reads root["mcp_servers"] (absent = none) into `out`, keyed by name. A
// server key this codex does not know is appended to `unsupported` as
// "mcp_servers.NAME.KEY" (a warning, or an error under --strict-config);
// the keys Codex itself writes (scopes, oauth_resource, tools, ...) are not.
Status ParseMcpServers(const toml::table& root, std::map<std::string, McpServerConfig>& out,
                       std::vector<std::string>& unsupported);

}  // namespace codex::core
