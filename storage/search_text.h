// What `codex sessions search` indexes: the plain text a user saw of an item
// (ARCHITECTURE.md, Data model). Message text (injected context excluded),
// reasoning summaries, a tool call's command or arguments, and a tool
// output's text: JSON is decoded, so "line1\nword" is indexed as two lines
// and `word` is found, never `nword`.
#pragma once

#include <sqlite3.h>

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "core/item.h"

namespace codex::storage {

// The searchable text of `item`; "" when it has none (context, encrypted
// reasoning, compaction items, checkpoints).
std::string SearchText(const core::Item& item);

// Registers the SQL function codex_search_text(kind, role, body) -> TEXT or
// NULL on `db` (used by migration 0003 to rebuild the index).
void RegisterSearchTextFunction(sqlite3* db);

// One term of a `sessions search` query: a word, a word ending in * (a prefix
// query: `text` is the word without the *) or "a phrase" in double quotes
// (`text` is what stands between them, never blank).
struct SearchTerm {
  std::string text;
  bool prefix = false;
};

// The terms of a user query, the one query syntax of both backends: terms are
// separated by white space (of any script: U+3000, a no-break space) and ANDed. kInvalidArgument,
// naming the problem (never repeating the query), for an empty query, an unbalanced quote, a '*'
// anywhere but the end of a word, a NUL byte or bytes that are not UTF-8.
Result<std::vector<SearchTerm>> ParseSearchQuery(std::string_view query);

// One token of a query term (storage/fts_tokenizer.h), as both backends
// search for it: exactly, or as the start of an indexed token.
// The most words and phrases one search looks for (each is ranked on its
// own; a --cursor carries a count per term).
inline constexpr size_t kMaxSearchTerms = 64;
// The most tokens of all its terms together ("a phrase" of many words, a
// long Han run's bigrams).
inline constexpr size_t kMaxSearchTokens = 256;

struct QueryToken {
  std::string word;  // folded
  bool prefix = false;
};

// The tokens of each term of a user query, one search semantics for both
// backends: a term's tokens must appear in a row; a prefix term's last token
// and a lone Han/kana/Hangul character (the start of a bigram) are prefixes.
// A term with no token (punctuation such as "--" or "()": not indexed) is
// left out. kInvalidArgument, in one line that does not repeat the query,
// for a query with no token at all, with a word longer than the index keeps
// or with more than kMaxSearchTerms terms that have tokens or
// kMaxSearchTokens tokens.
Result<std::vector<std::vector<QueryToken>>> QueryTokensFromUser(std::string_view query);

// The FTS5 MATCH expression for a user query (QueryTokensFromUser): each
// term's tokens as a phrase, the terms ANDed.
Result<std::string> FtsQueryFromUser(std::string_view query);

}  // namespace codex::storage
