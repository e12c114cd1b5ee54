#include "cli/interactive/markdown.h"

#include <catch2/catch.hpp>

namespace codex::cli {
namespace {

const Style kPlain(Color::kDisabled);
const Style kColor(Color::kEnabled);

TEST_CASE("plain rendering keeps structure and writes no escape codes") {
  std::string out = RenderMarkdown(
      "# Title\n\nSome **bold** and *italic* and `code`.\n\n- one\n- two\n  - nested\n1. first\n"
      "> quoted\n\n```cpp\nint x = 1;\n```\n---\n",
      kPlain, 0);
  CHECK(out.find('\x1b') == std::string::npos);
  CHECK(out ==
        "# Title\n"
        "\n"
        "Some bold and italic and `code`.\n"
        "\n"
        "• one\n"
        "• two\n"
        "  ◦ nested\n"
        "1. first\n"
        "│ quoted\n"
        "\n"
        "    cpp\n"
        "    int x = 1;\n"
        "────────────────────────────────────────\n");
}

TEST_CASE("colour rendering styles headings, bold, italic, code") {
  CHECK(RenderMarkdown("## Heading\n", kColor, 0) == "\x1b[1mHeading\x1b[22m\n");
  CHECK(RenderInline("a **b** c", kColor) == "a \x1b[1mb\x1b[22m c");
  CHECK(RenderInline("*it*", kColor) == "\x1b[3mit\x1b[23m");
  CHECK(RenderInline("`x`", kColor) == "\x1b[36mx\x1b[39m");
  // Code blocks are coloured and their Markdown is left alone.
  CHECK(RenderMarkdown("```\n**not bold**\n```\n", kColor, 0) ==
        "    \x1b[33m**not bold**\x1b[39m\n");
}

TEST_CASE("inline edge cases") {
  CHECK(RenderInline("snake_case_name stays", kPlain) == "snake_case_name stays");
  CHECK(RenderInline("2 * 3 * 4", kPlain) == "2 * 3 * 4");
  CHECK(RenderInline("\\*literal\\*", kPlain) == "*literal*");
  CHECK(RenderInline("unclosed **bold", kPlain) == "unclosed **bold");
  CHECK(RenderInline("see [docs](https://x.y/z)", kPlain) == "see docs (https://x.y/z)");
  CHECK(RenderInline("__b__ and _i_", kPlain) == "b and i");
  CHECK(RenderInline("``a ` b``", kPlain) == "``a ` b``");
}

TEST_CASE("streaming renders a line only once it is complete") {
  MarkdownRenderer r(kPlain, 0);
  CHECK(r.Feed("# Hea") == "");
  CHECK(r.Feed("ding\n- it") == "# Heading\n");
  CHECK(r.Feed("em") == "");
  CHECK(r.Feed("\n```\ncode") == "• item\n");
  CHECK(r.Finish() == "    code\n");
  // Finish resets the code block state.
  CHECK(r.Feed("plain\n") == "plain\n");
}

TEST_CASE("paragraphs and list items wrap with a hanging indent") {
  CHECK(RenderMarkdown("aaa bbb ccc ddd\n", kPlain, 8) == "aaa bbb\nccc ddd\n");
  CHECK(RenderMarkdown("- aaa bbb ccc\n", kPlain, 8) == "• aaa\n  bbb\n  ccc\n");
  CHECK(RenderMarkdown("10. aaa bbb\n", kPlain, 9) == "10. aaa\n    bbb\n");
  // Code is never wrapped.
  CHECK(RenderMarkdown("```\naaaa bbbb cccc\n```\n", kPlain, 8) == "    aaaa bbbb cccc\n");
  // Escape codes do not count towards the width.
  std::string colored = RenderMarkdown("**aaa** bbb\n", kColor, 7);
  CHECK(StripAnsi(colored) == "aaa bbb\n");
}

TEST_CASE("task lists, tildes fences and tables") {
  CHECK(RenderMarkdown("- [ ] todo\n- [x] done\n", kPlain, 0) == "☐ todo\n☑ done\n");
  CHECK(RenderMarkdown("~~~\n```\n~~~\n", kPlain, 0) == "    ```\n");
  CHECK(RenderMarkdown("| a | b |\n|---|---|\n", kPlain, 0) == "| a | b |\n|---|---|\n");
}

TEST_CASE("colour detection honours NO_COLOR, TERM and tty") {
  CHECK(DetectColor({{"TERM", "xterm-256color"}}, true) == Color::kEnabled);
  CHECK(DetectColor({{"TERM", "xterm"}, {"NO_COLOR", "1"}}, true) == Color::kDisabled);
  CHECK(DetectColor({{"TERM", "xterm"}, {"NO_COLOR", ""}}, true) == Color::kEnabled);
  CHECK(DetectColor({{"TERM", "dumb"}}, true) == Color::kDisabled);
  CHECK(DetectColor({}, true) == Color::kDisabled);
  CHECK(DetectColor({{"TERM", "xterm"}}, false) == Color::kDisabled);
}

TEST_CASE("thousands are grouped") {
  CHECK(GroupThousands(0) == "0");
  CHECK(GroupThousands(999) == "999");
  CHECK(GroupThousands(1000) == "1,000");
  CHECK(GroupThousands(-1234567) == "-1,234,567");
}

TEST_CASE("display width and ANSI stripping") {
  CHECK(DisplayWidth("abc") == 3);
  CHECK(DisplayWidth("\x1b[1mabc\x1b[22m") == 3);
  CHECK(DisplayWidth("日本") == 4);
  CHECK(DisplayWidth("e\xcc\x81") == 1);  // e + combining acute
  CHECK(StripAnsi("\x1b[31mred\x1b[39m \x1b]0;title\a!") == "red !");
}

}  // namespace
}  // namespace codex::cli
