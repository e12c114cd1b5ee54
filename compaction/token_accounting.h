// Token accounting for automatic compaction (ARCHITECTURE.md, Compaction).
//
// Context usage of a session = the `total_tokens` of the last
// response.completed + an estimate of every item added since (JSON bytes / 4,
// with images counted at a fixed cost, see EstimateItemTokens). The window
// comes from `model_context_window` or a table of known model families;
// compaction triggers at `model_auto_compact_token_limit`, by default 90% of
// the window. Everything here is pure and thread-safe except UsageTracker,
// which is a plain value type (thread-compatible).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "core/config.h"
#include "core/item.h"
#include "core/status.h"
#include "core/token_usage.h"

namespace codex::compaction {

// The window assumed for a model missing from the table. Deliberately small:
// compacting early costs a summary request, overflowing costs a failed turn.
inline constexpr int64_t kFallbackContextWindow = 128'000;

// model_auto_compact_token_limit defaults to this percentage of the window.
inline constexpr int kAutoCompactPercent = 90;

// What one input_image part is counted as, whatever its base64 size. A
// high-detail 1024x1024 image costs 765 tokens on the Responses API and odd
// shapes or patch-based models cost up to about 1,500; the base64 text of the
// same image is 100-1000 times larger than that, so bytes / 4 would make one
// screenshot look like a full window.
inline constexpr int64_t kImageTokenEstimate = 1'536;

// The context window of a known model family, matched by the longest slug
// prefix ("gpt-5-codex" before "gpt-5", "gpt-4o" before "gpt-4"); a
// "provider/" prefix is ignored. nullopt for an unknown model.
std::optional<int64_t> KnownContextWindow(std::string_view model);

struct ContextLimits {
  int64_t context_window = kFallbackContextWindow;
  int64_t auto_compact_limit = kFallbackContextWindow * kAutoCompactPercent / 100;
};

// `window_override` if set, else KnownContextWindow(model), else
// kFallbackContextWindow; the limit is `limit_override` if set (capped at the
// window: a limit above it could never fire before the server refuses the
// request), else kAutoCompactPercent of the window. kInvalidArgument, naming
// the key, when an override is not a positive number.
Result<ContextLimits> ResolveContextLimits(std::string_view model,
                                           std::optional<int64_t> window_override,
                                           std::optional<int64_t> limit_override);
// The same from config.model, model_context_window and model_auto_compact_token_limit.
Result<ContextLimits> ResolveContextLimits(const core::Config& config);

// Estimated tokens of one item as it is sent: ceil(body bytes / 4), except
// that every input_image part (in messages and tool outputs) counts
// kImageTokenEstimate instead of its image_url bytes. Encrypted content
// (reasoning, compaction items) counts by its bytes like any other text.
// Checkpoint items are never sent and count 0.
int64_t EstimateItemTokens(const core::Item& item);
// Sum of EstimateItemTokens.
int64_t EstimateTokens(std::span<const core::Item> items);

// Percentage (0..100, rounded down) of the window still free at `usage`.
// For `--json` turn.completed and `sessions show`. 0 when window <= 0.
int ContextLeftPercent(int64_t usage, int64_t context_window);

// The trigger: true when `usage` has reached `limit`. A limit <= 0 disables it.
bool ShouldCompact(int64_t usage, int64_t limit);

// True for the server's "the input is larger than the context window" error
// (kResourceExhausted, reason "context_length_exceeded"): compact and retry.
bool IsContextWindowExceeded(const Status& status);

// Running usage of one session view. Feed it every item appended to the
// transcript and every response.completed usage, in the order they happen:
// items committed while a response streams are part of that response's
// total_tokens, so OnResponseCompleted discards the estimate accumulated
// before it. After a compaction (or on resume without a recorded usage),
// Reset() to the new history.
class UsageTracker {
 public:
  UsageTracker() = default;
  explicit UsageTracker(std::span<const core::Item> history) { Reset(history); }

  void OnItemAdded(const core::Item& item) { pending_ += EstimateItemTokens(item); }
  // A response without usage keeps the running estimate.
  void OnResponseCompleted(const std::optional<core::TokenUsage>& usage);
  void Reset(std::span<const core::Item> history);

  int64_t usage() const { return base_ + pending_; }

 private:
  int64_t base_ = 0;     // last total_tokens, or an estimate of a whole history
  int64_t pending_ = 0;  // estimate of items added since
};

}  // namespace codex::compaction
