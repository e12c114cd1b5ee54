// Ctrl-C handling: the first SIGINT cancels the running turn through a
// CancelToken (the turn stops within a second and is recorded as
// interrupted); a second SIGINT exits at once with status 130.
#pragma once

#include "core/cancel.h"

namespace codex::cli {

// Installs the SIGINT/SIGTERM handlers that cancel `token` (which must outlive
// the handlers; call RemoveInterruptHandler before it dies).
void InstallInterruptHandler(core::CancelToken* token);
void RemoveInterruptHandler();

}  // namespace codex::cli
