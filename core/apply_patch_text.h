// Text helpers shared by the apply_patch parser, matcher and shell form:
// trimming that agrees with the reference implementation (Unicode White_Space),
// the loosest matching pass's punctuation folding, and line splitting. Pure
// functions; thread-safe. Internal to core/ (apply_patch*.cc).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace codex::core::patch_internal {

bool IsAsciiSpace(char c);

// Without leading / trailing / both Unicode White_Space.
std::string_view TrimStart(std::string_view s);
std::string_view TrimEnd(std::string_view s);
std::string_view Trim(std::string_view s);

// Typographic punctuation and special spaces folded to ASCII (dashes to '-',
// quotes to ' and ", special spaces to ' ').
std::string FoldPunctuation(std::string_view s);

// Splits on '\n', dropping one '\r' before each '\n' (like Rust's str::lines).
std::vector<std::string_view> SplitPatchLines(std::string_view s);

// "<strerror> (os error N)", the reference CLI's wording of an errno.
std::string OsError(int err);

}  // namespace codex::core::patch_internal
