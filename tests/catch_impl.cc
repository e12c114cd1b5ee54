// Catch2's implementation, compiled once for every test binary (linked through
// codex_catch_main, or alone by a test with its own main).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "tests/catch_run.h"

namespace codex::testing {

int RunCatch(int argc, char* argv[]) { return Catch::Session().run(argc, argv) == 0 ? 0 : 1; }

}  // namespace codex::testing
