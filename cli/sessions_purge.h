// `codex sessions purge [--older-than AGE] [--dry-run] [-y] [--all | --cwd DIR]
// [--json]`: deletes the sessions not updated for AGE (or [history]
// retention_days); asks first on a terminal; sessions a running turn holds
// are skipped and named (exit 3). --json: one summary object on stdout.
#pragma once

#include <CLI/CLI.hpp>

#include "cli/exit_codes.h"
#include "cli/global_options.h"

namespace codex::cli {

void AddSessionsPurgeCommand(CLI::App* sessions, const GlobalOptions& global,
                             CommandOutcome& result);

}  // namespace codex::cli
