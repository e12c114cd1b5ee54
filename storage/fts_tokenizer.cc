#include "storage/fts_tokenizer.h"

#include <utf8proc.h>

#include <climits>
#include <optional>

namespace codex::storage {

namespace {

enum class Class { kSeparator, kWord, kMark, kSkip, kCjk, kEmoji };

// Scripts written without spaces between words (Unicode blocks).
bool IsCjk(int32_t c) {
  return (c >= 0x2E80 && c <= 0x2FDF) ||  // CJK and Kangxi radicals
         (c >= 0x3005 && c <= 0x3007) ||  // 々 〆 〇
         (c >= 0x3040 && c <= 0x30FF) ||  // hiragana, katakana
         (c >= 0x3130 && c <= 0x318F) ||  // Hangul compatibility jamo
         (c >= 0x31F0 && c <= 0x31FF) ||  // katakana phonetic extensions
         (c >= 0x3400 && c <= 0x4DBF) ||  // CJK extension A
         (c >= 0x4E00 && c <= 0x9FFF) ||  // CJK unified ideographs
         (c >= 0xAC00 && c <= 0xD7AF) ||  // Hangul syllables
         (c >= 0xF900 && c <= 0xFAFF) ||  // CJK compatibility ideographs
         (c >= 0xFF66 && c <= 0xFF9F) ||  // half-width katakana
         (c >= 0x20000 && c <= 0x3FFFF);  // CJK extensions B and later
}

// Pictographs: the emoji blocks and the older symbol blocks emoji come from.
bool IsPictograph(int32_t c) { return c >= 0x1F000 || (c >= 0x2600 && c <= 0x27BF); }

Class Classify(int32_t c) {
  if (IsCjk(c)) return Class::kCjk;
  switch (utf8proc_category(c)) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO:
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_NO:
    case UTF8PROC_CATEGORY_CO:
      return Class::kWord;
    case UTF8PROC_CATEGORY_MN:
    case UTF8PROC_CATEGORY_MC:
    case UTF8PROC_CATEGORY_ME:
      return Class::kMark;
    case UTF8PROC_CATEGORY_CF:
      return Class::kSkip;
    case UTF8PROC_CATEGORY_SO:
      return IsPictograph(c) ? Class::kEmoji : Class::kSeparator;
    default:
      return Class::kSeparator;
  }
}

bool IsMark(int32_t c) {
  const auto cat = utf8proc_category(c);
  return cat == UTF8PROC_CATEGORY_MN || cat == UTF8PROC_CATEGORY_MC || cat == UTF8PROC_CATEGORY_ME;
}

// Latin, Greek and Cyrillic (with their extensions): scripts whose marks are
// accents a search ignores.
bool DropsMarks(int32_t base) { return base < 0x0530 || (base >= 0x1D00 && base < 0x2000); }

// Latin letters with a stroke or bar: no Unicode decomposition names their base.
int32_t Unstroke(int32_t c) {
  switch (c) {
    case 0x00F8:  // ø
      return 'o';
    case 0x0111:  // đ
      return 'd';
    case 0x0127:  // ħ
      return 'h';
    case 0x0131:  // ı
      return 'i';
    case 0x0142:  // ł
      return 'l';
    case 0x0167:  // ŧ
      return 't';
    default:
      return c;
  }
}

void Append(std::string& out, int32_t c) {
  utf8proc_uint8_t buf[4];
  const auto n = utf8proc_encode_char(c, buf);
  out.append(reinterpret_cast<const char*>(buf), static_cast<size_t>(n));
}

class Tokenizer {
 public:
  Tokenizer(std::string_view text, TokenizeMode mode) : text_(text), mode_(mode) {}

  std::vector<FtsToken> Run() {
    const auto* p = reinterpret_cast<const utf8proc_uint8_t*>(text_.data());
    size_t i = 0;
    while (i < text_.size()) {
      int32_t c = -1;
      auto n = utf8proc_iterate(p + i, static_cast<utf8proc_ssize_t>(text_.size() - i), &c);
      if (n <= 0) {
        n = 1;
        c = -1;
      }
      const size_t next = i + static_cast<size_t>(n);
      const Class cls = c < 0 ? Class::kSeparator : Classify(c);
      if (cls == Class::kWord || (in_word_ && (cls == Class::kMark || cls == Class::kSkip))) {
        EndRun();
        if (!in_word_) {
          in_word_ = true;
          word_begin_ = i;
          word_.clear();
          base_ = 0;
        }
        if (cls != Class::kSkip) Fold(c);
        word_end_ = next;
      } else if (cls == Class::kCjk) {
        EndWord();
        run_.push_back({i, next});
      } else if (cls == Class::kSkip && !run_.empty()) {
        // A format character inside a run (a joiner) neither ends it nor counts.
      } else {
        EndWord();
        EndRun();
        if (cls == Class::kEmoji) {
          std::string folded;
          Append(folded, c);
          out_.push_back({i, next, std::move(folded), false});
        }
      }
      i = next;
    }
    EndWord();
    EndRun();
    // A query's run that nothing follows may continue in the text, where its
    // last character starts a bigram: it is not a token of its own then.
    if (mode_ == TokenizeMode::kQuery && trailing_ && *trailing_ + 1 == out_.size()) {
      out_.pop_back();
    }
    return std::move(out_);
  }

 private:
  struct Char {
    size_t begin, end;
  };

  void Fold(int32_t c) {
    utf8proc_int32_t buf[18];
    utf8proc_int32_t boundclass = 0;
    const auto n = utf8proc_decompose_char(
        c, buf, 18,
        static_cast<utf8proc_option_t>(UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT | UTF8PROC_CASEFOLD),
        &boundclass);
    if (n < 0 || n > 18) {
      Append(word_, c);
      return;
    }
    for (utf8proc_ssize_t k = 0; k < n; ++k) {
      const int32_t d = buf[k];
      if (IsMark(d)) {
        if (base_ != 0 && DropsMarks(base_)) continue;
        Append(word_, d);
        continue;
      }
      base_ = d;
      Append(word_, Unstroke(d));
    }
  }

  void EndWord() {
    if (!in_word_) return;
    in_word_ = false;
    if (word_.empty()) return;
    if (mode_ == TokenizeMode::kDocument && word_.size() > kMaxTokenBytes) return;
    out_.push_back({word_begin_, word_end_, word_, false});
  }

  std::string Chars(size_t from, size_t to) const {
    return std::string(text_.substr(run_[from].begin, run_[to].end - run_[from].begin));
  }

  void EndRun() {
    if (run_.empty()) return;
    const size_t n = run_.size();
    for (size_t k = 0; k + 1 < n; ++k) {
      out_.push_back({run_[k].begin, run_[k + 1].end, Chars(k, k + 1), true});
    }
    // The last character, so that it is found alone.
    trailing_.reset();
    if (n > 1) trailing_ = out_.size();
    out_.push_back({run_[n - 1].begin, run_[n - 1].end, Chars(n - 1, n - 1), true});
    run_.clear();
  }

  std::string_view text_;
  TokenizeMode mode_;
  std::vector<FtsToken> out_;
  bool in_word_ = false;
  size_t word_begin_ = 0, word_end_ = 0;
  std::string word_;
  int32_t base_ = 0;
  std::vector<Char> run_;
  std::optional<size_t> trailing_;  // index in out_ of the last run's own last character
};

// The FTS5 side: FtsTokens behind the fts5_tokenizer interface.
int CreateTokenizer(void*, const char**, int, Fts5Tokenizer** out) {
  static int instance = 0;
  *out = reinterpret_cast<Fts5Tokenizer*>(&instance);
  return SQLITE_OK;
}

void DeleteTokenizer(Fts5Tokenizer*) {}

int Tokenize(Fts5Tokenizer*, void* ctx, int flags, const char* text, int n,
             int (*token)(void*, int, const char*, int, int, int)) {
  if (n < 0) return SQLITE_ERROR;
  const TokenizeMode mode =
      (flags & FTS5_TOKENIZE_QUERY) != 0 ? TokenizeMode::kQuery : TokenizeMode::kDocument;
  try {
    for (const FtsToken& t : FtsTokens(std::string_view(text, static_cast<size_t>(n)), mode)) {
      const int rc = token(ctx, 0, t.folded.data(), static_cast<int>(t.folded.size()),
                           static_cast<int>(t.begin), static_cast<int>(t.end));
      if (rc != SQLITE_OK) return rc;
    }
  } catch (const std::bad_alloc&) {
    return SQLITE_NOMEM;
  }
  return SQLITE_OK;
}

}  // namespace

std::vector<FtsToken> FtsTokens(std::string_view text, TokenizeMode mode) {
  return Tokenizer(text, mode).Run();
}

Status RegisterCodexTokenizer(sqlite3* db) {
  fts5_api* api = nullptr;
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db, "SELECT fts5(?1)", -1, &stmt, nullptr) == SQLITE_OK) {
    sqlite3_bind_pointer(stmt, 1, static_cast<void*>(&api), "fts5_api_ptr", nullptr);
    sqlite3_step(stmt);
  }
  sqlite3_finalize(stmt);
  if (api == nullptr) {
    return InternalError("this SQLite library has no FTS5; codex needs it for search");
  }
  fts5_tokenizer tokenizer{CreateTokenizer, DeleteTokenizer, Tokenize};
  if (api->xCreateTokenizer(api, "codex", nullptr, &tokenizer, nullptr) != SQLITE_OK) {
    return InternalError("cannot register the codex search tokenizer");
  }
  return OkStatus();
}

}  // namespace codex::storage
