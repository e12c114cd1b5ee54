// `codex sessions list [--all | --cwd DIR] [--limit N] [--cursor C]
// [--archived] [--json]`: the sessions of a directory, newest first.
//
// Output contract:
//   a table (ID, UPDATED in local time, HOST, CWD, TITLE), newest first; when
//   more sessions exist the last line (stderr) is
//   "next page: codex sessions list ... --cursor <C>", valid shell.
//   --json: JSON Lines, one session object per line (id, name, title, cwd,
//   model, provider, source, created_at_ms, updated_at_ms, archived,
//   tokens_used, forked_from_session, head_item_id); when more exist a last
//   line {"next_cursor":"<C>"}.
#pragma once

#include <CLI/CLI.hpp>

#include "cli/exit_codes.h"
#include "cli/global_options.h"

namespace codex::cli {

void AddSessionsListCommand(CLI::App* sessions, const GlobalOptions& global,
                            CommandOutcome& result);

}  // namespace codex::cli
