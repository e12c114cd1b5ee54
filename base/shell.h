// Shell words, once (issue 29): quoting a word for a POSIX shell, and the one
// rule for "is this argv `bash -lc SCRIPT`?".
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace codex {

// `word` as one POSIX shell word: unchanged when every byte is in
// [A-Za-z0-9_@%+:,./-] (and it is not empty), else in single quotes with each
// ' written '\''. `sh -c "printf %s <result>"` prints `word` back.
std::string ShellQuote(std::string_view word);

// The words joined by spaces, each quoted as ShellQuote does, except that
// '=' stays unquoted after the first word (there it is literal; in the first
// word `A=b` would be an assignment).
std::string ShellJoin(const std::vector<std::string>& words);

// The script of a shell invocation the way Codex recognises one: exactly
// three words, the first naming bash, zsh or sh (by its file name, any
// directory), the second exactly "-lc" or "-c". nullopt for anything else
// ("-cl", "dash", extra arguments after the script).
std::optional<std::string_view> ShellScriptOf(const std::vector<std::string>& argv);

}  // namespace codex
