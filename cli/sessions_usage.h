// `codex sessions usage [--since AGE] [--by day|model|project|session] [--json]`:
// the tokens and requests the store recorded, summed per group, with an
// estimated cost where config.toml prices the model ([model_prices.<model>],
// core::ModelPrice).
//
// What is summed: every turn (live and archived sessions, every directory)
// that started at or after now - AGE (all turns without --since), as
// SessionDatabase::TurnsSince returns them in one query: input, cached
// input, output and reasoning tokens, and requests (the responses whose
// usage was recorded with an item the session itself appended in the turn).
// A turn belongs to its session's model and project (the project key, else
// the cwd); sessions are listed newest first, stopping at the first one last
// updated before the window.
//
// Output: a table (GROUP, REQUESTS, INPUT, CACHED, OUTPUT, REASONING, COST)
// with a TOTAL line; COST is "-" for a group with a model without a price.
// --json prints one object: {"since_ms", "by", "groups":[{"key", "requests",
// "input_tokens", "cached_input_tokens", "output_tokens",
// "reasoning_output_tokens", "total_tokens", "turns", "cost_usd"|null}],
// "total":{...}}.
#pragma once

#include <CLI/CLI.hpp>

#include "cli/exit_codes.h"
#include "cli/global_options.h"

namespace codex::cli {

void AddSessionsUsageCommand(CLI::App* sessions, const GlobalOptions& global,
                             CommandOutcome& result);

}  // namespace codex::cli
