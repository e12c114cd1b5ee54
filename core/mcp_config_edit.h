// The edits codex makes to $CODEX_HOME/config.toml (the one home for them).
// `codex mcp add` / `codex mcp remove`: edits the [mcp_servers.NAME] tables
// of $CODEX_HOME/config.toml in Codex's format (command, args, [.env]; or
// url, bearer_token_env_var), as a text edit so the rest of the file, its
// comments included, stays byte for byte. Each edit is checked by parsing
// the result (only that server changed) and written atomically (temp file +
// rename). Not thread-safe against other writers of config.toml.
#pragma once

#include <string>

#include "base/status.h"
#include "core/mcp_config.h"

namespace codex::core {

// Adds (or replaces, as Codex does) `server` (its name, command/args/env or
// url/bearer_token_env_var) at the end of config.toml, creating the file.
Status WriteMcpServer(const std::string& codex_home, const McpServerConfig& server);

// Removes [mcp_servers.NAME] and its sub-tables; false when there was none.
// kInvalidArgument when the file defines it in a form this edit cannot
// remove (an inline table): then nothing is written.
Result<bool> RemoveMcpServer(const std::string& codex_home, const std::string& name);

// Records the answer to "Trust this folder?" as Codex does, so that Codex
// reads it too: `[projects."<project>"]` with `trust_level = "<level>"`
// ("trusted" or "untrusted"), the table's line replaced when it exists, else
// the table appended. The same checks and atomic write as above.
Status WriteProjectTrust(const std::string& codex_home, const std::string& project,
                         const std::string& level);

// `codex features enable|disable NAME`: sets `NAME = true|false` in the
// [features] table as Codex does (the key's value replaced in place, a comment
// after it kept; else the line put at the end of the table; else the table
// appended). kInvalidArgument, nothing written, when the file does not parse
// (naming file and line) or defines features in a form this edit cannot
// change (an inline table, dotted keys).
Status WriteFeatureFlag(const std::string& codex_home, const std::string& name, bool enabled);

}  // namespace codex::core
