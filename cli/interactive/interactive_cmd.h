// Registration of the interactive entry points: `codex [PROMPT]` (the
// top-level behaviour when no subcommand is given) and
// `codex resume [ID|--last] [--all] [PROMPT]`.
#pragma once

#include "cli/exit_codes.h"
#include "cli/global_options.h"

namespace codex::cli {

// What the chosen entry point returned is left in `outcome` (exit_codes.h).
void RegisterInteractiveCommands(CLI::App& app, GlobalOptions& global, CommandOutcome& outcome);

}  // namespace codex::cli
