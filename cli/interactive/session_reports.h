// The text the interactive session shows for its commands and at its start:
// the banner, the replayed tail of a resumed transcript, /help, /status,
// /sessions, /diff, and the choices the /model and /approvals pickers offer.
// Each returns what to print (styled with `style`, lines ending in "\n");
// nothing here writes to the terminal. WorkspaceDiff runs git; the rest is
// pure.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "cli/interactive/composer.h"
#include "cli/interactive/style.h"
#include "core/config.h"
#include "core/session_store.h"
#include "core/token_usage.h"

namespace codex::cli {

// The first lines: session, model, provider, then the directory and policies
// wrapped to `width` ("" details on stderr for a plain session: see the caller).
std::string BannerText(const Style& style, const core::Config& config,
                       const core::SessionInfo& session, bool resumed, int width);
// The line describing the session without a terminal (to stderr).
std::string BannerLine(const core::Config& config, const core::SessionInfo& session, bool resumed);
// What leaving prints, as Codex does: "Token usage: total=1,234 input=1,000
// (+ 200 cached) output=234 (reasoning 34)".
std::string TokenUsageLine(const core::TokenUsage& usage);

// Every message of a transcript (the resume picker's "t"), as ReplayText
// shows the last six.
std::string TranscriptText(const Style& style, const std::vector<core::StoredItem>& items,
                           int width);
// The last messages of a resumed transcript (what was asked and answered),
// with a count of the earlier ones, answers rendered as Markdown at `width`.
std::string ReplayText(const Style& style, const std::vector<core::StoredItem>& items, int width);

std::string HelpText(const Style& style, bool keys);
std::string StatusText(const Style& style, const core::Config& config,
                       const core::SessionInfo& session, int64_t run_tokens,
                       int context_left_percent, int64_t next_request_tokens);
std::string SessionsText(const Style& style, const std::vector<core::SessionInfo>& sessions,
                         const std::string& current_id, const std::string& cwd, int64_t now_ms);

// `git diff` of the work tree at `cwd` plus the untracked files as added,
// every line neutralised (cli/terminal_text.h) and styled with `style`; ""
// when nothing changed; kFailedPrecondition when `cwd` is not inside a git
// work tree. git runs through core/host_git.h.
Result<std::string> WorkspaceDiff(const std::string& cwd, const Style& style);

// (value, description) pairs for the pickers.
std::vector<Choice> ModelChoices(const std::string& current);
std::vector<Choice> ApprovalChoices();

}  // namespace codex::cli
