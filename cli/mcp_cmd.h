// `codex mcp list [--json]`: starts the configured MCP servers as a session
// would and shows each one's transport, state (ready | failed | disabled),
// the error of a failed one and the tools a ready one offers.
#pragma once

#include <CLI/CLI.hpp>

#include "cli/exit_codes.h"
#include "cli/global_options.h"

namespace codex::cli {

void RegisterMcpCommands(CLI::App& app, const GlobalOptions& global, CommandOutcome& result);

}  // namespace codex::cli
