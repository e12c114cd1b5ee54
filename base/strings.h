// The small string rules every module uses, once (issue 29): ASCII trimming
// and case folding, and cutting or decoding UTF-8 without splitting a
// sequence. Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace codex {

// ASCII whitespace: space, \t, \n, \v, \f, \r (what std::isspace says in the
// C locale). Not HTTP's optional whitespace (space and tab only) and not the
// Unicode spaces apply_patch folds: those rules live where they are used.
bool IsAsciiSpace(char c);

// `s` without leading and trailing ASCII whitespace.
std::string_view Trim(std::string_view s);
std::string_view TrimLeft(std::string_view s);
std::string_view TrimRight(std::string_view s);

// `s` with A-Z folded to a-z; other bytes (UTF-8 included) unchanged.
std::string Lower(std::string_view s);

// `text` safe as markup text (HTML, or a tag-delimited section of a model
// message): '&', '<', '>' become entities, and with `quotes` also '"' and '\''
// (&quot; &#39;, for attribute values). Other bytes pass unchanged.
std::string EscapeMarkup(std::string_view text, bool quotes);

// The lines of `text`, each without its '\n' (a '\r' before it is kept): a
// final line without '\n' counts, the empty piece after a trailing '\n' does
// not ("a\nb\n" and "a\nb" are both {"a", "b"}; "" is {}). Views into `text`.
std::vector<std::string_view> SplitLines(std::string_view text);

// True for a UTF-8 continuation byte (10xxxxxx).
bool IsUtf8Continuation(char c);

// The largest UTF-8 boundary <= pos (pos is clamped to s.size()).
size_t Utf8BoundaryAtOrBefore(std::string_view s, size_t pos);
// The smallest UTF-8 boundary >= pos (s.size() at most).
size_t Utf8BoundaryAtOrAfter(std::string_view s, size_t pos);

// The longest prefix of `s` of at most `max_bytes` bytes that does not end
// inside a UTF-8 sequence.
std::string_view Utf8Prefix(std::string_view s, size_t max_bytes);

// The length (1-4) of the valid UTF-8 sequence starting at s[i], 0 when the
// bytes there are not one (a stray continuation, an overlong form, a
// surrogate, past U+10FFFF, or cut short). Stores its code point in *cp when
// cp is not null.
size_t DecodeUtf8(std::string_view s, size_t i, uint32_t* cp = nullptr);

}  // namespace codex
