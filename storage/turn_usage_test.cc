// SessionDatabase::TurnsSince (codex sessions usage), on either backend: the
// turns of every session, archived ones too, with the responses recorded in
// each; a fork's inherited items count for its parent only.
#include <catch2/catch.hpp>
#include <chrono>
#include <map>

#include "base/time.h"
#include "core/item.h"
#include "testing/store_test_support.h"

namespace core = codex::core;
using codex::NowMs;
using codex::storage::SessionDatabase;
using codex::storage::TurnUsage;
using codex::storage::testing::OpenOrDie;
using codex::storage::testing::StoreDir;

namespace {

// Appends `items` to `id` in turn `turn`, recording a usage after each of
// the first `requests` of them, then the turn itself.
void Turn(SessionDatabase& store, const std::string& id, const std::string& turn,
          int64_t started_at_ms, int items, int requests, int64_t input_tokens) {
  auto s = store.FindSession(id);
  REQUIRE(s.ok());
  std::optional<int64_t> head = s->head_item_id;
  for (int i = 0; i < items; ++i) {
    auto ids = store.Append(id, head, turn, {core::AssistantMessage("answer " + turn)});
    REQUIRE(ids.ok());
    head = ids->back();
    if (i < requests) REQUIRE(store.RecordUsage(*head, 100 + i).ok());
  }
  core::TurnRecord t;
  t.session_id = id;
  t.turn_id = turn;
  t.started_at_ms = started_at_ms;
  t.ended_at_ms = started_at_ms + 10;
  t.usage.input_tokens = input_tokens;
  t.usage.cached_input_tokens = input_tokens / 2;
  t.usage.output_tokens = 7;
  t.usage.reasoning_output_tokens = 3;
  t.usage.total_tokens = input_tokens + 7;
  REQUIRE(store.RecordTurn(t).ok());
}

}  // namespace

TEST_CASE("TurnsSince: every session's turns in the window, with their requests") {
  StoreDir dir;
  auto store = OpenOrDie(dir.Store("usage.db"));
  const int64_t now = NowMs();
  core::NewSession spec;
  spec.cwd = "/w";
  spec.items = {core::UserMessage("first")};
  auto a = store->CreateSession(spec);
  REQUIRE(a.ok());
  Turn(*store, a->id, "a1", now - 10'000, 3, 2, 1000);
  auto fork = store->Fork(a->id, std::nullopt);
  REQUIRE(fork.ok());
  Turn(*store, a->id, "a2", now - 5'000, 1, 1, 2000);
  Turn(*store, fork->id, "b1", now - 4'000, 2, 1, 500);
  REQUIRE(store->Archive(a->id).ok());

  auto all = store->TurnsSince(0);
  REQUIRE(all.ok());
  REQUIRE(all->size() == 3);
  std::map<std::string, TurnUsage> by_turn;
  for (const auto& u : *all) by_turn[u.turn.turn_id] = u;
  CHECK((*all)[0].turn.turn_id == "a1");  // oldest first
  CHECK(by_turn["a1"].requests == 2);
  CHECK(by_turn["a1"].turn.session_id == a->id);
  CHECK(by_turn["a1"].turn.usage.input_tokens == 1000);
  CHECK(by_turn["a1"].turn.usage.cached_input_tokens == 500);
  CHECK(by_turn["a1"].turn.usage.reasoning_output_tokens == 3);
  CHECK(by_turn["a2"].requests == 1);
  // The fork holds a1's items too; they are its parent's requests, not its own.
  CHECK(by_turn["b1"].requests == 1);
  CHECK(by_turn["b1"].turn.session_id == fork->id);

  auto recent = store->TurnsSince(now - 7'000);
  REQUIRE(recent.ok());
  REQUIRE(recent->size() == 2);
  CHECK((*recent)[0].turn.turn_id == "a2");
  CHECK((*recent)[1].turn.turn_id == "b1");

  auto none = store->TurnsSince(now + 60'000);
  REQUIRE(none.ok());
  CHECK(none->empty());
}
