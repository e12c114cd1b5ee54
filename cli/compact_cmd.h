// `codex compact (ID|--last)` compacts a session now; `codex compact undo ID`
// moves the head back before the last compaction when nothing came after it
// (the raw history was never deleted, so this restores it exactly).
#pragma once

#include <CLI/CLI.hpp>

#include "cli/exit_codes.h"
#include "cli/global_options.h"

namespace codex::cli {

void RegisterCompactCommand(CLI::App& app, const GlobalOptions& global, CommandOutcome& result);

}  // namespace codex::cli
