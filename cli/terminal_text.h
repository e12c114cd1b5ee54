// Making untrusted text (tool output, commands, model text) safe to write to
// the user's terminal: no byte of it can start an escape sequence, move the
// cursor, clear the screen, set the title (OSC), ring the bell or reorder
// text. Applied to everything the CLI echoes from a tool or the model
// (progress printer, interactive turn view); `--json` output is JSON-escaped
// instead and the text sent to the model is left as it was.
#pragma once

#include <string>
#include <string_view>

namespace codex::cli {

// `text` with each control rendered visibly: C0 controls other than \n and
// \t in caret notation (ESC -> "^[", CR -> "^M", BEL -> "^G"), DEL -> "^?",
// the C1 controls U+0080..U+009F and the bidirectional overrides and
// isolates (U+202A..U+202E, U+2066..U+2069) as "<U+XXXX>", and bytes that
// are not valid UTF-8 as "\xNN". Valid printable UTF-8 passes unchanged.
std::string NeutralizeControls(std::string_view text);

// `text` as written to an output stream: neutralised when the stream is a
// terminal, byte for byte otherwise (scripts read `codex exec`'s stdout from
// a pipe or file and depend on the exact bytes).
std::string TextForStream(std::string_view text, bool to_terminal);

}  // namespace codex::cli
