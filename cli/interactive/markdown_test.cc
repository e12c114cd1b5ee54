#include "cli/interactive/markdown.h"

#include <catch2/catch.hpp>

#include "cli/terminal_text.h"

namespace codex::cli {
namespace {

const Style kPlain(Color::kDisabled);
const Style kColor(Color::kEnabled);

TEST_CASE("plain rendering keeps structure and writes no escape codes") {
  std::string out = RenderMarkdown(
      "# Title\n\nSome **bold** and *italic* and `code`.\n\n- one\n- two\n  - nested\n\n1. first\n"
      "\n> quoted\n\n```cpp\nint x = 1;\n```\n---\n",
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
        "\n"
        "1. first\n"
        "\n"
        "│ quoted\n"
        "\n"
        "    cpp\n"
        "    int x = 1;\n"
        "\n"
        "────────────────────────────────────────\n");
}

TEST_CASE("colour rendering styles headings, bold, italic, code") {
  CHECK(RenderMarkdown("## Heading\n", kColor, 0) == "\x1b[1mHeading\x1b[22m\n");
  CHECK(RenderMarkdown("a **b** c\n", kColor, 0) == "a \x1b[1mb\x1b[22m c\n");
  CHECK(RenderMarkdown("*it*", kColor, 0) == "\x1b[3mit\x1b[23m\n");
  CHECK(RenderMarkdown("`x`", kColor, 0) == "\x1b[36mx\x1b[39m\n");
  // Code blocks are coloured and their Markdown is left alone.
  CHECK(RenderMarkdown("```\n**not bold**\n```\n", kColor, 0) ==
        "    \x1b[33m**not bold**\x1b[39m\n");
}

TEST_CASE("inline edge cases") {
  CHECK(RenderMarkdown("snake_case_name stays", kPlain, 0) == "snake_case_name stays\n");
  CHECK(RenderMarkdown("2 * 3 * 4", kPlain, 0) == "2 * 3 * 4\n");
  CHECK(RenderMarkdown("\\*literal\\*", kPlain, 0) == "*literal*\n");
  CHECK(RenderMarkdown("unclosed **bold", kPlain, 0) == "unclosed **bold\n");
  CHECK(RenderMarkdown("see [docs](https://x.y/z)", kPlain, 0) == "see docs (https://x.y/z)\n");
  CHECK(RenderMarkdown("go to https://x.y/z now", kPlain, 0) == "go to https://x.y/z now\n");
  CHECK(RenderMarkdown("__b__ and _i_ and ~~gone~~", kPlain, 0) == "b and i and ~~gone~~\n");
  CHECK(RenderMarkdown("``a ` b``", kPlain, 0) == "`a ` b`\n");
  CHECK(RenderMarkdown("a &amp; b &lt;c&gt; &#233;", kPlain, 0) == "a & b <c> é\n");
  CHECK(RenderMarkdown("<tag> stays", kPlain, 0) == "<tag> stays\n");
}

TEST_CASE("nested lists keep their depth, numbering and hanging indents") {
  CHECK(RenderMarkdown("1. one\n   - a\n     1. deep\n   - b\n2. two\n", kPlain, 0) ==
        "1. one\n"
        "   • a\n"
        "     1. deep\n"
        "   • b\n"
        "2. two\n");
  CHECK(RenderMarkdown("3. three\n4. four\n", kPlain, 0) == "3. three\n4. four\n");
  // A loose list reads like a tight one; a second paragraph of an item is indented.
  CHECK(RenderMarkdown("- a\n\n- b\n\n  more b\n", kPlain, 0) == "• a\n• b\n  more b\n");
  // A code block inside an item sits under the item's text.
  CHECK(RenderMarkdown("- run:\n\n  ```\n  make\n  ```\n", kPlain, 0) == "• run:\n      make\n");
}

TEST_CASE("streaming returns lines once later text cannot change them") {
  MarkdownRenderer r(kPlain, 0);
  CHECK(r.Feed("# Hea") == "");
  CHECK(r.Feed("ding\n- it") == "# Heading\n");
  CHECK(r.Feed("em") == "");
  CHECK(r.Feed("\n```\ncode") == "\n• item\n\n");
  CHECK(r.Finish() == "    code\n");
  // Finish resets the code block state.
  CHECK(r.Feed("plain\n") == "plain\n");
  CHECK(r.Finish() == "");
}

TEST_CASE("streaming: a long paragraph shows its wrapped lines as they fill") {
  MarkdownRenderer r(kPlain, 10);
  std::string shown;
  shown += r.Feed("aaaa bbbb ");
  CHECK(shown == "");
  shown += r.Feed("cccc dddd ");
  CHECK(shown == "aaaa bbbb\n");  // the first screen line is complete
  shown += r.Feed("eeee ff");
  CHECK(shown == "aaaa bbbb\ncccc dddd\n");  // "eeee ff…" may still move "ff…" down
  shown += r.Feed("ff gg");
  CHECK(shown == "aaaa bbbb\ncccc dddd\neeee ffff\n");  // "gg" cannot fit after it
  shown += r.Feed("gg\n");
  CHECK(shown == "aaaa bbbb\ncccc dddd\neeee ffff\ngggg\n");
  CHECK(r.Finish() == "");
  // Open emphasis holds the partial line back: it will render differently.
  MarkdownRenderer e(kPlain, 10);
  CHECK(e.Feed("xx **aaaa bbbb cccc dddd ") == "");
  CHECK(e.Feed("eeee** tail\n") == "xx aaaa\nbbbb cccc\ndddd eeee\ntail\n");
}

TEST_CASE("streaming holds a table back until it ends; the same lines as a whole render") {
  const std::string doc =
      "Intro\n\n| name | value |\n|---|---:|\n| a | 1 |\n| longer name | 12345 |\n\nAfter.\n";
  MarkdownRenderer r(kPlain, 60);
  std::string streamed;
  for (size_t i = 0; i < doc.size(); i += 3) {
    std::string piece = r.Feed(doc.substr(i, 3));
    // No table line may appear before the table is complete.
    if (streamed.find("Intro") != std::string::npos && piece.find("name") != std::string::npos) {
      CHECK(streamed.find("After") == std::string::npos);
      CHECK(piece.find("longer name") != std::string::npos);
    }
    streamed += piece;
  }
  streamed += r.Finish();
  CHECK(streamed == RenderMarkdown(doc, kPlain, 60));
  CHECK(streamed ==
        "Intro\n"
        "\n"
        "name        │ value\n"
        "────────────┼──────\n"
        "a           │     1\n"
        "longer name │ 12345\n"
        "\n"
        "After.\n");
}

TEST_CASE("a table wider than the screen wraps its cells") {
  std::string out = RenderMarkdown(
      "| key | description |\n|---|---|\n| k | a rather long description of it |\n", kPlain, 24);
  CHECK(out ==
        "key │ description\n"
        "────┼───────────────────\n"
        "k   │ a rather long\n"
        "    │ description of it\n");
  for (const auto& line : RenderMarkdownLines("| a | b |\n|-|-|\n| x | y |\n", kPlain, 24)) {
    CHECK(DisplayWidth(line) <= 24);
  }
}

TEST_CASE("streaming any document gives the same lines as rendering it whole") {
  const char* docs[] = {
      "# T\n\nSome *text* that is long enough to wrap a few times over.\n\n- a\n  - b\n\n```\nx\n"
      "```\n",
      "> quote line one\n> quote line two\n\n1. x\n2. y\n\nA paragraph.\nWith a break.\n",
      "plain words without end and more plain words and more and more and more words",
  };
  for (const char* doc : docs) {
    for (size_t step : {1, 2, 5, 13}) {
      MarkdownRenderer r(kPlain, 20);
      std::string streamed;
      std::string_view d(doc);
      for (size_t i = 0; i < d.size(); i += step) streamed += r.Feed(d.substr(i, step));
      streamed += r.Finish();
      INFO(doc << " step " << step);
      CHECK(streamed == RenderMarkdown(doc, kPlain, 20));
    }
  }
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

TEST_CASE("task lists and tilde fences") {
  CHECK(RenderMarkdown("- [ ] todo\n- [x] done\n", kPlain, 0) == "☐ todo\n☑ done\n");
  CHECK(RenderMarkdown("~~~\n```\n~~~\n", kPlain, 0) == "    ```\n");
}

TEST_CASE("colour detection honours NO_COLOR, TERM and tty") {
  CHECK(DetectColor({{"TERM", "xterm-256color"}}, true) == Color::kEnabled);
  CHECK(DetectColor({{"TERM", "xterm"}, {"NO_COLOR", "1"}}, true) == Color::kDisabled);
  CHECK(DetectColor({{"TERM", "xterm"}, {"NO_COLOR", ""}}, true) == Color::kEnabled);
  CHECK(DetectColor({{"TERM", "dumb"}}, true) == Color::kDisabled);
  CHECK(DetectColor({}, true) == Color::kDisabled);
  CHECK(DetectColor({{"TERM", "xterm"}}, false) == Color::kDisabled);
}

// How many times `needle` occurs in `s`.
size_t Occurrences(const std::string& s, std::string_view needle) {
  size_t n = 0;
  for (size_t at = s.find(needle); at != std::string::npos; at = s.find(needle, at + 1)) ++n;
  return n;
}

TEST_CASE("file_opener: local file links and Codex citations become OSC 8 hyperlinks") {
  const std::string md =
      "See [main.rs](src/main.rs:12), [abs](/opt/lib/x.h#L7) and \u3010F:/abs/x.py\u2020L42-L50"
      "\u3011; the [site](https://example.com) stays a URL.\n";
  const std::string out = RenderMarkdown(md, kColor.WithFileLinks("vscode", "/work/proj"), 0);
  CHECK_THAT(out, Catch::Contains("\x1b]8;;vscode://file/work/proj/src/main.rs:12\x1b\\"));
  CHECK_THAT(out, Catch::Contains("\x1b]8;;vscode://file/opt/lib/x.h:7\x1b\\"));
  CHECK_THAT(out, Catch::Contains("\x1b]8;;vscode://file/abs/x.py:42\x1b\\"));
  CHECK(StripAnsi(out).find("x.py:42;") != std::string::npos);  // the citation's text
  // The text shown is as without file_opener (Codex shows the target after the label).
  CHECK(StripAnsi(out).find("See main.rs (src/main.rs:12), abs (/opt/lib/x.h#L7) and") !=
        std::string::npos);
  CHECK(StripAnsi(out).find("(https://example.com)") != std::string::npos);
  CHECK(Occurrences(out, "\x1b]8;;") == 6);  // three links, each opened and closed
  // Each editor's scheme.
  for (const char* scheme : {"vscode-insiders", "windsurf", "cursor"}) {
    INFO(scheme);
    CHECK_THAT(
        RenderMarkdown(md, kColor.WithFileLinks(scheme, "/w"), 0),
        Catch::Contains("\x1b]8;;" + std::string(scheme) + "://file/w/src/main.rs:12\x1b\\"));
  }
  // "none", and no colour (NO_COLOR, TERM=dumb, not a tty): no hyperlink at all.
  const std::string none = RenderMarkdown(md, kColor.WithFileLinks("none", "/w"), 0);
  CHECK(none.find("\x1b]8") == std::string::npos);
  CHECK(none.find("\u3010F:/abs/x.py") != std::string::npos);  // citations stay as written
  const std::string plain = RenderMarkdown(md, kPlain.WithFileLinks("vscode", "/w"), 0);
  CHECK(plain.find('\x1b') == std::string::npos);
  // Without the setting (the default Style) nothing changes either.
  CHECK(RenderMarkdown(md, kColor, 0).find("\x1b]8") == std::string::npos);
}

TEST_CASE("file_opener: a model cannot plant its own OSC 8 or break out of ours") {
  const Style style = kColor.WithFileLinks("vscode", "/w");
  // Model text as the interactive UI receives it: through the terminal-safe rule.
  const std::string model =
      "\x1b]8;;https://evil.example/\x07click\x1b]8;;\x07 and [f](src/a.rs:3)\n";
  const std::string out = RenderMarkdown(NeutralizeControls(model), style, 0);
  CHECK(out.find("evil.example/\x07") == std::string::npos);
  CHECK(out.find('\x07') == std::string::npos);
  CHECK(Occurrences(out, "\x1b]8;;") == 2);  // only our link to src/a.rs, opened and closed
  CHECK_THAT(out, Catch::Contains("\x1b]8;;vscode://file/w/src/a.rs:3\x1b\\"));
  // A path with escape bytes, a backslash or a space is percent-encoded in the URI.
  CHECK(style.FileLink("/a\x1b\\b\x07"
                       "c d",
                       3, "t") == "\x1b]8;;vscode://file/a%1B%5Cb%07c%20d:3\x1b\\t\x1b]8;;\x1b\\");
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

namespace codex::cli {
namespace {

TEST_CASE("code blocks: coloured by the fence's language; unknown languages keep one colour") {
  std::string cpp = RenderMarkdown("```cpp\nint main() { return 0; }\n```\n", kColor, 0);
  // Source-highlight's colours: the type and keyword differ from the rest.
  CHECK(cpp.find("\x1b[32mint\x1b[m") != std::string::npos);
  CHECK(cpp.find("\x1b[01;34mreturn\x1b[m") != std::string::npos);
  CHECK(StripAnsi(cpp) == "    cpp\n    int main() { return 0; }\n");
  std::string py = RenderMarkdown("```python\ndef f():\n    return 'x'  # c\n```\n", kColor, 0);
  CHECK(py.find("\x1b[01;34mdef\x1b[m") != std::string::npos);
  CHECK(StripAnsi(py) == "    python\n    def f():\n        return 'x'  # c\n");
  std::string unknown = RenderMarkdown("```nosuchlang\nint x;\n```\n", kColor, 0);
  CHECK(unknown.find("\x1b[33mint x;\x1b[39m") != std::string::npos);
  // NO_COLOR: no escape codes at all.
  CHECK(RenderMarkdown("```cpp\nint x;\n```\n", kPlain, 0).find('\x1b') == std::string::npos);
}

TEST_CASE("code blocks: a long line wraps inside the block, keeping its indent") {
  std::string line = "    call(alpha, beta, gamma, delta, epsilon, zeta, eta, theta);";
  std::string out = RenderMarkdown("```\n" + line + "\n```\n", kPlain, 40);
  // The block's 4 columns, then rows of at most 36; continuation rows keep
  // the line's own 4-column indent and never start at column 0.
  // (The first row's trailing blank is dropped, as at every line's end.)
  CHECK(out == "    " + line.substr(0, 35) + "\n" + "    " + "    " + line.substr(36) + "\n");
  // Coloured: each row closes what it opened and the next opens it again.
  std::string coloured = RenderMarkdown("```cpp\n" + line + "\n```\n", kColor, 40);
  for (size_t pos = 0, nl; (nl = coloured.find('\n', pos)) != std::string::npos; pos = nl + 1) {
    std::string row = coloured.substr(pos, nl - pos);
    CHECK(DisplayWidth(row) <= 40);
  }
  const std::string bare = StripAnsi(coloured);
  CHECK(bare.find("    cpp\n    " + line.substr(0, 35)) == 0);
  CHECK(bare.find("\n        " + line.substr(36) + "\n") != std::string::npos);
}

TEST_CASE("Unicode line breaking: CJK breaks between characters; words stay whole") {
  // 20 CJK characters (40 columns) in 30 columns: broken between characters,
  // not pushed whole to the next line and cut by the terminal.
  std::string cjk;
  for (int i = 0; i < 20; ++i) cjk += "漢";
  std::string out = WrapLine("see " + cjk, 30, "", "");
  std::string first = out.substr(0, out.find('\n'));
  CHECK(first.rfind("see 漢", 0) == 0);
  CHECK(DisplayWidth(first) >= 28);
  CHECK(DisplayWidth(first) <= 30);
  // CJK full stop never starts a line.
  std::string stops;
  for (int i = 0; i < 14; ++i) stops += "漢";
  stops += "。";
  std::string w = WrapLine(stops + "漢", 30, "", "");
  CHECK(w.find("\n。") == std::string::npos);
  // Latin words are not split when they fit on a line.
  CHECK(WrapLine("alpha beta gamma delta", 11, "", "") == "alpha beta\ngamma delta\n");
  // Grapheme clusters and widths by utf8proc.
  CHECK(DisplayWidth("👍🏽") == 2);
  CHECK(DisplayWidth("e\xCC\x81") == 1);  // e + combining acute
  CHECK(NextGrapheme("👨‍👩‍👧x", 0) == std::string("👨‍👩‍👧").size());
  CHECK(NextGrapheme("🇫🇷🇩🇪", 0) == std::string("🇫🇷").size());
}

}  // namespace
}  // namespace codex::cli

namespace codex::cli {
namespace {

TEST_CASE("streaming: a new width applies from the next block; printed lines stay") {
  const std::string p1 = "one two three four five six seven eight nine ten";
  const std::string p2 = "eleven twelve thirteen fourteen fifteen sixteen seventeen";
  MarkdownRenderer r(kPlain, 20);
  std::string out = r.Feed(p1 + "\n\n");
  r.SetWidth(80);
  out += r.Feed(p2 + "\n\n- a list\n");
  out += r.Finish();
  // The first paragraph at 20 columns, the rest at 80 (one row each).
  CHECK(out == "one two three four\nfive six seven eight\nnine ten\n\n" + p2 + "\n\n• a list\n");
  // A list is not split at its blank line: its items keep one numbering.
  MarkdownRenderer list(kPlain, 20);
  std::string l = list.Feed("1. first item\n\n");
  list.SetWidth(80);
  l += list.Feed("2. second item\n");
  l += list.Finish();
  CHECK(l.find("2. second item") != std::string::npos);
  CHECK(l.find("1. second item") == std::string::npos);
}

}  // namespace
}  // namespace codex::cli
