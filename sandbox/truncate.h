// Head + tail truncation of command output for the model.
//
// Long outputs matter most at their ends (the command echoed at the start,
// the error at the end), so the middle is cut. Pure function; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace codex::sandbox {

inline constexpr size_t kModelOutputBytes = 10 * 1024;

// Returns `text` unchanged when it fits in `max_bytes` and `extra_omitted` is
// 0. Otherwise keeps about max_bytes/2 from the head and max_bytes/2 from the
// tail (cut at line boundaries when the half holds a newline, and never
// inside a UTF-8 sequence) with one marker line between them:
//   [... 12345 bytes (67 lines) omitted ...]
// `extra_omitted` adds bytes that were dropped before this call (e.g. beyond
// the runner's 1 MiB cap) to the count. The result is at most `max_bytes`
// plus the marker line.
std::string TruncateHeadTail(std::string_view text, size_t max_bytes = kModelOutputBytes,
                             int64_t extra_omitted = 0);

}  // namespace codex::sandbox
