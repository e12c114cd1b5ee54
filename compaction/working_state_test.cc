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
  CHECK(state.paths() == std::vector<std::string>{"a.txt", "src/b.cc", "src/c.cc", "old.md"});
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
  CHECK(state.paths() == std::vector<std::string>{"x \"quoted\".cc", "y.cc"});
  REQUIRE(state.plan.size() == 1);
  CHECK(state.plan[0].step == "step one with a newline");
  CHECK(state.plan[0].status == "pending");

  // A third round: the message of the second round alone carries everything.
  auto again = WorkingStateMessage(state);
  REQUIRE(again.has_value());
  CHECK(ExtractWorkingState(std::vector<core::Item>{*again}).files == state.files);
}

TEST_CASE("No working state without a task; the rebuilt history carries it") {
  std::vector<core::Item> nothing = {core::AssistantMessage("hello")};
  CHECK(ExtractWorkingState(nothing).empty());
  CHECK_FALSE(WorkingStateMessage(ExtractWorkingState(nothing)).has_value());
  std::vector<core::Item> plain = {core::UserMessage("hi"), core::AssistantMessage("hello")};
  REQUIRE(ExtractWorkingState(plain).tasks.size() == 1);
  CHECK(ExtractWorkingState(plain).tasks[0] == Task{"hi", "answered", "hello"});

  std::vector<core::Item> with_patch = plain;
  with_patch.push_back(CustomPatch("*** Add File: new.txt\n+x\n", "c1"));
  auto history = RebuildHistory(with_patch, {}, "did things", 1'000, std::nullopt);
  REQUIRE(history.size() == 3);  // user message, working state, summary
  CHECK(core::MessageText(history[0]) == "hi");
  CHECK(IsWorkingStateMessage(history[1]));
  CHECK(core::MessageText(history[1]).find("new.txt") != std::string::npos);
  CHECK(IsSummaryMessage(history[2]));
}

namespace {

core::Item ShellOutput(const std::string& id, int exit_code) {
  Json out = {{"output", "text"}, {"metadata", {{"exit_code", exit_code}}}};
  return core::FunctionCallOutput(id, out.dump());
}

}  // namespace

TEST_CASE("Frontier: tasks answered, interrupted, in progress; a call reopens an answered task") {
  std::vector<core::Item> transcript = {
      core::UserMessage("task X"),
      core::AssistantMessage("X-ALPHA done\nwith details"),
      core::UserMessage("task Y"),
      Call("shell", {{"command", {"make"}}}, "c1"),
      ShellOutput("c1", 2),
      core::UserMessage("task Z"),
      core::AssistantMessage("looking first"),  // commentary, then more work
      Call("shell", {{"command", {"bash", "-lc", "ls -la"}}}, "c2"),
  };
  WorkingState running = ExtractWorkingState(transcript, /*turn_running=*/true);
  REQUIRE(running.tasks.size() == 3);
  CHECK(running.tasks[0] == Task{"task X", "answered", "X-ALPHA done with details"});
  CHECK(running.tasks[1] == Task{"task Y", "interrupted", ""});
  CHECK(running.tasks[2] == Task{"task Z", "in progress", ""});
  REQUIRE(running.commands.size() == 2);
  CHECK(running.commands[0] == CommandRun{"make", "exit 2", 1});
  CHECK(running.commands[1] == CommandRun{"ls -la", "running", 1});
  // Between turns an unanswered last task was interrupted.
  CHECK(ExtractWorkingState(transcript, /*turn_running=*/false).tasks[2].status == "interrupted");
}

TEST_CASE("Frontier: read back and written again is byte-identical; new work continues it") {
  std::vector<core::Item> transcript = {
      core::UserMessage("task X"), core::AssistantMessage("X-ALPHA done"),
      core::UserMessage("task Y"),
      Call("update_plan", Plan({{"read", "completed"}, {"fix", "in_progress"}}), "c0"),
      CustomPatch("*** Begin Patch\n*** Update File: a.cc\n*** End Patch\n", "c1")};
  for (int i = 0; i < 3; ++i) {
    const std::string id = "s" + std::to_string(i);
    transcript.push_back(Call("shell", {{"command", {"cat", "build.log"}}}, id));
    transcript.push_back(ShellOutput(id, 0));
  }
  auto first = WorkingStateMessage(ExtractWorkingState(transcript));
  REQUIRE(first.has_value());
  const std::string text = core::MessageText(*first);
  CHECK(text.find("- [exit 0, 3 times] cat build.log\n") != std::string::npos);
  CHECK(text.find("- [updated] a.cc\n") != std::string::npos);
  // Sections from the most stable to the most volatile.
  CHECK(text.find("Tasks") < text.find("Current plan"));
  CHECK(text.find("Current plan") < text.find("Files touched"));
  CHECK(text.find("Files touched") < text.find("Last commands"));

  // A compacted history: kept messages, the frontier, a summary.
  std::vector<core::Item> compacted = {core::UserMessage("task X"), core::UserMessage("task Y"),
                                       *first, SummaryMessage("S")};
  auto again = WorkingStateMessage(ExtractWorkingState(compacted));
  REQUIRE(again.has_value());
  CHECK(again->body == first->body);  // same input, same bytes

  // More of the same command extends the count; the answer closes task Y.
  compacted.push_back(Call("shell", {{"command", {"cat", "build.log"}}}, "s9"));
  compacted.push_back(ShellOutput("s9", 0));
  compacted.push_back(core::AssistantMessage("Y fixed"));
  WorkingState next = ExtractWorkingState(compacted);
  REQUIRE(next.tasks.size() == 2);
  CHECK(next.tasks[0] == Task{"task X", "answered", "X-ALPHA done"});
  CHECK(next.tasks[1] == Task{"task Y", "answered", "Y fixed"});
  REQUIRE(next.commands.size() == 1);
  CHECK(next.commands[0] == CommandRun{"cat build.log", "exit 0", 4});
  REQUIRE(next.plan.size() == 2);
  CHECK(next.plan[0] == PlanStep{"read", "completed"});
  CHECK(KeptSummary(std::vector<core::Item>{*WorkingStateMessage(next)}) ==
        "2 tasks (2 answered), plan 1/2 completed, 1 file, last command `cat build.log` exit 0");
}

TEST_CASE("Frontier: bounded, the oldest first out; lines cut on UTF-8 boundaries") {
  std::vector<core::Item> transcript;
  for (size_t i = 0; i < kMaxTasks + 3; ++i) {
    transcript.push_back(core::UserMessage("task " + std::to_string(i)));
    transcript.push_back(core::AssistantMessage("answer " + std::to_string(i)));
  }
  for (size_t i = 0; i < kMaxFiles + 2; ++i) {
    transcript.push_back(CustomPatch("*** Add File: f" + std::to_string(i) + "\n", "p"));
  }
  for (size_t i = 0; i < kMaxCommands + 2; ++i) {
    const std::string id = "c" + std::to_string(i);
    transcript.push_back(Call("shell", {{"command", {"echo", std::to_string(i)}}}, id));
    transcript.push_back(ShellOutput(id, 0));
  }
  std::string long_step;
  for (int i = 0; i < 200; ++i) long_step += "\xC3\xA9";  // é, 2 bytes
  transcript.push_back(Call("update_plan", Plan({{long_step.c_str(), "pending"}}), "u"));
  WorkingState state = ExtractWorkingState(transcript);
  REQUIRE(state.tasks.size() == kMaxTasks);
  CHECK(state.tasks.front().text == "task 3");
  REQUIRE(state.files.size() == kMaxFiles);
  CHECK(state.files.front().path == "f2");
  REQUIRE(state.commands.size() == kMaxCommands);
  CHECK(state.commands.front().command == "echo 2");
  REQUIRE(state.plan.size() == 1);
  CHECK(state.plan[0].step.size() <= kMaxLineBytes);
  CHECK(state.plan[0].step.substr(state.plan[0].step.size() - 3) == "\xE2\x80\xA6");
  // Whole characters only: the byte before the ellipsis ends an é.
  CHECK(state.plan[0].step[state.plan[0].step.size() - 4] == '\xA9');
  // The whole message has a ceiling whatever the conversation.
  auto message = WorkingStateMessage(state);
  REQUIRE(message.has_value());
  CHECK(message->body.size() <
        (2 * kMaxTasks + kMaxPlanSteps + kMaxFiles + kMaxCommands + kMaxProcesses + 10) *
            (kMaxLineBytes + 16));
}

TEST_CASE("Frontier: open processes come from the tool layer's list, not from older messages") {
  std::vector<core::OpenProcess> open = {{"exec-1", "npm run dev"}};
  std::vector<core::Item> transcript = {core::UserMessage("serve it")};
  auto message = WorkingStateMessage(ExtractWorkingState(transcript, true, open));
  REQUIRE(message.has_value());
  CHECK(core::MessageText(*message).find("Open processes:\n- [exec-1] npm run dev\n") !=
        std::string::npos);
  CHECK(KeptSummary(std::vector<core::Item>{*message}) == "1 task (1 in progress), 1 open process");
  // The next compaction lists what is open then (here nothing).
  std::vector<core::Item> later = {*message};
  CHECK(ExtractWorkingState(later).processes.empty());
}

TEST_CASE("Frontier: a history compacted without one, and `!cmd` records, are not misread") {
  // An older codex kept the messages and a summary, no frontier: nothing says
  // whether "old task" was answered, so the frontier does not claim it.
  std::vector<core::Item> legacy = {
      core::UserMessage("old task"), core::UserMessage("running task"), SummaryMessage("S"),
      Call("shell", {{"command", {"ls"}}}, "c1"),
      core::UserMessage("<user_shell_command>\nls\n</user_shell_command>")};
  WorkingState state = ExtractWorkingState(legacy);
  REQUIRE(state.tasks.size() == 2);
  CHECK(state.tasks[0] == Task{"old task", "status unknown", ""});
  CHECK(state.tasks[1] == Task{"running task", "in progress", ""});  // work went on after it
}
