#include "bench/stretch_replay.h"

#include <algorithm>

#include "core/context_budget.h"

namespace codex::compaction::sim {

std::optional<StretchSteps> ReadSteps(std::span<const RequestRecord> log) {
  StretchSteps out;
  std::optional<int64_t> previous_task;  // the task request the next step extends
  bool after_compaction = false;
  bool first_after = true;
  for (const RequestRecord& r : log) {
    switch (r.kind) {
      case RequestKind::kTask:
        if (!previous_task) {
          out.first_request_bytes = r.bytes;
        } else if (after_compaction) {
          out.restart_bytes = std::max(out.restart_bytes, r.bytes);
          out.new_after_compaction_bytes =
              first_after ? r.uncached_bytes
                          : std::min(out.new_after_compaction_bytes, r.uncached_bytes);
          first_after = false;
        } else {
          out.steps.push_back(r.bytes - *previous_task);
        }
        previous_task = r.bytes;
        after_compaction = false;
        break;
      case RequestKind::kInlineCompaction:
      case RequestKind::kSummary:
        if (!previous_task || after_compaction) return std::nullopt;
        out.steps.push_back(r.bytes - r.ask_bytes - *previous_task);
        out.ask_bytes = std::max(out.ask_bytes, r.ask_bytes);
        ++out.compactions;
        after_compaction = true;
        break;
      default:
        return std::nullopt;
    }
  }
  return out;
}

Replay ReplayStretches(const StretchSteps& steps, int64_t restart_bytes, int64_t limit_tokens) {
  Replay r;
  int64_t current = steps.first_request_bytes;
  r.requests = 1;
  r.sent_bytes = current;
  r.floor_uncached_bytes = current;
  for (const int64_t step : steps.steps) {
    r.floor_uncached_bytes += step;
    const int64_t next = current + step;
    if (limit_tokens > 0 && core::EstimateTextTokens(static_cast<size_t>(next)) >= limit_tokens) {
      // The compaction request: the history with the step, plus the ask.
      ++r.compactions;
      r.requests += 2;
      r.sent_bytes += next + steps.ask_bytes + restart_bytes;
      r.floor_uncached_bytes += steps.ask_bytes + steps.new_after_compaction_bytes;
      current = restart_bytes;
    } else {
      ++r.requests;
      r.sent_bytes += next;
      current = next;
    }
  }
  return r;
}

}  // namespace codex::compaction::sim
