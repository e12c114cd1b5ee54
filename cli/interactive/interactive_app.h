// The interactive session behind `codex [PROMPT]` and `codex resume`.
//
// On a terminal (stdin and stdout are TTYs and TERM is not "dumb"): a
// composer with persisted history that stays live while a turn runs on its
// own thread (type-ahead, queued messages, Esc to interrupt), popups for
// slash commands, files and history, streamed Markdown answers, a spinner,
// tool activity, approval menus, Esc-Esc to edit a previous message as a
// fork, !cmd, and the session picker (keys and commands: docs/interactive.md).
// Otherwise plain line-by-line behaviour with no escape codes: each stdin
// line is a prompt (or a slash command), each assistant message goes to
// stdout once, progress to stderr; EOF ends the session. Returns the
// process exit code.
#pragma once

#include <string>

#include "cli/engine.h"
#include "cli/global_options.h"

namespace codex::cli {

enum class SessionStart {
  kNew,         // codex [PROMPT]
  kResumeId,    // codex resume ID
  kResumeLast,  // codex resume --last
  kPick,        // codex resume: choose in the picker
};

struct InteractiveOptions {
  RunFlags flags;
  SessionStart start = SessionStart::kNew;
  std::string session_id;  // kResumeId
  bool all = false;        // kPick, kResumeLast: sessions of every directory
  bool existing = false;   // kResumeLast: fail when none is in scope, not start one
  std::string prompt;      // the first prompt ("" = none)
};

// Runs the interactive session; OK when it ends normally, otherwise why it
// could not start (the caller leaves it in the CommandOutcome, exit_codes.h).
Status RunInteractive(const GlobalOptions& global, InteractiveOptions options);

}  // namespace codex::cli
