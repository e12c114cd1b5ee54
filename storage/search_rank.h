// The ranking `codex sessions search` orders matches by: FTS5's Okapi BM25
// (k1 = 1.2, b = 0.75, the formula of FTS5's built-in bm25()), computed by an
// auxiliary function that takes each row's document size as an argument.
//
// Why not bm25() itself: it reads the size of every matching row with its own
// statement on the %_docsize shadow table (one statement step per row, about
// 1 µs each), which made a word found in 76,000 tool outputs cost ~70 ms before
// the first result. Joining items_fts_docsize in the search query reads the
// same sizes inside one statement, several times faster, with identical scores.
//
// Both backends rank by these two functions (PostgreSQL computes the same
// inputs from its own rows, storage/postgres_session_search.cc), so a search
// returns the same hits in the same order on either: best score first, and on
// equal scores the newer item (higher id) first.
#pragma once

#include <sqlite3.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/status.h"

namespace codex::storage {

// A phrase's inverse document frequency, as FTS5's bm25(): ln((N - n + 0.5) /
// (n + 0.5)) for `rows` (N) indexed rows of which `hits` (n) hold the phrase,
// floored at 1e-6 so that a phrase in more than half the rows never scores
// negative.
double Bm25Idf(int64_t rows, int64_t hits);

// A row's BM25 score (positive, higher is better): the sum over the query's
// phrases of idf * f * (k1 + 1) / (f + k1 * (1 - b + b * dl / avgdl)), with
// f = `freq[i]`, the phrase's instances in the row (a prefix counts each
// matching token), dl = `size`, the row's tokens, avgdl = the index's tokens
// over its rows. k1 = 1.2, b = 0.75.
double Bm25Score(const std::vector<double>& idf, const std::vector<double>& freq, double size,
                 double avgdl);

// The average row size bm25() divides by: `tokens` / `rows`, 1 for an empty index.
double Bm25AverageSize(int64_t rows, int64_t tokens);

// The order of hits on both backends: the higher BM25 score first, the newer
// item (the higher id) first on equal scores. `score` is BM25's own (higher is
// better; codex_bm25 returns it negated, as bm25() does).
inline bool RanksBefore(double score_a, int64_t id_a, double score_b, int64_t id_b) {
  return score_a != score_b ? score_a > score_b : id_a > id_b;
}

// Sorts the next page of `scored` in place: [offset, end) receives, in order,
// the best `batch` of what follows `offset` (by `before`); returns `end`. A
// search sorts a page at a time (doubling `batch`): most want the first few.
template <typename T, typename Before>
size_t SortNextPage(std::vector<T>& scored, size_t offset, size_t batch, Before before) {
  const size_t end = std::min(scored.size(), offset + batch);
  std::partial_sort(scored.begin() + static_cast<std::ptrdiff_t>(offset),
                    scored.begin() + static_cast<std::ptrdiff_t>(end), scored.end(), before);
  return end;
}

struct SearchBasis;  // storage/session_database.h

// The optional third argument of codex_bm25: a pointer bound with
// sqlite3_bind_pointer(..., kBm25BasisType, nullptr). With `frozen` the
// function ranks by *basis (its rows, tokens and per-phrase counts; an error
// when the counts are not one per phrase); otherwise it writes what it
// ranks by into *basis (all but max_item_id).
struct Bm25BasisSlot {
  SearchBasis* basis = nullptr;
  bool frozen = false;
};
inline constexpr char kBm25BasisType[] = "codex_bm25_basis";

// Registers the FTS5 auxiliary function codex_bm25(fts_table, docsize_blob
// [, basis]) on `db`. `docsize_blob` is the row's `sz` from <table>_docsize
// (NULL: the function asks FTS5 for the size instead). Returns the BM25 score
// negated, like bm25(): ORDER BY it ascending for best first. kInternal when
// the SQLite library has no FTS5.
Status RegisterSearchRank(sqlite3* db);

}  // namespace codex::storage
