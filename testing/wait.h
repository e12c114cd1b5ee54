// Waiting on events in tests (test support, never linked into codex): a
// condition polled until it holds, and the far end of a FIFO gate that a
// test server blocks on (tests/mcp/mcp_test_server.cc --wait-file).
#pragma once

#include <filesystem>
#include <functional>

namespace codex::testing {

// Polls `done` every 50 ms until it holds; false when it still does not
// after 30 s (a backstop: a test waits for an event, never for a time).
bool Eventually(const std::function<bool()>& done);

// Opens the FIFO `path` for writing once its reader has it open, and closes
// it: the reader sees its end. False when no reader came within 30 s.
bool ReleaseFifo(const std::filesystem::path& path);

}  // namespace codex::testing
