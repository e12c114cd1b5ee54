// Skipping a test binary whose prerequisite this machine lacks (test
// support, never linked into codex): a kernel feature, a server binary, the
// shared conformance data. ctest reads exit code 4 as "skipped"
// (SKIP_RETURN_CODE in codex_add_test), and the printed line says why.
#pragma once

#include <string_view>

namespace codex::testing {

inline constexpr int kSkipExitCode = 4;

// Prints "SKIP: <why>" to stderr and ends the process with
// kSkipExitCode at once (no exit handlers: a test may be mid-case, or in a
// forked child).
[[noreturn]] void SkipTest(std::string_view why);

}  // namespace codex::testing
