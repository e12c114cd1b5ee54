// `codex sessions export ID [--format jsonl|markdown] [-o FILE]`: a session as
// a Codex rollout (JSON Lines) or Markdown, on stdout or into FILE.
#pragma once

#include <CLI/CLI.hpp>

#include "cli/exit_codes.h"
#include "cli/global_options.h"

namespace codex::cli {

void AddSessionsExportCommand(CLI::App* sessions, const GlobalOptions& global,
                              CommandOutcome& result);

}  // namespace codex::cli
