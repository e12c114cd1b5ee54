// Registration of the interactive entry points: `codex [PROMPT]` (the
// top-level behaviour when no subcommand is given) and
// `codex resume [ID|--last] [--all] [PROMPT]`.
#pragma once

#include "cli/global_options.h"

namespace codex::cli {

void RegisterInteractiveCommands(CLI::App& app, GlobalOptions& global, int* exit_code);

}  // namespace codex::cli
