#include "compaction/local_compactor.h"

#include <algorithm>
#include <utility>

#include "compaction/working_state.h"
#include "core/model_client.h"
#include "core/request_builder.h"

namespace codex::compaction {

namespace {

// The text of the last assistant message that has any.
std::string SummaryText(const core::ModelResponse& response) {
  for (auto it = response.items.rbegin(); it != response.items.rend(); ++it) {
    if (it->kind != core::ItemKind::kMessage || it->role != "assistant") continue;
    std::string text = core::MessageText(*it);
    if (!text.empty()) return text;
  }
  return {};
}

}  // namespace

namespace internal {

Status NothingLeftToDrop(const Status& last, std::string_view what) {
  Status status = ResourceExhaustedError(
      std::string(what) +
      " exceeds the model's context window even after dropping every older item (" +
      last.message() + "); start a new session or raise the provider's window");
  status.WithReason(core::reason::kContextLengthExceeded);
  return status;
}

}  // namespace internal

LocalCompactor::LocalCompactor(core::ModelClient& client, CompactorOptions options)
    : client_(client), options_(std::move(options)) {}

Result<core::CompactionOutput> LocalCompactor::Compact(const core::CompactionInput& input,
                                                       const core::CancelToken& cancel) {
  const std::vector<core::Item> transcript = WithoutCheckpoints(input.transcript);

  // The session's own request, tools included: only the ask is new, so the
  // provider serves everything before it from its prompt cache.
  const core::RequestOptions& request = input.request;

  std::vector<core::Item> summarised = transcript;
  int dropped = 0;
  std::string summary;
  while (true) {
    if (cancel.cancelled()) return CancelledError("compaction interrupted");
    std::vector<core::Item> request_items = summarised;
    request_items.push_back(
        core::UserMessage(options_.prompt.empty() ? kCompactionPrompt : options_.prompt));
    core::DiscardingObserver observer;
    Result<core::ModelResponse> response =
        client_.Stream(core::BuildResponsesRequest(request, request_items), observer, cancel);
    if (response.ok()) {
      summary = SummaryText(*response);
      break;
    }
    if (!IsContextWindowExceeded(response.status())) return response.status();
    const int n = DropOldestItems(summarised, input.initial_context,
                                  std::max<int64_t>(1, EstimateTokens(summarised) / 10));
    if (n == 0) return internal::NothingLeftToDrop(response.status(), "the compaction request");
    dropped += n;
  }
  if (summary.empty()) {
    return UnavailableError("the model answered the compaction request without a summary; run '" +
                            std::string("codex compact ") + input.request.prompt_cache_key +
                            "' to retry");
  }

  ASSIGN_OR_RETURN(const int64_t ceiling,
                   HistoryCeiling(options_, input.request.instructions + input.request.tools_json));
  ASSIGN_OR_RETURN(
      std::vector<core::Item> history,
      RebuildHistoryWithin(transcript, input.initial_context, summary, options_.user_message_budget,
                           input.current_user_message, ceiling, input.open_processes));
  core::CompactionOutput out;
  out.mode = "local";
  // The summary as it went into the history (cut when the half-limit rule needed it).
  for (const auto& item : history) {
    if (IsSummaryMessage(item)) out.summary = core::MessageText(item).substr(kSummaryPrefix.size());
  }
  out.dropped_items = dropped;
  out.kept = KeptSummary(history);
  out.tokens_before = EstimateTokens(transcript);
  out.tokens_after = EstimateTokens(history);
  out.new_history = std::move(history);
  return out;
}

}  // namespace codex::compaction
