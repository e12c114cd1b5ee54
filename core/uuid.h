// UUIDv7 (RFC 9562): 48-bit Unix milliseconds, version 7, random bits.
// Lexicographic order of the text follows creation time. Thread-safe.
#pragma once

#include <cstdint>
#include <string>

namespace codex::core {

// "0193a1b2-...": lowercase canonical text. `unix_ms` = 0 uses the current time.
std::string NewUuidV7(int64_t unix_ms = 0);

// True for canonical 8-4-4-4-12 lowercase or uppercase hex text.
bool LooksLikeUuid(const std::string& text);

}  // namespace codex::core
