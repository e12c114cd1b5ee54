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
// a capture's cap) to the count. The result is at most `max_bytes`
// plus the marker line.
std::string TruncateHeadTail(std::string_view text, size_t max_bytes = kModelOutputBytes,
                             int64_t extra_omitted = 0);

// Bytes a capture left out of a text (see output_buffer.h): `bytes` bytes
// holding `lines` newlines were between text[0, offset) and text[offset, end).
struct OutputGap {
  size_t offset = 0;
  int64_t bytes = 0;
  int64_t lines = 0;
};

// The same for a captured head + tail: the head is cut from the text before
// the gap and the tail from the text after it, so the tail shown is the true
// end of the output; the marker counts the gap and whatever else was cut.
std::string TruncateHeadTail(std::string_view text, const OutputGap& gap,
                             size_t max_bytes = kModelOutputBytes);

}  // namespace codex::sandbox
