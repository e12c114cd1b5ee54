#include "cli/interactive/line_editor.h"

#include <algorithm>
#include <cctype>

#include "cli/interactive/style.h"
#include "cli/terminal_text.h"

namespace codex::cli {

namespace {

bool IsWordByte(unsigned char c) { return c >= 0x80 || std::isalnum(c) || c == '_'; }

bool IsBlank(std::string_view s) {
  return s.find_first_not_of(" \t\r\n") == std::string_view::npos;
}

// Width of the grapheme cluster at s[*pos] as drawn by the editor
// (advancing *pos past it), appending its drawing to `out`.
int DrawCodePoint(std::string_view s, size_t* pos, std::string* out) {
  size_t start = *pos;
  char32_t c = DecodeUtf8(s, pos);
  if (c == '\t') {
    if (out) *out += "    ";
    return 4;
  }
  if (c >= 0x20 && c != 0x7f) *pos = std::max(*pos, NextGrapheme(s, start));
  // Controls, escapes, C1, bidi marks and invalid bytes are drawn the one
  // terminal-safe way (cli/terminal_text.h), as visible text.
  const std::string_view cluster = s.substr(start, *pos - start);
  const std::string safe = NeutralizeControls(cluster);
  if (safe != cluster) {
    if (out) *out += safe;
    return DisplayWidth(safe);
  }
  if (out) out->append(cluster);
  return CodePointWidth(c);
}

int LineWidth(std::string_view s) {
  int w = 0;
  size_t i = 0;
  while (i < s.size()) w += DrawCodePoint(s, &i, nullptr);
  return w;
}

}  // namespace

LineEditor::LineEditor(std::vector<std::string> history)
    : history_(std::move(history)), history_pos_(history_.size()) {}

void LineEditor::SetBuffer(std::string text) {
  buffer_ = std::move(text);
  cursor_ = buffer_.size();
}

void LineEditor::AddHistory(const std::string& entry) {
  if (IsBlank(entry)) return;
  if (!history_.empty() && history_.back() == entry) return;
  history_.push_back(entry);
  history_pos_ = history_.size();
}

EditorEvent LineEditor::Feed(std::string_view bytes) {
  decoder_.Feed(bytes);
  return Drain(false);
}

EditorEvent LineEditor::Flush() { return Drain(true); }

EditorEvent LineEditor::Drain(bool flush) {
  while (true) {
    std::optional<Key> key = flush ? decoder_.Flush() : decoder_.Next();
    if (!key) return {};
    EditorEvent event = HandleKey(*key);
    if (event.kind != EditorEventKind::kNone) return event;
  }
}

void LineEditor::Insert(std::string_view text) {
  buffer_.insert(cursor_, text);
  cursor_ += text.size();
}

size_t LineEditor::LineStart(size_t pos) const {
  size_t nl = pos == 0 ? std::string::npos : buffer_.rfind('\n', pos - 1);
  return nl == std::string::npos ? 0 : nl + 1;
}

size_t LineEditor::LineEnd(size_t pos) const {
  size_t nl = buffer_.find('\n', pos);
  return nl == std::string::npos ? buffer_.size() : nl;
}

size_t LineEditor::WordLeft(size_t pos) const {
  while (pos > 0 && !IsWordByte(static_cast<unsigned char>(buffer_[pos - 1]))) --pos;
  while (pos > 0 && IsWordByte(static_cast<unsigned char>(buffer_[pos - 1]))) --pos;
  return pos;
}

size_t LineEditor::WordRight(size_t pos) const {
  while (pos < buffer_.size() && !IsWordByte(static_cast<unsigned char>(buffer_[pos]))) ++pos;
  while (pos < buffer_.size() && IsWordByte(static_cast<unsigned char>(buffer_[pos]))) ++pos;
  return pos;
}

bool LineEditor::MoveVertical(int direction) {
  size_t start = LineStart(cursor_);
  size_t target_start;
  if (direction < 0) {
    if (start == 0) return false;
    target_start = LineStart(start - 1);
  } else {
    size_t end = LineEnd(cursor_);
    if (end == buffer_.size()) return false;
    target_start = end + 1;
  }
  int column = LineWidth(std::string_view(buffer_).substr(start, cursor_ - start));
  size_t target_end = LineEnd(target_start);
  size_t pos = target_start;
  int w = 0;
  while (pos < target_end) {
    size_t next = pos;
    int cw = DrawCodePoint(buffer_, &next, nullptr);
    if (w + cw > column) break;
    w += cw;
    pos = next;
  }
  cursor_ = pos;
  return true;
}

void LineEditor::HistoryMove(int direction) {
  if (direction < 0) {
    if (history_pos_ == 0) return;
    if (history_pos_ == history_.size()) draft_ = buffer_;
    --history_pos_;
    SetBuffer(history_[history_pos_]);
  } else {
    if (history_pos_ >= history_.size()) return;
    ++history_pos_;
    SetBuffer(history_pos_ == history_.size() ? draft_ : history_[history_pos_]);
  }
}

void LineEditor::Complete() {
  if (cursor_ != buffer_.size() || buffer_.empty() ||
      buffer_.find_first_of(" \n") != std::string::npos) {
    return;
  }
  std::vector<const std::string*> matches;
  for (const auto& w : completions_) {
    if (w.size() >= buffer_.size() && w.compare(0, buffer_.size(), buffer_) == 0) {
      matches.push_back(&w);
    }
  }
  if (matches.empty()) return;
  if (matches.size() == 1) {
    SetBuffer(*matches[0] + " ");
    return;
  }
  // Extend to the longest common prefix.
  std::string prefix = *matches[0];
  for (const auto* m : matches) {
    size_t n = 0;
    while (n < prefix.size() && n < m->size() && prefix[n] == (*m)[n]) ++n;
    prefix.resize(n);
  }
  if (prefix.size() > buffer_.size()) SetBuffer(prefix);
}

// Over 80 lines on purpose: the editor's key map is this one switch, a
// case of one to five lines per key, read as the table the header documents.
EditorEvent LineEditor::HandleKey(const Key& key) {
  EditorEvent event;
  if (!(key.code == KeyCode::kCtrl && key.ctrl == 'c')) interrupts_ = 0;
  switch (key.code) {
    case KeyCode::kText:
      Insert(key.text);
      break;
    case KeyCode::kPaste: {
      std::string text;
      for (size_t i = 0; i < key.text.size(); ++i) {
        if (key.text[i] == '\r') {
          text += '\n';
          if (i + 1 < key.text.size() && key.text[i + 1] == '\n') ++i;
        } else {
          text += key.text[i];
        }
      }
      Insert(text);
      break;
    }
    case KeyCode::kEnter:
      if (cursor_ == buffer_.size() && !buffer_.empty() && buffer_.back() == '\\') {
        buffer_.back() = '\n';
        break;
      }
      event.kind = EditorEventKind::kSubmit;
      event.text = std::move(buffer_);
      AddHistory(event.text);
      history_pos_ = history_.size();
      draft_.clear();
      buffer_.clear();
      cursor_ = 0;
      break;
    case KeyCode::kNewline:
      Insert("\n");
      break;
    case KeyCode::kTab:
      Complete();
      break;
    case KeyCode::kBackspace:
      if (cursor_ > 0) {
        size_t prev = PrevGrapheme(buffer_, cursor_);
        buffer_.erase(prev, cursor_ - prev);
        cursor_ = prev;
      }
      break;
    case KeyCode::kDelete:
      if (cursor_ < buffer_.size())
        buffer_.erase(cursor_, NextGrapheme(buffer_, cursor_) - cursor_);
      break;
    case KeyCode::kLeft:
      cursor_ = PrevGrapheme(buffer_, cursor_);
      break;
    case KeyCode::kRight:
      cursor_ = NextGrapheme(buffer_, cursor_);
      break;
    case KeyCode::kWordLeft:
      cursor_ = WordLeft(cursor_);
      break;
    case KeyCode::kWordRight:
      cursor_ = WordRight(cursor_);
      break;
    case KeyCode::kHome:
      cursor_ = LineStart(cursor_);
      break;
    case KeyCode::kEnd:
      cursor_ = LineEnd(cursor_);
      break;
    case KeyCode::kUp:
      if (!MoveVertical(-1)) HistoryMove(-1);
      break;
    case KeyCode::kDown:
      if (!MoveVertical(1)) HistoryMove(1);
      break;
    case KeyCode::kDeleteWordBack: {
      size_t from = WordLeft(cursor_);
      kill_ = buffer_.substr(from, cursor_ - from);
      buffer_.erase(from, cursor_ - from);
      cursor_ = from;
      break;
    }
    case KeyCode::kCtrl:
      switch (key.ctrl) {
        case 'a':
          cursor_ = LineStart(cursor_);
          break;
        case 'e':
          cursor_ = LineEnd(cursor_);
          break;
        case 'b':
          cursor_ = PrevGrapheme(buffer_, cursor_);
          break;
        case 'f':
          cursor_ = NextGrapheme(buffer_, cursor_);
          break;
        case 'p':
          HistoryMove(-1);
          break;
        case 'n':
          HistoryMove(1);
          break;
        case 'k': {
          size_t end = LineEnd(cursor_);
          if (end == cursor_ && end < buffer_.size()) ++end;  // join with the next line
          kill_ = buffer_.substr(cursor_, end - cursor_);
          buffer_.erase(cursor_, end - cursor_);
          break;
        }
        case 'u': {
          size_t start = LineStart(cursor_);
          kill_ = buffer_.substr(start, cursor_ - start);
          buffer_.erase(start, cursor_ - start);
          cursor_ = start;
          break;
        }
        case 'y':
          Insert(kill_);
          break;
        case 'c':
          if (!buffer_.empty()) {
            buffer_.clear();
            cursor_ = 0;
            history_pos_ = history_.size();
            interrupts_ = 0;
          } else {
            event.kind = EditorEventKind::kInterrupt;
            event.count = ++interrupts_;
          }
          break;
        case 'd':
          if (buffer_.empty()) {
            event.kind = EditorEventKind::kEof;
          } else if (cursor_ < buffer_.size()) {
            buffer_.erase(cursor_, NextGrapheme(buffer_, cursor_) - cursor_);
          }
          break;
        case 'l':
          event.kind = EditorEventKind::kClearScreen;
          break;
        default:
          break;
      }
      break;
    case KeyCode::kEsc:
      event.kind = EditorEventKind::kEscape;
      break;
    case KeyCode::kPageUp:
    case KeyCode::kPageDown:
    case KeyCode::kUnknown:
      break;
  }
  return event;
}

EditorLayout LayoutEditor(std::string_view prompt, std::string_view continuation,
                          std::string_view buffer, size_t cursor, int columns) {
  if (columns <= 0) columns = 80;
  EditorLayout layout;
  layout.columns = columns;
  int row = 0;
  size_t line_start = 0;
  bool first = true;
  while (true) {
    size_t nl = buffer.find('\n', line_start);
    bool last = nl == std::string_view::npos;
    size_t line_end = last ? buffer.size() : nl;
    // The hard line as drawn, and where the editing cursor falls in it.
    std::string line(first ? prompt : continuation);
    size_t cursor_at = std::string::npos;
    const bool has_cursor = cursor >= line_start && cursor <= line_end;
    size_t i = line_start;
    while (i < line_end) {
      if (has_cursor && cursor_at == std::string::npos && i >= cursor) cursor_at = line.size();
      DrawCodePoint(buffer, &i, &line);
    }
    if (has_cursor && cursor_at == std::string::npos) cursor_at = line.size();
    if (has_cursor) {
      WrapPoint c = WrapCursor(line, cursor_at, columns);
      layout.cursor_row = row + c.row;
      layout.cursor_col = c.col;
      layout.cursor_offset = layout.text.size() + cursor_at;
    }
    layout.text += line;
    WrapPoint end = WrapEnd(line, columns);
    if (last) {
      if (end.col >= columns) {  // full: leave the pending-wrap state
        layout.text += "\r\n";
        ++end.row;
        end.col = 0;
      }
      layout.end_row = row + end.row;
      layout.end_col = end.col;
      layout.rows = layout.end_row + 1;
      break;
    }
    layout.text += "\r\n";
    row += end.row + 1;
    line_start = nl + 1;
    first = false;
  }
  return layout;
}

}  // namespace codex::cli
