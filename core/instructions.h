// The built-in base instructions sent as `instructions` on every request
// (config key `instructions` replaces them). Fixed text, so the prompt prefix
// stays byte-stable across requests and sessions.
#pragma once

#include <string_view>

namespace codex::core {

std::string_view BaseInstructions();

}  // namespace codex::core
