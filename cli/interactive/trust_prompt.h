// "Trust this folder?": the question Codex asks on its first start in a
// project, and the sandbox and approval an interactive session on a terminal
// runs with when the config names neither (docs/interactive.md, "Trust").
//
// The question is asked when neither sandbox_mode nor approval_policy was
// named (config.toml, a profile, -c or a flag) and config.toml holds no
// trust_level for the directory or its project root (core::ProjectRoot);
// the answer is recorded as Codex records it ([projects."<root>"]
// trust_level, core/mcp_config_edit.h), so each tool reads the other's.
// `codex exec` and the session without a terminal never ask.
#pragma once

#include <string>

#include "cli/interactive/style.h"
#include "cli/interactive/terminal.h"

namespace codex::cli {

enum class TrustAnswer { kTrusted, kUntrusted, kQuit };

// Asks on `terminal` (raw mode) whether `project` is trusted: Enter, 1 or y
// trust it; 2 or n do not; Esc is "not trusted" too; Ctrl-C or Ctrl-D leave.
// The question is erased afterwards.
TrustAnswer AskTrust(Terminal& terminal, const Style& style, const std::string& project);

// What an unnamed setting becomes, from the project's trust level
// ("trusted", "untrusted", "" undecided): workspace-write and on-request for
// a trusted project, read-only and on-request otherwise.
std::string TrustSandbox(const std::string& trust_level);
std::string TrustApproval(const std::string& trust_level);

}  // namespace codex::cli
