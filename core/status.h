// Status and Result<T> live in base/status.h (codex_base, shared with
// sandbox/); this header keeps the include path the rest of the tree uses.
#pragma once

#include "base/status.h"  // IWYU pragma: export
