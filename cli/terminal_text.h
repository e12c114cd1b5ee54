// The one terminal-safe text rule: untrusted text (model text, tool output,
// commands, file names and contents, session names and titles from the store
// or an imported rollout) is made inert here before it reaches the user's
// terminal: no byte of it can start an escape sequence (CSI, OSC title or
// clipboard, DCS, hyperlinks), move the cursor, erase a line, ring the bell or
// reorder text. Every output door asks this file: the interactive UI (turn
// view, notices, approval prompt, /diff, the @ popup, session lists), `codex
// exec`'s progress on stderr and its final message, and every `codex
// sessions` subcommand, which print only through PrintText / PrintF. No other
// file filters control characters (tests/terminal_e2e_test walks each door).
// The text sent to the model is left as it was.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

#include "base/status.h"

namespace codex::cli {

// `text` with each control rendered visibly: C0 controls other than \n and
// \t in caret notation (ESC -> "^[", CR -> "^M", BEL -> "^G"), DEL -> "^?",
// the C1 controls U+0080..U+009F and the bidirectional overrides and
// isolates (U+202A..U+202E, U+2066..U+2069), the direction marks (U+200E,
// U+200F, U+061C) and the line/paragraph separators (U+2028, U+2029) as "<U+XXXX>", and bytes that
// are not valid UTF-8 as "\xNN". Valid printable UTF-8 passes unchanged.
std::string NeutralizeControls(std::string_view text);

// `text` as written to an output stream: neutralised when the stream is a
// terminal, byte for byte otherwise (scripts read `codex exec`'s stdout from
// a pipe or file and depend on the exact bytes).
std::string TextForStream(std::string_view text, bool to_terminal);

// Whether `stream` is a terminal.
bool IsTerminal(std::FILE* stream);

// Writes `text` to `stream` as TextForStream(text, IsTerminal(stream)) says;
// false when the write failed. The way a CLI command prints text that holds
// anything untrusted (a session's name, title, cwd or items).
bool PrintText(std::FILE* stream, std::string_view text);

// PrintText of the printf-formatted text.
[[gnu::format(printf, 2, 3)]] bool PrintF(std::FILE* stream, const char* format, ...);

// Flushes stdout and says whether everything printed to it so far reached it:
// OK, or kDataLoss "cannot write to stdout: <cause> ..." when a write failed
// (a closed descriptor, a full disk, a reader that went away: SIGPIPE is
// handled, never fatal, cli/main.cc). The one check of lost output: main()'s
// CommandOutcome asks it after every command that otherwise succeeded.
// A reader that went away (`| head -1`: the reader's own choice) carries
// kStdoutReaderGone: the exit is 1 without a line (PrintError prints none),
// as a program ended by SIGPIPE prints none.
Status StdoutWritten();
// Flushes stdout now (a command that interleaves stdout and stderr lines),
// keeping a failure's cause for StdoutWritten: a raw fflush(stdout) that
// fails leaves it "a write failed", and a reader that went away would then
// be reported as lost output.
void FlushStdout();
inline constexpr StatusReason kStdoutReaderGone{"stdout_reader_gone"};

}  // namespace codex::cli
