// Context limits for automatic compaction (ARCHITECTURE.md, Compaction).
//
// The window comes from `model_context_window` or a table of known model
// families; compaction triggers at `model_auto_compact_token_limit`, by
// default 90% of the window. When to compact is decided by
// core::ContextBudget (core/context_budget.h), the one trigger the turn loop,
// the simulation test and the bench share. Everything here is pure and
// thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "base/status.h"
#include "core/config.h"
#include "core/context_budget.h"
#include "core/item.h"
#include "core/token_usage.h"

namespace codex::compaction {

// The window assumed for a model missing from the table. Deliberately small:
// compacting early costs a summary request, overflowing costs a failed turn.
inline constexpr int64_t kFallbackContextWindow = 128'000;

// model_auto_compact_token_limit defaults to this percentage of the window.
inline constexpr int kAutoCompactPercent = 90;
// model_auto_compact_soft_token_limit defaults to this percentage of the
// auto-compact limit: above it compaction waits for a natural boundary.
inline constexpr int kSoftCompactPercent = 75;

// The estimate and the overflow test live with the trigger in core.
using core::ContextLeftPercent;
using core::EstimateItemTokens;
using core::EstimateTextTokens;
using core::EstimateTokens;
using core::IsContextWindowExceeded;
using core::kImageTokenEstimate;

// The context window of a known model family, matched by the longest slug
// prefix ("gpt-5-codex" before "gpt-5", "gpt-4o" before "gpt-4"); a
// "provider/" prefix is ignored. nullopt for an unknown model.
std::optional<int64_t> KnownContextWindow(std::string_view model);

struct ContextLimits {
  int64_t context_window = kFallbackContextWindow;
  int64_t auto_compact_limit = kFallbackContextWindow * kAutoCompactPercent / 100;
  int64_t soft_compact_limit = auto_compact_limit * kSoftCompactPercent / 100;
};

// `window_override` if set, else KnownContextWindow(model), else
// kFallbackContextWindow; the limit is `limit_override` if set (capped at the
// window: a limit above it could never fire before the server refuses the
// request), else kAutoCompactPercent of the window; the soft limit is
// `soft_override` if set (capped at the limit), else kSoftCompactPercent of
// the limit. kInvalidArgument, naming the key, when an override is not a
// positive number.
Result<ContextLimits> ResolveContextLimits(std::string_view model,
                                           std::optional<int64_t> window_override,
                                           std::optional<int64_t> limit_override,
                                           std::optional<int64_t> soft_override = std::nullopt);
// The same from config.model, model_context_window, model_auto_compact_token_limit
// and model_auto_compact_soft_token_limit.
Result<ContextLimits> ResolveContextLimits(const core::Config& config);

}  // namespace codex::compaction
