#include "storage/rollout_format.h"

#include <cstdio>
#include <ctime>

namespace codex::storage::rollout_internal {

size_t SkipWs(std::string_view s, size_t i) {
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) ++i;
  return i;
}

namespace {

// The index just past the JSON value starting at `i` (npos when malformed).
size_t SkipValue(std::string_view s, size_t i) {
  i = SkipWs(s, i);
  if (i >= s.size()) return std::string_view::npos;
  if (s[i] == '"') {
    for (++i; i < s.size(); ++i) {
      if (s[i] == '\\') {
        ++i;
      } else if (s[i] == '"') {
        return i + 1;
      }
    }
    return std::string_view::npos;
  }
  if (s[i] == '{' || s[i] == '[') {
    int depth = 0;
    for (; i < s.size(); ++i) {
      const char c = s[i];
      if (c == '"') {
        const size_t end = SkipValue(s, i);
        if (end == std::string_view::npos) return end;
        i = end - 1;
      } else if (c == '{' || c == '[') {
        ++depth;
      } else if (c == '}' || c == ']') {
        if (--depth == 0) return i + 1;
      }
    }
    return std::string_view::npos;
  }
  while (i < s.size() && s[i] != ',' && s[i] != '}' && s[i] != ']' && s[i] != ' ' && s[i] != '\n' &&
         s[i] != '\r' && s[i] != '\t') {
    ++i;
  }
  return i;
}

}  // namespace

std::optional<std::string_view> RawMember(std::string_view obj, std::string_view key) {
  size_t i = SkipWs(obj, 0);
  if (i >= obj.size() || obj[i] != '{') return std::nullopt;
  ++i;
  while (true) {
    i = SkipWs(obj, i);
    if (i >= obj.size() || obj[i] == '}') return std::nullopt;
    const size_t key_end = SkipValue(obj, i);
    if (key_end == std::string_view::npos) return std::nullopt;
    const std::string_view k = obj.substr(i + 1, key_end - i - 2);
    i = SkipWs(obj, key_end);
    if (i >= obj.size() || obj[i] != ':') return std::nullopt;
    const size_t start = SkipWs(obj, i + 1);
    const size_t end = SkipValue(obj, start);
    if (end == std::string_view::npos) return std::nullopt;
    if (k == key) return obj.substr(start, end - start);
    i = SkipWs(obj, end);
    if (i < obj.size() && obj[i] == ',') ++i;
  }
}

std::vector<std::string_view> RawElements(std::string_view arr) {
  std::vector<std::string_view> out;
  size_t i = SkipWs(arr, 0);
  if (i >= arr.size() || arr[i] != '[') return out;
  ++i;
  while (true) {
    i = SkipWs(arr, i);
    if (i >= arr.size() || arr[i] == ']') return out;
    const size_t end = SkipValue(arr, i);
    if (end == std::string_view::npos) return out;
    out.push_back(arr.substr(i, end - i));
    i = SkipWs(arr, end);
    if (i < arr.size() && arr[i] == ',') ++i;
  }
}

int64_t ParseTimestamp(const std::string& text) {
  int y, mo, d, h, mi, s;
  char rest[32] = {0};
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%31s", &y, &mo, &d, &h, &mi, &s, rest) <
      6) {
    return 0;
  }
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = s;
  int64_t ms = static_cast<int64_t>(timegm(&tm)) * 1000;
  if (rest[0] == '.') {
    int64_t frac = 0;
    int digits = 0;
    for (const char* p = rest + 1; *p >= '0' && *p <= '9'; ++p) {
      if (digits < 3) {
        frac = frac * 10 + (*p - '0');
        ++digits;
      }
    }
    while (digits < 3) {
      frac *= 10;
      ++digits;
    }
    ms += frac;
  }
  return ms;
}

core::TokenUsage UsageFrom(const Json& j) {
  core::TokenUsage u;
  if (!j.is_object()) return u;
  auto get = [&](const char* key) -> int64_t {
    auto it = j.find(key);
    return it != j.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
  };
  u.input_tokens = get("input_tokens");
  u.cached_input_tokens = get("cached_input_tokens");
  u.output_tokens = get("output_tokens");
  u.reasoning_output_tokens = get("reasoning_output_tokens");
  u.total_tokens = get("total_tokens");
  return u;
}

}  // namespace codex::storage::rollout_internal
