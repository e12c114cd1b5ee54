// The interface of codex-highlight.so, the module beside codex that holds
// GNU Source-highlight (cli/interactive/code_highlight.h). Source-highlight
// pulls boost_regex and ICU: six libraries that only the interactive UI's
// coloured code blocks need, so codex loads the module (dlopen) at the first
// such block instead of mapping them at every start. Plain C across the
// boundary; the caller serialises calls (the module keeps one highlighter).
#pragma once

#include <cstddef>

namespace codex::cli {

// The module's file name, found beside the codex executable.
inline constexpr const char* kHighlightModule = "codex-highlight.so";
// The one function it exports (extern "C").
inline constexpr const char* kHighlightSymbol = "codex_highlight_code";

// Receives the highlighted text (ANSI SGR escapes, lines separated by "\n").
using HighlightEmit = void (*)(void* ctx, const char* text, size_t len);

// Highlights `code` by the grammar of the fence language `lang`: 1 = the text
// was given to `emit`, 0 = no grammar for `lang`, -1 = Source-highlight's data
// files cannot be read (ask no more).
using HighlightCodeFn = int (*)(const char* code, size_t code_len, const char* lang,
                                size_t lang_len, HighlightEmit emit, void* ctx);

}  // namespace codex::cli
