#include "storage/search_rank.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "storage/session_database.h"

namespace codex::storage {

namespace {

// Per-query figures, computed on the first row and kept as FTS5 aux data:
// the average row size and each phrase's inverse document frequency.
struct Bm25Data {
  double avgdl = 1.0;
  std::vector<double> idf;
  std::vector<double> freq;  // scratch: phrase frequencies of the current row
};

// SQLite's varint (the format FTS5 writes its size arrays in): big-endian
// 7-bit groups with the high bit set on all but the last; a 9th byte carries 8.
bool ReadVarint(const unsigned char*& p, const unsigned char* end, uint64_t* out) {
  uint64_t v = 0;
  for (int i = 0; i < 9; ++i) {
    if (p == end) return false;
    const unsigned char b = *p++;
    if (i == 8) {
      *out = (v << 8) | b;
      return true;
    }
    v = (v << 7) | (b & 0x7f);
    if (!(b & 0x80)) {
      *out = v;
      return true;
    }
  }
  return false;
}

int CountRow(const Fts5ExtensionApi*, Fts5Context*, void* user) {
  ++*static_cast<int64_t*>(user);
  return SQLITE_OK;
}

int GetData(const Fts5ExtensionApi* api, Fts5Context* fts, const Bm25BasisSlot* slot,
            Bm25Data** out) {
  auto* data = static_cast<Bm25Data*>(api->xGetAuxdata(fts, 0));
  if (data) {
    *out = data;
    return SQLITE_OK;
  }
  auto owned = std::make_unique<Bm25Data>();
  const int phrases = api->xPhraseCount(fts);
  SearchBasis* basis = slot ? slot->basis : nullptr;
  if (basis && slot->frozen) {
    // A later page: the figures of the first.
    if (basis->holding.size() != static_cast<size_t>(phrases)) return SQLITE_MISMATCH;
    owned->avgdl = Bm25AverageSize(basis->rows, basis->tokens);
    for (int64_t hits : basis->holding) owned->idf.push_back(Bm25Idf(basis->rows, hits));
  } else {
    sqlite3_int64 rows = 0;
    sqlite3_int64 tokens = 0;
    int rc = api->xRowCount(fts, &rows);
    if (rc == SQLITE_OK) rc = api->xColumnTotalSize(fts, -1, &tokens);
    if (rc != SQLITE_OK) return rc;
    owned->avgdl = Bm25AverageSize(rows, tokens);
    if (basis) {
      basis->rows = rows;
      basis->tokens = tokens;
      basis->holding.clear();
    }
    for (int i = 0; i < phrases; ++i) {
      int64_t hits = 0;
      rc = api->xQueryPhrase(fts, i, &hits, CountRow);
      if (rc != SQLITE_OK) return rc;
      owned->idf.push_back(Bm25Idf(rows, hits));
      if (basis) basis->holding.push_back(hits);
    }
  }
  owned->freq.resize(owned->idf.size());
  data = owned.release();
  const int rc = api->xSetAuxdata(fts, data, [](void* p) { delete static_cast<Bm25Data*>(p); });
  if (rc != SQLITE_OK) return rc;  // xSetAuxdata has freed it
  *out = data;
  return SQLITE_OK;
}

void Bm25(const Fts5ExtensionApi* api, Fts5Context* fts, sqlite3_context* ctx, int argc,
          sqlite3_value** argv) {
  Bm25Data* data = nullptr;
  const auto* slot =
      argc >= 2 ? static_cast<const Bm25BasisSlot*>(sqlite3_value_pointer(argv[1], kBm25BasisType))
                : nullptr;
  int rc = GetData(api, fts, slot, &data);
  int instances = 0;
  if (rc == SQLITE_OK) rc = api->xInstCount(fts, &instances);
  if (rc != SQLITE_OK) {
    sqlite3_result_error_code(ctx, rc);
    return;
  }
  std::fill(data->freq.begin(), data->freq.end(), 0.0);
  // One phrase (the usual one-word search): every instance is of it.
  if (data->freq.size() == 1) data->freq[0] = instances;
  for (int i = 0; data->freq.size() > 1 && i < instances; ++i) {
    int phrase = 0, column = 0, offset = 0;
    rc = api->xInst(fts, i, &phrase, &column, &offset);
    if (rc != SQLITE_OK) {
      sqlite3_result_error_code(ctx, rc);
      return;
    }
    if (phrase >= 0 && static_cast<size_t>(phrase) < data->freq.size()) data->freq[phrase] += 1.0;
  }
  // The row's size in tokens: the sum of the docsize blob's per-column varints.
  double size = -1;
  if (argc >= 1 && sqlite3_value_type(argv[0]) == SQLITE_BLOB) {
    const auto* p = static_cast<const unsigned char*>(sqlite3_value_blob(argv[0]));
    const unsigned char* end = p + sqlite3_value_bytes(argv[0]);
    uint64_t total = 0;
    bool ok = p != nullptr;
    while (ok && p != end) {
      uint64_t v = 0;
      ok = ReadVarint(p, end, &v);
      total += v;
    }
    if (ok) size = static_cast<double>(total);
  }
  if (size < 0) {
    int tokens = 0;
    rc = api->xColumnSize(fts, -1, &tokens);
    if (rc != SQLITE_OK) {
      sqlite3_result_error_code(ctx, rc);
      return;
    }
    size = tokens;
  }
  sqlite3_result_double(ctx, -Bm25Score(data->idf, data->freq, size, data->avgdl));
}

}  // namespace

double Bm25Idf(int64_t rows, int64_t hits) {
  // The floor keeps a phrase in more than half the rows from scoring
  // negative (as bm25() does).
  const double idf =
      std::log((static_cast<double>(rows - hits) + 0.5) / (static_cast<double>(hits) + 0.5));
  return idf <= 0.0 ? 1e-6 : idf;
}

double Bm25AverageSize(int64_t rows, int64_t tokens) {
  const double avgdl = rows > 0 ? static_cast<double>(tokens) / static_cast<double>(rows) : 1.0;
  return avgdl <= 0 ? 1.0 : avgdl;
}

double Bm25Score(const std::vector<double>& idf, const std::vector<double>& freq, double size,
                 double avgdl) {
  constexpr double kK1 = 1.2;
  constexpr double kB = 0.75;
  double score = 0;
  for (size_t i = 0; i < idf.size() && i < freq.size(); ++i) {
    const double f = freq[i];
    score += idf[i] * ((f * (kK1 + 1.0)) / (f + kK1 * (1 - kB + kB * size / avgdl)));
  }
  return score;
}

Status RegisterSearchRank(sqlite3* db) {
  fts5_api* api = nullptr;
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db, "SELECT fts5(?1)", -1, &stmt, nullptr) == SQLITE_OK) {
    sqlite3_bind_pointer(stmt, 1, static_cast<void*>(&api), "fts5_api_ptr", nullptr);
    sqlite3_step(stmt);
  }
  sqlite3_finalize(stmt);
  if (!api || api->iVersion < 2) {
    return InternalError("the SQLite library has no FTS5; session search needs it");
  }
  if (api->xCreateFunction(api, "codex_bm25", nullptr, Bm25, nullptr) != SQLITE_OK) {
    return InternalError("cannot register the search ranking function");
  }
  return OkStatus();
}

}  // namespace codex::storage
