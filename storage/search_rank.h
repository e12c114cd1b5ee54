// The ranking `codex sessions search` orders matches by: FTS5's Okapi BM25
// (k1 = 1.2, b = 0.75, the formula of FTS5's built-in bm25()), computed by an
// auxiliary function that takes each row's document size as an argument.
//
// Why not bm25() itself: it reads the size of every matching row with its own
// statement on the %_docsize shadow table (one statement step per row, about
// 1 µs each), which made a word found in 76,000 tool outputs cost ~70 ms before
// the first result. Joining items_fts_docsize in the search query reads the
// same sizes inside one statement, several times faster, with identical scores.
#pragma once

#include <sqlite3.h>

#include "base/status.h"

namespace codex::storage {

// Registers the FTS5 auxiliary function codex_bm25(fts_table, docsize_blob) on
// `db`. `docsize_blob` is the row's `sz` from <table>_docsize (NULL: the
// function asks FTS5 for the size instead). Returns the BM25 score negated,
// like bm25(): ORDER BY it ascending for best first. kInternal when the
// SQLite library has no FTS5.
Status RegisterSearchRank(sqlite3* db);

}  // namespace codex::storage
