#include "storage/pg_search.h"

#include <map>

#include "storage/fts_tokenizer.h"
#include "storage/search_text.h"

namespace codex::storage::pg {

namespace {

constexpr int kMaxPosition = 16383;
constexpr size_t kMaxLexemeBytes = 255;
constexpr size_t kMaxLexemeTotal = 512 * 1024;

using Token = FtsToken;

// SQLite's FTS5 tokens (storage/fts_tokenizer.h): the same words, folded alike.
std::vector<Token> Tokens(std::string_view text) { return FtsTokens(text); }

// Length of the valid UTF-8 sequence at s[i], 0 when invalid.
size_t Utf8Length(std::string_view s, size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  size_t n = 0;
  if (c < 0x80) return 1;
  if ((c & 0xE0) == 0xC0 && c >= 0xC2)
    n = 2;
  else if ((c & 0xF0) == 0xE0)
    n = 3;
  else if ((c & 0xF8) == 0xF0 && c <= 0xF4)
    n = 4;
  else
    return 0;
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return 0;
  }
  const auto c1 = static_cast<unsigned char>(s[i + 1]);
  if (n == 3 && ((c == 0xE0 && c1 < 0xA0) || (c == 0xED && c1 >= 0xA0))) return 0;
  if (n == 4 && ((c == 0xF0 && c1 < 0x90) || (c == 0xF4 && c1 >= 0x90))) return 0;
  return n;
}

std::string Quote(std::string_view lexeme) {
  std::string out = "'";
  for (char c : lexeme) {
    if (c == '\'' || c == '\\') out += c;
    out += c;
  }
  return out + "'";
}

}  // namespace

std::string CleanText(std::string text) {
  for (size_t i = 0; i < text.size();) {
    if (text[i] == '\0') {
      text[i++] = ' ';
      continue;
    }
    const size_t n = Utf8Length(text, i);
    if (n == 0) {
      text[i++] = ' ';
    } else {
      i += n;
    }
  }
  return text;
}

std::string TsVectorOf(std::string_view text) {
  std::map<std::string, std::vector<int>> lexemes;
  size_t total = 0;
  int position = 0;
  for (const Token& t : Tokens(text)) {
    if (position >= kMaxPosition) break;
    ++position;
    if (t.folded.size() > kMaxLexemeBytes) continue;
    std::string word = t.folded;
    auto it = lexemes.find(word);
    if (it == lexemes.end()) {
      if (total + word.size() > kMaxLexemeTotal) continue;
      total += word.size();
      it = lexemes.emplace(std::move(word), std::vector<int>{}).first;
    }
    if (it->second.size() < 256) it->second.push_back(position);  // positions per lexeme cap
  }
  std::string out;
  for (const auto& [word, positions] : lexemes) {
    if (!out.empty()) out += ' ';
    out += Quote(word);
    out += ':';
    for (size_t i = 0; i < positions.size(); ++i) {
      if (i) out += ',';
      out += std::to_string(positions[i]);
    }
  }
  return out;
}

Result<TsQuery> TsQueryFromUser(std::string_view query) {
  ASSIGN_OR_RETURN(std::vector<SearchTerm> terms, ParseSearchQuery(query));
  TsQuery out;
  bool empty_term = false;
  auto add_term = [&](std::string_view words, bool prefix) {
    const std::string clean = CleanText(std::string(words));
    const std::vector<Token> tokens = Tokens(clean);
    if (tokens.empty()) {
      empty_term = true;
      return;
    }
    std::string term;
    for (size_t k = 0; k < tokens.size(); ++k) {
      const std::string& w = tokens[k].folded;
      const bool p = prefix && k + 1 == tokens.size();
      if (k) term += " <-> ";
      term += Quote(w) + (p ? ":*" : "");
      out.tokens.push_back({w, p});
    }
    if (!out.text.empty()) out.text += " & ";
    out.text += tokens.size() > 1 ? "(" + term + ")" : term;
  };
  for (const SearchTerm& term : terms) add_term(term.text, term.prefix);
  // A term without any letter or digit cannot match (as in FTS5).
  if (empty_term) out.text.clear();
  return out;
}

std::string Snippet(std::string_view text, const TsQuery& query) {
  constexpr size_t kWindow = 16;
  const std::vector<Token> tokens = Tokens(text);
  auto matches = [&](const Token& t) {
    const std::string& w = t.folded;
    for (const TsQuery::Token& q : query.tokens) {
      if (q.prefix ? w.compare(0, q.word.size(), q.word) == 0 : w == q.word) return true;
    }
    return false;
  };
  size_t first = tokens.size();
  for (size_t k = 0; k < tokens.size(); ++k) {
    if (matches(tokens[k])) {
      first = k;
      break;
    }
  }
  if (first == tokens.size()) first = 0;
  size_t lo = first > 3 ? first - 3 : 0;
  const size_t hi = std::min(tokens.size(), lo + kWindow);
  if (hi - lo < kWindow) lo = hi > kWindow ? hi - kWindow : 0;
  std::string out;
  if (tokens.empty()) return std::string(text.substr(0, 200));
  size_t pos = lo == 0 ? 0 : tokens[lo].begin;
  if (lo > 0) out += "…";
  for (size_t k = lo; k < hi; ++k) {
    out.append(text.substr(pos, tokens[k].begin - pos));
    const std::string_view word = text.substr(tokens[k].begin, tokens[k].end - tokens[k].begin);
    if (matches(tokens[k])) {
      out += '[';
      out.append(word);
      out += ']';
    } else {
      out.append(word);
    }
    pos = tokens[k].end;
  }
  if (hi < tokens.size()) {
    out += "…";
  } else {
    out.append(text.substr(pos));
  }
  for (char& c : out) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  return out;
}

}  // namespace codex::storage::pg
