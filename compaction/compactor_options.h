// Settings shared by the compactors (local summary and remote
// /responses/compact), resolved from the session's Config. Plain value type.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"
#include "compaction/rebuild_history.h"
#include "compaction/token_accounting.h"
#include "core/config.h"

namespace codex::compaction {

struct CompactorOptions {
  int64_t context_window = kFallbackContextWindow;
  int64_t auto_compact_limit = kFallbackContextWindow * kAutoCompactPercent / 100;
  // Above it the turn loop compacts at a natural boundary (core::ContextBudget).
  int64_t soft_compact_limit = auto_compact_limit * kSoftCompactPercent / 100;
  // Recent real user messages kept verbatim (before the half-limit rule shrinks it).
  int64_t user_message_budget = kDefaultUserMessageBudgetTokens;
  bool send_item_ids = false;    // provider.send_item_ids
  std::string reasoning_effort;  // "" = omitted (summary request)
  std::string reasoning_summary = "auto";
  // The local compactor's summary prompt: Codex's compact_prompt /
  // experimental_compact_prompt_file; "" = ours (kCompactionPrompt).
  std::string prompt;
};

// The most a compacted history may take: half the auto-compact limit minus
// the fixed text sent with every request (`instructions`: the instructions
// and the tools JSON), so that a compaction always
// frees real room and the trigger cannot fire again at once.
// kResourceExhausted when the instructions alone take half the limit.
Result<int64_t> HistoryCeiling(const CompactorOptions& options, std::string_view instructions);

// Limits from ResolveContextLimits(config), reasoning and item-id settings
// from the config and its provider. kInvalidArgument for bad limits.
Result<CompactorOptions> CompactorOptionsFromConfig(const core::Config& config);

}  // namespace codex::compaction
