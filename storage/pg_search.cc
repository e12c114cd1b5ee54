#include "storage/pg_search.h"

#include <algorithm>
#include <map>

#include "base/strings.h"
#include "storage/fts_tokenizer.h"
#include "storage/search_text.h"

namespace codex::storage::pg {

namespace {

constexpr int kMaxPosition = 16383;
constexpr int kMaxPositionsPerLexeme = 256;
constexpr size_t kMaxLexemeTotal = 512 * 1024;

using Token = FtsToken;

// SQLite's FTS5 tokens (storage/fts_tokenizer.h): the same words, folded alike.
std::vector<Token> Tokens(std::string_view text) { return FtsTokens(text); }

std::string Quote(std::string_view lexeme) {
  std::string out = "'";
  for (char c : lexeme) {
    if (c == '\'' || c == '\\') out += c;
    out += c;
  }
  return out + "'";
}

bool IsAsciiSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

}  // namespace

std::string CleanText(std::string text) {
  for (size_t i = 0; i < text.size();) {
    if (text[i] == '\0') {
      text[i++] = ' ';
      continue;
    }
    const size_t n = DecodeUtf8(text, i);
    if (n == 0) {
      text[i++] = ' ';
    } else {
      i += n;
    }
  }
  return text;
}

std::string TsVectorOf(std::string_view text, int64_t* tokens) {
  std::map<std::string, std::vector<int>> lexemes;
  size_t total = 0;
  int position = 0;
  const std::vector<Token> all = Tokens(text);
  if (tokens) *tokens = static_cast<int64_t>(all.size());
  for (const Token& t : all) {
    // A word past the last position a tsvector has is still a word of the
    // item (SQLite's index has no such limit): it is kept without a
    // position, so it matches as a word or a prefix, never inside a phrase
    // (a position clamped to the last one, as to_tsvector does, would make
    // "a b" match when a is the 16382nd word and b anywhere after).
    const bool past = position >= kMaxPosition;
    if (!past) ++position;
    if (t.folded.size() > kMaxTokenBytes) continue;  // (the tokenizer drops them)
    std::string word = t.folded;
    auto it = lexemes.find(word);
    if (it == lexemes.end()) {
      if (total + word.size() > kMaxLexemeTotal) continue;
      total += word.size();
      it = lexemes.emplace(std::move(word), std::vector<int>{}).first;
    }
    if (!past && it->second.size() < kMaxPositionsPerLexeme) it->second.push_back(position);
  }
  std::string out;
  for (const auto& [word, positions] : lexemes) {
    if (!out.empty()) out += ' ';
    out += Quote(word);
    for (size_t i = 0; i < positions.size(); ++i) {
      out += i ? ',' : ':';
      out += std::to_string(positions[i]);
    }
  }
  return out;
}

Result<TsQuery> TsQueryFromUser(std::string_view query) {
  ASSIGN_OR_RETURN(auto terms, QueryTokensFromUser(query));  // refuses what CleanText would change
  TsQuery out;
  for (const std::vector<QueryToken>& phrase : terms) {
    std::string term;
    for (size_t k = 0; k < phrase.size(); ++k) {
      if (k) term += " <-> ";
      term += Quote(phrase[k].word) + (phrase[k].prefix ? ":*" : "");
      out.tokens.push_back({phrase[k].word, phrase[k].prefix});
    }
    if (!out.text.empty()) out.text += " & ";
    out.text += phrase.size() > 1 ? "(" + term + ")" : term;
    TsQuery::Phrase p;
    p.text = term;
    for (const QueryToken& t : phrase) p.tokens.push_back({t.word, t.prefix});
    out.phrases.push_back(std::move(p));
  }
  return out;
}

namespace {

bool TokenMatches(const TsQuery::Token& q, const std::string& lexeme) {
  return q.prefix ? lexeme.compare(0, q.word.size(), q.word) == 0 : lexeme == q.word;
}

}  // namespace

std::vector<double> PhraseFrequencies(const RowLexemes& lexemes, const TsQuery& query) {
  std::vector<double> freq;
  for (const TsQuery::Phrase& phrase : query.phrases) {
    // The positions each token of the phrase matches (distinct lexemes never
    // share a position, so a prefix's positions are a union without overlap).
    std::vector<std::vector<int>> at(phrase.tokens.size());
    for (size_t k = 0; k < phrase.tokens.size(); ++k) {
      for (const auto& [lexeme, positions] : lexemes) {
        if (TokenMatches(phrase.tokens[k], lexeme)) {
          at[k].insert(at[k].end(), positions.begin(), positions.end());
        }
      }
      std::sort(at[k].begin(), at[k].end());
    }
    double n = 0;
    if (!at.empty()) {
      for (int p : at[0]) {
        bool all = true;
        for (size_t k = 1; all && k < at.size(); ++k) {
          all = std::binary_search(at[k].begin(), at[k].end(), p + static_cast<int>(k));
        }
        if (all) n += 1;
      }
    }
    freq.push_back(n);
  }
  return freq;
}

RowLexemes ParseTsVector(std::string_view text) {
  RowLexemes out;
  size_t i = 0;
  while (i < text.size()) {
    if (text[i] != '\'') {
      ++i;
      continue;
    }
    // A quoted lexeme: '' and \\ stand for one quote and one backslash.
    std::string lexeme;
    for (++i; i < text.size(); ++i) {
      if (text[i] == '\\' && i + 1 < text.size()) {
        lexeme += text[++i];
      } else if (text[i] == '\'') {
        if (i + 1 < text.size() && text[i + 1] == '\'') {
          lexeme += text[++i];
        } else {
          ++i;
          break;
        }
      } else {
        lexeme += text[i];
      }
    }
    std::vector<int> positions;
    if (i < text.size() && text[i] == ':') {
      ++i;
      while (i < text.size() && text[i] != ' ') {
        int p = 0;
        while (i < text.size() && text[i] >= '0' && text[i] <= '9') p = p * 10 + (text[i++] - '0');
        positions.push_back(p);
        while (i < text.size() && text[i] != ',' && text[i] != ' ') ++i;  // the weight
        if (i < text.size() && text[i] == ',') ++i;
      }
    }
    out.emplace_back(std::move(lexeme), std::move(positions));
  }
  return out;
}

RowLexemes AllLexemes(std::string_view text) {
  std::map<std::string, std::vector<int>> by_word;
  int position = 0;
  for (Token& t : Tokens(text)) by_word[std::move(t.folded)].push_back(++position);
  return RowLexemes(by_word.begin(), by_word.end());
}

bool NeedsFullCount(int64_t tokens, const RowLexemes& lexemes) {
  if (tokens > kMaxPosition) return true;
  for (const auto& [lexeme, positions] : lexemes) {
    if (positions.empty() || positions.size() >= kMaxPositionsPerLexeme) return true;
  }
  return false;
}

bool CountsNeedFullCount(int64_t tokens, const std::vector<double>& counts) {
  if (tokens > kMaxPosition) return true;
  for (double n : counts) {
    if (n >= kMaxPositionsPerLexeme) return true;
  }
  return false;
}

namespace {

// WordRankOfCount for 0..256, computed once.
const std::vector<float>& WordRanks() {
  static const auto* ranks = [] {
    auto* out = new std::vector<float>{0.0f};
    // PostgreSQL 15's calc_rank_or for one operand with the default weight
    // of a position (D, 0.1f) at every position: resj = sum of w / ((j + 1)
    // * (j + 1)) in float; then (wjm + resj - wjm / 1) / 1.64493406685 with
    // wjm = w, in float and a double division; then divided by the query's
    // one operand.
    constexpr float w = 0.1f;
    float resj = 0.0f;
    for (int j = 0; j < kMaxPositionsPerLexeme; ++j) {
      resj = resj + w / static_cast<float>((j + 1) * (j + 1));
      const float term = w + resj - w / 1.0f;
      const auto res = static_cast<float>(0.0 + static_cast<double>(term) / 1.64493406685);
      out->push_back(res / 1.0f);
    }
    return out;
  }();
  return *ranks;
}

}  // namespace

float WordRankOfCount(int count) {
  const std::vector<float>& ranks = WordRanks();
  return ranks[static_cast<size_t>(std::clamp(count, 0, kMaxPositionsPerLexeme))];
}

int WordCountOfRank(float rank) {
  const std::vector<float>& ranks = WordRanks();
  const auto it = std::lower_bound(ranks.begin(), ranks.end(), rank);
  if (it == ranks.end()) return kMaxPositionsPerLexeme;
  size_t k = static_cast<size_t>(it - ranks.begin());
  if (k > 0 && rank - ranks[k - 1] < *it - rank) --k;
  return static_cast<int>(k);
}

std::string Snippet(std::string_view text, const TsQuery& query) {
  constexpr size_t kWindow = 16;
  auto matches = [&](const Token& t) {
    const std::string& w = t.folded;
    for (const TsQuery::Token& q : query.tokens) {
      if (q.prefix ? w.compare(0, q.word.size(), q.word) == 0 : w == q.word) return true;
    }
    return false;
  };
  // The window needs the tokens up to its end and one more, not those of
  // a whole long tool output (tokenizing one cost more than the rest of a
  // search's page). No token spans ASCII whitespace (it ends a word and a
  // Han/kana run, and the tokenizer starts afresh after it), so the text is
  // tokenized a piece at a time, each piece ending just before whitespace
  // (the first past 256 bytes, then twice as far each time), the tokens of
  // each piece those of the whole text there, until the window fits or the
  // text ends. Each piece is tokenized once (cutting at 1 KiB and twice as
  // far from the start each time tokenized the text's head again and again,
  // and 1 KiB when the match is in the first line).
  std::vector<Token> tokens;
  size_t first = std::string_view::npos;
  for (size_t start = 0, want = 256; start < text.size(); want *= 2) {
    size_t cut = std::min(start + want, text.size());
    while (cut < text.size() && !IsAsciiSpace(text[cut])) ++cut;
    const size_t before = tokens.size();
    for (Token& t : Tokens(text.substr(start, cut - start))) {
      t.begin += start;
      t.end += start;
      tokens.push_back(std::move(t));
    }
    start = cut;
    for (size_t k = before; first == std::string_view::npos && k < tokens.size(); ++k) {
      if (matches(tokens[k])) first = k;
    }
    if (first != std::string_view::npos && (first > 3 ? first - 3 : 0) + kWindow < tokens.size()) {
      break;
    }
  }
  if (first == std::string_view::npos) first = 0;
  size_t lo = first > 3 ? first - 3 : 0;
  const size_t hi = std::min(tokens.size(), lo + kWindow);
  if (hi - lo < kWindow) lo = hi > kWindow ? hi - kWindow : 0;
  if (tokens.empty()) return std::string(text.substr(0, 200));
  // The byte ranges of the window's phrase instances, as FTS5's snippet()
  // marks them: an instance of a phrase of several tokens from its first
  // token to its last ("[a_b]", "[👨‍👩‍👧]", "[body text]" for "body text" in
  // quotes), merged where they overlap: the bigrams of a Han/kana run
  // overlap, and "日本語" is marked once, not as "[日本][本語]".
  const auto token_matches = [](const Token& t, const TsQuery::Token& q) {
    return q.prefix ? t.folded.compare(0, q.word.size(), q.word) == 0 : t.folded == q.word;
  };
  std::vector<std::pair<size_t, size_t>> marks;
  for (size_t k = lo; k < hi; ++k) {
    for (const TsQuery::Phrase& phrase : query.phrases) {
      const size_t n = phrase.tokens.size();
      if (n == 0 || k + n > tokens.size()) continue;
      bool instance = true;
      for (size_t j = 0; instance && j < n; ++j) {
        instance = token_matches(tokens[k + j], phrase.tokens[j]);
      }
      if (instance) marks.emplace_back(tokens[k].begin, tokens[std::min(k + n, hi) - 1].end);
    }
  }
  std::sort(marks.begin(), marks.end());
  std::vector<std::pair<size_t, size_t>> merged;
  for (const auto& [begin, end] : marks) {
    if (!merged.empty() && begin <= merged.back().second) {
      merged.back().second = std::max(merged.back().second, end);
    } else {
      merged.emplace_back(begin, end);
    }
  }
  marks = std::move(merged);
  const size_t from = lo == 0 ? 0 : tokens[lo].begin;
  const size_t to = hi < tokens.size() ? tokens[hi - 1].end : text.size();
  std::string out = lo > 0 ? "…" : "";
  size_t pos = from;
  for (const auto& [begin, end] : marks) {
    out.append(text.substr(pos, begin - pos));
    out += '[';
    out.append(text.substr(begin, end - begin));
    out += ']';
    pos = end;
  }
  out.append(text.substr(pos, to - pos));
  if (hi < tokens.size()) out += "…";
  for (char& c : out) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  return out;
}

}  // namespace codex::storage::pg
