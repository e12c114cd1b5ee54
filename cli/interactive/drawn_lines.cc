#include "cli/interactive/drawn_lines.h"

#include "cli/interactive/style.h"

namespace codex::cli {

void DrawnLines::Clear() {
  lines_.clear();
  cursor_ = 0;
  columns_ = 0;
}

void DrawnLines::Record(std::string_view text, size_t cursor, int columns) {
  lines_.clear();
  columns_ = columns;
  if (cursor > text.size()) cursor = text.size();
  size_t pos = 0;
  while (true) {
    size_t nl = text.find("\r\n", pos);
    if (nl == std::string_view::npos || nl >= cursor) {
      // The cursor's line: to its end (what lies right of the cursor wraps too).
      size_t end = nl == std::string_view::npos ? text.size() : nl;
      lines_.emplace_back(text.substr(pos, end - pos));
      cursor_ = cursor - pos;
      return;
    }
    lines_.emplace_back(text.substr(pos, nl - pos));
    pos = nl + 2;
  }
}

void DrawnLines::ReplaceLine(size_t index, std::string line) {
  if (index >= lines_.size()) return;
  if (index + 1 == lines_.size() && cursor_ == lines_[index].size()) cursor_ = line.size();
  lines_[index] = std::move(line);
}

int DrawnLines::RowsAboveCursor(int columns, bool reflows) const {
  if (lines_.empty()) return 0;
  // A terminal that does not re-wrap keeps the rows as they were drawn.
  const int width = reflows && columns > 0 ? columns : columns_;
  int rows = 0;
  for (size_t i = 0; i + 1 < lines_.size(); ++i) rows += WrappedRows(lines_[i], width);
  return rows + WrapCursor(lines_.back(), cursor_, width).row;
}

}  // namespace codex::cli
