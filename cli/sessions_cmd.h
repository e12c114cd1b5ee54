// `codex sessions ...`: the management commands over the configured session
// store (storage/). This file registers the `sessions` command; each
// subcommand lives in a file of its own, with its output contract in its
// header: list (sessions_list.h), show (sessions_show.h), tree
// (sessions_tree.h), search (sessions_search.h), rm (sessions_rm.h), archive
// and unarchive (sessions_archive.h), rename (sessions_rename.h), purge
// (sessions_purge.h), export (sessions_export.h), import
// (sessions_import.h), migrate (sessions_migrate.h), usage
// (sessions_usage.h) and serve (sessions_serve.h). What they share:
// sessions_common.h. `codex fork` is fork_cmd.h.
// Errors: one "error: ..." line on stderr and the exit codes of exit_codes.h.
#pragma once

#include <CLI/CLI.hpp>

#include "cli/exit_codes.h"
#include "cli/global_options.h"

namespace codex::cli {

void RegisterSessionsCommands(CLI::App& app, const GlobalOptions& global, CommandOutcome& result);

}  // namespace codex::cli
