#include "cli/interactive/keys.h"

#include <vector>

#include "cli/interactive/style.h"

namespace codex::cli {

namespace {

constexpr std::string_view kPasteEnd = "\x1b[201~";

Key Make(KeyCode code) {
  Key k;
  k.code = code;
  return k;
}

Key Ctrl(char letter) {
  Key k;
  k.code = KeyCode::kCtrl;
  k.ctrl = letter;
  return k;
}

// Splits "1;5" into numbers; empty fields are 0.
std::vector<int> Params(std::string_view p) {
  std::vector<int> out{0};
  for (char c : p) {
    if (c == ';') {
      out.push_back(0);
    } else if (c >= '0' && c <= '9') {
      out.back() = out.back() * 10 + (c - '0');
    }
  }
  return out;
}

// A CSI sequence with parameter bytes `params` and final byte `final`.
Key DecodeCsi(std::string_view params, char final) {
  std::vector<int> p = Params(params);
  int modifier = p.size() > 1 ? p[1] : 1;  // 1 none, 2 shift, 3 alt, 5 ctrl
  bool word = modifier == 3 || modifier == 5;
  switch (final) {
    case 'A':
      return Make(KeyCode::kUp);
    case 'B':
      return Make(KeyCode::kDown);
    case 'C':
      return Make(word ? KeyCode::kWordRight : KeyCode::kRight);
    case 'D':
      return Make(word ? KeyCode::kWordLeft : KeyCode::kLeft);
    case 'H':
      return Make(KeyCode::kHome);
    case 'F':
      return Make(KeyCode::kEnd);
    case 'u':  // kitty keyboard protocol: CSI code ; modifiers u
      if (p[0] == 13) return Make(modifier > 1 ? KeyCode::kNewline : KeyCode::kEnter);
      if (p[0] == 9) return Make(KeyCode::kTab);
      if (p[0] == 127) return Make(KeyCode::kBackspace);
      if (p[0] == 27) return Make(KeyCode::kEsc);
      return Make(KeyCode::kUnknown);
    case '~':
      switch (p[0]) {
        case 1:
        case 7:
          return Make(KeyCode::kHome);
        case 4:
        case 8:
          return Make(KeyCode::kEnd);
        case 3:
          return Make(KeyCode::kDelete);
        case 5:
          return Make(KeyCode::kPageUp);
        case 6:
          return Make(KeyCode::kPageDown);
        case 27:  // xterm modifyOtherKeys: CSI 27 ; modifiers ; code ~
          if (p.size() > 2 && p[2] == 13) return Make(KeyCode::kNewline);
          return Make(KeyCode::kUnknown);
        default:
          return Make(KeyCode::kUnknown);
      }
    default:
      return Make(KeyCode::kUnknown);
  }
}

}  // namespace

std::optional<Key> KeyDecoder::Next() { return Decode(false); }
std::optional<Key> KeyDecoder::Flush() { return Decode(true); }

// Over 80 lines on purpose: one pass over the byte forms a key can take
// (UTF-8 text, C0 controls, ESC-prefixed Alt keys, CSI and SS3 sequences,
// bracketed paste), each a few lines; split, the order they are tried in
// (which decides ambiguous prefixes such as a lone ESC) would be scattered.
std::optional<Key> KeyDecoder::Decode(bool flush) {
  if (pending_.empty()) return std::nullopt;
  auto take = [&](size_t n, Key key) -> std::optional<Key> {
    pending_.erase(0, n);
    return key;
  };
  const auto b = static_cast<unsigned char>(pending_[0]);
  if (b == 0x1b) {
    if (pending_.size() == 1) return flush ? take(1, Make(KeyCode::kEsc)) : std::nullopt;
    const char c = pending_[1];
    if (c == '[') {
      if (pending_.compare(0, 6, "\x1b[200~") == 0) {
        size_t end = pending_.find(kPasteEnd, 6);
        if (end == std::string::npos) return std::nullopt;  // wait for the rest of the paste
        Key k = Make(KeyCode::kPaste);
        k.text = pending_.substr(6, end - 6);
        return take(end + kPasteEnd.size(), k);
      }
      size_t i = 2;
      while (i < pending_.size() && !(pending_[i] >= 0x40 && pending_[i] <= 0x7e)) ++i;
      if (i >= pending_.size()) {
        // "\x1b[200" may still become a paste start: keep waiting unless flushing.
        return flush ? take(pending_.size(), Make(KeyCode::kUnknown)) : std::nullopt;
      }
      return take(i + 1, DecodeCsi(std::string_view(pending_).substr(2, i - 2), pending_[i]));
    }
    if (c == 'O') {
      if (pending_.size() < 3) return flush ? take(2, Make(KeyCode::kUnknown)) : std::nullopt;
      switch (pending_[2]) {
        case 'A':
          return take(3, Make(KeyCode::kUp));
        case 'B':
          return take(3, Make(KeyCode::kDown));
        case 'C':
          return take(3, Make(KeyCode::kRight));
        case 'D':
          return take(3, Make(KeyCode::kLeft));
        case 'H':
          return take(3, Make(KeyCode::kHome));
        case 'F':
          return take(3, Make(KeyCode::kEnd));
        case 'M':
          return take(3, Make(KeyCode::kEnter));  // keypad Enter
        default:
          return take(3, Make(KeyCode::kUnknown));
      }
    }
    switch (c) {
      case '\r':
      case '\n':
        return take(2, Make(KeyCode::kNewline));
      case 'b':
        return take(2, Make(KeyCode::kWordLeft));
      case 'f':
        return take(2, Make(KeyCode::kWordRight));
      case 0x7f:
      case 0x08:
        return take(2, Make(KeyCode::kDeleteWordBack));
      case 0x1b:
        return take(1, Make(KeyCode::kEsc));  // ESC ESC: the first is a plain Esc
      default:
        return take(2, Make(KeyCode::kUnknown));
    }
  }
  if (b == '\r') return take(1, Make(KeyCode::kEnter));
  if (b == '\n') return take(1, Make(KeyCode::kNewline));
  if (b == '\t') return take(1, Make(KeyCode::kTab));
  if (b == 0x7f || b == 0x08) return take(1, Make(KeyCode::kBackspace));
  if (b == 0x17) return take(1, Make(KeyCode::kDeleteWordBack));
  if (b < 0x20) {
    if (b == 0) return take(1, Make(KeyCode::kUnknown));
    return take(1, Ctrl(static_cast<char>('a' + b - 1)));
  }
  if (b >= 0x80) {
    // Wait for the rest of a multi-byte character (unless it can never complete).
    size_t need = (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xe ? 3 : (b >> 3) == 0x1e ? 4 : 1;
    if (pending_.size() < need && !flush) return std::nullopt;
  }
  size_t len = Utf8Length(pending_, 0);
  Key k = Make(KeyCode::kText);
  k.text = pending_.substr(0, len);
  return take(len, k);
}

}  // namespace codex::cli
