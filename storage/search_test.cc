// Search against an oracle: who holds each match and in which turn, checked
// against LoadHistory + TurnStartIndexes over random fork trees; paging past
// matches no live session holds; ranking equal to FTS5's bm25().
#include <SQLiteCpp/SQLiteCpp.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <random>
#include <set>

#include "core/item.h"
#include "storage/fts_tokenizer.h"
#include "storage/search_text.h"
#include "storage/sqlite_session_store.h"
#include "testing/store_test_support.h"
#include "testing/temp_dir.h"

using codex::core::Item;
using codex::core::SessionInfo;
using codex::storage::SqliteSessionStore;
using codex::storage::testing::OpenOrDie;
using codex::testing::TempDir;
namespace core = codex::core;

namespace {

SessionInfo Get(SqliteSessionStore& store, const std::string& id) {
  auto s = store.FindSession(id);
  INFO(s.status().ToString());
  REQUIRE(s.ok());
  return *s;
}

std::vector<codex::storage::SearchHit> Search(SqliteSessionStore& store, const std::string& text,
                                              int limit = 20) {
  codex::storage::SearchQuery q;
  q.text = text;
  q.limit = limit;
  auto hits = store.Search(q);
  INFO(hits.status().ToString());
  REQUIRE(hits.ok());
  return *hits;
}

// Every item gets one word of its own ("w17"), so a search names one item.
class Words {
 public:
  std::string Next() {
    std::string w = "w" + std::to_string(++n_);
    all_.insert(w);
    return w;
  }
  const std::set<std::string>& all() const { return all_; }

 private:
  int n_ = 0;
  std::set<std::string> all_;
};

std::vector<Item> TurnItems(Words& words) {
  return {core::UserMessage(words.Next()), core::AssistantMessage(words.Next())};
}

}  // namespace

TEST_CASE("Search holders and turns match the sessions' histories over random fork trees") {
  TempDir dir;
  auto store = OpenOrDie<SqliteSessionStore>(dir.File("s.db"));
  Words words;
  std::mt19937 rng(20261123);
  std::vector<std::string> live;
  for (int r = 0; r < 3; ++r) {
    core::NewSession spec;
    spec.cwd = "/w";
    for (int t = 0; t < 3; ++t) {
      for (Item& i : TurnItems(words)) spec.items.push_back(std::move(i));
    }
    auto s = store->CreateSession(spec);
    REQUIRE(s.ok());
    live.push_back(s->id);
  }
  auto pick = [&] { return live[std::uniform_int_distribution<size_t>(0, live.size() - 1)(rng)]; };
  for (int step = 0; step < 40; ++step) {
    const std::string id = pick();
    const SessionInfo s = Get(*store, id);
    auto history = store->LoadHistory(s);
    REQUIRE(history.ok());
    const int turns = static_cast<int>(codex::storage::TurnStartIndexes(*history).size());
    switch (std::uniform_int_distribution<int>(0, 4)(rng)) {
      case 0:
      case 1: {  // a turn
        REQUIRE(store->Append(id, s.head_item_id, "t", TurnItems(words)).ok());
        break;
      }
      case 2: {  // a fork, at a turn or at the head
        std::optional<int> at;
        if (turns > 0 && rng() % 2) at = std::uniform_int_distribution<int>(1, turns)(rng);
        auto f = store->Fork(id, at);
        REQUIRE(f.ok());
        live.push_back(f->id);
        break;
      }
      case 3: {  // a compaction: checkpoint, two replacement items, then a turn
        Item checkpoint;
        checkpoint.kind = core::ItemKind::kCompactionCheckpoint;
        checkpoint.body = R"({"type":"compaction_checkpoint","replacement_items":2})";
        auto ids = store->Append(
            id, s.head_item_id, "c",
            {checkpoint, core::UserMessage(words.Next()), core::AssistantMessage(words.Next())});
        REQUIRE(ids.ok());
        REQUIRE(store->Append(id, ids->back(), "t", TurnItems(words)).ok());
        break;
      }
      case 4: {  // a removal (a parent of forks too), keeping two sessions
        if (live.size() <= 2) break;
        REQUIRE(store->Remove(id).ok());
        live.erase(std::find(live.begin(), live.end(), id));
        break;
      }
    }
  }
  // The oracle: every live session's history, its turn starts, its words.
  struct Expected {
    std::set<std::string> holders;
    std::set<int> turns;
    int64_t item_id = 0;
  };
  std::map<std::string, Expected> expected;  // by word
  for (const std::string& id : live) {
    auto history = store->LoadHistory(Get(*store, id));
    REQUIRE(history.ok());
    const std::vector<size_t> starts = codex::storage::TurnStartIndexes(*history);
    for (size_t k = 0; k < history->size(); ++k) {
      const std::string text = core::MessageText((*history)[k].item);
      if (text.empty()) continue;
      Expected& e = expected[text];
      e.holders.insert(id);
      e.turns.insert(
          static_cast<int>(std::upper_bound(starts.begin(), starts.end(), k) - starts.begin()));
      e.item_id = (*history)[k].id;
    }
  }
  REQUIRE(expected.size() > 20);
  int unheld = 0;
  for (const std::string& word : words.all()) {
    INFO(word);
    auto hits = Search(*store, word);
    auto it = expected.find(word);
    if (it == expected.end()) {  // only removed sessions held it
      CHECK(hits.empty());
      ++unheld;
      continue;
    }
    REQUIRE(hits.size() == 1);
    CHECK(hits[0].item_id == it->second.item_id);
    REQUIRE(it->second.turns.size() == 1);  // the chain to an item is the same in every holder
    std::set<std::string> got;
    for (const auto& w : hits[0].sessions) {
      got.insert(w.session.id);
      CHECK(w.turn == *it->second.turns.begin());
    }
    CHECK(got == it->second.holders);
    // Newest first.
    for (size_t k = 1; k < hits[0].sessions.size(); ++k) {
      CHECK(hits[0].sessions[k - 1].session.updated_at_ms >=
            hits[0].sessions[k].session.updated_at_ms);
    }
  }
  INFO("words only removed sessions held: " << unheld);
  CHECK(expected.size() + static_cast<size_t>(unheld) == words.all().size());
}

TEST_CASE("Search: a fork of a removed fork still finds the grandparent's and parent's text") {
  TempDir dir;
  auto store = OpenOrDie<SqliteSessionStore>(dir.File("s.db"));
  core::NewSession spec;
  spec.cwd = "/w";
  spec.items = {core::UserMessage("grandparent kestrel"), core::AssistantMessage("ok")};
  auto a = store->CreateSession(spec);
  REQUIRE(a.ok());
  auto b = store->Fork(a->id, std::nullopt);
  REQUIRE(b.ok());
  REQUIRE(store
              ->Append(b->id, b->head_item_id, "t2",
                       {core::UserMessage("parent osprey"), core::AssistantMessage("ok")})
              .ok());
  auto c = store->Fork(b->id, std::nullopt);
  REQUIRE(c.ok());
  REQUIRE(store->Remove(b->id).ok());
  REQUIRE(store->Remove(a->id).ok());
  for (const char* word : {"kestrel", "osprey"}) {
    INFO(word);
    auto hits = Search(*store, word);
    REQUIRE(hits.size() == 1);
    REQUIRE(hits[0].sessions.size() == 1);
    CHECK(hits[0].sessions[0].session.id == c->id);
    CHECK(hits[0].sessions[0].turn == (std::string(word) == "kestrel" ? 1 : 2));
  }
}

TEST_CASE("Search fills its page past better matches no live session holds") {
  TempDir dir;
  auto store = OpenOrDie<SqliteSessionStore>(dir.File("s.db"));
  core::NewSession spec;
  spec.cwd = "/w";
  spec.items = {core::UserMessage("start")};
  for (int i = 0; i < 10; ++i) spec.items.push_back(core::AssistantMessage("heron"));
  auto s = store->CreateSession(spec);
  REQUIRE(s.ok());
  // 30 newer, equally good matches, then the head moves back before them
  // (as `codex compact --undo` does): they stay stored, held by no session.
  std::vector<Item> later(30, core::AssistantMessage("heron"));
  auto ids = store->Append(s->id, s->head_item_id, "t", later);
  REQUIRE(ids.ok());
  REQUIRE(store->MoveHead(s->id, ids->back(), s->head_item_id).ok());
  for (int limit : {1, 5, 10, 20}) {
    INFO(limit);
    auto hits = Search(*store, "heron", limit);
    CHECK(hits.size() == static_cast<size_t>(std::min(limit, 10)));
    for (const auto& h : hits) {
      CHECK(h.item_id <= *s->head_item_id);
      REQUIRE(h.sessions.size() == 1);
      CHECK(h.sessions[0].session.id == s->id);
      CHECK(h.snippet == "[heron]");
      CHECK(h.kind == "message");
      CHECK(h.role == "assistant");
    }
  }
}

TEST_CASE("Search ranks as FTS5's bm25(), newer first on a tie") {
  TempDir dir;
  const std::string path = dir.File("s.db");
  auto store = OpenOrDie<SqliteSessionStore>(path);
  core::NewSession spec;
  spec.cwd = "/w";
  spec.items = {core::UserMessage("badger")};
  const char* texts[] = {
      "badger",
      "badger badger badger",
      "a badger in a long sentence about many other things that are not badgers at all",
      "badger and stoat",
      "stoat",
      "badger stoat badger stoat",
      "a very long line with one badger hidden among words words words words words words",
      "badger",
  };
  for (const char* t : texts) spec.items.push_back(core::AssistantMessage(t));
  REQUIRE(store->CreateSession(spec).ok());
  for (const char* query : {"badger", "badger stoat", "badg*", "\"badger stoat\""}) {
    INFO(query);
    std::vector<int64_t> want;
    {
      SQLite::Database db(path, SQLite::OPEN_READONLY);
      REQUIRE(codex::storage::RegisterCodexTokenizer(db.getHandle()).ok());
      auto fts = codex::storage::FtsQueryFromUser(query);
      REQUIRE(fts.ok());
      SQLite::Statement q(db,
                          "SELECT rowid FROM items_fts WHERE items_fts MATCH ?"
                          " ORDER BY bm25(items_fts), rowid DESC");
      q.bind(1, *fts);
      while (q.executeStep()) want.push_back(q.getColumn(0).getInt64());
    }
    REQUIRE_FALSE(want.empty());
    std::vector<int64_t> got;
    for (const auto& h : Search(*store, query)) got.push_back(h.item_id);
    CHECK(got == want);
  }
}
