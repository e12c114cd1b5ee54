// A session as JSON (docs/json-output.md): the one shape `sessions list
// --json`, `show --json`, `tree --json`, `search --json` and the session
// viewer's API (cli/viewer/) print.
#pragma once

#include <nlohmann/json.hpp>

#include "core/session_store.h"

namespace codex::cli {

// id, name, title, cwd, host, project, model, provider, source,
// created_at_ms, updated_at_ms, archived, tokens_used, forked_from_session,
// forked_from_item (null when none), head_item_id (null when none).
nlohmann::ordered_json SessionJson(const core::SessionInfo& s);

// A recorded turn: turn_id, status, error, started_at_ms, ended_at_ms and
// usage (input, cached input, output, reasoning output and total tokens), as
// `sessions show --json` and the viewer print it.
nlohmann::ordered_json TurnJson(const core::TurnRecord& t);

}  // namespace codex::cli
