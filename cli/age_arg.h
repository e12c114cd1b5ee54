// Ages typed on the command line ("30d", "12h", "90m", "2w", "45s"), for the
// options that take one (sessions purge --older-than, sessions usage --since).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace codex::cli {

// `text` in milliseconds; kInvalidArgument naming `option` and the accepted
// units when it is not a number followed by s, m, h, d or w.
Result<int64_t> ParseAge(const std::string& text, std::string_view option);

}  // namespace codex::cli
