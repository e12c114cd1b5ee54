// Waiting on events in tests (test support, never linked into codex): the far
// end of a FIFO gate that a test server blocks on
// (tests/mcp/mcp_test_server.cc --wait-file). Polling a condition is
// Eventually, testing/eventually.h.
#pragma once

#include <filesystem>

#include "testing/eventually.h"

namespace codex::testing {

// Opens the FIFO `path` for writing once its reader has it open, and closes
// it: the reader sees its end. False when no reader came within 30 s.
bool ReleaseFifo(const std::filesystem::path& path);

}  // namespace codex::testing
