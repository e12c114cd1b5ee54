// `codex sessions tree ID [--json]`: the fork tree a session belongs to,
// drawn with ├─/└─, each fork with the turn it branched after; --json: JSON
// Lines, one session per line, parents first (depth, fork_turn, current).
#pragma once

#include <CLI/CLI.hpp>

#include "cli/exit_codes.h"
#include "cli/global_options.h"

namespace codex::cli {

void AddSessionsTreeCommand(CLI::App* sessions, const GlobalOptions& global,
                            CommandOutcome& result);

}  // namespace codex::cli
