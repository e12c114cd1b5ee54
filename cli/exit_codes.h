// Process exit codes of `codex` (a contract: scripts depend on them).
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

// Prints "error: <message>" on stderr and returns ExitCodeFor(status).
int ReportError(const Status& status);

}  // namespace codex::cli
