#include "compaction/simulated_task.h"

#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "core/context_budget.h"
#include "core/request_builder.h"

namespace codex::compaction::sim {

namespace {

using Json = nlohmann::ordered_json;

const char kTools[] =
    R"([{"type":"function","name":"shell","description":"Runs a command.","strict":false,)"
    R"("parameters":{"type":"object","properties":{"command":{"type":"array","items":{"type":"string"}}},"required":["command"]}},)"
    R"({"type":"function","name":"update_plan","description":"Updates the plan.","strict":false,)"
    R"("parameters":{"type":"object","properties":{"plan":{"type":"array"}},"required":["plan"]}},)"
    R"({"type":"function","name":"apply_patch","description":"Edits files.","strict":false,)"
    R"("parameters":{"type":"object","properties":{"input":{"type":"string"}},"required":["input"]}}])";

constexpr char kTask[] = "The build fails; read build.log until you find why.";

class NoopObserver final : public core::StreamObserver {
 public:
  Status OnOutputItemDone(const core::Item& item) override {
    (void)item;
    return OkStatus();
  }
};

// An early plan and an early edit, made by the model before the long reading
// starts: a compaction must carry both forward.
std::vector<core::Item> EarlyWork() {
  Json plan = {{"type", "function_call"},
               {"name", "update_plan"},
               {"arguments", R"({"plan":[{"step":"read build.log","status":"in_progress"},)"
                             R"({"step":"fix src/parser.cc","status":"pending"}]})"},
               {"call_id", "call_plan"}};
  Json patch = {{"type", "function_call"},
                {"name", "apply_patch"},
                {"arguments", Json({{"input",
                                     "*** Begin Patch\n*** Update File: src/parser.cc\n"
                                     "@@\n-old\n+new\n*** End Patch\n"}})
                                  .dump()},
                {"call_id", "call_patch"}};
  std::vector<core::Item> items;
  items.push_back(core::DecodeItem(plan.dump()).value());
  items.push_back(core::FunctionCallOutput("call_plan", "Plan updated"));
  items.push_back(core::DecodeItem(patch.dump()).value());
  items.push_back(core::FunctionCallOutput("call_patch", "Done!"));
  return items;
}

}  // namespace

TaskResult RunToolCallTask(core::Compactor* compactor, SimulatedModelClient& model, int calls) {
  TaskResult result;
  core::CancelToken cancel;
  NoopObserver observer;
  const std::vector<core::Item> initial = {
      core::DeveloperMessage(
          "<permissions instructions>workspace-write</permissions instructions>"),
      core::UserMessage("<environment_context>\n  <cwd>/work/app</cwd>\n</environment_context>")};
  const core::Item task = core::UserMessage(kTask);

  core::RequestOptions request;
  request.model = "sim-model";
  request.instructions = "You are a coding agent.";
  request.tools_json = kTools;
  request.prompt_cache_key = "0193aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee";
  const int64_t fixed =
      core::EstimateTextTokens(request.instructions.size() + request.tools_json.size());

  core::ContextBudget budget;
  if (compactor != nullptr) {
    budget = core::ContextBudget(compactor->auto_compact_limit(), compactor->context_window());
  }
  std::vector<core::Item> transcript;
  auto add = [&](const core::Item& item) {
    transcript.push_back(item);
    budget.OnItemAdded(item);
  };
  for (const auto& item : initial) add(item);
  budget.Seed(transcript, std::nullopt, fixed);

  auto compact = [&](core::CompactionTrigger trigger,
                     const std::optional<core::Item>& current) -> bool {
    core::CompactionInput input;
    input.transcript = transcript;
    input.initial_context = initial;
    input.current_user_message = current;
    input.request = request;
    input.trigger = trigger;
    auto out = compactor->Compact(input, cancel);
    if (!out.ok()) {
      result.failure = out.status().message();
      return false;
    }
    if (!budget.Shrinks(out->new_history, fixed)) return true;  // never grows: keep it
    transcript = out->new_history;
    budget.Seed(transcript, std::nullopt, fixed);
    budget.OnCompacted();
    ++result.compactions;
    return true;
  };

  budget.OnTurnStarted();
  if (compactor != nullptr && budget.ShouldCompactBeforeTurn() &&
      !compact(core::CompactionTrigger::kAuto, std::nullopt)) {
    return result;
  }
  add(task);
  for (const auto& item : EarlyWork()) add(item);

  std::string last_body;
  for (int step = 0; step <= calls;) {
    if (compactor != nullptr && budget.ShouldCompactBeforeRequest() &&
        !compact(core::CompactionTrigger::kAuto, task)) {
      return result;
    }
    model.set_next_reply(step < calls ? NextReply::kToolCall : NextReply::kFinalMessage);
    last_body = core::BuildResponsesRequest(request, transcript);
    auto response = model.Stream(last_body, observer, cancel);
    budget.OnRequestSent();
    if (!response.ok()) {
      if (compactor != nullptr && budget.ShouldCompactAfterFailure(response.status())) {
        budget.OnOverflowCompacted();
        if (!compact(core::CompactionTrigger::kOverflow, task)) return result;
        continue;
      }
      result.failure = response.status().message();
      return result;
    }
    for (const auto& item : response->items) {
      add(item);
      result.new_content_bytes += static_cast<int64_t>(item.body.size()) + 1;
    }
    budget.OnResponseCompleted(response->usage);
    const core::Item& last = response->items.back();
    if (last.kind != core::ItemKind::kFunctionCall) {
      result.finished = true;
      break;
    }
    // Tool outputs grow from 200 bytes to about 4 KiB.
    const std::string output = "log line " + std::to_string(step) + ": " +
                               std::string(200 + 26 * static_cast<size_t>(step), 'x');
    core::Item item = core::FunctionCallOutput(last.call_id, output);
    result.tool_output_tokens += core::EstimateItemTokens(item);
    result.new_content_bytes += static_cast<int64_t>(item.body.size()) + 1;
    add(item);
    ++step;
  }
  result.task_kept = last_body.find(kTask) != std::string::npos;
  result.files_kept = last_body.find("src/parser.cc") != std::string::npos;
  result.plan_kept = last_body.find("fix src/parser.cc") != std::string::npos &&
                     last_body.find("read build.log") != std::string::npos;
  return result;
}

}  // namespace codex::compaction::sim
