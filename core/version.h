// The version of this codex, printed by `codex --version` and written as
// `cli_version` into exported rollouts. Keep it equal to the project()
// VERSION in the top-level CMakeLists.txt (tests/parity_e2e_test checks it).
#pragma once

namespace codex::core {

inline constexpr const char* kCodexVersion = "0.1.0";

}  // namespace codex::core
