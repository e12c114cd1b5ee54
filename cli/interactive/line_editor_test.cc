#include "cli/interactive/line_editor.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "cli/interactive/style.h"

namespace codex::cli {
namespace {

TEST_CASE("typing, cursor motion and deletion") {
  LineEditor e;
  CHECK(e.Feed("helo").kind == EditorEventKind::kNone);
  CHECK(e.buffer() == "helo");
  CHECK(e.cursor() == 4);
  e.Feed("\x1b[D");  // Left
  e.Feed("l");
  CHECK(e.buffer() == "hello");
  CHECK(e.cursor() == 4);
  e.Feed("\x01");  // Ctrl-A
  CHECK(e.cursor() == 0);
  e.Feed("\x1b[3~");  // Delete
  CHECK(e.buffer() == "ello");
  e.Feed("\x05\x7f");  // Ctrl-E, Backspace
  CHECK(e.buffer() == "ell");
  CHECK(e.cursor() == 3);
  e.Feed("\x1bOH");  // Home (SS3)
  CHECK(e.cursor() == 0);
  e.Feed("\x1b[F");  // End
  CHECK(e.cursor() == 3);
}

TEST_CASE("UTF-8 characters move and delete as one") {
  LineEditor e;
  e.Feed("a\xc3\xa9");  // "aé"
  CHECK(e.cursor() == 3);
  e.Feed("\x1b[D");
  CHECK(e.cursor() == 1);
  e.Feed("\x1b[C\x7f");
  CHECK(e.buffer() == "a");
  // A character split across two reads is inserted once complete.
  e.Feed("\xe6\x97");
  CHECK(e.buffer() == "a");
  e.Feed("\xa5");
  CHECK(e.buffer() == "a日");
}

TEST_CASE("Enter submits; a trailing backslash continues the line") {
  LineEditor e;
  CHECK(e.Feed("first\\").kind == EditorEventKind::kNone);
  CHECK(e.Feed("\r").kind == EditorEventKind::kNone);
  CHECK(e.buffer() == "first\n");
  EditorEvent ev = e.Feed("second\r");
  CHECK(ev.kind == EditorEventKind::kSubmit);
  CHECK(ev.text == "first\nsecond");
  CHECK(e.buffer().empty());
  CHECK(e.cursor() == 0);
}

TEST_CASE("Alt-Enter, Shift-Enter and Ctrl-J insert line breaks") {
  LineEditor e;
  e.Feed("a\x1b\rb");           // Alt-Enter
  e.Feed("\x1b[13;2uc");        // Shift-Enter (kitty)
  e.Feed("\x1b[27;2;13~d\ne");  // Shift-Enter (modifyOtherKeys), Ctrl-J
  CHECK(e.buffer() == "a\nb\nc\nd\ne");
}

TEST_CASE("bracketed paste is inserted verbatim, even across reads") {
  LineEditor e;
  CHECK(e.Feed("x\x1b[200~line1\r\nli").kind == EditorEventKind::kNone);
  CHECK(e.buffer() == "x");
  EditorEvent ev = e.Feed("ne2\rend\x1b[201~");
  CHECK(ev.kind == EditorEventKind::kNone);  // Enter inside a paste does not submit
  CHECK(e.buffer() == "xline1\nline2\nend");
}

TEST_CASE("bytes after a submit wait for the next Feed") {
  LineEditor e;
  EditorEvent ev = e.Feed("one\rtwo\r");
  CHECK(ev.text == "one");
  ev = e.Feed("");
  CHECK(ev.kind == EditorEventKind::kSubmit);
  CHECK(ev.text == "two");
}

TEST_CASE("history: up and down walk entries and keep the draft") {
  LineEditor e({"old"});
  e.Feed("new\r");
  e.Feed("draft");
  e.Feed("\x1b[A");
  CHECK(e.buffer() == "new");
  e.Feed("\x1b[A");
  CHECK(e.buffer() == "old");
  e.Feed("\x1b[A");  // stays at the oldest
  CHECK(e.buffer() == "old");
  e.Feed("\x1b[B\x1b[B");
  CHECK(e.buffer() == "draft");
  CHECK(e.cursor() == 5);
  // Blank and repeated entries are not added.
  e.Feed("\x15new\r   \r");
  CHECK(e.history() == std::vector<std::string>{"old", "new"});
}

TEST_CASE("up and down move between lines of a multi-line buffer first") {
  LineEditor e({"hist"});
  e.Feed("abcdef\nxy");
  e.Feed("\x1b[A");
  CHECK(e.buffer() == "abcdef\nxy");
  CHECK(e.cursor() == 2);  // same column on the line above
  e.Feed("\x1b[B");
  CHECK(e.cursor() == 9);
  e.Feed("\x1b[A\x1b[A");  // from the first line: history
  CHECK(e.buffer() == "hist");
}

TEST_CASE("kill and yank, word motion") {
  LineEditor e;
  e.Feed("foo bar baz");
  e.Feed("\x17");  // Ctrl-W
  CHECK(e.buffer() == "foo bar ");
  e.Feed(
      "\x1b"
      "b");  // Alt-b
  CHECK(e.cursor() == 4);
  e.Feed("\x0b");  // Ctrl-K
  CHECK(e.buffer() == "foo ");
  e.Feed("\x19");  // Ctrl-Y
  CHECK(e.buffer() == "foo bar ");
  e.Feed("\x1b[1;5D");  // Ctrl-Left
  CHECK(e.cursor() == 4);
  e.Feed("\x15");  // Ctrl-U
  CHECK(e.buffer() == "bar ");
  CHECK(e.cursor() == 0);
}

TEST_CASE("Ctrl-C clears, then interrupts; Ctrl-D deletes, then ends") {
  LineEditor e;
  e.Feed("text");
  CHECK(e.Feed("\x03").kind == EditorEventKind::kNone);
  CHECK(e.buffer().empty());
  EditorEvent ev = e.Feed("\x03");
  CHECK(ev.kind == EditorEventKind::kInterrupt);
  CHECK(ev.count == 1);
  CHECK(e.Feed("\x03").count == 2);
  e.Feed("x");
  CHECK(e.Feed("\x7f\x03").count == 1);  // another key resets the count
  e.Feed("ab\x01");
  CHECK(e.Feed("\x04").kind == EditorEventKind::kNone);
  CHECK(e.buffer() == "b");
  e.Feed("\x0b");  // Ctrl-K
  CHECK(e.buffer().empty());
  CHECK(e.Feed("\x04").kind == EditorEventKind::kEof);
}

TEST_CASE("after an interrupt elsewhere, the next Ctrl-C counts as a repeat") {
  LineEditor e;
  e.NoteInterrupt();
  CHECK(e.Feed("\x03").count == 2);
  e.NoteInterrupt();
  e.Feed("x\x7f");  // any key in between starts over
  CHECK(e.Feed("\x03").count == 1);
}

TEST_CASE("a lone ESC is resolved by Flush") {
  LineEditor e;
  e.Feed("a\x1b");
  CHECK(e.has_pending_input());
  CHECK(e.Flush().kind == EditorEventKind::kEscape);  // reported: the session interrupts with it
  CHECK(!e.has_pending_input());
  e.Feed("b");
  CHECK(e.buffer() == "ab");
}

TEST_CASE("Tab completes slash commands") {
  LineEditor e;
  e.SetCompletions({"/compact", "/copy", "/status"});
  e.Feed("/st\t");
  CHECK(e.buffer() == "/status ");
  e.Feed("\x15/c\t");
  CHECK(e.buffer() == "/co");
  e.Feed("m\t");
  CHECK(e.buffer() == "/compact ");
}

TEST_CASE("layout wraps and places the cursor") {
  struct Row {
    std::string what;
    std::string buffer;
    size_t cursor;
    int columns;
    std::string text;
    int rows, cursor_row, cursor_col, end_row, end_col;
  };
  const std::vector<Row> table = {
      {"one short row", "abc", 3, 80, "> abc", 1, 0, 5, 0, 5},
      // "> abc" "defgh" / "  xy"
      {"wrapped, then a second line", "abcdefgh\nxy", 1, 5, "> abcdefgh\r\n  xy", 3, 0, 3, 2, 4},
      // Exactly filling the last row moves to the next one.
      {"exactly full", "abc", 3, 5, "> abc\r\n", 2, 1, 0, 1, 0},
      {"a tab as four spaces, a control byte as ^A", "a\tb\x01", 4, 80, "> a    b^A", 1, 0, 10, 0,
       10},
  };
  for (const Row& row : table) {
    INFO(row.what);
    const EditorLayout l = LayoutEditor("> ", "  ", row.buffer, row.cursor, row.columns);
    CHECK(l.text == row.text);
    CHECK(l.rows == row.rows);
    CHECK(l.cursor_row == row.cursor_row);
    CHECK(l.cursor_col == row.cursor_col);
    CHECK(l.end_row == row.end_row);
    CHECK(l.end_col == row.end_col);
  }
}

}  // namespace
}  // namespace codex::cli

namespace codex::cli {
namespace {

TEST_CASE("grapheme clusters edit as one character") {
  const std::string thumbs = "\xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD";  // 👍🏽
  const std::string family =
      "\xF0\x9F\x91\xA8\xE2\x80\x8D\xF0\x9F\x91\xA9\xE2\x80\x8D\xF0\x9F\x91\xA7";  // 👨‍👩‍👧
  const std::string flag = "\xF0\x9F\x87\xAB\xF0\x9F\x87\xB7";                     // 🇫🇷
  const std::string accent = "e\xCC\x81";  // é (decomposed)
  LineEditor e;
  e.Feed("a" + thumbs);
  e.Feed("\x7f");  // Backspace removes the thumb and its skin tone together
  CHECK(e.buffer() == "a");
  e.Feed(family + flag + accent + "z");
  e.Feed("\x1b[D\x1b[D");  // Left twice: over "z" and over "é"
  CHECK(e.cursor() == 1 + family.size() + flag.size());
  e.Feed("\x1b[D\x7f");  // Left over the flag, Backspace removes the whole family
  CHECK(e.buffer() == "a" + flag + accent + "z");
  e.Feed("\x1b[3~");  // Delete removes both regional indicators
  CHECK(e.buffer() == "a" + accent + "z");
  CHECK(DisplayWidth(thumbs) == 2);
  CHECK(DisplayWidth(family) == 2);
  CHECK(DisplayWidth(flag) == 2);
  CHECK(DisplayWidth("日本" + accent) == 5);
  // The cursor column counts clusters by their width.
  EditorLayout l = LayoutEditor("> ", "  ", thumbs + "x", thumbs.size(), 80);
  CHECK(l.cursor_col == 4);
}

}  // namespace
}  // namespace codex::cli
