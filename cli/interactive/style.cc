#include "cli/interactive/style.h"

#include <unistd.h>
#include <utf8proc.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
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

Style Style::WithFileLinks(std::string scheme, std::string cwd) const {
  Style copy = *this;
  copy.file_scheme_ = scheme == "none" ? "" : std::move(scheme);
  copy.file_cwd_ = std::move(cwd);
  return copy;
}

std::string Style::FileLink(std::string_view path, int line, std::string_view text) const {
  if (!color_ || file_scheme_.empty() || path.empty()) return std::string(text);
  std::string abs(path);
  if (abs.front() != '/' && !file_cwd_.empty()) {
    abs = file_cwd_ + (file_cwd_.back() == '/' ? "" : "/") + abs;
  }
  std::string uri = file_scheme_ + "://file";
  static constexpr char kHex[] = "0123456789ABCDEF";
  for (unsigned char c : abs) {
    if (std::isalnum(c) || (c != 0 && std::strchr("/-._~+,=@", c) != nullptr)) {
      uri += static_cast<char>(c);
    } else {
      uri += '%';
      uri += kHex[c >> 4];
      uri += kHex[c & 15];
    }
  }
  if (line > 0) uri += ":" + std::to_string(line);
  return "\x1b]8;;" + uri + "\x1b\\" + std::string(text) + "\x1b]8;;\x1b\\";
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

// Widths and grapheme clusters come from utf8proc (Debian libutf8proc-dev),
// which follows the Unicode tables of its release (East Asian Width, emoji
// presentation, UAX #29 extended grapheme clusters) rather than hand-kept
// ranges here.
int CodePointWidth(char32_t c) {
  if (c < 0x20 || (c >= 0x7f && c < 0xa0)) return 0;
  if (c > 0x10ffff) return 1;
  const auto cp = static_cast<utf8proc_int32_t>(c);
  // Emoji modifiers (skin tones) and tags only ever extend a cluster.
  if ((c >= 0x1f3fb && c <= 0x1f3ff) || (c >= 0xe0020 && c <= 0xe007f)) return 0;
  // Regional indicators are East Asian Width "N" (utf8proc: 1), but a pair
  // is a flag, which terminals (tmux, VTE, kitty) draw two columns wide.
  if (c >= 0x1f1e6 && c <= 0x1f1ff) return 2;
  const int width = utf8proc_charwidth(cp);
  if (width == 0 && utf8proc_category(cp) == UTF8PROC_CATEGORY_CO) return 1;  // private use
  return width;
}

size_t NextGrapheme(std::string_view s, size_t pos) {
  if (pos >= s.size()) return s.size();
  size_t i = pos;
  char32_t prev = DecodeUtf8(s, &i);
  utf8proc_int32_t state = 0;
  while (i < s.size()) {
    size_t next = i;
    char32_t c = DecodeUtf8(s, &next);
    if (utf8proc_grapheme_break_stateful(static_cast<utf8proc_int32_t>(prev),
                                         static_cast<utf8proc_int32_t>(c), &state)) {
      break;
    }
    prev = c;
    i = next;
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

namespace {

// Whether a line may break before and after the cluster starting with `c`
// without a space (UAX #14's ideographic classes: CJK ideographs, kana,
// Hangul syllables, fullwidth forms), from utf8proc's width and category.
bool BreaksAround(char32_t c) {
  if (c < 0x1100 || CodePointWidth(c) != 2) return false;
  const auto category = utf8proc_category(static_cast<utf8proc_int32_t>(c));
  return category == UTF8PROC_CATEGORY_LO || category == UTF8PROC_CATEGORY_LM;
}

// Punctuation that must not start a line (closing marks, CJK full stops and
// commas): it stays with the cluster before it.
bool NoBreakBefore(char32_t c) {
  const auto category = utf8proc_category(static_cast<utf8proc_int32_t>(c));
  return category == UTF8PROC_CATEGORY_PE || category == UTF8PROC_CATEGORY_PF ||
         (category == UTF8PROC_CATEGORY_PO && c >= 0x3000);
}

// One unit the wrapper does not split unless it is wider than a line: a
// space-separated word, or one ideographic cluster (with the punctuation
// that cannot start a line after it).
struct WrapUnit {
  std::string_view text;
  bool space_before = false;
};

std::vector<WrapUnit> WrapUnits(std::string_view text) {
  std::vector<WrapUnit> units;
  bool space = false;
  size_t i = 0;
  size_t word = std::string_view::npos;  // start of the word being read
  auto close_word = [&](size_t end) {
    if (word != std::string_view::npos && end > word) {
      units.push_back({text.substr(word, end - word), space});
      space = false;
    }
    word = std::string_view::npos;
  };
  while (i < text.size()) {
    if (text[i] == ' ') {
      close_word(i);
      space = true;
      ++i;
      continue;
    }
    if (text[i] == '\x1b') {
      if (word == std::string_view::npos) word = i;
      i = SkipEscape(text, i);
      continue;
    }
    size_t probe = i;
    const char32_t c = DecodeUtf8(text, &probe);
    size_t next = NextGrapheme(text, i);
    if (BreaksAround(c)) {
      close_word(i);
      // Closing punctuation and escapes after it stay with it.
      while (next < text.size()) {
        if (text[next] == '\x1b') {
          next = SkipEscape(text, next);
          continue;
        }
        size_t q = next;
        if (!NoBreakBefore(DecodeUtf8(text, &q))) break;
        next = NextGrapheme(text, next);
      }
      units.push_back({text.substr(i, next - i), space});
      space = false;
    } else if (word == std::string_view::npos) {
      word = i;
    }
    i = next;
  }
  close_word(text.size());
  return units;
}

}  // namespace

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
  for (const WrapUnit& unit : WrapUnits(text)) {
    const std::string_view word = unit.text;
    const int gap = line_has_word && unit.space_before ? 1 : 0;
    const int w = DisplayWidth(word);
    if (line_has_word && col + gap + w > width) {
      out += '\n';
      out += rest_indent;
      col = rest_width;
      line_has_word = false;
    } else if (gap > 0) {
      out += ' ';
      ++col;
    }
    // A word wider than the room left is split between grapheme clusters.
    size_t i = 0;
    while (i < word.size()) {
      if (word[i] == '\x1b') {
        size_t end = SkipEscape(word, i);
        out.append(word.substr(i, end - i));
        i = end;
        continue;
      }
      size_t start = i;
      size_t probe = i;
      int cw = CodePointWidth(DecodeUtf8(word, &probe));
      i = std::max(probe, NextGrapheme(word, start));
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
