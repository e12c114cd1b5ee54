// A 150-call turn whose tool outputs outgrow a 12,000-token window, driven by
// sim::RunToolCallTask (the ContextBudget trigger the turn loop uses) over the
// real compactors and a simulated server.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "compaction/compactor_factory.h"
#include "compaction/simulated_model_client.h"
#include "compaction/simulated_task.h"
#include "compaction/token_accounting.h"

using namespace codex;
using namespace codex::compaction;
using codex::compaction::sim::RunToolCallTask;
using codex::compaction::sim::SimulatedModelClient;

namespace {

constexpr int64_t kWindow = 12'000;
constexpr int kCalls = 150;

}  // namespace

TEST_CASE("150 tool calls outgrowing a 12k window: none over it, at most 8 compactions") {
  core::Config config;
  config.model = "sim-model";
  config.model_context_window = kWindow;

  for (CompactionMode mode :
       {CompactionMode::kLocal, CompactionMode::kInline, CompactionMode::kEndpoint}) {
    CAPTURE(static_cast<int>(mode));
    SimulatedModelClient model(kWindow);
    auto compactor = MakeCompactor(config, model, mode);
    REQUIRE(compactor.ok());
    sim::TaskResult result = RunToolCallTask(compactor->get(), model, kCalls);

    CHECK(result.failure.empty());
    CHECK(result.finished);
    CHECK(result.tool_output_tokens > 3 * kWindow);  // the outputs really outgrow the window
    CHECK(result.compactions >= 1);
    CHECK(result.compactions <= 8);
    CHECK(model.stats().rejected_requests == 0);
    CHECK(model.stats().largest_request_tokens <= kWindow);
    // Nothing that matters is lost: the task, the files touched, the plan.
    CHECK(result.task_kept);
    CHECK(result.files_kept);
    CHECK(result.plan_kept);
    switch (mode) {
      case CompactionMode::kLocal:
      case CompactionMode::kInline:
        // Every request, compaction requests included, extends the previous
        // one byte for byte: what the prompt cache cannot serve is the new
        // content itself plus, per compaction, the rebuilt history (its
        // summary or compaction item, working state and task message).
        CHECK(model.stats().uncached_bytes <=
              result.new_content_bytes + result.compactions * 4'000 + 2'000);
        CHECK(model.stats().cache_hit_ratio() >= 0.89);
        if (mode == CompactionMode::kLocal) {
          CHECK(model.stats().summary_requests == result.compactions);
        } else {
          CHECK(model.stats().inline_requests == result.compactions);
          CHECK(model.stats().compact_requests == 0);
        }
        break;
      default:
        CHECK(model.stats().compact_requests == result.compactions);
        break;
    }
  }
}

TEST_CASE("Inline compaction refused by the server: the endpoint form from then on") {
  core::Config config;
  config.model = "sim-model";
  config.model_context_window = kWindow;
  SimulatedModelClient model(kWindow);
  model.set_inline_supported(false);
  auto compactor = MakeCompactor(config, model, CompactionMode::kInline);
  REQUIRE(compactor.ok());
  sim::TaskResult result = RunToolCallTask(compactor->get(), model, kCalls);
  CHECK(result.failure.empty());
  CHECK(result.finished);
  CHECK(result.compactions >= 1);
  // Asked inline once, refused, then never again.
  CHECK(model.stats().inline_requests == 0);
  CHECK(model.stats().compact_requests == result.compactions);
  CHECK(model.stats().largest_request_tokens <= kWindow);
}

TEST_CASE("Without compaction the same turn overflows the window") {
  SimulatedModelClient model(kWindow);
  sim::TaskResult result = RunToolCallTask(nullptr, model, kCalls);
  CHECK_FALSE(result.finished);
  CHECK(result.failure.find("exceeds the context window") != std::string::npos);
  CHECK(model.stats().rejected_requests == 1);
  CHECK(model.stats().largest_request_tokens > kWindow);
}
