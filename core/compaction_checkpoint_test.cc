#include "core/compaction_checkpoint.h"

#include <catch2/catch.hpp>

using namespace codex;
using namespace codex::core;

namespace {

CompactionOutput LocalOutput() {
  CompactionOutput out;
  out.mode = "local";
  out.summary = "we fixed \"the\" parser";
  out.dropped_items = 4;
  out.tokens_before = 10'900;
  out.tokens_after = 1'200;
  out.new_history = {DeveloperMessage("rules"), UserMessage("q"), UserMessage("summary")};
  return out;
}

}  // namespace

TEST_CASE("Checkpoint item body describes the compaction") {
  Item item = MakeCheckpointItem(LocalOutput(), CompactionTrigger::kAuto);
  CHECK(item.kind == ItemKind::kCompactionCheckpoint);
  CHECK(item.call_id.empty());
  CHECK(item.body ==
        R"({"type":"compaction_checkpoint","mode":"local","trigger":"auto","tokens_before":10900,)"
        R"("tokens_after":1200,"replacement_items":3,"dropped_items":4,)"
        R"("summary":"we fixed \"the\" parser"})");

  auto info = ParseCheckpointItem(item);
  REQUIRE(info.ok());
  CHECK(info->mode == "local");
  CHECK(info->trigger == "auto");
  CHECK(info->tokens_before == 10'900);
  CHECK(info->tokens_after == 1'200);
  CHECK(info->replacement_items == 3);
  CHECK(info->dropped_items == 4);
  CHECK(info->summary == "we fixed \"the\" parser");
}

TEST_CASE("Remote checkpoints have a null summary; triggers are named") {
  CompactionOutput out = LocalOutput();
  out.mode = "remote";
  out.summary.clear();
  Item item = MakeCheckpointItem(out, CompactionTrigger::kOverflow);
  CHECK(item.body.find(R"("summary":null)") != std::string::npos);
  auto info = ParseCheckpointItem(item);
  REQUIRE(info.ok());
  CHECK(info->trigger == "overflow");
  CHECK_FALSE(info->summary.has_value());
  CHECK(CompactionTriggerName(CompactionTrigger::kManual) == "manual");
}

TEST_CASE("ParseCheckpointItem rejects other kinds and corrupt bodies") {
  auto wrong = ParseCheckpointItem(UserMessage("x"));
  REQUIRE_FALSE(wrong.ok());
  CHECK(wrong.status().code() == StatusCode::kInvalidArgument);

  Item item;
  item.kind = ItemKind::kCompactionCheckpoint;
  for (
      const char* body :
      {"nope", "[]", R"({"mode":"local"})",
       R"({"mode":"local","trigger":"auto","tokens_before":"1","tokens_after":1,"replacement_items":1,"dropped_items":0})",
       R"({"mode":"local","trigger":"auto","tokens_before":1,"tokens_after":1,"replacement_items":1,"dropped_items":0,"summary":5})"}) {
    item.body = body;
    auto info = ParseCheckpointItem(item);
    REQUIRE_FALSE(info.ok());
    CHECK(info.status().code() == StatusCode::kDataLoss);
  }
}
