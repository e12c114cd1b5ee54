// Process exit codes of `codex` (a contract: scripts depend on them), and the
// one place that turns a failed Status into an exit code and the one line
// `error: <what went wrong and what to do>` a user sees.
#pragma once

#include "base/status.h"

namespace codex::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;          // the operation failed
inline constexpr int kExitUsage = 2;          // bad command line or config
inline constexpr int kExitConflict = 3;       // session advanced by another process
inline constexpr int kExitNotFound = 4;       // unknown session
inline constexpr int kExitAuth = 5;           // missing or rejected API key
inline constexpr int kExitInterrupted = 130;  // Ctrl-C

// The exit code for a failed Status.
int ExitCodeFor(const Status& status);

// Prints "error: <message>" on stderr as one line (a line break inside the
// message shown as \n; past 1 KB its middle left out), with any store password redacted
// (core/store_location.h). Commands call it only for a failure that does not
// end them (sessions import: one line per file) or whose exit status is not
// ExitCodeFor's (codex sandbox: 126/127, as a shell); the rest return the
// Status and CommandOutcome prints it. Nothing for a stdout whose reader went
// away (kStdoutReaderGone, cli/terminal_text.h): `codex sessions list | head -1`
// ends with exit 1 and no line, as a program ended by SIGPIPE.
void PrintError(const Status& status);

// PrintError, then ExitCodeFor(status).
int ReportError(const Status& status);

// What the command that ran leaves for main(): a Status (OK, or a failure
// whose line main prints and whose exit code is ExitCodeFor's) or, for the
// few commands whose exit status is their own (a sandboxed command's, the
// reference apply_patch's usage errors), an exit code. Set once, by the
// callback of the command CLI11 chose; not thread-safe.
class CommandOutcome {
 public:
  void Set(Status status);
  void Set(Result<int> exit_code);

  // main()'s one conversion: for a failure prints its line (PrintError) and
  // returns ExitCodeFor; otherwise the exit code (0 when nothing was set),
  // unless that is 0 and stdout lost some of the output (StdoutWritten,
  // cli/terminal_text.h): then its line and 1.
  int Finish() const;

 private:
  Result<int> result_ = kExitOk;
};

}  // namespace codex::cli
