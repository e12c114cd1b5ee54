#include "cli/interactive/drawn_lines.h"

#include <catch2/catch.hpp>

#include "cli/interactive/line_editor.h"
#include "cli/interactive/style.h"

namespace codex::cli {
namespace {

TEST_CASE("autowrap: a wide character that does not fit starts the next row") {
  // 9 columns: "abcdefgh" leaves one cell, too narrow for 日 (2).
  WrapPoint end = WrapEnd("abcdefgh日", 9);
  CHECK(end.row == 1);
  CHECK(end.col == 2);
  CHECK(WrappedRows("abcdefgh日", 9) == 2);
  CHECK(WrappedRows("abcdefghi", 9) == 1);  // exactly full: one row, waiting to wrap
  CHECK(WrapEnd("abcdefghi", 9).col == 9);
  CHECK(WrappedRows("abcdefghij", 9) == 2);
  CHECK(WrappedRows("", 9) == 1);
  CHECK(WrappedRows("\x1b[1mabc\x1b[22m", 3) == 1);  // escapes take no cells
  // The cursor before 日 shows where 日 is drawn: the next row.
  WrapPoint c = WrapCursor("abcdefgh日", 8, 9);
  CHECK(c.row == 1);
  CHECK(c.col == 0);
  // At the end of a full row: where a typed character would go.
  c = WrapCursor("abcdefghi", 9, 9);
  CHECK(c.row == 1);
  CHECK(c.col == 0);
  c = WrapCursor("abcd", 2, 9);
  CHECK(c.row == 0);
  CHECK(c.col == 2);
}

TEST_CASE("the editor's layout wraps CJK and emoji at the edge as the terminal does") {
  // "> " + 3 × 日 = 8 columns of 9; the fourth 日 goes to the second row.
  const std::string text = "日日日日x";
  EditorLayout l = LayoutEditor("> ", "  ", text, 9, 9);  // cursor before the 4th 日
  CHECK(l.cursor_row == 1);
  CHECK(l.cursor_col == 0);
  CHECK(l.end_row == 1);
  CHECK(l.end_col == 3);
  CHECK(l.rows == 2);
  CHECK(l.columns == 9);
  CHECK(l.text.substr(l.cursor_offset, 3) == "日");
  const std::string family =
      "\xF0\x9F\x91\xA8\xE2\x80\x8D\xF0\x9F\x91\xA9\xE2\x80\x8D\xF0\x9F\x91\xA7";  // 👨‍👩‍👧
  l = LayoutEditor("> ", "  ", "abcdef" + family, 6, 9);
  CHECK(l.cursor_row == 1);  // the family (2 wide) does not fit after 8 columns
  CHECK(l.cursor_col == 0);
  CHECK(l.rows == 2);
  // The second line of a multi-line buffer, cursor in its middle.
  l = LayoutEditor("> ", "  ", "one\n0123456789abcdef", 10, 8);
  CHECK(l.cursor_row == 2);  // "  012345" | "6789abcd" | "ef"
  CHECK(l.cursor_col == 0);
  CHECK(l.text.substr(l.cursor_offset, 1) == "6");
}

TEST_CASE("a drawing's top is found again after the terminal re-wrapped it") {
  DrawnLines d;
  CHECK(d.RowsAboveCursor(80, true) == 0);
  // Two hard lines above the cursor's: 30 and 10 wide; the cursor at column
  // 25 of a 50-wide line.
  std::string a(30, 'a'), b(10, 'b'), c(50, 'c');
  d.Record(a + "\r\n" + b + "\r\n" + c, a.size() + 2 + b.size() + 2 + 25, 80);
  CHECK(d.RowsAboveCursor(80, true) == 2);
  // Narrowed to 20: 30 → 2 rows, 10 → 1, the cursor on the second row of its line.
  CHECK(d.RowsAboveCursor(20, true) == 4);
  // A terminal that does not re-wrap kept the rows as drawn.
  CHECK(d.RowsAboveCursor(20, false) == 2);
  // Widened, on a drawing made narrow: the wrapped lines join again.
  d.Record(a + "\r\n" + c, a.size() + 2 + 45, 20);
  CHECK(d.RowsAboveCursor(20, true) == 2 + 2);
  CHECK(d.RowsAboveCursor(100, true) == 1);
  // The spinner's line changes in place.
  d.Record("spin\r\n> text", 6 + 6, 80);
  d.ReplaceLine(0, std::string(100, 's'));
  CHECK(d.RowsAboveCursor(50, true) == 2);
  // The cursor at the end of the last line follows a replaced last line.
  d.Record("x\r\nspin", 7, 80);
  d.ReplaceLine(1, std::string(60, 's'));
  CHECK(d.RowsAboveCursor(40, true) == 1 + 1);
  d.Clear();
  CHECK(d.empty());
}

}  // namespace
}  // namespace codex::cli
