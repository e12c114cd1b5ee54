#include "compaction/compactor_options.h"

namespace codex::compaction {

Result<CompactorOptions> CompactorOptionsFromConfig(const core::Config& config) {
  ASSIGN_OR_RETURN(ContextLimits limits, ResolveContextLimits(config));
  CompactorOptions options;
  options.context_window = limits.context_window;
  options.auto_compact_limit = limits.auto_compact_limit;
  options.soft_compact_limit = limits.soft_compact_limit;
  options.send_item_ids = config.provider.send_item_ids;
  options.reasoning_effort = config.model_reasoning_effort;
  options.reasoning_summary = config.model_reasoning_summary;
  options.prompt = config.compact_prompt;
  return options;
}

Result<int64_t> HistoryCeiling(const CompactorOptions& options, std::string_view instructions) {
  const int64_t instruction_tokens = core::EstimateTextTokens(instructions.size());
  const int64_t ceiling = options.auto_compact_limit / 2 - instruction_tokens;
  if (ceiling <= 0) {
    return ResourceExhaustedError("the instructions and tools alone take " +
                                  std::to_string(instruction_tokens) +
                                  " tokens, half or more of the auto-compact limit " +
                                  std::to_string(options.auto_compact_limit) +
                                  "; shorten them or raise model_auto_compact_token_limit");
  }
  return ceiling;
}

}  // namespace codex::compaction
