// The PostgreSQL search rules as pure functions: tokens as SQLite's FTS5
// cuts them, the CLI query syntax, and snippets.
#include "storage/pg_search.h"

#include <catch2/catch.hpp>
#include <cmath>

#include "storage/fts_tokenizer.h"

namespace pg = codex::storage::pg;

TEST_CASE("pg search: a tsvector of FTS5-style tokens, not PostgreSQL's parser") {
  // /usr/bin/ls and foo-bar are several words, as in SQLite; case folded.
  CHECK(pg::TsVectorOf("Run /usr/bin/ls foo-bar") ==
        "'bar':6 'bin':3 'foo':5 'ls':4 'run':1 'usr':2");
  CHECK(pg::TsVectorOf("it's") == "'it':1 's':2");
  CHECK(pg::TsVectorOf("") == "");
  CHECK(pg::TsVectorOf("a a a") == "'a':1,2,3");
}

TEST_CASE("pg search: words past PostgreSQL's last position are kept, without a position") {
  std::string text;
  for (int i = 0; i < 16'382; ++i) text += "a ";
  text += "z b c b a";  // z at 16383, the last position; b, c and a again after it
  std::string want = "'a':";
  for (int i = 1; i <= 256; ++i) want += (i > 1 ? "," : "") + std::to_string(i);  // 256 at most
  CHECK(pg::TsVectorOf(text) == want + " 'b' 'c' 'z':16383");
}

TEST_CASE("pg search: text is made storable without losing words") {
  CHECK(pg::CleanText(std::string("a\0b", 3)) == "a b");
  CHECK(pg::CleanText("ok \xff bad") == "ok   bad");
  CHECK(pg::CleanText("caf\xc3\xa9") == "caf\xc3\xa9");
}

TEST_CASE("pg search: the CLI query syntax becomes a tsquery") {
  auto q = pg::TsQueryFromUser("pelican \"question 2\" build*");
  REQUIRE(q.ok());
  CHECK(q->text == "'pelican' & ('question' <-> '2') & 'build':*");
  auto hyphen = pg::TsQueryFromUser("environment_context");
  REQUIRE(hyphen.ok());
  CHECK(hyphen->text == "('environment' <-> 'context')");
  // A quote in a word cannot break out of the lexeme.
  auto quote = pg::TsQueryFromUser("it's");
  REQUIRE(quote.ok());
  CHECK(quote->text == "('it' <-> 's')");
  // A term of punctuation is not indexed: it is left out (storage/search_text.h).
  CHECK(pg::TsQueryFromUser("question (")->text == "'question'");
  for (const char* bad : {"", "   ", "\"open", "*", "a*b", "( -- )"}) {
    INFO(bad);
    auto r = pg::TsQueryFromUser(bad);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == codex::StatusCode::kInvalidArgument);
  }
}

TEST_CASE("pg search: a snippet marks the match and cuts long text") {
  auto q = pg::TsQueryFromUser("pelic*");
  REQUIRE(q.ok());
  CHECK(pg::Snippet("a Pelican\nlanded", *q) == "a [Pelican] landed");
  std::string longer;
  for (int i = 0; i < 40; ++i) longer += "word" + std::to_string(i) + " ";
  longer += "pelican tail";
  for (int i = 0; i < 40; ++i) longer += " more" + std::to_string(i);
  const std::string s = pg::Snippet(longer, *q);
  CHECK(s.find("[pelican]") != std::string::npos);
  CHECK(s.rfind("…", 0) == 0);
  CHECK(s.size() < 200);
}

// Snippet tokenizes a long text a piece at a time, each cut just before
// ASCII whitespace: what it relies on is that such a prefix has the same
// tokens as the whole text up to the cut, and the rest from the cut on the
// whole text's tokens after it, whatever the text around it (words,
// Han/kana runs and their last character, emoji, soft hyphens, over-long
// words, invalid bytes).
TEST_CASE("pg search: a text cut before whitespace has the whole text's first tokens") {
  const std::string text =
      "Le CAFÉ\tde l'École 日本語のテキスト\n東京 🦀🚀 co\xc2\xadop " +
      std::string(300, 'q') + " \xff\xfe bad 日本 語\r\nend ";
  const std::vector<codex::storage::FtsToken> whole = codex::storage::FtsTokens(text);
  for (size_t cut = 0; cut < text.size(); ++cut) {
    const char c = text[cut];
    if (c != ' ' && c != '\n' && c != '\r' && c != '\t') continue;
    INFO("cut at " << cut);
    const std::vector<codex::storage::FtsToken> part =
        codex::storage::FtsTokens(std::string_view(text).substr(0, cut));
    REQUIRE(part.size() <= whole.size());
    for (size_t k = 0; k < part.size(); ++k) {
      CHECK(part[k].folded == whole[k].folded);
      CHECK(part[k].begin == whole[k].begin);
      CHECK(part[k].end == whole[k].end);
    }
    // Every whole-text token that ends before the cut is in the part.
    size_t before = 0;
    while (before < whole.size() && whole[before].end <= cut) ++before;
    CHECK(part.size() == before);
    const std::vector<codex::storage::FtsToken> rest =
        codex::storage::FtsTokens(std::string_view(text).substr(cut));
    REQUIRE(before + rest.size() == whole.size());
    for (size_t k = 0; k < rest.size(); ++k) {
      CHECK(rest[k].folded == whole[before + k].folded);
      CHECK(rest[k].begin + cut == whole[before + k].begin);
      CHECK(rest[k].end + cut == whole[before + k].end);
    }
  }
}

// The window of a match deep in a long text (past the first cuts Snippet
// tries), near its end, and in a text with no whitespace at all.
TEST_CASE("pg search: a snippet of a long text is the window around its first match") {
  auto q = pg::TsQueryFromUser("pelican");
  REQUIRE(q.ok());
  std::string text;
  for (int i = 0; i < 3000; ++i) text += "word" + std::to_string(i) + " ";
  // Near the end the window keeps its 16 tokens by starting earlier.
  CHECK(pg::Snippet(text + "pelican tail and more words here to spare", *q) ==
        "…word2992 word2993 word2994 word2995 word2996 word2997 word2998 word2999 [pelican] tail "
        "and more words here to spare");
  CHECK(pg::Snippet(text + "x y pelican z", *q) ==
        "…word2988 word2989 word2990 word2991 word2992 word2993 word2994 word2995 word2996 "
        "word2997 word2998 word2999 x y [pelican] z");
  std::string deep = text + "pelican";
  for (int i = 0; i < 3000; ++i) deep += " after" + std::to_string(i);
  CHECK(pg::Snippet(deep, *q) ==
        "…word2997 word2998 word2999 [pelican] after0 after1 after2 after3 after4 after5 after6 "
        "after7 after8 after9 after10 after11…");
  const std::string dense = std::string(9000, 'x') + "-pelican-" + std::string(10, 'y');
  CHECK(pg::Snippet(dense, *q) == dense.substr(0, 9000) + "-[pelican]-yyyyyyyyyy");
}

TEST_CASE("pg search: words are cut and folded as SQLite's index does (storage/fts_tokenizer.h)") {
  // Unicode case folding: ß is "ss".
  CHECK(pg::TsVectorOf("Café ÉCOLE naïve Straße") == "'cafe':1 'ecole':2 'naive':3 'strasse':4");
  CHECK(pg::TsVectorOf("Café ÉCOLE") == "'cafe':1 'ecole':2");
  // Unicode punctuation separates words; letters of other scripts stay.
  CHECK(pg::TsVectorOf("foo\xe2\x80\x94"
                       "bar") == "'bar':2 'foo':1");
  CHECK(pg::TsVectorOf("Привет мир") == "'мир':2 'привет':1");
  auto q = pg::TsQueryFromUser("CAFÉ ecole*");
  REQUIRE(q.ok());
  CHECK(q->text == "'cafe' & 'ecole':*");
  CHECK(pg::Snippet("un café crème", *pg::TsQueryFromUser("cafe")) == "un [café] crème");
  // A Han/kana run is its bigrams and last character; snippets mark the text once.
  CHECK(pg::TsVectorOf("日本語") == "'日本':1 '本語':2 '語':3");
  CHECK(pg::TsQueryFromUser("日本語")->text == "('日本' <-> '本語')");
  CHECK(pg::TsQueryFromUser("日")->text == "'日':*");
  CHECK(pg::Snippet("これは日本語です", *pg::TsQueryFromUser("日本語")) == "これは[日本語]です");
}

TEST_CASE("pg search: phrase frequencies are counted as FTS5's bm25 counts them") {
  // What ts_filter(setweight(...))::text gives back: weights dropped.
  const pg::RowLexemes row = pg::ParseTsVector("'grey':1A,7A 'heron':2A,4A,8A 'it''s':9A 'wader'");
  REQUIRE(row.size() == 4);
  CHECK(row[0] == pg::RowLexemes::value_type{"grey", {1, 7}});
  CHECK(row[2].first == "it's");
  CHECK(row[3] == pg::RowLexemes::value_type{"wader", {}});
  auto freq = [](std::string_view text, const std::string& query) {
    auto q = pg::TsQueryFromUser(query);
    REQUIRE(q.ok());
    return pg::PhraseFrequencies(pg::AllLexemes(text), *q);
  };
  // A word: each occurrence; several words: one count each.
  CHECK(freq("a grey heron and a heron not grey, grey heron", "heron") == std::vector<double>{3});
  CHECK(freq("a grey heron and a heron not grey, grey heron", "heron grey") ==
        std::vector<double>{3, 3});
  // A phrase: each place its words follow one another (overlapping ones too).
  CHECK(freq("a grey heron and a heron not grey, grey heron", "\"grey heron\"") ==
        std::vector<double>{2});
  CHECK(freq("go go go", "\"go go\"") == std::vector<double>{2});
  // A prefix: every word it starts, whichever.
  CHECK(freq("wader wading wadi wad towad", "wad*") == std::vector<double>{4});
  // CJK: the bigrams of the run follow one another.
  CHECK(freq("日本語のテキスト 日本", "日本語") == std::vector<double>{1});
  // The tsvector's own limits send a row to its text.
  CHECK(pg::NeedsFullCount(16'384, {}));
  CHECK_FALSE(pg::NeedsFullCount(16'383, {{"a", {1, 2}}}));
  CHECK(pg::NeedsFullCount(300, {{"a", std::vector<int>(256, 1)}}));
  // The same from the server's counts of one-token phrases: at 256 a lexeme may be at its cap.
  CHECK(pg::CountsNeedFullCount(16'384, {1}));
  CHECK_FALSE(pg::CountsNeedFullCount(16'383, {255, 3}));
  CHECK(pg::CountsNeedFullCount(300, {3, 256}));
}

TEST_CASE("pg search: a word's count is read back from its ts_rank value") {
  // Strictly increasing, so each count has its own value; the nearest
  // value names the count, also one float step off either way.
  for (int n = 1; n <= 256; ++n) {
    INFO(n);
    const float rank = pg::WordRankOfCount(n);
    CHECK(rank > pg::WordRankOfCount(n - 1));
    CHECK(pg::WordCountOfRank(rank) == n);
    CHECK(pg::WordCountOfRank(std::nextafter(rank, 0.0f)) == n);
    CHECK(pg::WordCountOfRank(std::nextafter(rank, 2.0f)) == n);
  }
  CHECK(pg::WordRankOfCount(1) == Approx(0.1 / 1.64493406685));
}
