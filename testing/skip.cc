#include "testing/skip.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace codex::testing {

namespace {

[[noreturn]] void Exit(int code) {
  std::fflush(stdout);
  std::fflush(stderr);
  std::_Exit(code);
}

// Every skip comes here: under CI it is a failure with its reason.
void FailUnderCi(std::string_view why) {
  if (!SkipsFail()) return;
  const int n = static_cast<int>(why.size());
  std::fprintf(stderr,
               "FAIL: this test would skip, and under CI=true a skip fails the run "
               "(install what it needs: scripts/install-deps.sh, "
               "scripts/install-mcp-test-servers.sh): %.*s\n",
               n, why.data());
  Exit(1);
}

}  // namespace

bool SkipsFail() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && (std::strcmp(ci, "true") == 0 || std::strcmp(ci, "1") == 0);
}

void SkipTest(std::string_view why) {
  FailUnderCi(why);
  const int n = static_cast<int>(why.size());
  std::fprintf(stderr, "SKIP: %.*s\n", n, why.data());
  Exit(kSkipExitCode);
}

void SkipPart(std::string_view why) {
  FailUnderCi(why);
  const int n = static_cast<int>(why.size());
  std::fprintf(stderr, "SKIP (part): %.*s\n", n, why.data());
  std::fflush(stderr);
}

}  // namespace codex::testing
