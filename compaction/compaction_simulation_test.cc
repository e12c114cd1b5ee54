// A 150-call turn whose tool outputs outgrow a 12,000-token window, driven
// by a small turn loop over the real compactors and a simulated server.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "compaction/compactor_factory.h"
#include "compaction/rebuild_history.h"
#include "compaction/simulated_model_client.h"
#include "compaction/token_accounting.h"
#include "core/request_builder.h"

using namespace codex;
using namespace codex::compaction;
using codex::compaction::sim::NextReply;
using codex::compaction::sim::SimulatedModelClient;

namespace {

constexpr int64_t kWindow = 12'000;
constexpr int kCalls = 150;

const std::string kTools =
    R"([{"type":"function","name":"shell","description":"Runs a command.","strict":false,)"
    R"("parameters":{"type":"object","properties":{"command":{"type":"array","items":{"type":"string"}}},"required":["command"]}}])";

class NoopObserver final : public core::StreamObserver {
 public:
  Status OnOutputItemDone(const core::Item& item) override {
    (void)item;
    return OkStatus();
  }
};

struct LoopResult {
  int compactions = 0;
  int64_t tool_output_tokens = 0;
  bool finished = false;
};

// One turn: the model calls a tool kCalls times, then answers. Compaction is
// checked before every request, as the turn loop does.
LoopResult RunTurn(core::Compactor& compactor, SimulatedModelClient& model) {
  LoopResult result;
  core::CancelToken cancel;
  NoopObserver observer;
  const std::vector<core::Item> initial = {
      core::DeveloperMessage(
          "<permissions instructions>workspace-write</permissions instructions>"),
      core::UserMessage("<environment_context>\n  <cwd>/work/app</cwd>\n</environment_context>")};
  const core::Item task = core::UserMessage("The build fails; read build.log until you find why.");
  std::vector<core::Item> transcript = initial;
  transcript.push_back(task);
  UsageTracker usage(transcript);

  core::RequestOptions request;
  request.model = "sim-model";
  request.instructions = "You are a coding agent.";
  request.tools_json = kTools;
  request.prompt_cache_key = "0193aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee";

  for (int step = 0; step <= kCalls; ++step) {
    if (ShouldCompact(usage.usage(), compactor.auto_compact_limit())) {
      core::CompactionInput input;
      input.transcript = transcript;
      input.initial_context = initial;
      input.current_user_message = task;
      input.session_id = request.prompt_cache_key;
      input.model = request.model;
      input.instructions = request.instructions;
      auto out = compactor.Compact(input, cancel);
      REQUIRE(out.ok());
      REQUIRE(out->tokens_after <= compactor.auto_compact_limit() / 2);
      transcript = out->new_history;
      usage.Reset(transcript);
      ++result.compactions;
    }
    model.set_next_reply(step < kCalls ? NextReply::kToolCall : NextReply::kFinalMessage);
    auto response =
        model.Stream(core::BuildResponsesRequest(request, transcript), observer, cancel);
    REQUIRE(response.ok());
    for (const auto& item : response->items) {
      transcript.push_back(item);
      usage.OnItemAdded(item);
    }
    usage.OnResponseCompleted(response->usage);
    const core::Item& last = response->items.back();
    if (last.kind != core::ItemKind::kFunctionCall) {
      result.finished = true;
      break;
    }
    // Tool outputs grow from 200 bytes to about 4 KiB.
    const std::string output = "log line " + std::to_string(step) + ": " +
                               std::string(200 + 26 * static_cast<size_t>(step), 'x');
    core::Item item = core::FunctionCallOutput(last.call_id, output);
    result.tool_output_tokens += EstimateItemTokens(item);
    transcript.push_back(item);
    usage.OnItemAdded(item);
  }
  return result;
}

}  // namespace

TEST_CASE("150 tool calls outgrowing a 12k window: no request over it, few compactions") {
  core::Config config;
  config.model = "sim-model";
  config.model_context_window = kWindow;

  for (bool remote : {false, true}) {
    CAPTURE(remote);
    config.provider.supports_compact = remote;
    SimulatedModelClient model(kWindow);
    auto compactor = MakeCompactor(config, model);
    REQUIRE(compactor.ok());
    LoopResult result = RunTurn(**compactor, model);

    CHECK(result.finished);
    CHECK(result.tool_output_tokens > 3 * kWindow);  // the outputs really outgrow the window
    CHECK(result.compactions >= 1);
    CHECK(result.compactions <= 15);
    CHECK(model.stats().rejected_requests == 0);
    CHECK(model.stats().largest_request_tokens <= kWindow);
    if (remote) {
      CHECK(model.stats().compact_requests == result.compactions);
    } else {
      CHECK(model.stats().summary_requests == result.compactions);
    }
  }
}

TEST_CASE("Without compaction the same turn overflows the window") {
  SimulatedModelClient model(kWindow);
  core::CancelToken cancel;
  NoopObserver observer;
  std::vector<core::Item> transcript = {core::UserMessage("go")};
  core::RequestOptions request;
  request.model = "sim-model";
  request.tools_json = kTools;
  int failed_at = -1;
  for (int step = 0; step < kCalls; ++step) {
    model.set_next_reply(NextReply::kToolCall);
    auto response =
        model.Stream(core::BuildResponsesRequest(request, transcript), observer, cancel);
    if (!response.ok()) {
      CHECK(response.status().reason() == "context_length_exceeded");
      failed_at = step;
      break;
    }
    transcript.push_back(response->items.back());
    transcript.push_back(core::FunctionCallOutput(
        response->items.back().call_id, std::string(200 + 26 * static_cast<size_t>(step), 'x')));
  }
  CHECK(failed_at > 0);
  CHECK(failed_at < kCalls);
  CHECK(model.stats().largest_request_tokens > kWindow);
}
