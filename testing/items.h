// Items for tests, from their JSON text (test support, never linked into codex).
#pragma once

#include <string_view>
#include <vector>

#include "core/item.h"

namespace codex::testing {

// core::DecodeItem of `json`, which a test writes and must be valid: a
// malformed fixture prints why and aborts the test binary.
core::Item Decoded(std::string_view json);

}  // namespace codex::testing
