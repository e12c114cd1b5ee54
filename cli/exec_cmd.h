// `codex exec [OPTS] PROMPT|-`, `codex exec resume (ID|--last) PROMPT|-` and
// `codex exec fork ID [--at-turn N] PROMPT|-`: one non-interactive turn.
// Without --json, stdout holds only the final assistant message; with --json
// it is the JSONL event stream. Options may stand before or after the
// resume/fork subcommand.
#pragma once

#include <CLI/CLI.hpp>

#include "cli/exit_codes.h"
#include "cli/global_options.h"

namespace codex::cli {

void RegisterExecCommand(CLI::App& app, const GlobalOptions& global, CommandOutcome& result);

}  // namespace codex::cli
