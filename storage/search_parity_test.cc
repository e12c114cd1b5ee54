// Search promises both backends keep alike (storage/store_test_support.h):
// the same folding of words, and hits credited to every live session that
// holds an item, through fork lineages whose sessions were removed.
#include <catch2/catch.hpp>
#include <set>

#include "core/item.h"
#include "storage/store_test_support.h"

using codex::core::NewSession;
using codex::core::SessionInfo;
using codex::storage::SearchHit;
using codex::storage::SearchQuery;
using codex::storage::SessionDatabase;
using codex::storage::testing::OpenStore;
using codex::storage::testing::StoreDir;
namespace core = codex::core;

namespace {

std::unique_ptr<SessionDatabase> OpenOrDie(StoreDir& dir) {
  auto store = OpenStore(dir.Store("s.db"));
  INFO(store.status().ToString());
  REQUIRE(store.ok());
  return std::move(store).value();
}

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
  auto store = OpenOrDie(dir);
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
  auto store = OpenOrDie(dir);
  const SessionInfo a = Create(*store, "axolotl from the root");
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
  // The root and the middle of the lineage go: the grandchild still holds both texts.
  REQUIRE(store->Remove(a.id).ok());
  REQUIRE(store->Remove(b->id).ok());
  CHECK(Holders(Search(*store, "axolotl")) == std::set<std::string>{c->id, d->id});
  CHECK(Holders(Search(*store, "capybara")) == std::set<std::string>{c->id});
  REQUIRE(store->Remove(c->id).ok());
  CHECK(Search(*store, "capybara").empty());
  CHECK(Holders(Search(*store, "axolotl")) == std::set<std::string>{d->id});
}
