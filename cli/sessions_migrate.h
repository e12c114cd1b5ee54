// `codex sessions migrate --to URL_OR_PATH [--from URL_OR_PATH]`: copies
// every session of one store into another (storage/copy_sessions.h) and
// verifies the copy. --from defaults to the configured store (session_store).
#pragma once

#include <CLI/CLI.hpp>

#include "cli/exit_codes.h"
#include "cli/global_options.h"

namespace codex::cli {

void AddSessionsMigrateCommand(CLI::App* sessions, const GlobalOptions& global,
                               CommandOutcome& result);

}  // namespace codex::cli
