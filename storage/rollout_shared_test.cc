// Imports the real Codex 0.169 rollouts (tests/data/reference/codex-0.169)
// and checks they resume.
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "core/item.h"
#include "storage/rollout.h"
#include "testing/store_test_support.h"
#include "testing/temp_dir.h"
#include "testing/test_data.h"

using codex::core::ItemKind;
using codex::storage::SessionDatabase;
using codex::storage::testing::OpenOrDie;
using codex::storage::testing::OpenStore;
using codex::storage::testing::StoreDir;
using codex::testing::TempDir;
namespace core = codex::core;
namespace storage = codex::storage;

namespace {

std::string Rollouts() {
  return codex::testing::TestData("reference/codex-0.169/rollouts").string();
}

// Every call has exactly one output and every output a call, in order.
void CheckPaired(const std::vector<core::StoredItem>& items) {
  std::map<std::string, int> open;
  for (const auto& it : items) {
    if (core::IsCall(it.item.kind)) {
      CHECK(open.count(it.item.call_id) == 0);
      open[it.item.call_id] = 1;
    } else if (core::IsCallOutput(it.item.kind)) {
      CHECK(open.count(it.item.call_id) == 1);
      open.erase(it.item.call_id);
    }
  }
  CHECK(open.empty());
}

}  // namespace

TEST_CASE("Every shared Codex rollout imports, resumes and round-trips") {
  StoreDir dir;
  auto store = OpenOrDie(dir.Store("s.db"));
  auto collected = storage::CollectRolloutFiles({Rollouts()});
  REQUIRE(collected.errors.empty());
  REQUIRE(!collected.files.empty());
  for (const std::string& file : collected.files) {
    INFO(file);
    auto outcome = storage::ImportRolloutFile(*store, file);
    INFO(outcome.status().ToString());
    REQUIRE(outcome.ok());
    CHECK(outcome->imported);
    auto s = store->FindSession(outcome->session_id);
    REQUIRE(s.ok());
    CHECK(s->cwd == "/home/user/project");
    CHECK(s->provider == "fake");
    CHECK(s->model == "gpt-test");
    CHECK(s->source == "import");
    CHECK_FALSE(s->title.empty());
    CHECK(s->tokens_used > 0);
    auto transcript = store->LoadTranscript(*s);
    REQUIRE(transcript.ok());
    REQUIRE(!transcript->empty());
    CheckPaired(*transcript);
    for (const auto& it : *transcript) {
      CHECK(it.item.body.find("internal_chat_message_metadata_passthrough") == std::string::npos);
      CHECK(it.item.kind != ItemKind::kCompactionCheckpoint);
    }
    // Resumable: a new turn appends at the head.
    auto ids = store->Append(s->id, s->head_item_id, "resume", {core::UserMessage("continue")});
    REQUIRE(ids.ok());

    // Re-import: nothing changes.
    auto again = storage::ImportRolloutFile(*store, file);
    REQUIRE(again.ok());
    CHECK_FALSE(again->imported);

    // Export -> import into a fresh store keeps every body byte for byte.
    auto jsonl = storage::ExportSession(*store, s->id, storage::ExportFormat::kJsonl);
    REQUIRE(jsonl.ok());
    StoreDir other;
    const std::string path = other.File("x.jsonl");
    std::ofstream(path, std::ios::binary) << *jsonl;
    auto copy = OpenOrDie(other.Store("c.db"));
    auto imported = storage::ImportRolloutFile(*copy, path);
    REQUIRE(imported.ok());
    auto h1 = store->LoadHistory(*store->FindSession(s->id));
    auto h2 = copy->LoadHistory(*copy->FindSession(s->id));
    REQUIRE(h1.ok());
    REQUIRE(h2.ok());
    REQUIRE(h1->size() == h2->size());
    for (size_t i = 0; i < h1->size(); ++i) CHECK((*h1)[i].item.body == (*h2)[i].item.body);
    CHECK(copy->LoadTurns(s->id)->size() == store->LoadTurns(s->id)->size());
  }
}

TEST_CASE("The compacted rollout becomes a checkpoint with its replacement history") {
  StoreDir dir;
  auto store = OpenOrDie(dir.Store("s.db"));
  auto collected = storage::CollectRolloutFiles({Rollouts()});
  REQUIRE(collected.errors.empty());
  bool found = false;
  for (const std::string& file : collected.files) {
    if (file.find("home_compact") == std::string::npos) continue;
    found = true;
    auto outcome = storage::ImportRolloutFile(*store, file);
    REQUIRE(outcome.ok());
    auto s = store->FindSession(outcome->session_id);
    REQUIRE(s.ok());
    CHECK(s->title == "first question");
    auto history = store->LoadHistory(*s);
    auto transcript = store->LoadTranscript(*s);
    REQUIRE(history.ok());
    REQUIRE(transcript.ok());
    int checkpoints = 0;
    for (const auto& it : *history) checkpoints += it.item.kind == ItemKind::kCompactionCheckpoint;
    CHECK(checkpoints == 1);
    CHECK(transcript->size() < history->size());
    // The compacted view ends with the post-compaction turn.
    CHECK(core::MessageText(transcript->back().item) == "Done 2.");
    std::set<std::string> texts;
    for (const auto& it : *transcript) texts.insert(core::MessageText(it.item));
    CHECK(texts.count("second question") == 1);
    CHECK(texts.count("first question") == 1);  // kept by the compaction
    auto turns = store->LoadTurns(s->id);
    REQUIRE(turns.ok());
    REQUIRE(turns->size() == 2);
    CHECK((*turns)[0].usage.total_tokens == 30100);
    CHECK((*turns)[1].usage.total_tokens == 60200);
    CHECK(s->tokens_used == 90300);
  }
  CHECK(found);
}
