// The repository's own test data, tests/data/ (recorded Codex 0.169 wire
// streams, rollouts, the upstream apply_patch scenarios; where each file came
// from is in tests/data/README.md). It ships with every clone, so a missing
// file is a broken checkout, never a reason to skip.
#pragma once

#include <filesystem>
#include <string_view>

namespace codex::testing {

// tests/data/<relative>. When it does not exist, prints one line naming it
// and ends the process with exit code 1 (a failure, not a skip).
std::filesystem::path TestData(std::string_view relative);

}  // namespace codex::testing
