// Syntax colours for the code blocks of the interactive transcript, by GNU
// Source-highlight (Debian libsource-highlight-dev): a maintained library
// with language definitions for some 150 languages and an ANSI-escape output
// format, so colours come from its grammars rather than from keyword lists
// kept here. Thread-safe (one highlighter behind a lock; results cached).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace codex::cli {

// `code` (lines separated by "\n", no trailing newline; already terminal
// safe: cli/terminal_text.h) with SGR colours by the grammar of the fence's
// language `lang` ("cpp", "python", "sh", a file extension ...), one string a
// line, each line's colours closed at its end. nullopt when `lang` names no
// language Source-highlight knows, or its definitions cannot be read.
std::optional<std::vector<std::string>> HighlightCode(std::string_view code, std::string_view lang);

}  // namespace codex::cli
