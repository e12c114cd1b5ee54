// ContextBudget: the one component that decides when a session compacts
// (ARCHITECTURE.md, Compaction). The turn loop (core/conversation.cc) asks
// it; the compaction simulation test and bench/compaction_bench run that same
// loop (testing/simulated_task.h), so what they measure is what the
// binary does.
//
// Usage estimate = the total_tokens the server last reported for this view
// (response.completed, or stored with the item it followed, see Seed) + an
// estimate of every item added after it (EstimateItemTokens). Without any
// reported total (a new session, a compacted history) the estimate is the
// fixed part of a request (instructions + tools, bytes / 4) + every item.
//
// Decisions (boundaries, not cliffs: between the soft limit and the limit a
// compaction waits for a natural boundary; never while a command runs, as
// every decision is taken between model requests, after a whole tool batch):
//  - before a turn (the end of the previous one is a natural boundary):
//    usage >= soft limit;
//  - before a follow-up request of a turn (between tool-call iterations,
//    after the batch's every call has its output): usage >= limit, or usage
//    >= soft limit when the batch just run marked a plan step completed; at
//    most once per model request;
//  - after a failed request: the server said context_length_exceeded and the
//    turn has not retried for that yet (compact, then retry once);
//  - manual (codex compact, /compact): only when usage > half the limit, so
//    a compacted or small session is not summarised again.
// A limit <= 0 disables the automatic decisions. Plain value type,
// thread-compatible.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "base/status.h"
#include "core/item.h"
#include "core/token_usage.h"

namespace codex::core {

// The estimate's rate (ARCHITECTURE.md): text sent as is costs one token per
// kBytesPerToken bytes, rounded up.
inline constexpr size_t kBytesPerToken = 4;

// ceil(bytes / kBytesPerToken): text sent verbatim (an item body, a request's
// instructions and tools). The one token estimator: EstimateItemTokens and
// every fixed part of a request (instructions + tools) use it.
constexpr int64_t EstimateTextTokens(size_t bytes) {
  return static_cast<int64_t>((bytes + kBytesPerToken - 1) / kBytesPerToken);
}

// What one input_image part is counted as, whatever its base64 size (a
// high-detail 1024x1024 image costs 765 tokens, odd shapes up to about
// 1,500; its base64 text is 100-1000 times larger than that).
inline constexpr int64_t kImageTokenEstimate = 1'536;

// Estimated tokens of one item as it is sent: ceil(body bytes / 4), except
// that every input_image part counts kImageTokenEstimate instead of its
// image_url bytes. Checkpoint items are never sent and count 0.
int64_t EstimateItemTokens(const Item& item);
// Sum of EstimateItemTokens.
int64_t EstimateTokens(std::span<const Item> items);

// True for the server's "the input is larger than the context window" error
// (kResourceExhausted, reason "context_length_exceeded").
bool IsContextWindowExceeded(const Status& status);

// Percentage (0..100, rounded down) of `context_window` still free at
// `usage`; what `--json` turn.completed, the interactive status line and
// `sessions show` print. A window <= 0 is unknown: nothing is known to be used
// up, so 100 (0 would claim a full context and invite a needless /compact).
int ContextLeftPercent(int64_t usage, int64_t context_window);

// A server-reported total carried by a stored transcript: `total_tokens` was
// reported by the response whose last item is transcript[item_index].
struct UsageMark {
  size_t item_index = 0;
  int64_t total_tokens = 0;
};

struct StoredItem;
// The newest server-reported total of a stored view (StoredItem::
// reported_total_tokens), indexed into `view`; nullopt when none was stored.
// What Seed takes on resume, on reload and in `codex sessions show`.
std::optional<UsageMark> NewestUsageMark(std::span<const StoredItem> view);

class ContextBudget {
 public:
  ContextBudget() = default;
  // `auto_compact_limit` <= 0 disables automatic compaction. `soft_limit`
  // (<= 0, or above the limit: the limit) is where compaction starts waiting
  // for a natural boundary.
  ContextBudget(int64_t auto_compact_limit, int64_t context_window, int64_t soft_limit = 0)
      : limit_(auto_compact_limit),
        window_(context_window),
        soft_(soft_limit > 0 && soft_limit < auto_compact_limit ? soft_limit : auto_compact_limit) {
  }

  // Starts from a whole view: the newest `mark` (if any) plus the items after
  // it, else `fixed_tokens` (instructions + tools) plus every item. Used on
  // open/resume and after a compaction.
  void Seed(std::span<const Item> transcript, std::optional<UsageMark> mark, int64_t fixed_tokens);

  void OnItemAdded(const Item& item) { pending_ += EstimateItemTokens(item); }
  // Items committed while a response streamed are part of its total_tokens:
  // the running estimate restarts from it. Without usage nothing changes.
  void OnResponseCompleted(const std::optional<TokenUsage>& usage);

  // The turn loop's questions, in the order it asks them.
  void OnTurnStarted();
  bool ShouldCompactBeforeTurn() const;
  // A follow-up request of the turn; `plan_step_completed`: the tool batch
  // just run marked a plan step completed (a natural boundary).
  bool ShouldCompactBeforeRequest(bool plan_step_completed = false) const;
  void OnRequestSent();
  bool ShouldCompactAfterFailure(const Status& failure) const;
  void OnOverflowCompacted();  // the retry after context_length_exceeded is used
  // After any compaction: Seed() with the new history, then this.
  void OnCompacted();
  // codex compact / compact now: false when usage is at most half the limit.
  bool ManualCompactionWorthwhile() const;
  // Compaction never grows a history: true when a request over `new_history`
  // (plus `fixed_tokens`) would be smaller than the current usage.
  bool Shrinks(std::span<const Item> new_history, int64_t fixed_tokens) const {
    return fixed_tokens + EstimateTokens(new_history) < usage();
  }

  int64_t usage() const { return base_ + pending_; }
  // ContextLeftPercent(usage(), context_window()).
  int ContextLeftPercent() const { return core::ContextLeftPercent(usage(), window_); }
  int64_t limit() const { return limit_; }
  int64_t soft_limit() const { return soft_; }
  int64_t context_window() const { return window_; }

 private:
  int64_t limit_ = 0;
  int64_t window_ = 0;
  int64_t soft_ = 0;
  int64_t base_ = 0;
  int64_t pending_ = 0;
  int requests_in_turn_ = 0;
  bool compacted_since_request_ = false;
  bool overflow_retried_ = false;
};

}  // namespace codex::core
