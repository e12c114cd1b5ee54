// Items for tests, from their JSON text (test support, never linked into codex).
#pragma once

#include <string_view>
#include <vector>

#include "core/item.h"

namespace codex::testing {

// core::DecodeItem of `json`, which a test writes and must be valid: a
// malformed fixture prints why and aborts the test binary.
core::Item Decoded(std::string_view json);

// A session's initial context as compaction tests need it: a permissions
// developer message naming `approval_policy` and an environment context
// for the working directory /p.
std::vector<core::Item> MinimalInitialContext(std::string_view approval_policy = "never");

// True when every call in `items` has exactly one output after it and every
// output exactly one call before it (by call id): what the Responses API
// requires of an input, and what compaction and the turn loop must keep.
bool CallsPairedInOrder(const std::vector<core::Item>& items);

}  // namespace codex::testing
