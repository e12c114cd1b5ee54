// Search promises both backends keep alike (testing/store_test_support.h):
// the same folding of words, and hits credited to every live session that
// holds an item, through fork lineages whose sessions were removed.
#include <algorithm>
#include <catch2/catch.hpp>
#include <functional>
#include <map>
#include <set>

#include "core/item.h"
#include "storage/search_rank.h"
#include "testing/store_test_support.h"

using codex::core::NewSession;
using codex::core::SessionInfo;
using codex::storage::SearchHit;
using codex::storage::SearchQuery;
using codex::storage::SessionDatabase;
using codex::storage::testing::OpenOrDie;
using codex::storage::testing::StoreDir;
namespace core = codex::core;

namespace {

SessionInfo Create(SessionDatabase& store, const std::string& text) {
  NewSession spec;
  spec.cwd = "/w";
  spec.items = {core::UserMessage(text)};
  auto s = store.CreateSession(spec);
  REQUIRE(s.ok());
  return *s;
}

std::vector<SearchHit> Search(SessionDatabase& store, const std::string& text) {
  SearchQuery q;
  q.text = text;
  auto hits = store.Search(q);
  INFO(hits.status().ToString());
  REQUIRE(hits.ok());
  return *hits;
}

std::set<std::string> Holders(const std::vector<SearchHit>& hits) {
  std::set<std::string> out;
  for (const SearchHit& h : hits) {
    for (const auto& w : h.sessions) out.insert(w.session.id);
  }
  return out;
}

}  // namespace

TEST_CASE("Search folds case and diacritics the same on both backends") {
  StoreDir dir;
  auto store = OpenOrDie(dir.Store("s.db"));
  const SessionInfo s = Create(*store, "Le CAFÉ de l'École, naïve idée");
  for (const char* q : {"cafe", "café", "CAFE", "ecole", "École", "naive", "\"l ecole\"", "id*"}) {
    INFO(q);
    auto hits = Search(*store, q);
    REQUIRE(hits.size() == 1);
    CHECK(hits[0].sessions.at(0).session.id == s.id);
  }
  CHECK(Search(*store, "cafes").empty());
}

TEST_CASE("A hit is credited through fork lineages after their sessions are removed") {
  StoreDir dir;
  auto store = OpenOrDie(dir.Store("s.db"));
  const SessionInfo a = Create(*store, "axolotl from the root");
  // No fork yet (PostgreSQL then looks for no lineage): the creator alone.
  CHECK(Holders(Search(*store, "axolotl")) == std::set<std::string>{a.id});
  auto b = store->Fork(a.id, std::nullopt);
  REQUIRE(b.ok());
  auto b_ids =
      store->Append(b->id, b->head_item_id, "t", {core::UserMessage("capybara from the fork")});
  REQUIRE(b_ids.ok());
  auto c = store->Fork(b->id, std::nullopt);
  REQUIRE(c.ok());
  auto d = store->Fork(a.id, std::nullopt);  // a sibling lineage
  REQUIRE(d.ok());
  CHECK(Holders(Search(*store, "axolotl")) == std::set<std::string>{a.id, b->id, c->id, d->id});
  // The same within the sessions' directory; none in another.
  SearchQuery here;
  here.text = "axolotl";
  here.cwd = "/w";
  auto scoped = store->Search(here);
  REQUIRE(scoped.ok());
  CHECK(Holders(*scoped) == std::set<std::string>{a.id, b->id, c->id, d->id});
  here.cwd = "/elsewhere";
  scoped = store->Search(here);
  REQUIRE(scoped.ok());
  CHECK(scoped->empty());
  // The root and the middle of the lineage go: the grandchild still holds both texts.
  REQUIRE(store->Remove(a.id).ok());
  REQUIRE(store->Remove(b->id).ok());
  CHECK(Holders(Search(*store, "axolotl")) == std::set<std::string>{c->id, d->id});
  CHECK(Holders(Search(*store, "capybara")) == std::set<std::string>{c->id});
  REQUIRE(store->Remove(c->id).ok());
  CHECK(Search(*store, "capybara").empty());
  CHECK(Holders(Search(*store, "axolotl")) == std::set<std::string>{d->id});
}

namespace {

// One row of the search semantics both backends keep: a query and the
// documents it finds, or that it is refused.
struct SearchCase {
  std::string query;
  std::set<std::string> finds;  // names of kDocuments
  bool refused = false;
};

const std::vector<std::pair<std::string, std::string>>& Documents() {
  static const auto* docs = new std::vector<std::pair<std::string, std::string>>{
      {"zebra", "zebra -- crossing... (yes) 🦀"},
      {"zebra2", "a zebra alone"},
      {"greek", "ο σίσυφος και ΣΊΣΥΦΟΣ"},
      {"cjk", "日本語のテキストです"},
      {"cjk2", "東京は日本の首都"},
      {"latin", "Ærøskøbing Łódź Straße naïve façade Đà Nẵng İSTANBUL Ｆｕｌｌ"},
      {"long", "before " + std::string(2048, 'q') + " after"},
      {"emoji", "ship it 🚀 now"},
      // Past PostgreSQL's last tsvector position (16,383), as in a long tool
      // output: "pin" is the 16,382nd word, "post" the 16,383rd.
      {"huge",
       [] {
         std::string text;
         for (int i = 0; i < 16'381; ++i) text += "filler" + std::to_string(i % 7) + " ";
         return text + "pin post needle eye";
       }()},
      // What users of other scripts and keyboards type and paste.
      {"family", "family 👨\u200d👩\u200d👧 wave 👋🏽 flag 🇯🇵 heart ❤️ done"},
      {"nfc", "caf\u00e9 cr\u00e8me"},
      {"nfd", "cafe\u0301 cre\u0300me"},
      {"turkish", "ılık Işık"},
      {"ligature", "\ufb01le \ufb02ow"},
      {"fullwidth", "ｓｅｓｓｉｏｎ"},
      {"session", "session sessions"},
      {"arabic", "\u200fمرحبا بالعالم\u200e"},
      {"hebrew", "שלום עולם"},
      {"thai", "สวัสดีครับ"},
      {"hangul", "한국어 텍스트"},
      {"japanese", "東京タワーでcodexを使う"},
      {"han_in_latin", "abc中文def"},
      {"han_runs", "中国人民 in 人民 at 民"},
      {"operators", "AND OR NOT NEAR body text"},
      {"sql", "it's 100% a_b c\\d"},
      {"limit", "at the limit " + std::string(255, 'w')},
  };
  return *docs;
}

}  // namespace

TEST_CASE("One search semantics on both backends: punctuation, emoji, long words, CJK, accents") {
  StoreDir dir;
  auto store = OpenOrDie(dir.Store("s.db"));
  std::map<std::string, std::string> name_of;  // session id -> document name
  for (const auto& [name, text] : Documents()) name_of[Create(*store, text).id] = name;
  const std::string long_word(2048, 'q');
  const std::vector<SearchCase> cases = {
      {"zebra", {"zebra", "zebra2"}},
      // Punctuation is not indexed: a term of it alone is left out, as a whole query refused.
      {"zebra --", {"zebra", "zebra2"}},
      {"zebra ... ()", {"zebra", "zebra2"}},
      {"--", {}, true},
      {"...", {}, true},
      {"()", {}, true},
      // Emoji are words.
      {"🦀", {"zebra"}},
      {"zebra 🦀", {"zebra"}},
      {"🚀", {"emoji"}},
      {"\"it 🚀 now\"", {"emoji"}},
      // Greek: accents and final sigma folded, either case.
      {"σισυφος", {"greek"}},
      {"ΣΙΣΥΦΟΣ", {"greek"}},
      {"σίσυφος", {"greek"}},
      {"σισυ*", {"greek"}},
      // Latin scripts: accents, strokes, ß, dotted İ, full-width letters.
      {"aerøskobing", {}},  // æ is a letter of its own, not "ae"
      {"ærøskobing", {"latin"}},
      {"lodz", {"latin"}},
      {"LÓDŹ", {"latin"}},
      {"strasse", {"latin"}},
      {"naive facade", {"latin"}},
      {"\"da nang\"", {"latin"}},
      {"istanbul", {"latin"}},
      {"full", {"latin"}},
      // Han/kana/Hangul: words inside runs.
      {"日本語", {"cjk"}},
      {"テキスト", {"cjk"}},
      {"本語", {"cjk"}},
      {"日本", {"cjk", "cjk2"}},
      {"日", {"cjk", "cjk2"}},
      {"都", {"cjk2"}},
      {"日本の首都", {"cjk2"}},
      {"\"日本語のテキスト\"", {"cjk"}},
      {"日本語 zebra", {}},
      // Any script's white space separates words, as a space does: an
      // ideographic space between Japanese words, a no-break space.
      {"日本語\u3000テキスト", {"cjk"}},
      {"テキスト\u3000日本語", {"cjk"}},
      {"alone\u00a0zebra", {"zebra2"}},
      {"\"a\u2003zebra\"", {"zebra2"}},
      {"\u3000\u00a0", {}, true},
      {"語テ", {}},
      // A word over the index's limit is refused; a shorter piece of it is no word of the text.
      {long_word, {}, true},
      {"before " + long_word.substr(0, 300) + "*", {}, true},
      {"qqqq", {}},
      {"before after", {"long"}},
      // Every word of a long text is found, also after PostgreSQL's last position.
      {"needle", {"huge"}},
      {"needl*", {"huge"}},
      {"filler3 needle", {"huge"}},
      {"\"pin post\"", {"huge"}},
      // A word found only past the last position is in no phrase there
      // ("pin eye" are not neighbours).
      {"\"pin eye\"", {}},
      // Emoji: a ZWJ family is its members in a row; a skin tone, a flag's
      // second letter and a variation selector are no part of the word.
      {"👨\u200d👩\u200d👧", {"family"}},
      {"👩", {"family"}},
      {"👋🏽", {"family"}},
      {"👋", {"family"}},
      {"🇯🇵", {"family"}},
      {"❤️", {"family"}},
      {"❤", {"family"}},
      {"\u200d", {}, true},
      // Composed or decomposed accents, in the text or the query: one word.
      {"caf\u00e9", {"nfc", "nfd"}},
      {"cafe\u0301", {"nfc", "nfd"}},
      {"creme", {"nfc", "nfd"}},
      // Turkish dotless ı and dotted İ fold to i; ß to ss (a word of its own
      // only where the text has one).
      {"ilik isik", {"turkish"}},
      {"ILIK IŞIK", {"turkish"}},
      {"İstanbul", {"latin"}},
      {"ß", {}},
      {"STRAßE", {"latin"}},
      // Ligatures and full-width letters are the letters.
      {"file flow", {"ligature"}},
      {"\ufb01le", {"ligature"}},
      {"ｓｅｓｓｉｏｎ", {"fullwidth", "session"}},
      {"sess*", {"fullwidth", "session"}},
      {"ｓｅｓｓ*", {"fullwidth", "session"}},
      {"sessions", {"session"}},
      // Right-to-left text: direction marks are not part of a word.
      {"مرحبا", {"arabic"}},
      {"\u200fمرحبا\u200f", {"arabic"}},
      {"\"مرحبا بالعالم\"", {"arabic"}},
      {"שלום", {"hebrew"}},
      // Thai is written without spaces and has no bigrams: a run is one
      // word, found whole or by its start (docs/storage.md).
      {"สวัสดีครับ", {"thai"}},
      {"สวัสดี*", {"thai"}},
      {"สวัสดี", {}},
      // Hangul syllables: words inside a run, a syllable alone.
      {"한국어", {"hangul"}},
      {"한국", {"hangul"}},
      {"국", {"hangul"}},
      {"텍스트 한국어", {"hangul"}},
      // Kana, kanji and Latin in one run of text.
      {"東京タワー", {"japanese"}},
      {"タワー", {"japanese"}},
      {"codex", {"japanese"}},
      {"使う", {"japanese"}},
      {"\"codex を\"", {"japanese"}},
      // Han between Latin letters: each its own word.
      {"abc", {"han_in_latin"}},
      {"def", {"han_in_latin"}},
      {"中文", {"han_in_latin"}},
      {"abc中文def", {"han_in_latin"}},
      {"文", {"han_in_latin"}},
      {"中", {"han_in_latin", "han_runs"}},
      // One, two and three characters at the start, middle and end of runs.
      {"中国", {"han_runs"}},
      {"国人", {"han_runs"}},
      {"人民", {"han_runs"}},
      {"国人民", {"han_runs"}},
      {"民", {"han_runs"}},
      // FTS operators and column filters are words or punctuation, never syntax.
      {"AND", {"operators"}},
      {"or not", {"operators"}},
      {"NEAR(body text)", {"operators"}},
      {"body:text", {"operators"}},
      {"-body", {"operators"}},
      {"^body", {"operators"}},
      {"body NOT zebra", {}},
      {"\"AND OR\"", {"operators"}},
      {"*", {}, true},
      {"body*text", {}, true},
      {"\"unbalanced", {}, true},
      {":", {}, true},
      // SQL and LIKE syntax is text.
      {"'; DROP TABLE items; --", {}},
      {"%", {}, true},
      {"_", {}, true},
      {"\\", {}, true},
      {"100%", {"sql"}},
      {"a_b", {"sql"}},
      {"c\\d", {"sql"}},
      {"it's", {"sql"}},
      // Nothing to look for.
      {"", {}, true},
      {" \t ", {}, true},
      {"\"\"", {}, true},
      // Bytes that are no text: refused, not searched for as the words around them.
      {std::string("ze\0bra", 6), {}, true},
      {"ze\xFF"
       "bra",
       {},
       true},
      {"zebra \xC3", {}, true},
      {"\xED\xA0\x80", {}, true},
      // At the limit: a word of 255 bytes is searched for, 256 refused, also
      // a 1 MB one (no line the size of the query comes back).
      {std::string(255, 'w'), {"limit"}},
      {std::string(200, 'w') + "*", {"limit"}},
      {std::string(255, 'q'), {}},
      {std::string(256, 'w'), {}, true},
      {std::string(1 << 20, 'q'), {}, true},
      // At most 256 words in all, also inside "a phrase" (PostgreSQL's
      // parser ran out of stack on a phrase of 20,000).
      {[] {
         std::string q = "\"a";
         for (int i = 1; i < 256; ++i) q += " a";
         return q + "\"";
       }(),
       {}},
      {[] {
         std::string q = "\"a";
         for (int i = 1; i < 20'000; ++i) q += " a";
         return q + "\"";
       }(),
       {},
       true},
      // At most 64 words or phrases (punctuation-only terms do not count).
      {[] {
         std::string q = "zebra";
         for (int i = 1; i < 64; ++i) q += " zebra -- ...";
         return q;
       }(),
       {"zebra", "zebra2"}},
      {[] {
         std::string q = "zebra";
         for (int i = 1; i < 65; ++i) q += " zebra";
         return q;
       }(),
       {},
       true},
  };
  for (const SearchCase& c : cases) {
    INFO("query: " << c.query.substr(0, 60));
    SearchQuery q;
    q.text = c.query;
    q.limit = 100;
    auto hits = store->Search(q);
    if (c.refused) {
      REQUIRE_FALSE(hits.ok());
      const std::string& message = hits.status().message();
      CHECK(hits.status().code() == codex::StatusCode::kInvalidArgument);
      CHECK(message.find('\n') == std::string::npos);
      CHECK(message.size() < 200);  // one line; never the query echoed back
      continue;
    }
    INFO(hits.status().ToString());
    REQUIRE(hits.ok());
    std::set<std::string> found;
    for (const std::string& id : Holders(*hits)) found.insert(name_of.at(id));
    CHECK(found == c.finds);
  }
}

TEST_CASE("Deep searches page through every hit once on both backends") {
  StoreDir dir;
  auto store = OpenOrDie(dir.Store("s.db"));
  std::set<std::string> ids;
  for (int i = 0; i < 260; ++i) ids.insert(Create(*store, "yak number " + std::to_string(i)).id);
  SearchQuery q;
  q.text = "yak";
  q.limit = 1000;
  auto all = store->Search(q);
  REQUIRE(all.ok());
  CHECK(all->size() == 260);
  CHECK(Holders(*all) == ids);
  q.limit = 250;  // over one page of PostgreSQL's first ranking query
  auto some = store->Search(q);
  REQUIRE(some.ok());
  CHECK(some->size() == 250);
  std::set<int64_t> items;
  for (const SearchHit& h : *some) {
    items.insert(h.item_id);
    CHECK(h.snippet.find("[yak]") != std::string::npos);
  }
  CHECK(items.size() == 250);
}

namespace {

std::string Filler(int n, const std::string& tag) {
  std::string out;
  for (int i = 0; i < n; ++i) out += (i ? " " : "") + tag + std::to_string(i % 9);
  return out;
}

}  // namespace

// Both backends rank by the one BM25 (storage/search_rank.h): the same hits
// in the same order, also where PostgreSQL's own ts_rank (more occurrences
// first, whatever the length) would order them otherwise. The expected
// orders are BM25's over these 16 texts (k1 = 1.2, b = 0.75, avgdl =
// 223 / 16 tokens).
TEST_CASE("Both backends rank hits in the same BM25 order, page after page") {
  StoreDir dir;
  auto store = OpenOrDie(dir.Store("s.db"));
  std::vector<std::pair<std::string, std::string>> docs = {
      {"short", "the heron stood"},
      {"thrice", "heron " + Filler(20, "mud") + " heron " + Filler(20, "reed") + " heron egret"},
      {"twice", "heron egret " + Filler(6, "sky") + " heron"},
      {"grey1", "a grey heron and a heron that is not grey " + Filler(4, "sky")},
      {"grey2", "grey heron grey heron " + Filler(30, "mud")},
      {"wader", "wader wading wadi " + Filler(10, "sky")},
      {"wadi", "wadi wadi " + Filler(2, "reed")},
      {"wading", "wading " + Filler(40, "mud")},
      {"tie1", "kestrel hovering"},
      {"tie2", "kestrel hovering"},
  };
  for (int i = 0; i < 6; ++i) {
    docs.push_back({"other" + std::to_string(i), "sparrow finch " + Filler(i * 3, "sky")});
  }
  std::map<std::string, std::string> name_of;  // session id -> document name
  for (const auto& [name, text] : docs) name_of[Create(*store, text).id] = name;
  auto names = [&](const std::vector<SearchHit>& hits) {
    std::vector<std::string> out;
    for (const SearchHit& h : hits) out.push_back(name_of.at(h.sessions.at(0).session.id));
    return out;
  };
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      // The short text with the word once before the long one with it three
      // times; ts_rank orders them the other way.
      {"heron", {"twice", "short", "grey1", "thrice", "grey2"}},
      // Two phrases of different document frequencies.
      {"heron egret", {"twice", "thrice"}},
      // A prefix counts each word it matches: wadi (2 of 4 words) before
      // wader (3 of 13).
      {"wad*", {"wadi", "wader", "wading"}},
      {"\"grey heron\"", {"grey1", "grey2"}},
      {"\"grey heron\" heron", {"grey1", "grey2"}},
      // Equal scores: the newer item first.
      {"kestrel", {"tie2", "tie1"}},
      // In more than half the texts: the idf floor, every score tiny.
      {"sky*", {"other5", "other4", "other3", "wader", "other2", "twice", "other1", "grey1"}},
      {"sparrow", {"other0", "other1", "other2", "other3", "other4", "other5"}},
  };
  for (const auto& [text, expected] : cases) {
    INFO("query: " << text);
    SearchQuery q;
    q.text = text;
    q.limit = 100;
    auto all = store->Search(q);
    REQUIRE(all.ok());
    CHECK(names(*all) == expected);
    // Every shorter page is the start of the same order (what --cursor
    // pages through), and a directory scope ranks alike.
    for (int limit = 1; limit < static_cast<int>(expected.size()); ++limit) {
      q.limit = limit;
      auto page = store->Search(q);
      REQUIRE(page.ok());
      CHECK(names(*page) == std::vector<std::string>(expected.begin(), expected.begin() + limit));
    }
    q.limit = 100;
    q.cwd = "/w";
    auto scoped = store->Search(q);
    REQUIRE(scoped.ok());
    CHECK(names(*scoped) == expected);
  }
}

// The same for Han/kana runs (indexed as bigrams plus the run's last
// character, so a word is a phrase of bigrams) and for a prefix that is also
// a word of its own. Expected orders: BM25 over these 10 texts (86 tokens).
TEST_CASE("Both backends rank CJK runs and prefixes in the same BM25 order") {
  StoreDir dir;
  auto store = OpenOrDie(dir.Store("s.db"));
  std::vector<std::pair<std::string, std::string>> docs = {
      {"a", "日本語"},
      {"b", "日本語の本と日本語の話 " + Filler(6, "sky")},
      {"c", "日本 " + Filler(20, "mud")},
      {"d", "wad wade wader " + Filler(3, "sky")},
      {"e", "wad " + Filler(12, "reed")},
  };
  for (int i = 0; i < 5; ++i) {
    docs.push_back({"x" + std::to_string(i), "finch " + Filler(i * 2, "sky")});
  }
  std::map<std::string, std::string> name_of;
  for (const auto& [name, text] : docs) name_of[Create(*store, text).id] = name;
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      // Twice in 17 tokens after once in 3.
      {"日本語", {"a", "b"}},
      {"\"日本語\"", {"a", "b"}},
      {"日本", {"a", "b", "c"}},
      // One character: a prefix over the bigrams it starts.
      {"日", {"a", "b", "c"}},
      // The prefix counts wad, wade and wader (3 in d); the word only wad.
      {"wad*", {"d", "e"}},
      {"wad", {"d", "e"}},
      {"wad* sky*", {"d"}},
  };
  for (const auto& [text, expected] : cases) {
    INFO("query: " << text);
    SearchQuery q;
    q.text = text;
    q.limit = 100;
    auto all = store->Search(q);
    REQUIRE(all.ok());
    std::vector<std::string> got;
    for (const SearchHit& h : *all) got.push_back(name_of.at(h.sessions.at(0).session.id));
    CHECK(got == expected);
  }
}

// Many matches of different sizes and frequencies, some long ones full of
// the word (a search that scored only the short ones first, or cut the
// ranking short, would miss them): the order must be BM25's over all of
// them, at a shallow and a deep limit. The expected order is computed here from the
// texts (N, tokens, n and f counted independently) with the shared formula.
TEST_CASE("Both backends rank hundreds of matches in BM25's exact order at every depth") {
  StoreDir dir;
  auto store = OpenOrDie(dir.Store("s.db"));
  struct Doc {
    int heron = 0, egret = 0, herald = 0, size = 0;
  };
  std::vector<Doc> docs;
  std::map<std::string, size_t> index_of;  // session id -> docs index
  for (int i = 0; i < 240; ++i) {
    Doc d;
    // Some long documents full of the word: they outrank the short ones,
    // though their size puts them last in any order by size.
    d.heron = i % 37 == 5 ? 25 : i % 4 == 3 ? 0 : 1 + (i * 7) % 5;
    d.egret = i % 3 == 0 ? 1 + i % 2 : 0;
    d.herald = i % 5 == 0 ? 2 : 0;
    std::string text;
    for (int k = 0; k < d.heron; ++k) text += "heron ";
    for (int k = 0; k < d.egret; ++k) text += "egret ";
    for (int k = 0; k < d.herald; ++k) text += "herald ";
    const int filler = (i * 13) % 41;
    text += Filler(filler, "mud");
    d.size = d.heron + d.egret + d.herald + filler;
    index_of[Create(*store, text).id] = docs.size();
    docs.push_back(d);
  }
  int64_t tokens = 0;
  for (const Doc& d : docs) tokens += d.size;
  const int64_t rows = static_cast<int64_t>(docs.size());
  const double avgdl = codex::storage::Bm25AverageSize(rows, tokens);
  // A query as per-phrase frequency functions of a document.
  using Freq = std::function<double(const Doc&)>;
  const std::vector<std::pair<std::string, std::vector<Freq>>> queries = {
      {"heron", {[](const Doc& d) { return d.heron; }}},
      {"heron egret", {[](const Doc& d) { return d.heron; }, [](const Doc& d) { return d.egret; }}},
      {"her*", {[](const Doc& d) { return d.heron + d.herald; }}},
      {"\"heron heron\"", {[](const Doc& d) { return std::max(0, d.heron - 1); }}},
  };
  for (const auto& [text, phrases] : queries) {
    INFO("query: " << text);
    std::vector<double> idf;
    for (const Freq& f : phrases) {
      int64_t n = 0;
      for (const Doc& d : docs) n += f(d) > 0;
      idf.push_back(codex::storage::Bm25Idf(rows, n));
    }
    std::vector<std::pair<double, size_t>> expected;  // score, doc (later = newer)
    for (size_t i = 0; i < docs.size(); ++i) {
      std::vector<double> freq;
      for (const Freq& f : phrases) freq.push_back(f(docs[i]));
      if (std::count(freq.begin(), freq.end(), 0.0) > 0) continue;
      expected.emplace_back(codex::storage::Bm25Score(idf, freq, docs[i].size, avgdl), i);
    }
    std::sort(expected.begin(), expected.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first > b.first : a.second > b.second;
    });
    REQUIRE(expected.size() > 40);
    for (int limit : {10, 1000}) {
      INFO("limit " << limit);
      SearchQuery q;
      q.text = text;
      q.limit = limit;
      auto hits = store->Search(q);
      REQUIRE(hits.ok());
      std::vector<size_t> got, want;
      for (const SearchHit& h : *hits) got.push_back(index_of.at(h.sessions.at(0).session.id));
      for (size_t k = 0; k < expected.size() && k < static_cast<size_t>(limit); ++k) {
        want.push_back(expected[k].second);
      }
      CHECK(got == want);
    }
  }
}

// Items where a word is more frequent than a tsvector can say (PostgreSQL
// keeps 256 positions a lexeme and none past the 16,383rd word), and a
// prefix whose words together pass 256 with neither at the cap: SQLite
// counts every instance, and PostgreSQL must rank them alike (its counts at
// the cap are recounted from the item's text). With the counts cut to 256,
// "many" (300 of 600 tokens) would fall behind "fewer" (280 of 560).
TEST_CASE("Both backends rank items with a word past 256 instances in BM25's exact order") {
  StoreDir dir;
  auto store = OpenOrDie(dir.Store("s.db"));
  struct Doc {
    std::string name;
    int heron = 0, herald = 0, filler = 0;
    bool late = false;  // the herons after PostgreSQL's last position
  };
  const std::vector<Doc> docs = {
      {"many", 300, 0, 300},  {"fewer", 280, 0, 280},   {"cap", 256, 0, 256},
      {"under", 255, 0, 255}, {"split", 130, 130, 260}, {"capped_prefix", 300, 5, 300},
      {"once", 1, 0, 3},      {"twice", 2, 0, 40},      {"late", 3, 0, 16'400, true},
      {"none", 0, 2, 10},
  };
  std::map<std::string, std::string> name_of;  // session id -> document name
  int64_t tokens = 0;
  for (const Doc& d : docs) {
    std::string text;
    if (d.late) text = Filler(d.filler, "mud") + " ";
    for (int k = 0; k < d.heron; ++k) text += "heron ";
    for (int k = 0; k < d.herald; ++k) text += "herald ";
    if (!d.late) text += Filler(d.filler, "mud");
    tokens += d.heron + d.herald + d.filler;
    name_of[Create(*store, text).id] = d.name;
  }
  const int64_t rows = static_cast<int64_t>(docs.size());
  const double avgdl = codex::storage::Bm25AverageSize(rows, tokens);
  for (const std::string query : {"heron", "her*", "heron her*"}) {
    INFO("query: " << query);
    // Each phrase's frequency in a document, counted here from the texts.
    std::vector<std::function<int(const Doc&)>> phrases;
    if (query == "heron" || query == "heron her*") {
      phrases.push_back([](const Doc& d) { return d.heron; });
    }
    if (query != "heron") phrases.push_back([](const Doc& d) { return d.heron + d.herald; });
    std::vector<double> idf;
    for (const auto& f : phrases) {
      int64_t n = 0;
      for (const Doc& d : docs) n += f(d) > 0;
      idf.push_back(codex::storage::Bm25Idf(rows, n));
    }
    std::vector<std::pair<double, size_t>> expected;  // score, doc (later = newer)
    for (size_t i = 0; i < docs.size(); ++i) {
      std::vector<double> freq;
      for (const auto& f : phrases) freq.push_back(f(docs[i]));
      if (std::count(freq.begin(), freq.end(), 0.0) > 0) continue;
      const Doc& d = docs[i];
      expected.emplace_back(
          codex::storage::Bm25Score(idf, freq, d.heron + d.herald + d.filler, avgdl), i);
    }
    std::sort(expected.begin(), expected.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first > b.first : a.second > b.second;
    });
    std::vector<std::string> want;
    for (const auto& [score, i] : expected) want.push_back(docs[i].name);
    if (query == "heron") {
      // The case the recount is for: by counts cut at 256, "fewer" comes first.
      REQUIRE(std::find(want.begin(), want.end(), "many") <
              std::find(want.begin(), want.end(), "fewer"));
    }
    for (int limit : {1, 3, 100}) {
      INFO("limit " << limit);
      SearchQuery q;
      q.text = query;
      q.limit = limit;
      auto hits = store->Search(q);
      REQUIRE(hits.ok());
      std::vector<std::string> got;
      for (const SearchHit& h : *hits) got.push_back(name_of.at(h.sessions.at(0).session.id));
      const size_t n = std::min(want.size(), static_cast<size_t>(limit));
      CHECK(got == std::vector<std::string>(want.begin(), want.begin() + static_cast<long>(n)));
    }
  }
}

namespace {

// Every hit of `query`, a page of `page` at a time as `codex sessions search
// --cursor` asks for them (the first page's basis, then after each page's
// last hit); `between` runs after each page.
std::vector<int64_t> Paged(SessionDatabase& store, const std::string& text, int page,
                           const std::function<void(int)>& between = {}) {
  std::vector<int64_t> out;
  SearchQuery q;
  q.text = text;
  q.limit = page;
  codex::storage::SearchBasis basis;
  q.basis_out = &basis;
  for (int n = 0;; ++n) {
    auto hits = store.Search(q);
    INFO(hits.status().ToString());
    REQUIRE(hits.ok());
    for (const SearchHit& h : *hits) out.push_back(h.item_id);
    if (static_cast<int>(hits->size()) < page) return out;
    if (between) between(n);
    q.basis_out = nullptr;
    q.basis = basis;
    q.after = codex::storage::SearchAfter{hits->back().score, hits->back().item_id};
  }
}

std::vector<int64_t> ItemIds(const std::vector<SearchHit>& hits) {
  std::vector<int64_t> out;
  for (const SearchHit& h : hits) out.push_back(h.item_id);
  return out;
}

}  // namespace

TEST_CASE("Search pages from a first page's basis: one list, whatever changes between pages") {
  StoreDir dir;
  auto store = OpenOrDie(dir.Store("s.db"));
  std::vector<SessionInfo> sessions;
  for (int i = 0; i < 40; ++i) {
    std::string text = "heron";
    for (int k = 0; k < i % 6; ++k) text += " heron";
    if (i % 3 == 0) text += " egret";
    text += " " + Filler((i * 7) % 23, "mud");
    sessions.push_back(Create(*store, text));
  }
  for (const std::string text : {"heron", "heron egret", "her*", "\"heron heron\""}) {
    INFO("query: " << text);
    SearchQuery all;
    all.text = text;
    all.limit = 1000;
    auto whole = store->Search(all);
    REQUIRE(whole.ok());
    REQUIRE(whole->size() > 10);
    for (int page : {1, 3, 7}) {
      INFO("page " << page);
      CHECK(Paged(*store, text, page) == ItemIds(*whole));
    }
  }
  // Between pages: better matches arrive (new sessions, a session appended
  // to), texts that move the average size and every phrase's document
  // frequency, and sessions go, shown ones and ones not shown yet. The pages
  // still list the first page's ranking once: nothing twice, nothing that
  // was there lost except the removed sessions' hits, nothing newer.
  SearchQuery all;
  all.text = "heron egret";
  all.limit = 1000;
  auto before = store->Search(all);
  REQUIRE(before.ok());
  std::set<int64_t> removed_items;
  std::set<std::string> removed;
  auto paged = Paged(*store, "heron egret", 4, [&](int n) {
    Create(*store, "heron egret");
    Create(*store, "egret " + Filler(60 + n, "reed"));
    auto more = store->Append(sessions[3].id, sessions[3].head_item_id, "t",
                              {core::UserMessage("heron egret heron egret")});
    REQUIRE(more.ok());
    sessions[3].head_item_id = more->back();
    // Two sessions, one near the top of the ranking and one further down.
    for (const SearchHit& h : *before) {
      const std::string id = h.sessions.at(0).session.id;
      if (removed.count(id) || id == sessions[3].id) continue;
      if (removed.size() % 2 == 0 || h.item_id % 2 == 0) {
        REQUIRE(store->Remove(id).ok());
        removed.insert(id);
        removed_items.insert(h.item_id);
        if (removed.size() % 2 == 0) break;
      }
    }
  });
  std::vector<int64_t> expected;
  for (const SearchHit& h : *before) {
    if (!removed_items.count(h.item_id)) expected.push_back(h.item_id);
  }
  std::vector<int64_t> kept;  // what the pages listed of the items still there
  for (int64_t id : paged) {
    if (!removed_items.count(id)) kept.push_back(id);
  }
  CHECK(std::set<int64_t>(paged.begin(), paged.end()).size() == paged.size());
  CHECK(kept == expected);
  REQUIRE(removed.size() >= 4);
  // A first page now sees the new ones.
  auto after = store->Search(all);
  REQUIRE(after.ok());
  CHECK(after->size() > expected.size());
}

TEST_CASE("Search refuses a basis made for another query, in one line") {
  StoreDir dir;
  auto store = OpenOrDie(dir.Store("s.db"));
  Create(*store, "heron egret");
  Create(*store, "heron egret heron");
  SearchQuery q;
  q.text = "heron egret";
  q.limit = 1;
  codex::storage::SearchBasis basis;
  q.basis_out = &basis;
  auto first = store->Search(q);
  REQUIRE(first.ok());
  REQUIRE(first->size() == 1);
  CHECK(basis.holding == std::vector<int64_t>{2, 2});
  CHECK(basis.rows == 2);
  CHECK(basis.max_item_id > 0);
  q.basis_out = nullptr;
  q.basis = basis;
  q.after = codex::storage::SearchAfter{first->at(0).score, first->at(0).item_id};
  auto second = store->Search(q);
  REQUIRE(second.ok());
  REQUIRE(second->size() == 1);
  CHECK(second->at(0).item_id != first->at(0).item_id);
  q.text = "heron";  // one phrase, the basis has two
  auto other = store->Search(q);
  REQUIRE_FALSE(other.ok());
  CHECK(other.status().code() == codex::StatusCode::kInvalidArgument);
  CHECK(other.status().message().find('\n') == std::string::npos);
  CHECK(other.status().message().find("--cursor") != std::string::npos);
}

// The snippet of a short text (all of it in the window) marks the same
// words on both backends: each instance of a phrase of the query from its
// first word to its last, as FTS5's snippet() does.
TEST_CASE("Both backends mark the same phrase instances in a snippet") {
  StoreDir dir;
  auto store = OpenOrDie(dir.Store("s.db"));
  Create(*store, "it's 100% a_b c\\d");
  Create(*store, "AND OR NOT NEAR body text");
  Create(*store, "family 👨\u200d👩\u200d👧 wave");
  Create(*store, "日本語のテキストです");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"a_b", "it's 100% [a_b] c\\d"},
      {"a b", "it's 100% [a]_[b] c\\d"},
      {"\"body text\"", "AND OR NOT NEAR [body text]"},
      {"body:text", "AND OR NOT NEAR [body text]"},
      {"NEAR(body text)", "AND OR NOT [NEAR body] [text]"},
      {"\"AND OR\"", "[AND OR] NOT NEAR body text"},
      {"and or", "[AND] [OR] NOT NEAR body text"},
      {"👨\u200d👩\u200d👧", "family [👨\u200d👩\u200d👧] wave"},
      {"日本語", "[日本語]のテキストです"},
      {"テキ*", "日本語の[テキ]ストです"},
  };
  for (const auto& [text, snippet] : cases) {
    INFO("query: " << text);
    auto hits = Search(*store, text);
    REQUIRE(hits.size() == 1);
    CHECK(hits[0].snippet == snippet);
  }
}
