// `codex sessions ...` (list, show, tree, search, rm, archive, unarchive,
// rename, purge, export, import) and `codex fork ID [--at-turn N]`: the
// management commands over $CODEX_HOME/sessions.db (storage/). It also
// registers `sessions migrate`, `sessions usage` and `sessions serve`, each in
// its own file (sessions_migrate.h, sessions_usage.h, sessions_serve.h).
//
// Output contract:
//   sessions list        a table (ID, UPDATED in local time, CWD, TITLE), newest
//                        first; when more sessions exist the last line is
//                        "next page: codex sessions list --cursor <C>".
//   sessions list --json JSON Lines: one session object per line (id, name,
//                        title, cwd, model, provider, source, created_at_ms,
//                        updated_at_ms, archived, tokens_used,
//                        forked_from_session, head_item_id); when more exist
//                        a last line {"next_cursor":"<C>"}.
//   sessions search --json  JSON Lines, one hit per line, best first.
//   sessions show --json one JSON object (session, items, turns, events, forks).
//   fork                 prints the new session id alone on stdout.
// Errors: one "error: ..." line on stderr and the exit codes of exit_codes.h.
#pragma once

#include <CLI/CLI.hpp>

#include "cli/exit_codes.h"
#include "cli/global_options.h"

namespace codex::cli {

void RegisterSessionsCommands(CLI::App& app, const GlobalOptions& global, CommandOutcome& result);

}  // namespace codex::cli
