// compaction_bench: a scripted 300-turn conversation against an in-process
// simulated server with a small context window (usage = request bytes / 4).
// Each turn is a user message, one shell call whose output grows turn by
// turn, and a final answer. Prints, for local compaction, remote compaction
// and no compaction (run until a request exceeds the window): turns
// completed, requests, compactions, the largest request, bytes sent and the
// wall time.
//
// Usage: compaction_bench [--turns N] [--window TOKENS]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compaction/compactor_factory.h"
#include "compaction/simulated_model_client.h"
#include "compaction/token_accounting.h"
#include "core/request_builder.h"

namespace {

using namespace codex;
using codex::compaction::sim::NextReply;
using codex::compaction::sim::SimulatedModelClient;

const char kTools[] =
    R"([{"type":"function","name":"shell","description":"Runs a command.","strict":false,)"
    R"("parameters":{"type":"object","properties":{"command":{"type":"array","items":{"type":"string"}}},"required":["command"]}}])";

class NoopObserver final : public core::StreamObserver {
 public:
  Status OnOutputItemDone(const core::Item& item) override {
    (void)item;
    return OkStatus();
  }
};

struct RunResult {
  int turns_completed = 0;
  int compactions = 0;
  std::string failure;  // "" when every turn completed
  double wall_ms = 0;
};

std::string UserText(int turn) {
  std::string text = "Turn " + std::to_string(turn) + ": look at module_" + std::to_string(turn) +
                     ".cc, find why its test fails and fix it. ";
  while (text.size() < 200) text += "Keep the public API unchanged. ";
  return text;
}

std::string ToolOutput(int turn) {
  std::string out = "$ make test_module_" + std::to_string(turn) + "\n";
  const size_t size = 300 + 8 * static_cast<size_t>(turn);
  while (out.size() < size)
    out += "FAIL test_case_" + std::to_string(out.size()) + ": expected 1\n";
  return out;
}

// Runs the conversation; `compactor` null = compaction off.
RunResult Run(int turns, core::Compactor* compactor, SimulatedModelClient& model) {
  const auto start = std::chrono::steady_clock::now();
  RunResult result;
  core::CancelToken cancel;
  NoopObserver observer;
  const std::vector<core::Item> initial = {
      core::DeveloperMessage(
          "<permissions instructions>workspace-write</permissions instructions>"),
      core::UserMessage("<environment_context>\n  <cwd>/work/app</cwd>\n</environment_context>")};
  std::vector<core::Item> transcript = initial;
  compaction::UsageTracker usage(transcript);
  core::RequestOptions request;
  request.model = "sim-model";
  request.instructions = "You are a coding agent.";
  request.tools_json = kTools;
  request.prompt_cache_key = "0193aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee";

  for (int turn = 0; turn < turns && result.failure.empty(); ++turn) {
    const core::Item user = core::UserMessage(UserText(turn));
    transcript.push_back(user);
    usage.OnItemAdded(user);
    for (NextReply reply : {NextReply::kToolCall, NextReply::kFinalMessage}) {
      if (compactor != nullptr &&
          compaction::ShouldCompact(usage.usage(), compactor->auto_compact_limit())) {
        core::CompactionInput input;
        input.transcript = transcript;
        input.initial_context = initial;
        input.current_user_message = user;
        input.session_id = request.prompt_cache_key;
        input.model = request.model;
        input.instructions = request.instructions;
        auto out = compactor->Compact(input, cancel);
        if (!out.ok()) {
          result.failure = "turn " + std::to_string(turn) + ": " + out.status().message();
          break;
        }
        transcript = out->new_history;
        usage.Reset(transcript);
        ++result.compactions;
      }
      model.set_next_reply(reply);
      auto response =
          model.Stream(core::BuildResponsesRequest(request, transcript), observer, cancel);
      if (!response.ok()) {
        result.failure = "turn " + std::to_string(turn) + ": " + response.status().message();
        break;
      }
      for (const auto& item : response->items) {
        transcript.push_back(item);
        usage.OnItemAdded(item);
      }
      usage.OnResponseCompleted(response->usage);
      const core::Item& last = response->items.back();
      if (last.kind == core::ItemKind::kFunctionCall) {
        core::Item output = core::FunctionCallOutput(last.call_id, ToolOutput(turn));
        transcript.push_back(output);
        usage.OnItemAdded(output);
      }
    }
    if (result.failure.empty()) result.turns_completed = turn + 1;
  }
  result.wall_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return result;
}

bool ParsePositive(const char* text, long long& out) {
  char* end = nullptr;
  out = std::strtoll(text, &end, 10);
  return end != text && *end == '\0' && out > 0;
}

}  // namespace

int main(int argc, char** argv) {
  long long turns = 300;
  long long window = 16'000;
  for (int i = 1; i < argc; i += 2) {
    const std::string_view arg = argv[i];
    long long* target = arg == "--turns" ? &turns : arg == "--window" ? &window : nullptr;
    if (target == nullptr || i + 1 >= argc || !ParsePositive(argv[i + 1], *target)) {
      std::fprintf(stderr,
                   "error: bad argument '%s'; usage: compaction_bench [--turns N] [--window "
                   "TOKENS] with positive integers\n",
                   argv[i]);
      return 2;
    }
  }

  std::printf(
      "compaction_bench: %lld turns (user message, one shell call with a growing output, "
      "answer), window %lld tokens, usage = request bytes / 4\n\n",
      turns, window);
  std::printf("%-8s %7s %9s %12s %16s %14s %10s  %s\n", "mode", "turns", "requests", "compactions",
              "largest_request", "bytes_sent", "wall_ms", "outcome");

  struct Mode {
    const char* name;
    std::optional<compaction::CompactionMode> mode;  // nullopt = off
  };
  for (const Mode& mode :
       {Mode{"local", compaction::CompactionMode::kLocal},
        Mode{"remote", compaction::CompactionMode::kRemote}, Mode{"off", std::nullopt}}) {
    SimulatedModelClient model(window);
    core::Config config;
    config.model = "sim-model";
    config.model_context_window = window;
    std::unique_ptr<core::Compactor> compactor;
    if (mode.mode) {
      auto made = compaction::MakeCompactor(config, model, *mode.mode);
      if (!made.ok()) {
        std::fprintf(stderr, "error: %s\n", made.status().message().c_str());
        return 1;
      }
      compactor = std::move(made).value();
    }
    RunResult r = Run(static_cast<int>(turns), compactor.get(), model);
    const auto& s = model.stats();
    std::printf("%-8s %7d %9lld %12d %16lld %14lld %10.1f  %s\n", mode.name, r.turns_completed,
                static_cast<long long>(s.requests), r.compactions,
                static_cast<long long>(s.largest_request_tokens),
                static_cast<long long>(s.bytes_sent), r.wall_ms,
                r.failure.empty() ? "all turns completed" : ("failed at " + r.failure).c_str());
  }
  return 0;
}
