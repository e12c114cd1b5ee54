// The single main shared by every Catch2 test binary (tests/catch_run.h).
#include "tests/catch_run.h"

int main(int argc, char* argv[]) { return codex::testing::RunCatch(argc, argv); }
