// The words of a text as `codex sessions search` sees them, on both backends:
// SQLite's FTS5 index uses this tokenizer (registered on every connection as
// "codex", migrations/0006), and the PostgreSQL backend (storage/pg_search.h)
// gives PostgreSQL the same tokens as a tsvector, so both find the same words.
//
//  - A word is a run of letters, digits and combining marks (Unicode
//    categories L, N, M, Co); anything else separates words (punctuation,
//    spaces, symbols, "_"). Format characters (soft hyphen, ZWJ) are skipped.
//  - Words are folded by utf8proc: compatibility decomposition (NFKD: "ﬁ" is
//    "fi", full-width "Ａ" is "a") and Unicode case folding ("Straße" is
//    "strasse", final "ς" is "σ"); the accents of Latin, Greek and Cyrillic
//    letters are dropped ("Café" is "cafe", "σίσυφος" is "σισυφος"), those of
//    other scripts are kept (they change the letter). Latin letters with a
//    stroke that Unicode does not decompose (ø ł đ ħ ŧ ı) fold to their base.
//  - Han, kana and Hangul are written without spaces: a run of them is indexed
//    as its overlapping pairs (bigrams) plus its last character, so "日本語"
//    is found inside "日本語のテキスト". A query's run ends without the last
//    character (it may continue in the text); a one-character query is a
//    prefix (storage/search_text.h builds queries).
//  - Emoji (pictographs) are words of one character each; other symbols are
//    separators.
//  - A folded word longer than kMaxTokenBytes is not indexed (a query for one
//    is refused by storage/search_text.h).
// Internal to codex_storage; thread-safe.
#pragma once

#include <sqlite3.h>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace codex::storage {

// PostgreSQL's lexeme limit is 2047 bytes; words this long are hashes or
// base64, never something a user types to find.
inline constexpr size_t kMaxTokenBytes = 255;

struct FtsToken {
  size_t begin = 0;  // byte offsets of the word in the text
  size_t end = 0;
  std::string folded;  // the indexed form
  bool cjk = false;    // a bigram or single character of a Han/kana/Hangul run
};

enum class TokenizeMode {
  kDocument,  // what is indexed
  kQuery,     // what is searched for: over-long words kept (to be refused),
              // the run at the end without its last character
};

// The tokens of `text` in order. Invalid UTF-8 bytes separate words.
std::vector<FtsToken> FtsTokens(std::string_view text, TokenizeMode mode = TokenizeMode::kDocument);

// Registers the FTS5 tokenizer "codex" (FtsTokens) on `db`. kInternal when the
// SQLite library has no FTS5.
Status RegisterCodexTokenizer(sqlite3* db);

}  // namespace codex::storage
