#include "cli/interactive/style.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <vector>

namespace codex::cli {

std::string Style::Wrap(std::string_view s, const char* on, const char* off) const {
  if (!color_ || s.empty()) return std::string(s);
  std::string out = "\x1b[";
  out += on;
  out += 'm';
  out += s;
  out += "\x1b[";
  out += off;
  out += 'm';
  return out;
}

Color DetectColor(const std::map<std::string, std::string>& env, bool is_tty) {
  if (!is_tty) return Color::kDisabled;
  auto no_color = env.find("NO_COLOR");
  if (no_color != env.end() && !no_color->second.empty()) return Color::kDisabled;
  auto term = env.find("TERM");
  if (term == env.end() || term->second.empty() || term->second == "dumb") return Color::kDisabled;
  return Color::kEnabled;
}

Color DetectColor(int fd) {
  std::map<std::string, std::string> env;
  for (const char* name : {"NO_COLOR", "TERM"}) {
    if (const char* v = std::getenv(name)) env[name] = v;
  }
  return DetectColor(env, isatty(fd) == 1);
}

size_t SkipEscape(std::string_view s, size_t i) {
  ++i;  // the ESC
  if (i >= s.size()) return i;
  if (s[i] == '[') {  // CSI: parameters, intermediates, one final byte
    ++i;
    while (i < s.size() && !(s[i] >= 0x40 && s[i] <= 0x7e)) ++i;
    return std::min(i + 1, s.size());
  }
  if (s[i] == ']') {  // OSC: up to BEL or ST
    ++i;
    while (i < s.size()) {
      if (s[i] == '\a') return i + 1;
      if (s[i] == '\x1b' && i + 1 < s.size() && s[i + 1] == '\\') return i + 2;
      ++i;
    }
    return i;
  }
  return i + 1;  // a two-byte sequence (ESC 7, ESC =, ...)
}

std::string StripAnsi(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    if (s[i] == '\x1b') {
      i = SkipEscape(s, i);
    } else {
      out += s[i++];
    }
  }
  return out;
}

size_t Utf8Length(std::string_view s, size_t pos) {
  auto b = static_cast<unsigned char>(s[pos]);
  size_t len = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xe ? 3 : (b >> 3) == 0x1e ? 4 : 1;
  if (pos + len > s.size()) return 1;
  for (size_t k = 1; k < len; ++k) {
    if ((static_cast<unsigned char>(s[pos + k]) & 0xc0) != 0x80) return 1;
  }
  return len;
}

char32_t DecodeUtf8(std::string_view s, size_t* pos) {
  size_t len = Utf8Length(s, *pos);
  auto b = static_cast<unsigned char>(s[*pos]);
  char32_t c;
  if (len == 1) {
    c = b < 0x80 ? b : 0xfffd;
  } else {
    c = b & (0xffu >> (len + 1));
    for (size_t k = 1; k < len; ++k) {
      c = (c << 6) | (static_cast<unsigned char>(s[*pos + k]) & 0x3fu);
    }
  }
  *pos += len;
  return c;
}

size_t PrevCodePoint(std::string_view s, size_t pos) {
  if (pos == 0) return 0;
  size_t p = pos - 1;
  while (p > 0 && (static_cast<unsigned char>(s[p]) & 0xc0) == 0x80 && pos - p < 4) --p;
  // Only a lead byte whose sequence ends exactly at `pos` counts.
  if (p + Utf8Length(s, p) != pos) return pos - 1;
  return p;
}

int CodePointWidth(char32_t c) {
  if (c < 0x20 || (c >= 0x7f && c < 0xa0)) return 0;
  if ((c >= 0x1f3fb && c <= 0x1f3ff) || (c >= 0xe0020 && c <= 0xe007f)) return 0;
  if ((c >= 0x300 && c <= 0x36f) || (c >= 0x200b && c <= 0x200f) || (c >= 0xfe00 && c <= 0xfe0f) ||
      (c >= 0x1ab0 && c <= 0x1aff) || (c >= 0x20d0 && c <= 0x20ff)) {
    return 0;
  }
  if ((c >= 0x1100 && c <= 0x115f) || (c >= 0x2e80 && c <= 0x303e) ||
      (c >= 0x3041 && c <= 0x33ff) || (c >= 0x3400 && c <= 0x4dbf) ||
      (c >= 0x4e00 && c <= 0x9fff) || (c >= 0xa000 && c <= 0xa4cf) ||
      (c >= 0xac00 && c <= 0xd7a3) || (c >= 0xf900 && c <= 0xfaff) ||
      (c >= 0xfe30 && c <= 0xfe4f) || (c >= 0xff00 && c <= 0xff60) ||
      (c >= 0xffe0 && c <= 0xffe6) || (c >= 0x1f300 && c <= 0x1f64f) ||
      (c >= 0x1f680 && c <= 0x1f6ff) || (c >= 0x1f1e6 && c <= 0x1f1ff) ||
      (c >= 0x1f900 && c <= 0x1f9ff) || (c >= 0x1fa70 && c <= 0x1faff) ||
      (c >= 0x20000 && c <= 0x3fffd)) {
    return 2;
  }
  return 1;
}

namespace {

// A code point that never starts a cluster of its own.
bool Extends(char32_t c) {
  return (c >= 0x300 && c <= 0x36f) || (c >= 0x1ab0 && c <= 0x1aff) ||
         (c >= 0x1dc0 && c <= 0x1dff) || (c >= 0x20d0 && c <= 0x20ff) ||
         (c >= 0xfe00 && c <= 0xfe0f) || (c >= 0xfe20 && c <= 0xfe2f) ||
         (c >= 0x1f3fb && c <= 0x1f3ff) ||  // skin tones
         (c >= 0xe0020 && c <= 0xe007f) ||  // tags (subdivision flags)
         (c >= 0xe0100 && c <= 0xe01ef) || c == 0x200c ||
         (c >= 0x1160 && c <= 0x11ff) ||  // Hangul medial vowels and final consonants
         (c >= 0x0900 && c <= 0x0dff && (c & 0x7f) >= 0x3e && (c & 0x7f) <= 0x4d);  // Indic signs
}

bool RegionalIndicator(char32_t c) { return c >= 0x1f1e6 && c <= 0x1f1ff; }

}  // namespace

size_t NextGrapheme(std::string_view s, size_t pos) {
  if (pos >= s.size()) return s.size();
  size_t i = pos;
  char32_t first = DecodeUtf8(s, &i);
  if (first == '\r' && i < s.size() && s[i] == '\n') return i + 1;
  if (first < 0x20 || first == 0x7f) return i;
  bool flag_done = false;
  while (i < s.size()) {
    size_t next = i;
    char32_t c = DecodeUtf8(s, &next);
    if (Extends(c)) {
      i = next;
    } else if (c == 0x200d) {  // ZWJ: joins the next code point
      i = next;
      if (i < s.size()) DecodeUtf8(s, &i);
    } else if (RegionalIndicator(first) && RegionalIndicator(c) && !flag_done) {
      i = next;
      flag_done = true;
    } else {
      break;
    }
  }
  return i;
}

size_t PrevGrapheme(std::string_view s, size_t pos) {
  if (pos == 0) return 0;
  // Clusters are short: scan forward from a point well before `pos` that is
  // a cluster start (a line start, or an ASCII byte that is not a ZWJ
  // target), then step cluster by cluster.
  size_t start = pos > 64 ? pos - 64 : 0;
  while (start > 0 && static_cast<unsigned char>(s[start]) >= 0x80) --start;
  size_t prev = start;
  size_t i = start;
  while (i < pos) {
    prev = i;
    size_t next = NextGrapheme(s, i);
    i = next > pos ? pos : next;
  }
  return prev;
}

int DisplayWidth(std::string_view s) {
  int width = 0;
  size_t i = 0;
  while (i < s.size()) {
    if (s[i] == '\x1b') {
      i = SkipEscape(s, i);
    } else {
      size_t start = i;
      width += CodePointWidth(DecodeUtf8(s, &i));
      i = std::max(i, NextGrapheme(s, start));
    }
  }
  return width;
}

namespace {

// The width of the cluster starting at s[*pos] (escape sequences before it
// skipped), advancing *pos past it; -1 at the end of `s`.
int NextCell(std::string_view s, size_t* pos) {
  while (*pos < s.size() && s[*pos] == '\x1b') *pos = SkipEscape(s, *pos);
  if (*pos >= s.size()) return -1;
  size_t start = *pos;
  int width = CodePointWidth(DecodeUtf8(s, pos));
  *pos = std::max(*pos, NextGrapheme(s, start));
  return width;
}

// Advances `p` over a cluster `width` wide.
void Place(WrapPoint* p, int width, int columns) {
  if (width > 0 && p->col > 0 && p->col + width > columns) {
    ++p->row;
    p->col = 0;
  }
  p->col += width;
}

}  // namespace

WrapPoint WrapEnd(std::string_view s, int columns) {
  WrapPoint p;
  if (columns <= 0) return p;
  size_t i = 0;
  for (int w; (w = NextCell(s, &i)) >= 0;) Place(&p, w, columns);
  return p;
}

int WrappedRows(std::string_view s, int columns) { return WrapEnd(s, columns).row + 1; }

WrapPoint WrapCursor(std::string_view s, size_t pos, int columns) {
  if (pos > s.size()) pos = s.size();
  WrapPoint p = WrapEnd(s.substr(0, pos), columns);
  if (columns <= 0) return p;
  size_t i = pos;
  int next = NextCell(s, &i);
  if (next <= 0) next = 1;  // at the end: where a typed character would go
  if (p.col > 0 && p.col + next > columns) {
    ++p.row;
    p.col = 0;
  }
  return p;
}

std::string GroupThousands(int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n);
  std::string out = n < 0 ? "-" : "";
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string WrapLine(std::string_view text, int width, std::string_view first_indent,
                     std::string_view rest_indent) {
  std::string out(first_indent);
  if (width <= 0) {
    out += text;
    out += '\n';
    return out;
  }
  int col = DisplayWidth(first_indent);
  const int rest_width = DisplayWidth(rest_indent);
  bool line_has_word = false;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t space = text.find(' ', pos);
    if (space == std::string_view::npos) space = text.size();
    std::string_view word = text.substr(pos, space - pos);
    pos = space + 1;
    int w = DisplayWidth(word);
    if (line_has_word && col + 1 + w > width) {
      out += '\n';
      out += rest_indent;
      col = rest_width;
      line_has_word = false;
    }
    if (line_has_word) {
      out += ' ';
      ++col;
    }
    // A word wider than the room left is split at code point boundaries.
    size_t i = 0;
    while (i < word.size()) {
      if (word[i] == '\x1b') {
        size_t end = SkipEscape(word, i);
        out.append(word.substr(i, end - i));
        i = end;
        continue;
      }
      size_t start = i;
      int cw = CodePointWidth(DecodeUtf8(word, &i));
      if (col + cw > width && col > rest_width) {
        out += '\n';
        out += rest_indent;
        col = rest_width;
      }
      out.append(word.substr(start, i - start));
      col += cw;
    }
    line_has_word = true;
  }
  out += '\n';
  return out;
}

}  // namespace codex::cli
