// `codex sessions import PATH... [--json]`: imports Codex rollout files
// (directories are searched for *.jsonl); goes on after a file that fails and
// exits 1 when any failed. --json: one summary object on stdout at the end.
#pragma once

#include <CLI/CLI.hpp>

#include "cli/exit_codes.h"
#include "cli/global_options.h"

namespace codex::cli {

void AddSessionsImportCommand(CLI::App* sessions, const GlobalOptions& global,
                              CommandOutcome& result);

}  // namespace codex::cli
