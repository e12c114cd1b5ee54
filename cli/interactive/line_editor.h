// LineEditor: the prompt's editing state machine (buffer, cursor, history,
// kill ring), fed raw terminal bytes and answering with events. Pure: it
// never reads or writes the terminal; LayoutEditor() computes what to draw.
//
// Keys: printable text inserts at the cursor; Enter submits, except after a
// trailing backslash (which becomes a line break); Alt-Enter, Shift-Enter and
// Ctrl-J insert a line break; bracketed paste inserts its text verbatim (CR
// and CRLF become LF). Left/Right/Ctrl-B/Ctrl-F move by character, Alt-B/F
// and Ctrl-Left/Right by word, Home/End/Ctrl-A/Ctrl-E to the ends of the
// current line. Backspace, Delete, Ctrl-W (word), Ctrl-K and Ctrl-U (kill to
// end / start of line), Ctrl-Y (yank). Up/Down move between the lines of a
// multi-line buffer and, from the first/last line, through history (the
// draft is kept); Ctrl-P/Ctrl-N always walk history. Tab completes a word
// from SetCompletions() at the start of the buffer. Ctrl-C clears a non-empty
// buffer, or reports kInterrupt when it is empty; Ctrl-D deletes at the
// cursor, or reports kEof when the buffer is empty; Ctrl-L asks for a redraw;
// a lone Esc is reported (the session interrupts a turn with it).
// The cursor is a byte offset into the UTF-8 buffer, always at a grapheme
// cluster boundary: Backspace, Delete and the arrows take an emoji with its
// skin tone, a ZWJ sequence, a flag or a letter with its accents as one
// character. Not thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "cli/interactive/keys.h"

namespace codex::cli {

enum class EditorEventKind {
  kNone,         // the bytes were consumed; redraw
  kSubmit,       // EditorEvent::text is the submitted buffer (now cleared)
  kEof,          // Ctrl-D on an empty buffer
  kInterrupt,    // Ctrl-C on an empty buffer; `count` says how many in a row
  kClearScreen,  // Ctrl-L
  kEscape,       // a lone Esc
};

struct EditorEvent {
  EditorEventKind kind = EditorEventKind::kNone;
  std::string text;
  int count = 0;
  bool queue = false;  // kSubmit by Tab during a turn: queue it, do not steer
};

class LineEditor {
 public:
  explicit LineEditor(std::vector<std::string> history = {});

  // Appends `bytes` to the input and handles keys until one produces an
  // event other than kNone; the remaining bytes wait for the next call
  // (Feed("") continues with them).
  EditorEvent Feed(std::string_view bytes);
  // Resolves a pending lone ESC (call after a short read timeout).
  EditorEvent Flush();
  bool has_pending_input() const { return decoder_.has_pending(); }

  const std::string& buffer() const { return buffer_; }
  size_t cursor() const { return cursor_; }
  // Replaces the buffer, cursor at its end.
  void SetBuffer(std::string text);
  // Moves the cursor to byte `pos` (at most the end; the caller keeps it on
  // a cluster boundary).
  void SetCursor(size_t pos) { cursor_ = pos < buffer_.size() ? pos : buffer_.size(); }

  // Submitted entries, oldest first. Submit appends non-blank entries that
  // differ from the newest one.
  const std::vector<std::string>& history() const { return history_; }
  void AddHistory(const std::string& entry);

  // Counts an interrupt that happened elsewhere (a turn was cancelled): a
  // Ctrl-C on the empty buffer right after it reports count 2.
  void NoteInterrupt() { interrupts_ = 1; }
  // Forgets the Ctrl-C presses so far (the one that stopped a turn): the next
  // one at the prompt warns before another quits.
  void ClearInterrupts() { interrupts_ = 0; }

  // Words Tab completes when the buffer is one partial word (e.g. "/co").
  void SetCompletions(std::vector<std::string> words) { completions_ = std::move(words); }

  // Handles one decoded key.
  EditorEvent HandleKey(const Key& key);

 private:
  void Insert(std::string_view text);
  size_t LineStart(size_t pos) const;
  size_t LineEnd(size_t pos) const;
  size_t WordLeft(size_t pos) const;
  size_t WordRight(size_t pos) const;
  bool MoveVertical(int direction);
  void HistoryMove(int direction);
  void Complete();
  EditorEvent Drain(bool flush);

  KeyDecoder decoder_;
  std::string buffer_;
  size_t cursor_ = 0;
  std::string kill_;
  std::vector<std::string> history_;
  size_t history_pos_ = 0;  // == history_.size() while editing the draft
  std::string draft_;
  std::vector<std::string> completions_;
  int interrupts_ = 0;  // consecutive Ctrl-C on an empty buffer
};

// What to draw for a prompt: `text` starts at the prompt's first row (the
// caller clears from there) and leaves the terminal cursor at (end_row,
// end_col); the editing cursor is at (cursor_row, cursor_col), before byte
// `cursor_offset` of `text`. Rows are relative to the first row; `rows` is
// how many the drawing occupies at `columns`, the width it was laid out for
// (a drawing for another width is stale).
struct EditorLayout {
  std::string text;
  int rows = 1;
  int cursor_row = 0;
  int cursor_col = 0;
  int end_row = 0;
  int end_col = 0;
  size_t cursor_offset = 0;
  int columns = 0;
};

// Lays out `buffer` after `prompt` (continuation lines get `continuation`),
// wrapping at `columns` the way the terminal will (WrapEnd: a wide character
// that does not fit at the end of a row starts the next one). Tabs show as
// four spaces and other control bytes as ^X. When the text exactly fills its
// last row a "\r\n" is appended so the terminal never sits in its
// pending-wrap state.
EditorLayout LayoutEditor(std::string_view prompt, std::string_view continuation,
                          std::string_view buffer, size_t cursor, int columns);

}  // namespace codex::cli
