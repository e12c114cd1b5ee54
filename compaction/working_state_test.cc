#include "compaction/working_state.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "compaction/rebuild_history.h"

using namespace codex;
using namespace codex::compaction;

namespace {

using Json = nlohmann::json;

core::Item Call(const std::string& name, const Json& args, const std::string& id) {
  Json j = {{"type", "function_call"}, {"name", name}, {"arguments", args.dump()}, {"call_id", id}};
  return core::DecodeItem(j.dump()).value();
}

core::Item CustomPatch(const std::string& patch, const std::string& id) {
  Json j = {
      {"type", "custom_tool_call"}, {"name", "apply_patch"}, {"input", patch}, {"call_id", id}};
  return core::DecodeItem(j.dump()).value();
}

Json Plan(std::initializer_list<std::pair<const char*, const char*>> steps) {
  Json plan = Json::array();
  for (const auto& [step, status] : steps) plan.push_back({{"step", step}, {"status", status}});
  return {{"plan", plan}};
}

}  // namespace

TEST_CASE("Working state: files from apply_patch in both call forms, the newest plan") {
  std::vector<core::Item> transcript = {
      core::UserMessage("fix it"),
      Call("update_plan", Plan({{"read", "in_progress"}, {"fix", "pending"}}), "c1"),
      CustomPatch("*** Begin Patch\n*** Add File: a.txt\n+x\n*** Update File: src/b.cc\n"
                  "*** Move to: src/c.cc\n@@\n-1\n+2\n*** End Patch\n",
                  "c2"),
      Call("apply_patch", {{"input", "*** Begin Patch\n*** Delete File: old.md\n*** End Patch"}},
           "c3"),
      Call("apply_patch", {{"input", "*** Begin Patch\n*** Update File: a.txt\n*** End Patch"}},
           "c4"),
      Call("shell", {{"command", {"cat", "notes.txt"}}}, "c5"),
      Call("update_plan", Plan({{"read", "completed"}, {"fix", "in_progress"}}), "c6"),
  };
  WorkingState state = ExtractWorkingState(transcript);
  CHECK(state.files == std::vector<std::string>{"a.txt", "src/b.cc", "src/c.cc", "old.md"});
  REQUIRE(state.plan.size() == 2);
  CHECK(state.plan[0] == PlanStep{"read", "completed"});
  CHECK(state.plan[1] == PlanStep{"fix", "in_progress"});
}

TEST_CASE("Working state survives repeated compactions and merges with newer work") {
  std::vector<core::Item> first = {
      CustomPatch("*** Begin Patch\n*** Update File: x \"quoted\".cc\n*** End Patch", "c1"),
      Call("update_plan", Plan({{"step one\nwith a newline", "pending"}}), "c2")};
  auto message = WorkingStateMessage(ExtractWorkingState(first));
  REQUIRE(message.has_value());
  CHECK(IsWorkingStateMessage(*message));
  CHECK(IsContextItem(*message));  // never kept as a real user message
  CHECK_FALSE(IsRealUserMessage(*message));

  // After a compaction only the message is left; then more work happens.
  std::vector<core::Item> second = {
      *message, Call("apply_patch", {{"input", "*** Update File: y.cc\n"}}, "c3")};
  WorkingState state = ExtractWorkingState(second);
  CHECK(state.files == std::vector<std::string>{"x \"quoted\".cc", "y.cc"});
  REQUIRE(state.plan.size() == 1);
  CHECK(state.plan[0].step == "step one with a newline");
  CHECK(state.plan[0].status == "pending");

  // A third round: the message of the second round alone carries everything.
  auto again = WorkingStateMessage(state);
  REQUIRE(again.has_value());
  CHECK(ExtractWorkingState(std::vector<core::Item>{*again}).files == state.files);
}

TEST_CASE("No working state without edits or plans; the rebuilt history carries it") {
  std::vector<core::Item> plain = {core::UserMessage("hi"), core::AssistantMessage("hello")};
  CHECK(ExtractWorkingState(plain).empty());
  CHECK_FALSE(WorkingStateMessage(ExtractWorkingState(plain)).has_value());

  std::vector<core::Item> with_patch = plain;
  with_patch.push_back(CustomPatch("*** Add File: new.txt\n+x\n", "c1"));
  auto history = RebuildHistory(with_patch, {}, "did things", 1'000, std::nullopt);
  REQUIRE(history.size() == 3);  // user message, working state, summary
  CHECK(core::MessageText(history[0]) == "hi");
  CHECK(IsWorkingStateMessage(history[1]));
  CHECK(core::MessageText(history[1]).find("new.txt") != std::string::npos);
  CHECK(IsSummaryMessage(history[2]));
}
