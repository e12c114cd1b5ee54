#include "cli/context_fill.h"

#include <optional>
#include <string>
#include <vector>

#include "cli/config_overrides.h"
#include "compaction/token_accounting.h"
#include "compaction/working_state.h"
#include "core/config.h"
#include "core/context_budget.h"
#include "core/instructions.h"
#include "core/tool_schemas.h"
#include "core/transcript.h"

namespace codex::cli {

ContextFill EstimateContextFill(const GlobalOptions& global, const core::SessionInfo& session,
                                const std::vector<core::StoredItem>& history) {
  size_t from = 0;
  for (size_t i = history.size(); i-- > 0;) {
    if (history[i].item.kind == core::ItemKind::kCompactionCheckpoint) {
      from = i + 1;
      break;
    }
  }
  const std::span<const core::StoredItem> stored_view(history.data() + from, history.size() - from);
  std::vector<core::Item> view;
  view.reserve(stored_view.size());
  for (const auto& s : stored_view) view.push_back(s.item);
  ContextFill fill;
  auto config = core::LoadConfig(core::DefaultCodexHome(), GlobalOverrides(global));
  std::optional<int64_t> window, limit;
  std::string instructions(core::BaseInstructions());
  std::string tools = "[]";
  if (config.ok()) {
    window = config->model_context_window;
    limit = config->model_auto_compact_token_limit;
    if (!config->instructions.empty()) instructions = config->instructions;
    tools = core::BuiltinToolsJson(*config);
  }
  auto limits = compaction::ResolveContextLimits(session.model, window, limit);
  fill.window = limits.ok() ? limits->context_window : compaction::kFallbackContextWindow;
  core::ContextBudget budget(limits.ok() ? limits->auto_compact_limit : 0, fill.window);
  const std::optional<core::UsageMark> mark = core::NewestUsageMark(stored_view);
  budget.Seed(view, mark, core::EstimateTextTokens(instructions.size() + tools.size()));
  fill.tokens = budget.usage();
  fill.reported = mark.has_value();
  fill.left_percent = compaction::ContextLeftPercent(fill.tokens, fill.window);
  return fill;
}

std::string NewestFrontier(std::span<const core::StoredItem> history) {
  std::string text;
  for (const auto& stored : history) {
    if (compaction::IsWorkingStateMessage(stored.item)) text = core::MessageText(stored.item);
  }
  return text;
}

}  // namespace codex::cli
