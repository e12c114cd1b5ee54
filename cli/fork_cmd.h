// `codex fork ID [--at-turn N]`: branches a stored session (at its head, or
// after turn N) and prints the new session id alone on stdout.
// Errors: one "error: ..." line on stderr and the exit codes of exit_codes.h.
#pragma once

#include <CLI/CLI.hpp>

#include "cli/exit_codes.h"
#include "cli/global_options.h"

namespace codex::cli {

void RegisterForkCommand(CLI::App& app, const GlobalOptions& global, CommandOutcome& result);

}  // namespace codex::cli
