#include "compaction/compactor_options.h"

namespace codex::compaction {

Result<CompactorOptions> CompactorOptionsFromConfig(const core::Config& config) {
  ASSIGN_OR_RETURN(ContextLimits limits, ResolveContextLimits(config));
  CompactorOptions options;
  options.context_window = limits.context_window;
  options.auto_compact_limit = limits.auto_compact_limit;
  options.send_item_ids = config.provider.send_item_ids;
  options.reasoning_effort = config.model_reasoning_effort;
  options.reasoning_summary = config.model_reasoning_summary;
  return options;
}

}  // namespace codex::compaction
