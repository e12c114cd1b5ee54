// `codex sessions rename ID NAME`: names a session (usable instead of its
// id); "" clears the name.
#pragma once

#include <CLI/CLI.hpp>

#include "cli/exit_codes.h"
#include "cli/global_options.h"

namespace codex::cli {

void AddSessionsRenameCommand(CLI::App* sessions, const GlobalOptions& global,
                              CommandOutcome& result);

}  // namespace codex::cli
