// `codex sessions rm ID`: deletes a session; items shared with its forks stay.
#pragma once

#include <CLI/CLI.hpp>

#include "cli/exit_codes.h"
#include "cli/global_options.h"

namespace codex::cli {

void AddSessionsRmCommand(CLI::App* sessions, const GlobalOptions& global, CommandOutcome& result);

}  // namespace codex::cli
