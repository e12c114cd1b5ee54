// Skipping what this machine cannot test (test support, never linked into
// codex): a kernel feature, a tool or server binary. The one rule, in
// skip.cc: outside CI a skip prints "SKIP: <why>" and the test goes on
// without that part; under CI=true (or CI=1) a skip is a failure, printed as
// "FAIL: ... CI=true ...: <why>" with exit code 1, so a CI machine that lacks
// a package or feature goes red instead of green with less tested.
// scripts/test.sh lists the printed reasons after ctest. The repository's own
// test data is never a reason to skip (testing/test_data.h).
#pragma once

#include <string_view>

namespace codex::testing {

inline constexpr int kSkipExitCode = 4;

// True when skips fail the run: the environment variable CI is "true" or "1".
bool SkipsFail();

// The whole test binary cannot run here. Outside CI: prints "SKIP: <why>" to
// stderr and ends the process with kSkipExitCode (ctest's SKIP_RETURN_CODE:
// reported as skipped). Under CI: fails (exit 1). Either way at once, with no
// exit handlers: a test may be mid-case, or in a forked child.
[[noreturn]] void SkipTest(std::string_view why);

// One part of a test case cannot run here. Outside CI: prints
// "SKIP (part): <why>" to stderr and returns; the caller then returns or
// leaves that part out. Under CI: fails at once (exit 1).
void SkipPart(std::string_view why);

}  // namespace codex::testing
