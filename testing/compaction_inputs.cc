#include "testing/compaction_inputs.h"

#include "testing/items.h"

namespace codex::testing {

core::CompactionInput CompactionInputOf(const std::vector<core::Item>& transcript) {
  core::CompactionInput input;
  input.initial_context = MinimalInitialContext();
  input.transcript = MinimalInitialContext();
  input.transcript.insert(input.transcript.end(), transcript.begin(), transcript.end());
  input.request.prompt_cache_key = "0193aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee";
  input.request.model = "gpt-test";
  input.request.instructions = "You are a coding agent.";
  return input;
}

compaction::CompactorOptions CompactorOptionsFor(int64_t limit) {
  compaction::CompactorOptions options;
  options.context_window = limit * 10 / 9;
  options.auto_compact_limit = limit;
  return options;
}

}  // namespace codex::testing
