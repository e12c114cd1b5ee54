#include "testing/test_data.h"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace codex::testing {

std::filesystem::path TestData(std::string_view relative) {
  std::filesystem::path path = std::filesystem::path(CODEX_TEST_DATA_DIR) / relative;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    const std::string p = path.string();
    std::fprintf(
        stderr,
        "FAIL: %s is missing: it is the repository's own test data (tests/data/README.md); "
        "restore it with `git checkout -- tests/data`\n",
        p.c_str());
    std::fflush(stdout);
    std::fflush(stderr);
    std::_Exit(1);
  }
  return path;
}

}  // namespace codex::testing
