// `codex sessions show ID [--json] [--full]`: a session's transcript, usage
// per turn, events, forks and how full the model's view is (context_fill.h).
//
// Output contract: --json prints one JSON object (session, items, turns,
// events, forks, context, frontier; docs/json-output.md).
#pragma once

#include <CLI/CLI.hpp>

#include "cli/exit_codes.h"
#include "cli/global_options.h"

namespace codex::cli {

void AddSessionsShowCommand(CLI::App* sessions, const GlobalOptions& global,
                            CommandOutcome& result);

}  // namespace codex::cli
