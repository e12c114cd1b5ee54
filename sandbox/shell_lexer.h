// A POSIX-ish shell word lexer for the safe-command classifier.
//
// It understands exactly what a read-only command line needs and refuses the
// rest, so a script it accepts means the same thing to it as to bash:
//   * words separated by blanks, with '…' quotes, "…" quotes (backslash
//     escapes only $ ` " \ and newline there), backslash escapes and
//     line continuations outside quotes, and # comments at a word start;
//   * the control operators && || ; | and newlines (a newline ends a command
//     like ';', and is ignored after an operator or at the start).
// Refused with kInvalidArgument naming the construct and its byte offset:
// redirections (< > and everything built on them), background &, |&, ;;,
// subshells and groups ( ) { }, any $ (variables, $(…), $((…)), ${…}, $'…'),
// backticks (also inside "…"), unquoted glob characters * ? [ (a file name
// could become an option), tilde expansion, control characters other than
// tab and newline outside quotes, NUL bytes anywhere, and unterminated
// quotes. Pure functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace codex::sandbox {

enum class ShellOperator { kAnd, kOr, kSequence, kPipe };

// "&&", "||", ";", "|".
std::string_view ShellOperatorText(ShellOperator op);

struct ShellToken {
  enum class Kind { kWord, kOperator };
  Kind kind = Kind::kWord;
  std::string word;                             // kWord: the text after quote removal
  ShellOperator op = ShellOperator::kSequence;  // kOperator

  bool operator==(const ShellToken&) const = default;
};

Result<std::vector<ShellToken>> LexShell(std::string_view script);

// The one word of `script` that starts at *pos, read by LexShell's rules
// (quotes, escapes, concatenation) and ended by a blank, a line end ('\r' or
// '\n') or an operator character, which is not consumed; *pos is moved past the word.
// nullopt (and *pos unchanged) when no word starts there or the word holds
// anything LexShell refuses. For matching a fixed command form, e.g. the DIR of
// `cd DIR && ...`, without lexing the whole script.
std::optional<std::string> ReadShellWord(std::string_view script, size_t* pos);

// A script as simple commands joined by operators.
struct ShellCommandList {
  std::vector<std::vector<std::string>> commands;  // argv of each simple command
  std::vector<ShellOperator> operators;            // operators[i] joins commands[i] and [i+1]
};

// LexShell, then split at operators. A trailing ';' or newline is fine; an
// empty script, an operator without a command on each side, is refused.
Result<ShellCommandList> ParseCommandList(std::string_view script);

// Quoting a word back for a shell is base/shell.h's (ShellQuote, ShellJoin).

}  // namespace codex::sandbox
