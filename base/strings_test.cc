#include "base/strings.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <string>

using namespace codex;

TEST_CASE("Trim removes ASCII whitespace at both ends and nothing else") {
  CHECK(Trim(" \t\r\n\f\vword  x\v\f\n\r\t ") == "word  x");
  CHECK(Trim("") == "");
  CHECK(Trim(" \n ") == "");
  CHECK(TrimLeft("  a ") == "a ");
  CHECK(TrimRight("  a ") == "  a");
  // U+00A0 (no-break space) is not ASCII whitespace: its bytes stay.
  CHECK(Trim("\xC2\xA0x\xC2\xA0") == "\xC2\xA0x\xC2\xA0");
  CHECK(IsAsciiSpace('\v'));
  CHECK_FALSE(IsAsciiSpace('\0'));
}

TEST_CASE("Lower folds A-Z only: UTF-8 bytes and other ASCII pass unchanged") {
  CHECK(Lower("Content-Type: ABC xyz 09_[@]") == "content-type: abc xyz 09_[@]");
  CHECK(Lower("\xC3\x84") == "\xC3\x84");  // Ä is not folded (ASCII rule)
  CHECK(Lower("") == "");
}

TEST_CASE("EscapeMarkup: & < > always, quotes only when asked; nothing else changes") {
  CHECK(EscapeMarkup("a<b>&c \"d\" 'e' é", false) == "a&lt;b&gt;&amp;c \"d\" 'e' é");
  CHECK(EscapeMarkup("a<b>&c \"d\" 'e' é", true) == "a&lt;b&gt;&amp;c &quot;d&quot; &#39;e&#39; é");
  CHECK(EscapeMarkup("</objective>", false) == "&lt;/objective&gt;");  // cannot close a tag
  CHECK(EscapeMarkup("&amp;", false) == "&amp;amp;");                  // escaped once more
  CHECK(EscapeMarkup("", true).empty());
}

TEST_CASE("UTF-8 boundaries never split a sequence") {
  const std::string s = "a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80";  // a é € 😀: 1+2+3+4 bytes
  for (size_t max = 0; max <= s.size() + 2; ++max) {
    INFO("max " << max);
    const std::string_view p = Utf8Prefix(s, max);
    CHECK(p.size() <= max);
    CHECK((p.size() == s.size() || !IsUtf8Continuation(s[p.size()])));
  }
  CHECK(Utf8Prefix(s, 2) == "a");
  CHECK(Utf8Prefix(s, 3) == "a\xC3\xA9");
  CHECK(Utf8Prefix(s, 5) == "a\xC3\xA9");
  CHECK(Utf8Prefix(s, 6) == "a\xC3\xA9\xE2\x82\xAC");
  CHECK(Utf8BoundaryAtOrBefore(s, 100) == s.size());
  CHECK(Utf8BoundaryAtOrBefore(s, 4) == 3);
  CHECK(Utf8BoundaryAtOrAfter(s, 4) == 6);
  CHECK(Utf8BoundaryAtOrAfter(s, 7) == s.size());
  CHECK(Utf8BoundaryAtOrAfter(s, 100) == 100 - 100 + s.size());
}

TEST_CASE("DecodeUtf8 accepts exactly the valid sequences") {
  struct Row {
    std::string bytes;
    size_t len;
    uint32_t cp;
  };
  const Row rows[] = {
      {"A", 1, 0x41},
      {"\xC3\xA9", 2, 0xE9},
      {"\xE2\x82\xAC", 3, 0x20AC},
      {"\xF0\x9F\x98\x80", 4, 0x1F600},
      {"\xF4\x8F\xBF\xBF", 4, 0x10FFFF},
      {"\x80", 0, 0},              // a stray continuation byte
      {"\xC0\xAF", 0, 0},          // overlong '/'
      {"\xE0\x80\xAF", 0, 0},      // overlong, three bytes
      {"\xED\xA0\x80", 0, 0},      // a surrogate (U+D800)
      {"\xF4\x90\x80\x80", 0, 0},  // past U+10FFFF
      {"\xF8\x88\x80\x80\x80", 0, 0},
      {"\xE2\x82", 0, 0},  // cut short
      {"\xC3(", 0, 0},     // not followed by a continuation byte
  };
  for (const Row& row : rows) {
    INFO("bytes " << row.bytes.size());
    uint32_t cp = 0xFFFFFFFF;
    CHECK(DecodeUtf8(row.bytes, 0, &cp) == row.len);
    if (row.len > 0) CHECK(cp == row.cp);
  }
  CHECK(DecodeUtf8("ab", 2) == 0);  // past the end
  CHECK(DecodeUtf8("x\xC3\xA9", 1) == 2);
}

TEST_CASE(
    "SplitLines: a final line without newline counts, the piece after a trailing one does not") {
  using V = std::vector<std::string_view>;
  CHECK(SplitLines("") == V{});
  CHECK(SplitLines("\n") == V{""});
  CHECK(SplitLines("a") == V{"a"});
  CHECK(SplitLines("a\nb") == V{"a", "b"});
  CHECK(SplitLines("a\nb\n") == V{"a", "b"});
  CHECK(SplitLines("a\n\nb") == V{"a", "", "b"});
  CHECK(SplitLines("a\r\nb") == V{"a\r", "b"});
}
