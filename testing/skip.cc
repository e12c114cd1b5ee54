#include "testing/skip.h"

#include <cstdio>
#include <cstdlib>

namespace codex::testing {

void SkipTest(std::string_view why) {
  const int n = static_cast<int>(why.size());
  std::fprintf(stderr, "SKIP: %.*s\n", n, why.data());
  std::fflush(stdout);
  std::fflush(stderr);
  std::_Exit(kSkipExitCode);
}

}  // namespace codex::testing
