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
// `tokens`, when given, receives the number of tokens of `text`: the row
// size FTS5 records in its docsize for the same text, which BM25 ranks by
// (storage/search_rank.h).
std::string TsVectorOf(std::string_view text, int64_t* tokens = nullptr);

struct TsQuery {
  std::string text;  // the tsquery literal; "" when no term has a token (matches nothing)
  struct Token {
    std::string word;  // lower case
    bool prefix = false;
  };
  std::vector<Token> tokens;  // every query token, for marking snippets
  struct Phrase {
    std::string text;           // its own tsquery literal (to count the rows holding it)
    std::vector<Token> tokens;  // in order; a one-token phrase is a word or a prefix
  };
  std::vector<Phrase> phrases;  // as FTS5 sees the query: BM25 scores each phrase
};

// The tsquery for a user query (validated like FtsQueryFromUser first).
Result<TsQuery> TsQueryFromUser(std::string_view query);

// A row's lexemes that a query may count: each with its positions (1-based,
// ascending; empty for a lexeme kept without a position).
using RowLexemes = std::vector<std::pair<std::string, std::vector<int>>>;

// The lexemes of a tsvector's text form ('word':1,5A 'other'), each with
// its positions (weights dropped).
RowLexemes ParseTsVector(std::string_view tsvector);

// The instances of each of `query`'s phrases among `lexemes`, as FTS5
// counts them for bm25(): a one-token phrase, every token it matches (a
// prefix, every token starting with it); a longer phrase, every position
// where its tokens follow one another. A lexeme without positions counts for
// nothing (see NeedsFullCount).
std::vector<double> PhraseFrequencies(const RowLexemes& lexemes, const TsQuery& query);

// The lexemes of `text` with every position (no tsvector limit): what
// PhraseFrequencies needs when the stored tsvector lost positions.
RowLexemes AllLexemes(std::string_view text);

// True when a row of `tokens` tokens whose query lexemes are `lexemes` may
// hold instances its tsvector has no position for: words past position
// 16383 or a lexeme at the cap of 256 positions. Such a row is counted from
// its text (AllLexemes) instead, so its frequencies are exact as on SQLite.
bool NeedsFullCount(int64_t tokens, const RowLexemes& lexemes);

// The same for a row of a query whose phrases are each one token, from the
// server's count of each phrase's positions in the row (`counts`, the
// number of positions its lexemes hold): a count at 256 may be a lexeme at
// its cap (for a prefix, it may not: recounting it is only slower).
bool CountsNeedFullCount(int64_t tokens, const std::vector<double>& counts);

// The value PostgreSQL's ts_rank(tsv, word) takes for a word with `count`
// positions in the row (1 to 256, a lexeme's cap), all of the default
// weight D (0.1): its calc_rank_or, (sum over the positions j = 1..count of
// 0.1 / j^2) / 1.64493406685, in the same float arithmetic. (The default
// weights, not a weights array of ones: the server then parses no array
// for each row.) Strictly increasing in
// `count`, adjacent values ~60 float steps apart at 256 and more below.
float WordRankOfCount(int count);

// The count WordRankOfCount maps to the value nearest `rank` (so a last-bit
// difference in the server's arithmetic cannot change it): how a search
// reads a word's instances in a row from ts_rank, which costs the server
// less than ts_rank_cd (whose 32 KB of per-call scratch dominates it).
int WordCountOfRank(float rank);

// One line around the first match in `text`, about 16 tokens, matched tokens
// wrapped in [ ], "…" where the text was cut.
std::string Snippet(std::string_view text, const TsQuery& query);

}  // namespace codex::storage::pg
