// DrawnLines: where a drawing at the bottom of the screen begins, found again
// from the cursor after the terminal may have changed width.
//
// The interactive UI redraws its live parts (the composer, the spinner, the
// pickers, the approval menu) by moving the cursor up to their first row and
// erasing to the end of the screen. How many rows that is depends on how the
// terminal wrapped the lines drawn: at the width they were drawn at, a line
// takes the rows its autowrap gave it (WrapEnd); after a width change, a
// terminal that re-wraps its lines (tmux, VTE, kitty ...; Terminal::reflows)
// has laid each hard line out again at the new width, keeping the cursor on
// the character it was on, while one that does not (xterm) left the rows as
// they were. Remembering the hard lines down to the cursor's is enough to
// answer both. Pure; not thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace codex::cli {

class DrawnLines {
 public:
  // Nothing is drawn.
  void Clear();
  // Records that `text` (hard lines separated by "\r\n", ANSI escapes
  // allowed) was drawn from the first column of a row at `columns`, leaving
  // the cursor at byte `cursor` of it (before the character there).
  void Record(std::string_view text, size_t cursor, int columns);
  // Replaces hard line `index` (counted from the first; it must exist), e.g.
  // the spinner's, drawn again in place.
  void ReplaceLine(size_t index, std::string line);

  bool empty() const { return lines_.empty(); }
  // How many hard lines, the cursor's included.
  size_t lines() const { return lines_.size(); }
  // How many rows above the cursor's the drawing starts, on a terminal now
  // `columns` wide that re-wraps its lines (`reflows`) or not.
  int RowsAboveCursor(int columns, bool reflows) const;

 private:
  std::vector<std::string> lines_;  // down to the cursor's (the last)
  size_t cursor_ = 0;               // in lines_.back()
  int columns_ = 0;                 // drawn at
};

}  // namespace codex::cli
