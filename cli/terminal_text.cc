#include "cli/terminal_text.h"

#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "base/strings.h"

namespace codex::cli {
namespace {

void AppendCodePoint(std::string* out, uint32_t cp) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "<U+%04X>", static_cast<unsigned>(cp));
  out->append(buf);
}

// C1 controls (U+0080..U+009F: 0x9B is a CSI on many terminals) and the
// code points that reorder or hide text: the bidi embeddings and overrides
// (U+202A..U+202E), isolates (U+2066..U+2069), the left-to-right and
// right-to-left marks (U+200E, U+200F), the Arabic letter mark (U+061C) and
// the line and paragraph separators (U+2028, U+2029).
bool IsShownAsCodePoint(uint32_t cp) {
  return (cp >= 0x80 && cp <= 0x9F) || (cp >= 0x202A && cp <= 0x202E) ||
         (cp >= 0x2066 && cp <= 0x2069) || cp == 0x200E || cp == 0x200F || cp == 0x061C ||
         cp == 0x2028 || cp == 0x2029;
}

}  // namespace

std::string NeutralizeControls(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      if (c == '\n' || c == '\t' || (c >= 0x20 && c < 0x7F)) {
        out.push_back(static_cast<char>(c));
      } else {
        out.push_back('^');
        out.push_back(c == 0x7F ? '?' : static_cast<char>(c + 0x40));
      }
      ++i;
      continue;
    }
    uint32_t cp = 0;
    const size_t len = DecodeUtf8(text, i, &cp);
    if (len == 0) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02X", c);
      out.append(buf);
      ++i;
      continue;
    }
    if (IsShownAsCodePoint(cp)) {
      AppendCodePoint(&out, cp);
    } else {
      out.append(text.substr(i, len));
    }
    i += len;
  }
  return out;
}

std::string TextForStream(std::string_view text, bool to_terminal) {
  return to_terminal ? NeutralizeControls(text) : std::string(text);
}

bool IsTerminal(std::FILE* stream) { return ::isatty(::fileno(stream)) != 0; }

namespace {
// The errno of the first failed write to stdout (0: none yet).
int stdout_errno = 0;
}  // namespace

bool PrintText(std::FILE* stream, std::string_view text) {
  const std::string shown = TextForStream(text, IsTerminal(stream));
  const bool written = std::fwrite(shown.data(), 1, shown.size(), stream) == shown.size();
  if (!written && stream == stdout && stdout_errno == 0) stdout_errno = errno;
  return written;
}

void FlushStdout() {
  if (std::fflush(stdout) != 0 && stdout_errno == 0) stdout_errno = errno;
}

Status StdoutWritten() {
  FlushStdout();
  if (!std::ferror(stdout)) return OkStatus();
  // A failure not seen here (stdout written another way, or flushed by a
  // caller) left no errno.
  std::string what = stdout_errno != 0 ? std::strerror(stdout_errno) : "a write failed";
  if (stdout_errno == EPIPE) what += ": its reader went away";
  if (stdout_errno == EBADF) what += ": it is closed";
  Status lost = DataLossError("cannot write to stdout (" + what +
                              "); the output is incomplete: send it to a writable file or pipe");
  if (stdout_errno == EPIPE) lost.WithReason(kStdoutReaderGone);
  return lost;
}

bool PrintF(std::FILE* stream, const char* format, ...) {
  std::va_list args;
  va_start(args, format);
  std::va_list again;
  va_copy(again, args);
  const int n = std::vsnprintf(nullptr, 0, format, args);
  va_end(args);
  std::string text;
  if (n > 0) {
    text.resize(static_cast<size_t>(n) + 1);
    std::vsnprintf(text.data(), text.size(), format, again);
    text.resize(static_cast<size_t>(n));
  }
  va_end(again);
  return n >= 0 && PrintText(stream, text);
}

}  // namespace codex::cli
