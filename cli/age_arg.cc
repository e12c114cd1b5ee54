#include "cli/age_arg.h"

namespace codex::cli {

Result<int64_t> ParseAge(const std::string& text, std::string_view option) {
  size_t i = 0;
  int64_t n = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9' && n < 1'000'000'000) {
    n = n * 10 + (text[i++] - '0');
  }
  const std::string unit = text.substr(i);
  int64_t scale = 0;
  if (unit == "d") scale = 86'400'000;
  if (unit == "h") scale = 3'600'000;
  if (unit == "m") scale = 60'000;
  if (unit == "s") scale = 1'000;
  if (unit == "w") scale = 7 * 86'400'000LL;
  if (i == 0 || scale == 0) {
    return InvalidArgumentError(std::string(option) + " '" + text +
                                "' is not a duration; use a number with s, m, h, d or w, e.g. 30d");
  }
  return n * scale;
}

}  // namespace codex::cli
