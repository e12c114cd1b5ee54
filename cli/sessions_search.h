// `codex sessions search TEXT... [--all | --cwd DIR] [--limit N] [--cursor C]
// [--json]`: full-text search of what sessions showed (storage/search_text.h).
// --json: JSON Lines, one hit per line, best first, then {"next_cursor"}
// when there is more.
#pragma once

#include <CLI/CLI.hpp>

#include "cli/exit_codes.h"
#include "cli/global_options.h"

namespace codex::cli {

void AddSessionsSearchCommand(CLI::App* sessions, const GlobalOptions& global,
                              CommandOutcome& result);

}  // namespace codex::cli
