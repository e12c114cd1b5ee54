// The words of a text as SQLite's FTS5 index sees them: its "unicode61"
// tokenizer with "remove_diacritics 2" (migrations/0003), run outside any
// database. The PostgreSQL backend (storage/pg_search.h) cuts and folds text
// with it, so both backends find the same words: "Café" matches "cafe",
// "ÉCOLE" matches "école", Unicode punctuation separates words. Internal to
// codex_storage; thread-safe (one tokenizer per thread).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace codex::storage {

struct FtsToken {
  size_t begin = 0;  // byte offsets of the word in the text
  size_t end = 0;
  std::string folded;  // the indexed form: case and diacritics folded
};

// The tokens of `text` in order. Empty when the SQLite library lacks FTS5
// (the SQLite backend refuses to open then too).
std::vector<FtsToken> FtsTokens(std::string_view text);

}  // namespace codex::storage
