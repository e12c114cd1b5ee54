// KeyDecoder: turns the bytes a terminal sends in raw mode into keys.
//
// Understands UTF-8 text, control bytes, CSI and SS3 sequences for the
// arrows, Home/End, Delete and Page keys (with Alt/Ctrl modifiers for word
// motion), Alt-<key> as ESC-prefixed bytes, Shift-Enter as sent by terminals
// with modifyOtherKeys or the kitty keyboard protocol, and bracketed paste
// (ESC[200~ ... ESC[201~, delivered as one kPaste key with its text).
// An incomplete sequence stays buffered until more bytes arrive; a lone ESC
// is only reported as kEsc by Flush() (the caller calls it after a short
// read timeout). Pure: no I/O. Not thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace codex::cli {

enum class KeyCode {
  kText,     // printable text (one code point) in Key::text
  kPaste,    // bracketed paste; Key::text is the pasted bytes
  kEnter,    // Return (CR)
  kNewline,  // insert a line break: Ctrl-J, Alt-Enter, Shift-Enter
  kTab,
  kBackspace,
  kDelete,
  kLeft,
  kRight,
  kUp,
  kDown,
  kHome,
  kEnd,
  kPageUp,
  kPageDown,
  kWordLeft,        // Alt-b, Ctrl/Alt-Left
  kWordRight,       // Alt-f, Ctrl/Alt-Right
  kDeleteWordBack,  // Ctrl-W, Alt-Backspace
  kCtrl,            // another control key; Key::ctrl is its letter ('a' for Ctrl-A)
  kEsc,
  kUnknown,  // a sequence we do not handle (ignored by callers)
};

struct Key {
  KeyCode code = KeyCode::kUnknown;
  std::string text;  // kText, kPaste
  char ctrl = 0;     // kCtrl
};

class KeyDecoder {
 public:
  void Feed(std::string_view bytes) { pending_.append(bytes); }
  // The next complete key, or nullopt when more bytes are needed.
  std::optional<Key> Next();
  // Like Next(), but an incomplete escape sequence is resolved now: a lone
  // ESC becomes kEsc. An unfinished bracketed paste stays pending.
  std::optional<Key> Flush();
  bool has_pending() const { return !pending_.empty(); }

 private:
  std::optional<Key> Decode(bool flush);
  std::string pending_;
};

}  // namespace codex::cli
