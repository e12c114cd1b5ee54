// Full-text search on PostgreSQL with SQLite's rules (storage/search_text.h):
// the text is cut into words and folded (case, diacritics) by SQLite's own
// FTS5 tokenizer (storage/fts_tokenizer.h), and the lexemes are given to
// PostgreSQL directly as a tsvector, so its own parser (which keeps
// /usr/bin/ls or foo-bar whole) and its dictionaries never decide what a
// word is, and no extension (unaccent) is needed on the server. Queries use
// the CLI syntax (words ANDed, "a phrase", prefix*) and become a tsquery over
// the same tokens. Internal to codex_storage; pure functions, no I/O.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace codex::storage::pg {

// `text` as valid UTF-8 without NUL bytes (what a PostgreSQL text value may
// hold): invalid bytes and NULs become spaces.
std::string CleanText(std::string text);

// The tsvector literal of `text`: 'lexeme':pos,... over its tokens
// (PostgreSQL's limits: positions up to 16383, a word first found after the
// 16383rd kept without a position; at most 256 positions a lexeme; lexemes
// up to 255 bytes; at most ~512 KiB of distinct lexemes).
std::string TsVectorOf(std::string_view text);

struct TsQuery {
  std::string text;  // the tsquery literal; "" when no term has a token (matches nothing)
  struct Token {
    std::string word;  // lower case
    bool prefix = false;
  };
  std::vector<Token> tokens;  // every query token, for marking snippets
};

// The tsquery for a user query (validated like FtsQueryFromUser first).
Result<TsQuery> TsQueryFromUser(std::string_view query);

// One line around the first match in `text`, about 16 tokens, matched tokens
// wrapped in [ ], "…" where the text was cut.
std::string Snippet(std::string_view text, const TsQuery& query);

}  // namespace codex::storage::pg
