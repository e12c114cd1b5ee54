// `codex sessions serve [--port N] [--open]`: the read-only session viewer
// (cli/viewer/, docs/viewer.md) on 127.0.0.1, serving the configured store
// (SQLite or PostgreSQL). Prints "codex sessions viewer: <URL>" on stdout,
// the URL holding the random token every request needs; --open also hands
// the URL to xdg-open when it is installed. Ctrl-C (or SIGTERM) stops it
// cleanly (exit 0).
#pragma once

#include <CLI/CLI.hpp>

#include "cli/exit_codes.h"
#include "cli/global_options.h"

namespace codex::cli {

void AddSessionsServeCommand(CLI::App* sessions, const GlobalOptions& global,
                             CommandOutcome& result);

}  // namespace codex::cli
