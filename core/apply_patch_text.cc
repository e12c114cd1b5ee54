#include "core/apply_patch_text.h"

#include <array>
#include <cstring>

namespace codex::core::patch_internal {
namespace {

// Unicode White_Space code points as UTF-8 (beyond ASCII), so that trimming
// agrees with the reference implementation, which trims Unicode whitespace.
constexpr std::array<std::string_view, 17> kUnicodeSpaces = {
    "\xC2\x85",     "\xC2\xA0",     "\xE1\x9A\x80", "\xE2\x80\x80", "\xE2\x80\x81", "\xE2\x80\x82",
    "\xE2\x80\x83", "\xE2\x80\x84", "\xE2\x80\x85", "\xE2\x80\x86", "\xE2\x80\x87", "\xE2\x80\x88",
    "\xE2\x80\x89", "\xE2\x80\x8A", "\xE2\x80\xA8", "\xE2\x80\xA9", "\xE2\x80\xAF",
};
constexpr std::array<std::string_view, 2> kMoreUnicodeSpaces = {"\xE2\x81\x9F", "\xE3\x80\x80"};

// Length of the whitespace character that `s` starts (front) or ends (!front) with, or 0.
size_t SpaceLength(std::string_view s, bool front) {
  if (s.empty()) return 0;
  if (IsAsciiSpace(front ? s.front() : s.back())) return 1;
  auto matches = [&](std::string_view ws) { return front ? s.starts_with(ws) : s.ends_with(ws); };
  for (std::string_view ws : kUnicodeSpaces) {
    if (matches(ws)) return ws.size();
  }
  for (std::string_view ws : kMoreUnicodeSpaces) {
    if (matches(ws)) return ws.size();
  }
  return 0;
}

}  // namespace

bool IsAsciiSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

std::string_view TrimStart(std::string_view s) {
  while (size_t n = SpaceLength(s, true)) s.remove_prefix(n);
  return s;
}

std::string_view TrimEnd(std::string_view s) {
  while (size_t n = SpaceLength(s, false)) s.remove_suffix(n);
  return s;
}

std::string_view Trim(std::string_view s) { return TrimEnd(TrimStart(s)); }

// Byte-level: the sequences below start with UTF-8 lead bytes, so they never
// match inside another character.
std::string FoldPunctuation(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    auto byte = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
    if (byte(0) == 0xC2 && i + 1 < s.size() && byte(1) == 0xA0) {  // NBSP
      out += ' ';
      i += 2;
      continue;
    }
    if (byte(0) == 0xE2 && i + 2 < s.size()) {
      unsigned b1 = byte(1), b2 = byte(2);
      char folded = 0;
      if (b1 == 0x80 && b2 >= 0x90 && b2 <= 0x95) folded = '-';        // U+2010..U+2015 dashes
      if (b1 == 0x88 && b2 == 0x92) folded = '-';                      // U+2212 minus
      if (b1 == 0x80 && b2 >= 0x98 && b2 <= 0x9B) folded = '\'';       // U+2018..U+201B
      if (b1 == 0x80 && b2 >= 0x9C && b2 <= 0x9F) folded = '"';        // U+201C..U+201F
      if (b1 == 0x80 && b2 >= 0x82 && b2 <= 0x8A) folded = ' ';        // U+2002..U+200A
      if ((b1 == 0x80 && b2 == 0xAF) || (b1 == 0x81 && b2 == 0x9F)) {  // U+202F, U+205F
        folded = ' ';
      }
      if (folded != 0) {
        out += folded;
        i += 3;
        continue;
      }
    }
    if (byte(0) == 0xE3 && i + 2 < s.size() && byte(1) == 0x80 && byte(2) == 0x80) {  // U+3000
      out += ' ';
      i += 3;
      continue;
    }
    out += s[i];
    ++i;
  }
  return out;
}

std::vector<std::string_view> SplitPatchLines(std::string_view s) {
  std::vector<std::string_view> lines;
  while (!s.empty()) {
    size_t nl = s.find('\n');
    std::string_view line = s.substr(0, nl);
    if (nl != std::string_view::npos && line.ends_with('\r')) line.remove_suffix(1);
    lines.push_back(line);
    if (nl == std::string_view::npos) break;
    s.remove_prefix(nl + 1);
  }
  return lines;
}

std::string OsError(int err) {
  return std::string(std::strerror(err)) + " (os error " + std::to_string(err) + ")";
}

}  // namespace codex::core::patch_internal
