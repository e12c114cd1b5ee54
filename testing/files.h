// Whole-file reads and writes for tests and benches (test support, never
// linked into codex).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace codex::testing {

// The bytes of `path`; "" when it cannot be read (a test compares the text,
// so an absent file shows as a mismatch).
std::string ReadFile(const std::filesystem::path& path);

// Replaces `path` with `content`, creating its parent directories. A file
// that cannot be written prints why and aborts: the test's setup failed.
void WriteFile(const std::filesystem::path& path, std::string_view content);

}  // namespace codex::testing
