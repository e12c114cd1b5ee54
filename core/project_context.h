// The session's initial context: project docs (AGENTS.md) and the
// <environment_context> item, injected once per session (ARCHITECTURE.md,
// Tools and sandbox). Later changes of cwd, sandbox or approval are appended
// as new items, never edited into old ones, so the prompt prefix stays
// byte-stable. Pure functions except for reading AGENTS.md files.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/item.h"

namespace codex::core {

inline constexpr size_t kProjectDocMaxBytes = 32 * 1024;

// The git work tree's top holding `cwd` (the nearest ancestor with a .git that
// is not an empty directory), else `cwd` itself. Where AGENTS.md files are
// looked for from, and where a trust decision for `cwd` is recorded.
std::string ProjectRoot(const std::string& cwd);

// $CODEX_HOME/AGENTS.md, then every AGENTS.md (or, in a directory without
// one, the first of config.project_doc_fallback_filenames) from the git root
// (the nearest ancestor of cwd holding .git; cwd itself when there is none) down to cwd,
// joined and capped at config.project_doc_max_bytes (default
// kProjectDocMaxBytes; 0 = no docs). "" when there are none.
std::string LoadProjectDocs(const Config& config);

// The <environment_context> text for `config` (cwd, shell, sandbox, approval,
// writable roots, network).
std::string EnvironmentContextText(const Config& config);

// The developer message describing sandbox and approval rules.
std::string PermissionsText(const Config& config);

// Items for a new session: the review guidelines (a review session only), the
// permissions developer message, the
// developer_instructions message (when set), the project docs (when any) and
// the environment context.
std::vector<Item> InitialContext(const Config& config);

// Items to append before a turn of a resumed session so the model sees the
// current settings: empty when the newest environment/permissions items in
// `transcript` already match `config`.
std::vector<Item> ContextUpdates(const Config& config, std::span<const Item> transcript);

}  // namespace codex::core
