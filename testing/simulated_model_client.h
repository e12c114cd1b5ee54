// SimulatedModelClient: an in-process stand-in for a Responses server with a
// small context window, for the compaction simulation test and
// bench/compaction_bench. Not for production (target codex_compaction_sim).
//
// Every request is measured as (body bytes + 3) / 4 tokens; one above the
// window fails like the real server (kResourceExhausted,
// "context_length_exceeded"). Otherwise:
//  - a summary request (last input item is kCompactionPrompt) answers an
//    assistant message of `summary_bytes`;
//  - an inline compaction (last input item {"type":"compaction_trigger"})
//    answers one `compaction` item whose encrypted_content is
//    `summary_bytes` long (or, with set_inline_supported(false), fails like a
//    server that does not know the item type: kInvalidArgument, HTTP 400);
//  - any other /responses request is the model working on its task (the
//    n-th such request gets the n-th step): an update_plan call, an
//    apply_patch call editing src/parser.cc, then set_shell_calls() shell
//    calls `cat build.log` (call ids call_1, call_2, ...), then a final
//    assistant message (every later request gets one too);
//  - /responses/compact answers a CompactResource with the most recent real
//    user messages of the input (up to 2,000 tokens) and a `compaction` item
//    whose encrypted_content is `summary_bytes` long.
// usage.total_tokens = request tokens + output tokens, as a server reports.
// Every request is also compared with the one before it (stats().uncached_bytes)
// and logged (stats().log: kind, bytes, uncached bytes, the compaction ask).
// Not thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/model_client.h"

namespace codex::compaction::sim {

enum class RequestKind {
  kTask,              // the model working on its task
  kInlineCompaction,  // /responses ending in a compaction_trigger
  kSummary,           // /responses ending in the local compaction prompt
  kCompactEndpoint,   // POST /responses/compact
  kRejected,          // answered context_length_exceeded, or a refused trigger
};

// One request as the server saw it.
struct RequestRecord {
  RequestKind kind = RequestKind::kTask;
  int64_t bytes = 0;
  int64_t uncached_bytes = 0;  // beyond the common prefix with the request before
  // For a compaction request: the bytes of its last input item with the
  // comma before it (the ask appended to the history).
  int64_t ask_bytes = 0;
};

struct SimulationStats {
  int64_t requests = 0;           // every POST, rejected ones included
  int64_t summary_requests = 0;   // local compaction requests among them
  int64_t inline_requests = 0;    // /responses ending in a compaction_trigger
  int64_t compact_requests = 0;   // POST /responses/compact
  int64_t rejected_requests = 0;  // answered context_length_exceeded
  int64_t largest_request_tokens = 0;
  // The largest first task request after a compaction: where each stretch
  // between compactions starts (instructions, tools, the rebuilt history).
  int64_t largest_request_after_compaction_bytes = 0;
  int64_t bytes_sent = 0;
  // Bytes of each request beyond its longest common prefix with the previous
  // request: what a provider's prompt cache cannot serve.
  int64_t uncached_bytes = 0;
  std::vector<RequestRecord> log;  // every request, in order
  double cache_hit_ratio() const {
    return bytes_sent == 0
               ? 0.0
               : 1.0 - static_cast<double>(uncached_bytes) / static_cast<double>(bytes_sent);
  }
};

class SimulatedModelClient final : public core::ModelClient {
 public:
  explicit SimulatedModelClient(int64_t context_window, size_t summary_bytes = 2'000);

  // How many shell calls the model makes before it answers (default 0).
  void set_shell_calls(int calls) { shell_calls_ = calls; }
  void set_inline_supported(bool supported) { inline_supported_ = supported; }
  const SimulationStats& stats() const { return stats_; }
  // The body of the newest request that was not a compaction request.
  const std::string& last_task_request() const { return last_task_request_; }
  // The body of the newest first task request after a compaction ("" before
  // any): the history a stretch restarts from.
  const std::string& last_restart_request() const { return last_restart_request_; }

  Result<core::ModelResponse> Stream(std::string_view request_body, core::StreamObserver& observer,
                                     const core::CancelToken& cancel) override;
  Result<std::string> Compact(std::string_view request_body,
                              const core::CancelToken& cancel) override;

 private:
  // Counts and logs the request; the overflow error when it exceeds the window.
  Status Admit(std::string_view request_body);
  // The model's next step of the task (see the top of this file).
  Result<core::Item> NextTaskItem();

  int64_t context_window_;
  size_t summary_bytes_;
  int shell_calls_ = 0;
  int task_steps_ = 0;      // task requests answered so far
  bool compacted_ = false;  // a compaction was answered since the last task request
  std::string last_task_request_;
  std::string last_restart_request_;
  bool inline_supported_ = true;
  std::string previous_request_;
  int64_t next_call_ = 1;
  int64_t next_summary_ = 1;
  SimulationStats stats_;
};

}  // namespace codex::compaction::sim
