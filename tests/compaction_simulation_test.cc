// A 150-call turn whose tool outputs outgrow a 12,000-token window:
// sim::RunToolCallTask runs it through the shipped turn loop
// (core::Conversation, core::ToolRouter, the real compactors and a SQLite
// store) against a simulated server, so what is checked is what codex does.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "bench/stretch_replay.h"
#include "compaction/compactor_factory.h"
#include "compaction/token_accounting.h"
#include "storage/sqlite_session_store.h"
#include "testing/simulated_model_client.h"
#include "testing/simulated_task.h"
#include "testing/temp_dir.h"

using namespace codex;
using namespace codex::compaction;
using codex::compaction::sim::RunToolCallTask;
using codex::compaction::sim::SimulatedModelClient;

namespace {

constexpr int64_t kWindow = 12'400;
constexpr int kCalls = 150;

// The task in a new session of a fresh SQLite store.
sim::TaskResult RunTask(core::Compactor* compactor, SimulatedModelClient& model) {
  codex::testing::TempDir dir("codex-sim-");
  auto store = storage::SqliteSessionStore::Open(dir.File("sessions.db"));
  REQUIRE(store.ok());
  return RunToolCallTask(**store, compactor, model, kCalls);
}

}  // namespace

TEST_CASE("150 tool calls outgrowing a 12k window: none over it, no needless compaction") {
  core::Config config;
  config.model = "sim-model";
  config.model_context_window = kWindow;

  for (CompactionMode mode :
       {CompactionMode::kLocal, CompactionMode::kInline, CompactionMode::kEndpoint}) {
    CAPTURE(static_cast<int>(mode));
    SimulatedModelClient model(kWindow);
    auto compactor = MakeCompactor(config, model, mode);
    REQUIRE(compactor.ok());
    sim::TaskResult result = RunTask(compactor->get(), model);

    CHECK(result.failure.empty());
    CHECK(result.finished);
    CHECK(result.tool_output_tokens > 3 * kWindow);  // the outputs really outgrow the window
    CHECK(result.compactions >= 1);
    // No needless compaction, none late: every task request stays under the
    // auto-compact limit and every compaction request's history (the request
    // without its ask) reaches it, so each compaction comes exactly when the
    // next request would have reached the limit. Replaying the run's own
    // steps with that rule gives the same count and bytes, and one fewer
    // compaction would need a restart smaller than instructions, tools,
    // initial context, task and compaction item alone (bench/compaction_bench
    // prints the numbers: 10 here, 9 before the goal tools added ~370 tokens
    // to every request's fixed part; the 8 needs a restart ~600 B
    // smaller or a limit ~150 tokens higher at the old size).
    const int64_t limit = (*compactor)->auto_compact_limit();
    if (mode != CompactionMode::kEndpoint) {
      const auto& log = model.stats().log;
      for (size_t i = 0; i < log.size(); ++i) {
        const auto& r = log[i];
        CAPTURE(i);
        if (r.kind == sim::RequestKind::kTask) {
          CHECK(core::EstimateTextTokens(static_cast<size_t>(r.bytes)) < limit);
        } else {
          REQUIRE((r.kind == sim::RequestKind::kInlineCompaction ||
                   r.kind == sim::RequestKind::kSummary));
          CHECK(core::EstimateTextTokens(static_cast<size_t>(r.bytes - r.ask_bytes)) >= limit);
        }
      }
      const auto steps = sim::ReadSteps(log);
      REQUIRE(steps.has_value());
      CHECK(steps->compactions == result.compactions);
      const auto replay = sim::ReplayStretches(*steps, steps->restart_bytes, limit);
      CHECK(replay.compactions == result.compactions);
      CHECK(replay.requests == model.stats().requests);
      // The replay restarts every stretch from the last restart; the
      // frontier's command line counts the runs ("exit 0, 37 times"), so
      // earlier restarts differ from it by a digit or two per request.
      CHECK(std::abs(replay.sent_bytes - model.stats().bytes_sent) <= model.stats().requests * 4);
      CHECK(replay.floor_uncached_bytes <= model.stats().uncached_bytes);
    }
    CHECK(result.compactions <= 10);
    CHECK(model.stats().rejected_requests == 0);
    CHECK(model.stats().largest_request_tokens <= kWindow);
    // Nothing that matters is lost: the task, the files touched, the plan.
    CHECK(result.task_kept);
    CHECK(result.files_kept);
    CHECK(result.plan_kept);
    CHECK(result.frontier_kept);
    CHECK(result.patch_applied);  // the real tool router ran the model's apply_patch
    switch (mode) {
      case CompactionMode::kLocal:
      case CompactionMode::kInline:
        // Every request, compaction requests included, extends the previous
        // one byte for byte: what the prompt cache cannot serve is the first
        // request and the new content itself (model and tool items, each
        // compaction's item or summary) plus each compaction's ask, a few
        // bytes of JSON per compaction and the working state once (the
        // rebuilt history keeps the task and the working state in the
        // compaction request's prefix up to its last commands, the volatile
        // end of the frontier: a new count, the closing tag, per compaction).
        {
          int64_t asks = 0;
          for (const auto& r : model.stats().log) asks += r.ask_bytes;
          CHECK(model.stats().uncached_bytes <=
                model.stats().log.front().bytes + result.new_content_bytes +
                    result.compaction_output_bytes + asks + result.compactions * 128 + 512);
        }
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
  sim::TaskResult result = RunTask(compactor->get(), model);
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
  sim::TaskResult result = RunTask(nullptr, model);
  CHECK_FALSE(result.finished);
  CHECK(result.failure.find("exceeds the context window") != std::string::npos);
  CHECK(model.stats().rejected_requests == 1);
  CHECK(model.stats().largest_request_tokens > kWindow);
}
