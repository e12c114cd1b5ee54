#include "compaction/rebuild_history.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "compaction/token_accounting.h"
#include "compaction/working_state.h"
#include "testing/items.h"

using namespace codex;
using namespace codex::compaction;
using codex::testing::CallsPairedInOrder;
using codex::testing::Decoded;
using codex::testing::MinimalInitialContext;

namespace {

core::Item Call(const std::string& call_id) {
  return Decoded(
      R"({"type":"function_call","name":"shell","arguments":"{\"command\":[\"ls\"]}","call_id":")" +
      call_id + R"("})");
}

core::Item Reasoning(const std::string& enc) {
  return Decoded(R"({"type":"reasoning","summary":[],"content":null,"encrypted_content":")" + enc +
                 R"("})");
}

std::vector<core::Item> Concat(std::vector<core::Item> a, const std::vector<core::Item>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

std::vector<std::string> Texts(const std::vector<core::Item>& items) {
  std::vector<std::string> out;
  for (const auto& item : items) out.push_back(core::MessageText(item));
  return out;
}

int CountSummaries(const std::vector<core::Item>& items) {
  int n = 0;
  for (const auto& item : items) n += IsSummaryMessage(item) ? 1 : 0;
  return n;
}

}  // namespace

TEST_CASE("Classification of user messages") {
  CHECK(IsRealUserMessage(core::UserMessage("fix the bug")));
  CHECK_FALSE(IsRealUserMessage(
      core::UserMessage("<environment_context><cwd>/</cwd></environment_context>")));
  CHECK_FALSE(IsRealUserMessage(core::UserMessage("# AGENTS.md instructions for /p\n...")));
  CHECK_FALSE(IsRealUserMessage(core::UserMessage("<user_instructions>x</user_instructions>")));
  CHECK_FALSE(IsRealUserMessage(core::AssistantMessage("done")));
  CHECK_FALSE(IsRealUserMessage(core::DeveloperMessage("rules")));
  CHECK(IsContextItem(core::DeveloperMessage("rules")));
  CHECK_FALSE(IsContextItem(core::UserMessage("fix the bug")));

  core::Item summary = SummaryMessage("we did X");
  CHECK(IsSummaryMessage(summary));
  CHECK_FALSE(IsRealUserMessage(summary));
  CHECK(core::MessageText(summary) == std::string(kSummaryPrefix) + "we did X");
  // Summaries written by Codex CLI (imported rollouts) are recognised too.
  core::Item codex_summary = core::UserMessage(
      "Another language model started to solve this problem and produced a summary of its "
      "thinking process. ...");
  CHECK(IsSummaryMessage(codex_summary));
  CHECK_FALSE(IsRealUserMessage(codex_summary));
  CHECK_FALSE(IsSummaryMessage(core::UserMessage("please summarise this")));
}

TEST_CASE("RebuildHistory: initial context, recent user messages, summary") {
  const auto initial = MinimalInitialContext("read-only");
  core::Item u1 = core::UserMessage("first question");
  core::Item u2 = core::UserMessage("second question");
  std::vector<core::Item> transcript =
      Concat(initial, {u1, Reasoning("ENC-1"), Call("c1"), core::FunctionCallOutput("c1", "out"),
                       core::AssistantMessage("Done 1."), u2, core::AssistantMessage("Done 2.")});

  auto out = RebuildHistory(transcript, initial, "the summary", kDefaultUserMessageBudgetTokens,
                            std::nullopt);
  REQUIRE(out.size() == 6);
  CHECK(out[0].body == initial[0].body);
  CHECK(out[1].body == initial[1].body);
  CHECK(out[2].body == u1.body);
  CHECK(out[3].body == u2.body);
  // The frontier: both tasks answered, the command with its exit.
  REQUIRE(IsWorkingStateMessage(out[4]));
  const std::string frontier = core::MessageText(out[4]);
  CHECK(frontier.find("- [answered] first question\n  answer: Done 1.\n") != std::string::npos);
  CHECK(frontier.find("- [answered] second question\n  answer: Done 2.\n") != std::string::npos);
  CHECK(frontier.find("- [no exit code] ls\n") != std::string::npos);
  CHECK(out[5].body == SummaryMessage("the summary").body);
  CHECK(CallsPairedInOrder(out));
}

TEST_CASE("RebuildHistory: budget edges") {
  const auto initial = MinimalInitialContext("read-only");
  core::Item old_msg = core::UserMessage("old: " + std::string(2000, 'o'));
  core::Item new_msg = core::UserMessage("new: " + std::string(400, 'n'));
  std::vector<core::Item> transcript =
      Concat(initial, {old_msg, core::AssistantMessage("a"), new_msg, core::AssistantMessage("b")});
  const int64_t both = EstimateItemTokens(old_msg) + EstimateItemTokens(new_msg);

  SECTION("exactly at budget keeps both whole") {
    auto out = RebuildHistory(transcript, initial, "S", both, std::nullopt);
    REQUIRE(out.size() == 6);
    CHECK(out[2].body == old_msg.body);
    CHECK(out[3].body == new_msg.body);
  }
  SECTION("one token over cuts the oldest in the middle to what is left") {
    auto out = RebuildHistory(transcript, initial, "S", both - 1, std::nullopt);
    REQUIRE(out.size() == 6);
    CHECK(out[3].body == new_msg.body);
    const std::string cut = core::MessageText(out[2]);
    CHECK(cut.rfind("old: ooo", 0) == 0);
    CHECK(cut.find("bytes omitted by compaction") != std::string::npos);
    CHECK(EstimateItemTokens(out[2]) <= EstimateItemTokens(old_msg) - 1);
    CHECK(EstimateTokens(std::vector<core::Item>(out.begin() + 2, out.begin() + 4)) <= both - 1);
  }
  SECTION("too little left for a useful part: skipped") {
    auto out =
        RebuildHistory(transcript, initial, "S",
                       EstimateItemTokens(new_msg) + kMinPartialMessageTokens - 1, std::nullopt);
    REQUIRE(out.size() == 5);
    CHECK(out[2].body == new_msg.body);
    CHECK(IsWorkingStateMessage(out[3]));
    CHECK(IsSummaryMessage(out[4]));
  }
  SECTION("zero budget keeps no user message") {
    auto out = RebuildHistory(transcript, initial, "S", 0, std::nullopt);
    REQUIRE(out.size() == 4);
    CHECK(IsWorkingStateMessage(out[2]));
    CHECK(IsSummaryMessage(out[3]));
    CHECK(RebuildHistory(transcript, initial, "S", -10, std::nullopt).size() == 4);
  }
  SECTION("the walk stops at the first message that does not fit") {
    core::Item tiny = core::UserMessage("tiny");
    std::vector<core::Item> t = Concat(initial, {tiny, old_msg, new_msg});
    auto out = RebuildHistory(t, initial, "S", EstimateItemTokens(new_msg) + 40, std::nullopt);
    REQUIRE(out.size() == 5);  // tiny would fit, but older than the skipped message
    CHECK(out[2].body == new_msg.body);
  }
}

TEST_CASE("RebuildHistory: images count at a fixed cost; encrypted items are summarised") {
  const auto initial = MinimalInitialContext("read-only");
  core::Item image;
  image.kind = core::ItemKind::kMessage;
  image.role = "user";
  image.body = R"({"type":"message","role":"user","content":[{"type":"input_text","text":"see"},)"
               R"({"type":"input_image","image_url":"data:image/png;base64,)" +
               std::string(300'000, 'A') + R"("}]})";
  core::Item big_reasoning = Reasoning(std::string(60'000, 'E'));
  auto compaction = Decoded(R"({"type":"compaction","encrypted_content":"ENC-C"})");
  std::vector<core::Item> transcript =
      Concat(initial, {compaction, image, big_reasoning, core::AssistantMessage("I see a cat")});
  // bytes / 4 would make the image 75k tokens; as counted it fits a 2k budget.
  auto out = RebuildHistory(transcript, initial, "S", 2'000, std::nullopt);
  REQUIRE(out.size() == 5);
  CHECK(out[2].body == image.body);
  CHECK(out[3].kind == core::ItemKind::kMessage);
  // ... and does not fit a budget below its fixed estimate.
  auto small = RebuildHistory(transcript, initial, "S", kImageTokenEstimate - 1, std::nullopt);
  REQUIRE(small.size() == 5);
  CHECK(core::MessageText(small[2]) == "see");  // cut copy: text only
  // The encrypted items count in the estimate of what was replaced.
  CHECK(EstimateTokens(transcript) > 15'000);
  CHECK(EstimateTokens(out) < 3'000);
}

TEST_CASE("RebuildHistory: a second compaction replaces the previous summary") {
  const auto initial = MinimalInitialContext("read-only");
  core::Item u1 = core::UserMessage("first question");
  auto first = RebuildHistory(Concat(initial, {u1, core::AssistantMessage("Done 1.")}), initial,
                              "summary one", kDefaultUserMessageBudgetTokens, std::nullopt);
  core::Item u2 = core::UserMessage("second question");
  auto transcript = Concat(first, {u2, Call("c9"), core::FunctionCallOutput("c9", "x"),
                                   core::AssistantMessage("Done 2.")});
  auto second = RebuildHistory(transcript, initial, "summary two", kDefaultUserMessageBudgetTokens,
                               std::nullopt);
  REQUIRE(second.size() == 6);
  CHECK(CountSummaries(second) == 1);
  CHECK(Texts(second)[2] == "first question");
  CHECK(Texts(second)[3] == "second question");
  // The first task stays answered though its answer is only in the frontier now.
  CHECK(Texts(second)[4].find("- [answered] first question\n  answer: Done 1.") !=
        std::string::npos);
  CHECK(Texts(second)[4].find("- [answered] second question\n  answer: Done 2.") !=
        std::string::npos);
  CHECK(core::MessageText(second[5]) == std::string(kSummaryPrefix) + "summary two");
}

TEST_CASE("RebuildHistory: mid-turn, the current user message follows the kept ones") {
  const auto initial = MinimalInitialContext("read-only");
  core::Item u1 = core::UserMessage("earlier request");
  core::Item current = core::UserMessage("current request");
  std::vector<core::Item> transcript =
      Concat(initial, {u1, core::AssistantMessage("ok"), current, Call("c1"),
                       core::FunctionCallOutput("c1", "partial")});

  auto out = RebuildHistory(transcript, initial, "S", kDefaultUserMessageBudgetTokens, current);
  REQUIRE(out.size() == 6);
  CHECK(Texts(out)[2] == "earlier request");
  CHECK(out[3].body == current.body);
  CHECK(Texts(out)[4].find("- [answered] earlier request\n  answer: ok\n- [in progress] current "
                           "request\n") != std::string::npos);
  CHECK(IsSummaryMessage(out[5]));

  // Not charged to the budget.
  auto zero = RebuildHistory(transcript, initial, "S", 0, current);
  REQUIRE(zero.size() == 5);
  CHECK(zero[2].body == current.body);
  CHECK(IsWorkingStateMessage(zero[3]));
  CHECK(IsSummaryMessage(zero[4]));

  // Also kept when it is not in the transcript (compaction before it is appended).
  auto before = RebuildHistory(Concat(initial, {u1}), initial, "S", 1'000, current);
  REQUIRE(before.size() == 6);
  CHECK(before[2].body == u1.body);
  CHECK(before[3].body == current.body);
  CHECK(
      Texts(before)[4].find("- [interrupted] earlier request\n- [in progress] current request\n") !=
      std::string::npos);
  CHECK(IsSummaryMessage(before[5]));
}

TEST_CASE("RebuildHistory: a recompaction differs from its own input only from the summary on") {
  // The prompt-cache property: the request after a compaction must share
  // with the compaction request (the compacted transcript) everything up to
  // the new summary when the task and the working state did not change.
  const auto initial = MinimalInitialContext("read-only");
  core::Item task = core::UserMessage("fix the build");
  core::Item patch = Decoded(
      R"({"type":"custom_tool_call","name":"apply_patch","call_id":"p1","input":"*** Begin )"
      R"(Patch\n*** Update File: src/a.cc\n@@\n-x\n+y\n*** End Patch\n"})");
  auto first = RebuildHistory(Concat(initial, {task, patch, core::CustomToolCallOutput("p1", "ok"),
                                               Call("c1"), core::FunctionCallOutput("c1", "log")}),
                              initial, "S1", kDefaultUserMessageBudgetTokens, task);
  REQUIRE(first.size() == 5);
  CHECK(first[2].body == task.body);
  CHECK(IsWorkingStateMessage(first[3]));
  CHECK(IsSummaryMessage(first[4]));

  auto again = RebuildHistory(Concat(first, {Reasoning("ENC-2")}), initial, "S2",
                              kDefaultUserMessageBudgetTokens, task);
  REQUIRE(again.size() == first.size());
  for (size_t i = 0; i + 1 < again.size(); ++i) CHECK(again[i].body == first[i].body);
  CHECK(core::MessageText(again.back()) == std::string(kSummaryPrefix) + "S2");
}

TEST_CASE("RebuildHistory: injected context later in the transcript is not kept") {
  const auto initial = MinimalInitialContext("read-only");
  core::Item env_update =
      core::UserMessage("<environment_context>\n  <cwd>/other</cwd>\n</environment_context>");
  auto out = RebuildHistory(Concat(initial, {core::UserMessage("q"), env_update}), initial, "S",
                            1'000, std::nullopt);
  REQUIRE(out.size() == 5);
  CHECK(Texts(out)[2] == "q");
  CHECK(IsWorkingStateMessage(out[3]));
}

TEST_CASE("RebuildHistoryWithin enforces a ceiling") {
  const auto initial = MinimalInitialContext("read-only");
  std::vector<core::Item> transcript = initial;
  for (int i = 0; i < 30; ++i) {
    transcript.push_back(core::UserMessage("request " + std::to_string(i) + std::string(800, 'r')));
    transcript.push_back(core::AssistantMessage(std::string(800, 'a')));
  }
  const std::string summary(6'000, 's');
  const int64_t fixed = EstimateTokens(initial);

  SECTION("the user-message budget shrinks first") {
    const int64_t ceiling = fixed + EstimateItemTokens(SummaryMessage(summary)) + 1'000;
    auto out = RebuildHistoryWithin(transcript, initial, summary, 20'000, std::nullopt, ceiling);
    REQUIRE(out.ok());
    CHECK(EstimateTokens(*out) <= ceiling);
    CHECK(out->size() > initial.size() + 2);  // some user messages kept
    CHECK(core::MessageText(out->back()) == std::string(kSummaryPrefix) + summary);
  }
  SECTION("then the summary is cut") {
    // The frontier (the last kMaxTasks tasks, answered) is fixed like the initial context.
    const auto frontier = FrontierMessage(transcript, std::nullopt, {});
    REQUIRE(frontier.has_value());
    CHECK(core::MessageText(*frontier).find("request 21") == std::string::npos);
    CHECK(core::MessageText(*frontier).find("- [answered] request 22") != std::string::npos);
    const int64_t ceiling = fixed + EstimateItemTokens(*frontier) + 600;
    auto out = RebuildHistoryWithin(transcript, initial, summary, 20'000, std::nullopt, ceiling);
    REQUIRE(out.ok());
    CHECK(EstimateTokens(*out) <= ceiling);
    REQUIRE(out->size() == initial.size() + 2);
    CHECK(out->at(initial.size()).body == frontier->body);
    CHECK(IsSummaryMessage(out->back()));
    CHECK(core::MessageText(out->back()).find("bytes omitted by compaction") != std::string::npos);
  }
  SECTION("impossible when the fixed part alone is too big") {
    core::Item current = core::UserMessage(std::string(8'000, 'c'));
    auto out = RebuildHistoryWithin(transcript, initial, summary, 20'000, current, fixed + 100);
    REQUIRE_FALSE(out.ok());
    CHECK(out.status().code() == StatusCode::kResourceExhausted);
    CHECK(out.status().message().find("model_auto_compact_token_limit") != std::string::npos);
  }
}

TEST_CASE("TruncateMiddle keeps head and tail on UTF-8 boundaries") {
  CHECK(TruncateMiddle("short", 100) == "short");
  std::string text;
  for (int i = 0; i < 500; ++i) text += "é€";  // 2- and 3-byte sequences
  std::string cut = TruncateMiddle(text, 300);
  CHECK(cut.size() <= 300);
  CHECK(cut.find("bytes omitted by compaction") != std::string::npos);
  CHECK(cut.rfind("é€", 0) == 0);
  CHECK(cut.substr(cut.size() - 3) == "€");
  // Valid UTF-8: no continuation byte follows an ASCII byte or starts the text.
  for (size_t i = 0; i < cut.size(); ++i) {
    const auto c = static_cast<unsigned char>(cut[i]);
    if ((c & 0xC0) == 0x80) {
      REQUIRE(i > 0);
      CHECK((static_cast<unsigned char>(cut[i - 1]) & 0x80) != 0);
    }
  }
  std::string head = TruncateMiddle(text, 10);
  CHECK(head.size() <= 10);
  CHECK(head.rfind("é€", 0) == 0);
}

TEST_CASE("DropOldestItems: calls and outputs go together; context and summaries stay") {
  const auto initial = MinimalInitialContext("read-only");
  core::Item summary = SummaryMessage("before");
  std::vector<core::Item> items =
      Concat(initial, {summary, Reasoning("R1"), Call("c1"), Call("c2"),
                       core::FunctionCallOutput("c1", "o1"), core::FunctionCallOutput("c2", "o2"),
                       core::UserMessage("u"), Call("c3"),
                       core::FunctionCallOutput("c3", std::string(4'000, 'x'))});
  REQUIRE(CallsPairedInOrder(items));

  SECTION("one unit at a time") {
    // reasoning + c1 + its output
    CHECK(DropOldestItems(items, initial, 0) == 3);
    CHECK(CallsPairedInOrder(items));
    CHECK(items.size() == 8);
    CHECK(DropOldestItems(items, initial, 0) == 2);  // c2 + its output
    CHECK(CallsPairedInOrder(items));
    CHECK(DropOldestItems(items, initial, 0) == 1);  // u
    CHECK(DropOldestItems(items, initial, 0) == 2);  // c3 + its output
    CHECK(DropOldestItems(items, initial, 0) == 0);  // only protected items left
    REQUIRE(items.size() == 3);
    CHECK(items[0].body == initial[0].body);
    CHECK(items[1].body == initial[1].body);
    CHECK(items[2].body == summary.body);
  }
  SECTION("until enough tokens are gone") {
    CHECK(DropOldestItems(items, initial, 500) == 8);
    CHECK(CallsPairedInOrder(items));
    CHECK(items.size() == 3);
  }
}
