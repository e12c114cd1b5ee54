// LocalCompactor: compaction for providers without /responses/compact
// (ARCHITECTURE.md, Compaction, "Local fallback").
//
// Compact() sends one summary request: the session's request exactly as the
// turn loop sends it (CompactionInput::request: model, instructions, the same
// tools in the same order, reasoning, store:false, prompt_cache_key) with
// kCompactionPrompt appended as the last user message, so everything before
// the ask is a prompt-cache hit. The last assistant message of the response
// is the summary (tool calls in it are ignored). The new history is
// RebuildHistoryWithin(transcript, initial context, summary, budget, current
// message, HistoryCeiling(options, instructions + tools)): together with the
// instructions and tools it takes at most half the auto-compact limit.
//
// Overflow: when the summary request itself fails with kResourceExhausted /
// "context_length_exceeded", the oldest items of the summarised input are
// dropped (a call with its output, never the initial context or an earlier
// summary; at least a tenth of the input each time) and the request retried;
// CompactionOutput::dropped_items counts them. When nothing is left to drop
// the error is returned.
//
// Errors from the client are returned unchanged; kUnavailable when the model
// answers without text. Never writes to a store. Not thread-safe; the client
// is borrowed and must outlive the compactor.
#pragma once

#include <string_view>

#include "compaction/compactor_options.h"
#include "core/compactor.h"
#include "core/model_client.h"

namespace codex::compaction {

// Our summary prompt, sent as the last user message of the summary request
// (unless compact_prompt / experimental_compact_prompt_file replace it).
inline constexpr std::string_view kCompactionPrompt =
    "Context checkpoint: this conversation is about to be compacted. Everything above will be "
    "replaced by the summary you write now, and the assistant that continues the work will "
    "have no other memory of it. Write that handoff summary for it.\n\n"
    "Cover:\n"
    "- the user's goal, and every constraint or preference they stated;\n"
    "- what has been done so far: files read or changed, commands run and the results that "
    "matter, decisions taken and why;\n"
    "- what is unfinished: open problems, errors not yet resolved, the next concrete steps.\n\n"
    "Be specific (paths, names, values, exact error text) and brief. Do not call tools and do "
    "not address the user: reply with the summary only.";

class LocalCompactor final : public core::Compactor {
 public:
  LocalCompactor(core::ModelClient& client, CompactorOptions options);

  int64_t context_window() const override { return options_.context_window; }
  int64_t auto_compact_limit() const override { return options_.auto_compact_limit; }
  int64_t soft_compact_limit() const override { return options_.soft_compact_limit; }

  Result<core::CompactionOutput> Compact(const core::CompactionInput& input,
                                         const core::CancelToken& cancel) override;

 private:
  core::ModelClient& client_;
  CompactorOptions options_;
};

namespace internal {

// The error returned when an input still overflows with nothing left to drop.
Status NothingLeftToDrop(const Status& last, std::string_view what);

}  // namespace internal

}  // namespace codex::compaction
