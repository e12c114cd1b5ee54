#include "core/context_budget.h"

#include <catch2/catch.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/model_client.h"
#include "core/session_store.h"

using namespace codex;
using namespace codex::core;

namespace {

TokenUsage Total(int64_t total) {
  TokenUsage usage;
  usage.input_tokens = total - 100;
  usage.output_tokens = 100;
  usage.total_tokens = total;
  return usage;
}

Status Overflow() {
  Status s = ResourceExhaustedError("too long");
  s.WithReason(core::reason::kContextLengthExceeded);
  return s;
}

}  // namespace

TEST_CASE("ContextBudget: reported total plus what came after it") {
  const std::vector<Item> history = {DeveloperMessage("rules"), UserMessage("hi")};
  ContextBudget budget(10'800, 12'000);
  budget.Seed(history, std::nullopt, 500);
  CHECK(budget.usage() == 500 + EstimateTokens(history));

  const Item output = FunctionCallOutput("c1", std::string(4000, 'x'));
  budget.OnItemAdded(output);
  CHECK(budget.usage() == 500 + EstimateTokens(history) + EstimateItemTokens(output));

  budget.OnResponseCompleted(Total(3'200));
  CHECK(budget.usage() == 3'200);
  budget.OnItemAdded(output);
  CHECK(budget.usage() == 3'200 + EstimateItemTokens(output));
  budget.OnResponseCompleted(std::nullopt);  // no usage reported: keep the estimate
  CHECK(budget.usage() == 3'200 + EstimateItemTokens(output));
  budget.OnResponseCompleted(TokenUsage{});  // a zero total is no report either
  CHECK(budget.usage() == 3'200 + EstimateItemTokens(output));
}

TEST_CASE("ContextBudget: seeded on resume from the stored mark, not from item bytes") {
  std::vector<Item> transcript = {DeveloperMessage("rules"), UserMessage("hi"),
                                  AssistantMessage("hello"), UserMessage("more")};
  ContextBudget budget(5'000, 38'000);
  // The server counted 30,100 tokens for the response ending at item 2.
  budget.Seed(transcript, UsageMark{2, 30'100}, 10);
  CHECK(budget.usage() == 30'100 + EstimateItemTokens(transcript[3]));
  CHECK(budget.ShouldCompactBeforeTurn());
  // A mark past the end (a stale index) is ignored: estimate everything.
  budget.Seed(transcript, UsageMark{9, 30'100}, 10);
  CHECK(budget.usage() == 10 + EstimateTokens(transcript));
  CHECK_FALSE(budget.ShouldCompactBeforeTurn());
}

TEST_CASE("ContextBudget: before a turn, before follow-ups once per request, on overflow once") {
  const std::vector<Item> none;
  ContextBudget budget(1'000, 1'200);
  budget.Seed(none, std::nullopt, 999);
  budget.OnTurnStarted();
  CHECK_FALSE(budget.ShouldCompactBeforeTurn());
  budget.Seed(none, std::nullopt, 1'000);
  CHECK(budget.ShouldCompactBeforeTurn());
  // The first request of a turn follows the before-turn check: not asked again.
  CHECK_FALSE(budget.ShouldCompactBeforeRequest());
  budget.OnRequestSent();
  CHECK(budget.ShouldCompactBeforeRequest());
  budget.OnCompacted();  // compacted, but still over: at most once per request
  CHECK_FALSE(budget.ShouldCompactBeforeRequest());
  budget.OnRequestSent();
  CHECK(budget.ShouldCompactBeforeRequest());

  CHECK(budget.ShouldCompactAfterFailure(Overflow()));
  CHECK_FALSE(budget.ShouldCompactAfterFailure(UnavailableError("dropped")));
  Status quota = ResourceExhaustedError("quota");
  quota.WithReason(core::reason::kInsufficientQuota);
  CHECK_FALSE(budget.ShouldCompactAfterFailure(quota));
  budget.OnOverflowCompacted();
  CHECK_FALSE(budget.ShouldCompactAfterFailure(Overflow()));  // retried once only
  budget.OnTurnStarted();
  CHECK(budget.ShouldCompactAfterFailure(Overflow()));  // a new turn may retry again
}

TEST_CASE("ContextBudget: from the soft limit, only at a natural boundary; the limit always") {
  const std::vector<Item> none;
  ContextBudget budget(1'000, 1'200, 750);
  CHECK(budget.soft_limit() == 750);
  budget.Seed(none, std::nullopt, 749);
  budget.OnTurnStarted();
  CHECK_FALSE(budget.ShouldCompactBeforeTurn());
  budget.Seed(none, std::nullopt, 750);
  CHECK(budget.ShouldCompactBeforeTurn());  // the end of a turn is a boundary
  budget.OnRequestSent();
  // The end of an ordinary tool batch is not enough between the limits ...
  CHECK_FALSE(budget.ShouldCompactBeforeRequest());
  CHECK_FALSE(budget.ShouldCompactBeforeRequest(/*plan_step_completed=*/false));
  // ... a batch that completed a plan step is.
  CHECK(budget.ShouldCompactBeforeRequest(/*plan_step_completed=*/true));
  budget.Seed(none, std::nullopt, 749);
  CHECK_FALSE(budget.ShouldCompactBeforeRequest(true));  // under the soft limit: never
  budget.Seed(none, std::nullopt, 1'000);
  CHECK(budget.ShouldCompactBeforeRequest(false));  // the limit needs no boundary

  // Without a soft limit, or one above the limit, the limit is the soft limit.
  CHECK(ContextBudget(1'000, 1'200).soft_limit() == 1'000);
  CHECK(ContextBudget(1'000, 1'200, 5'000).soft_limit() == 1'000);
}

TEST_CASE("ContextBudget: a compaction must make the next request smaller than the usage") {
  const std::vector<Item> small = {UserMessage("summary")};
  ContextBudget budget(5'000, 38'000);
  // The server counted 30,100 for a history whose items are tiny: any
  // compacted history of a few items is a real shrink.
  std::vector<Item> transcript = {UserMessage("q"), AssistantMessage("a")};
  budget.Seed(transcript, UsageMark{1, 30'100}, 2'000);
  CHECK(budget.Shrinks(small, 2'000));
  // Estimated only: a history bigger than the one it replaces is no shrink.
  budget.Seed(transcript, std::nullopt, 2'000);
  const std::vector<Item> bigger = {UserMessage(std::string(400, 's'))};
  CHECK_FALSE(budget.Shrinks(bigger, 2'000));
  CHECK_FALSE(budget.Shrinks(transcript, 2'000));  // the same size is no shrink either
}

TEST_CASE("ContextBudget: a manual compaction only from half the limit; limit 0 disables") {
  const std::vector<Item> none;
  ContextBudget budget(1'000, 1'200);
  budget.Seed(none, std::nullopt, 499);
  CHECK_FALSE(budget.ManualCompactionWorthwhile());
  // Exactly half the limit is what a compacted history may take: not again.
  budget.Seed(none, std::nullopt, 500);
  CHECK_FALSE(budget.ManualCompactionWorthwhile());
  budget.Seed(none, std::nullopt, 501);
  CHECK(budget.ManualCompactionWorthwhile());

  ContextBudget off(0, 0);
  off.Seed(none, std::nullopt, 1'000'000);
  off.OnTurnStarted();
  off.OnRequestSent();
  CHECK_FALSE(off.ShouldCompactBeforeTurn());
  CHECK_FALSE(off.ShouldCompactBeforeRequest());
}

TEST_CASE("Item estimates: bytes / 4, images at a fixed cost, checkpoints free") {
  Item text = UserMessage(std::string(400, 'a'));
  CHECK(EstimateItemTokens(text) == static_cast<int64_t>((text.body.size() + 3) / 4));
  Item image;
  image.kind = ItemKind::kMessage;
  image.role = "user";
  image.body = R"({"type":"message","role":"user","content":[{"type":"input_image","image_url":")" +
               std::string(400'000, 'A') + R"("}]})";
  CHECK(EstimateItemTokens(image) > kImageTokenEstimate);
  CHECK(EstimateItemTokens(image) < kImageTokenEstimate + 50);
  Item checkpoint;
  checkpoint.kind = ItemKind::kCompactionCheckpoint;
  checkpoint.body = std::string(1000, 'c');
  CHECK(EstimateItemTokens(checkpoint) == 0);
}

TEST_CASE("NewestUsageMark: the newest stored count, indexed into the view; none without one") {
  std::vector<StoredItem> view(4);
  for (size_t i = 0; i < view.size(); ++i) view[i].item = UserMessage(std::string(40, 'a'));
  CHECK_FALSE(NewestUsageMark(view).has_value());
  view[0].reported_total_tokens = 9'000;
  view[2].reported_total_tokens = 30'100;
  auto mark = NewestUsageMark(view);
  REQUIRE(mark.has_value());
  CHECK(mark->item_index == 2);
  CHECK(mark->total_tokens == 30'100);

  // Seeded from it: the count plus the one item after it, the fixed part ignored.
  std::vector<Item> items;
  for (const auto& s : view) items.push_back(s.item);
  ContextBudget budget(5'000, 12'000);
  budget.Seed(items, mark, 1'000'000);
  CHECK(budget.usage() == 30'100 + EstimateItemTokens(items[3]));
  CHECK(budget.ShouldCompactBeforeTurn());
}

TEST_CASE("The one text estimate: ceil(bytes / 4), what every fixed part and item body costs") {
  CHECK(EstimateTextTokens(0) == 0);
  CHECK(EstimateTextTokens(1) == 1);
  CHECK(EstimateTextTokens(4) == 1);
  CHECK(EstimateTextTokens(5) == 2);
  CHECK(EstimateTextTokens(4'000'001) == 1'000'001);
  const Item text = UserMessage("hello, world");
  CHECK(EstimateItemTokens(text) == EstimateTextTokens(text.body.size()));
}

TEST_CASE("ContextLeftPercent: rounded down, clamped, 100 when the window is unknown") {
  CHECK(ContextLeftPercent(0, 1000) == 100);
  CHECK(ContextLeftPercent(1, 1000) == 99);  // rounded down: never more room than there is
  CHECK(ContextLeftPercent(999, 1000) == 0);
  CHECK(ContextLeftPercent(2000, 1000) == 0);
  CHECK(ContextLeftPercent(-5, 1000) == 100);
  // No window known (no compactor): nothing counts against it.
  CHECK(ContextLeftPercent(0, 0) == 100);
  CHECK(ContextLeftPercent(5'000'000, 0) == 100);
  CHECK(ContextLeftPercent(10, -1) == 100);

  // The budget answers for its own usage and window: the turn loop's number.
  ContextBudget unknown;
  unknown.Seed(std::vector<Item>{UserMessage(std::string(4000, 'a'))}, std::nullopt, 100);
  CHECK(unknown.ContextLeftPercent() == 100);
  ContextBudget budget(900, 1000);
  budget.Seed(std::vector<Item>{}, std::nullopt, 250);
  CHECK(budget.ContextLeftPercent() == 75);
  budget.OnItemAdded(UserMessage(std::string(4000, 'a')));
  CHECK(budget.ContextLeftPercent() == 0);
  CHECK(budget.ContextLeftPercent() == ContextLeftPercent(budget.usage(), 1000));
}
