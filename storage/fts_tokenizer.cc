#include "storage/fts_tokenizer.h"

#include <sqlite3.h>

#include <climits>

namespace codex::storage {

namespace {

// An in-memory connection (the tokenizer belongs to its FTS5 module) and one
// unicode61 tokenizer, per thread: a tokenizer keeps a scratch buffer.
class Tokenizer {
 public:
  Tokenizer() {
    if (sqlite3_open_v2(":memory:", &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) !=
        SQLITE_OK) {
      return;
    }
    fts5_api* api = nullptr;
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db_, "SELECT fts5(?1)", -1, &stmt, nullptr) == SQLITE_OK) {
      sqlite3_bind_pointer(stmt, 1, static_cast<void*>(&api), "fts5_api_ptr", nullptr);
      sqlite3_step(stmt);
    }
    sqlite3_finalize(stmt);
    if (api == nullptr) return;
    void* user = nullptr;
    if (api->xFindTokenizer(api, "unicode61", &user, &module_) != SQLITE_OK) return;
    const char* args[] = {"remove_diacritics", "2"};
    if (module_.xCreate(user, args, 2, &tokenizer_) != SQLITE_OK) tokenizer_ = nullptr;
  }
  ~Tokenizer() {
    if (tokenizer_ != nullptr) module_.xDelete(tokenizer_);
    sqlite3_close(db_);
  }
  Tokenizer(const Tokenizer&) = delete;
  Tokenizer& operator=(const Tokenizer&) = delete;

  std::vector<FtsToken> Run(std::string_view text) {
    std::vector<FtsToken> out;
    if (tokenizer_ == nullptr || text.size() > static_cast<size_t>(INT_MAX)) return out;
    auto emit = [](void* ctx, int, const char* token, int n, int start, int end) -> int {
      auto* v = static_cast<std::vector<FtsToken>*>(ctx);
      v->push_back({static_cast<size_t>(start), static_cast<size_t>(end),
                    std::string(token, static_cast<size_t>(n))});
      return SQLITE_OK;
    };
    module_.xTokenize(tokenizer_, &out, FTS5_TOKENIZE_DOCUMENT, text.data(),
                      static_cast<int>(text.size()), emit);
    return out;
  }

 private:
  sqlite3* db_ = nullptr;
  fts5_tokenizer module_{};
  Fts5Tokenizer* tokenizer_ = nullptr;
};

}  // namespace

std::vector<FtsToken> FtsTokens(std::string_view text) {
  thread_local Tokenizer tokenizer;
  return tokenizer.Run(text);
}

}  // namespace codex::storage
