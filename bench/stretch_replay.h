// StretchReplay: the arithmetic behind bench/compaction_bench's floor
// analysis, from a measured run of SimulatedModelClient (its request log).
//
// A run is a series of stretches: each starts at a request of `restart`
// bytes (the first at the session's first request) and grows by what each
// model step adds (the model's items and the tool outputs) until the next
// request would reach the auto-compact limit; then one compaction request
// (the history plus the compaction ask) and the stretch restarts. The steps
// are read off the log (a task request minus the one before it; for the step
// that crossed the limit, the compaction request minus its ask), so a replay
// with another restart or another limit answers "how many compactions would
// this task need if the rebuilt history were R bytes / the limit were L" with
// the trigger's own rule (core::ContextBudget: estimated tokens of the next
// request >= limit), and what would be sent and what at least could not be
// served from a prompt cache. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "testing/simulated_model_client.h"

namespace codex::compaction::sim {

struct StretchSteps {
  int64_t first_request_bytes = 0;  // the session's first request
  std::vector<int64_t> steps;       // bytes each model step adds to the history
  int64_t ask_bytes = 0;            // what a compaction request adds (largest seen)
  int64_t restart_bytes = 0;        // the largest first request after a compaction
  // The least a request after a compaction had beyond its common prefix with
  // the compaction request (the new compaction item, when the rest extends it).
  int64_t new_after_compaction_bytes = 0;
  int compactions = 0;  // as measured
};

// The steps of a run whose compactions are inline or summary requests (the
// compaction request extends the history); nullopt when the log holds
// anything else (a rejected request, a /responses/compact call).
std::optional<StretchSteps> ReadSteps(std::span<const RequestRecord> log);

struct Replay {
  int compactions = 0;
  int64_t requests = 0;
  int64_t sent_bytes = 0;
  // At least this much can never be served from a prompt cache: the first
  // request, every step once, and per compaction its ask and
  // new_after_compaction_bytes.
  int64_t floor_uncached_bytes = 0;
  double max_hit_ratio() const {
    return sent_bytes == 0
               ? 0.0
               : 1.0 - static_cast<double>(floor_uncached_bytes) / static_cast<double>(sent_bytes);
  }
};

// `steps` replayed with stretches restarting at `restart_bytes` and the
// trigger at `limit_tokens` (bytes estimated as core::EstimateTextTokens).
Replay ReplayStretches(const StretchSteps& steps, int64_t restart_bytes, int64_t limit_tokens);

}  // namespace codex::compaction::sim
