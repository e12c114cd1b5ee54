// Style: the few terminal text attributes the interactive UI uses (bold,
// dim, italic, underline, colours), emitted as ANSI SGR sequences only when
// colour is enabled; with colour off every function returns its text
// unchanged, so output for NO_COLOR, TERM=dumb or a pipe has no escape codes.
// Also the display-width helpers the line editor and renderer lay text out
// with. Immutable after construction; safe to share between threads.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace codex::cli {

enum class Color { kEnabled, kDisabled };

class Style {
 public:
  explicit Style(Color color) : color_(color == Color::kEnabled) {}

  bool color() const { return color_; }

  std::string Bold(std::string_view s) const { return Wrap(s, "1", "22"); }
  std::string Dim(std::string_view s) const { return Wrap(s, "2", "22"); }
  std::string Italic(std::string_view s) const { return Wrap(s, "3", "23"); }
  std::string Underline(std::string_view s) const { return Wrap(s, "4", "24"); }
  std::string Red(std::string_view s) const { return Wrap(s, "31", "39"); }
  std::string Green(std::string_view s) const { return Wrap(s, "32", "39"); }
  std::string Yellow(std::string_view s) const { return Wrap(s, "33", "39"); }
  std::string Blue(std::string_view s) const { return Wrap(s, "34", "39"); }
  std::string Magenta(std::string_view s) const { return Wrap(s, "35", "39"); }
  std::string Cyan(std::string_view s) const { return Wrap(s, "36", "39"); }

  // A copy that links file references with Codex's file_opener `scheme`
  // ("vscode", "vscode-insiders", "windsurf", "cursor"; "" or "none" = no
  // links); relative paths are taken against `cwd`.
  Style WithFileLinks(std::string scheme, std::string cwd) const;
  bool file_links() const { return !file_scheme_.empty(); }
  // `text` as an OSC 8 hyperlink to SCHEME://file/ABS_PATH[:LINE] (line 0 =
  // none), as Codex's file_opener makes them, when colour is on and a scheme
  // is set; otherwise `text` unchanged. The URI is percent-encoded, so no
  // byte of `path` can end the sequence or start another.
  std::string FileLink(std::string_view path, int line, std::string_view text) const;

 private:
  std::string Wrap(std::string_view s, const char* on, const char* off) const;
  bool color_;
  std::string file_scheme_;
  std::string file_cwd_;
};

// Whether colour should be used for output on `fd`: not when NO_COLOR is set
// (to anything non-empty), TERM is unset or "dumb", or `fd` is not a terminal.
// `env` maps variable names to values (tests pass their own).
Color DetectColor(const std::map<std::string, std::string>& env, bool is_tty);
// The same, reading the process environment and isatty(fd).
Color DetectColor(int fd);

// The index just past the escape sequence starting at s[i] (an ESC byte).
size_t SkipEscape(std::string_view s, size_t i);
// `s` without ANSI escape sequences (CSI, OSC and two-byte ESC sequences).
std::string StripAnsi(std::string_view s);

// Decodes the UTF-8 code point at `s[*pos]`, advancing *pos by its length
// (by one byte for an invalid sequence, which decodes as U+FFFD).
char32_t DecodeUtf8(std::string_view s, size_t* pos);
// The byte length of the code point starting at `pos` (1 for invalid bytes).
size_t Utf8Length(std::string_view s, size_t pos);
// The start of the code point before `pos` (0 when pos is 0).
size_t PrevCodePoint(std::string_view s, size_t pos);

// Columns a code point occupies: 0 for combining marks and controls, 2 for
// East Asian wide and emoji, 1 otherwise.
int CodePointWidth(char32_t c);
// Grapheme clusters (what a user sees as one character): a code point with
// the marks that extend it (combining marks, variation selectors, emoji
// skin-tone modifiers, tags, a keycap), emoji joined by ZWJ, a pair of
// regional indicators (a flag), Hangul jamo sequences. The end of the
// cluster starting at `pos`, and the start of the one ending at `pos`.
size_t NextGrapheme(std::string_view s, size_t pos);
size_t PrevGrapheme(std::string_view s, size_t pos);
// Columns `s` occupies on a terminal, ignoring ANSI escape sequences; a
// grapheme cluster is as wide as its first code point.
int DisplayWidth(std::string_view s);

// Where text lands on a terminal that wraps automatically at `columns`: a
// grapheme cluster wider than what is left of the row moves whole to the next
// row (a wide character never straddles the edge; the cell it skips stays
// blank), as xterm, VTE and tmux do. `s` is one hard line (no line breaks;
// ANSI escapes are skipped) drawn from a row's first column.
struct WrapPoint {
  int row = 0;
  int col = 0;
};
// The position after `s`. col == columns: the row is full and the terminal
// waits to wrap (the next character starts the next row).
WrapPoint WrapEnd(std::string_view s, int columns);
// The rows `s` occupies (at least 1).
int WrappedRows(std::string_view s, int columns);
// Where the cursor shows when it is before byte `pos` of `s`: on the cell the
// character there is drawn in (the next row's first when it does not fit on
// this one; at the end, where a typed character would go).
WrapPoint WrapCursor(std::string_view s, size_t pos, int columns);

// 1234567 -> "1,234,567".
std::string GroupThousands(int64_t n);

// Word-wraps one line of (possibly styled) text to `width` columns. The first
// output line starts with `first_indent`, later ones with `rest_indent`
// (both counted in the width). Words longer than a line are split. Every
// output line ends with "\n". width <= 0 means no wrapping.
std::string WrapLine(std::string_view text, int width, std::string_view first_indent,
                     std::string_view rest_indent);

}  // namespace codex::cli
