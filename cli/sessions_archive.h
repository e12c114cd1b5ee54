// `codex sessions archive ID` and `codex sessions unarchive ID`: hide a
// session from lists and --last, and bring it back.
#pragma once

#include <CLI/CLI.hpp>

#include "cli/exit_codes.h"
#include "cli/global_options.h"

namespace codex::cli {

void AddSessionsArchiveCommands(CLI::App* sessions, const GlobalOptions& global,
                                CommandOutcome& result);

}  // namespace codex::cli
