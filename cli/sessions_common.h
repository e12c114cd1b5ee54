// What the `codex sessions` subcommands share (each lives in a file of its
// own, sessions_cmd.h registers them): the directory a command is scoped to,
// and how a session is shown in a line of a table (local times, labels,
// clipped titles, blocks of text cut to a few lines).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "core/session_store.h"

namespace codex::cli {

// The directory a command is scoped to: --cwd DIR or the current directory,
// as CanonicalPath (base/path.h) writes it; nullopt with --all.
Result<std::optional<std::string>> ScopeDir(bool all, const std::string& cwd);

// `ms` as local "YYYY-MM-DD HH:MM".
std::string LocalTime(int64_t ms);

// At most `max` code points of `s`, "…" appended when cut; newlines become spaces.
std::string Clip(std::string_view s, size_t max);

// "[name] title", "(untitled)" for a session without a title.
std::string SessionLabel(const core::SessionInfo& s);

// Each line of `text` after `prefix`, at most `max_lines` of them; a cut
// block ends with "… (N more lines; --full shows all)".
std::string IndentLines(std::string_view text, std::string_view prefix, size_t max_lines);

}  // namespace codex::cli
