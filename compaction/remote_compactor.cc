#include "compaction/remote_compactor.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <utility>

#include "compaction/rebuild_history.h"
#include "compaction/working_state.h"
#include "core/model_client.h"
#include "core/request_builder.h"

namespace codex::compaction {

namespace {

Status BadCompactBody(std::string_view why) {
  return InvalidArgumentError(
      "POST /responses/compact returned " + std::string(why) +
      "; retry, or set supports_compact = false for this provider to compact locally");
}

// The provider has no /responses/compact. ModelClient reports a 404 as
// kInvalidArgument ("other 4xx") with "HTTP 404" in the message (see
// ResponsesClient); kNotFound is accepted too.
bool IsEndpointMissing(const Status& status) {
  return status.code() == StatusCode::kNotFound ||
         (status.code() == StatusCode::kInvalidArgument &&
          status.message().find("HTTP 404") != std::string::npos);
}

}  // namespace

Result<std::vector<core::Item>> ParseCompactOutput(std::string_view body) {
  nlohmann::ordered_json j =
      nlohmann::ordered_json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return BadCompactBody("a body that is not a JSON object");
  auto output = j.find("output");
  if (output == j.end() || !output->is_array()) return BadCompactBody("no \"output\" array");
  std::vector<core::Item> items;
  items.reserve(output->size());
  for (size_t i = 0; i < output->size(); ++i) {
    Result<core::Item> item = core::DecodeItem((*output)[i].dump());
    if (!item.ok()) {
      return BadCompactBody("an invalid output[" + std::to_string(i) +
                            "]: " + item.status().message());
    }
    items.push_back(std::move(item).value());
  }
  return items;
}

std::vector<core::Item> RemoteHistory(std::span<const core::Item> output,
                                      std::span<const core::Item> initial_context,
                                      const std::optional<core::Item>& current_user_message) {
  std::vector<core::Item> history(initial_context.begin(), initial_context.end());
  for (const auto& item : output) {
    if (current_user_message && item.body == current_user_message->body) continue;
    const bool keep = item.kind == core::ItemKind::kCompaction ||
                      (item.kind == core::ItemKind::kMessage &&
                       (item.role == "user" || item.role == "assistant") && !IsContextItem(item) &&
                       !SameBodyAsAny(item, initial_context));
    if (keep) history.push_back(item);
  }
  if (current_user_message) history.push_back(*current_user_message);
  return history;
}

RemoteCompactor::RemoteCompactor(core::ModelClient& client, CompactorOptions options,
                                 bool try_inline)
    : client_(client),
      options_(options),
      local_(client, std::move(options)),
      try_inline_(try_inline) {}

core::Item CompactionTriggerItem() {
  core::Item item;
  item.kind = core::ItemKind::kOther;
  item.body = R"({"type":"compaction_trigger"})";
  return item;
}

Result<core::CompactionOutput> RemoteCompactor::Compact(const core::CompactionInput& input,
                                                        const core::CancelToken& cancel) {
  if (try_inline_ && !inline_refused_) {
    Result<core::CompactionOutput> out = CompactInline(input, cancel);
    if (out.ok() || !inline_refused_) return out;
  }
  return CompactEndpoint(input, cancel);
}

Result<core::CompactionOutput> RemoteCompactor::CompactInline(const core::CompactionInput& input,
                                                              const core::CancelToken& cancel) {
  const std::vector<core::Item> transcript = WithoutCheckpoints(input.transcript);
  std::vector<core::Item> compacted = transcript;
  int dropped = 0;
  core::Item compaction;
  while (true) {
    if (cancel.cancelled()) return CancelledError("compaction interrupted");
    std::vector<core::Item> request_items = compacted;
    request_items.push_back(CompactionTriggerItem());
    core::DiscardingObserver observer;
    Result<core::ModelResponse> response =
        client_.Stream(core::BuildResponsesRequest(input.request, request_items), observer, cancel);
    if (response.ok()) {
      auto it = std::find_if(
          response->items.begin(), response->items.end(),
          [](const core::Item& item) { return item.kind == core::ItemKind::kCompaction; });
      if (it == response->items.end()) {
        // The server ignored the trigger: it does not compact inline.
        inline_refused_ = true;
        return UnavailableError(
            "the provider answered the compaction_trigger without a "
            "compaction item");
      }
      compaction = *it;
      break;
    }
    if (IsContextWindowExceeded(response.status())) {
      const int n = DropOldestItems(compacted, input.initial_context,
                                    std::max<int64_t>(1, EstimateTokens(compacted) / 10));
      if (n == 0) return internal::NothingLeftToDrop(response.status(), "the compaction request");
      dropped += n;
      continue;
    }
    // A 4xx (unknown item type, 404): this provider refuses the inline form.
    const StatusCode code = response.status().code();
    if (code == StatusCode::kInvalidArgument || code == StatusCode::kNotFound) {
      inline_refused_ = true;
    }
    return response.status();
  }

  ASSIGN_OR_RETURN(const int64_t ceiling,
                   HistoryCeiling(options_, input.request.instructions + input.request.tools_json));
  Result<std::vector<core::Item>> history = RebuildHistoryAroundWithin(
      transcript, input.initial_context, {&compaction, 1}, options_.user_message_budget,
      input.current_user_message, ceiling, input.open_processes);
  if (!history.ok()) return local_.Compact(input, cancel);
  core::CompactionOutput out;
  out.mode = "inline";
  out.dropped_items = dropped;
  out.kept = KeptSummary(*history);
  out.tokens_before = EstimateTokens(transcript);
  out.tokens_after = EstimateTokens(*history);
  out.new_history = std::move(history).value();
  return out;
}

Result<core::CompactionOutput> RemoteCompactor::CompactEndpoint(const core::CompactionInput& input,
                                                                const core::CancelToken& cancel) {
  const std::vector<core::Item> transcript = WithoutCheckpoints(input.transcript);
  std::vector<core::Item> compacted = transcript;
  int dropped = 0;
  std::string body;
  while (true) {
    if (cancel.cancelled()) return CancelledError("compaction interrupted");
    Result<std::string> response =
        client_.Compact(core::BuildCompactRequest(input.request.model, input.request.instructions,
                                                  compacted, options_.send_item_ids),
                        cancel);
    if (response.ok()) {
      body = std::move(response).value();
      break;
    }
    if (IsEndpointMissing(response.status())) return local_.Compact(input, cancel);
    if (!IsContextWindowExceeded(response.status())) return response.status();
    const int n = DropOldestItems(compacted, input.initial_context,
                                  std::max<int64_t>(1, EstimateTokens(compacted) / 10));
    if (n == 0) return internal::NothingLeftToDrop(response.status(), "the compaction request");
    dropped += n;
  }

  ASSIGN_OR_RETURN(std::vector<core::Item> output, ParseCompactOutput(body));
  std::vector<core::Item> history =
      RemoteHistory(output, input.initial_context, input.current_user_message);
  // The frontier, read from the transcript, after the server's items and
  // before the current message: what follows it is what it has not seen.
  if (auto state = FrontierMessage(transcript, input.current_user_message, input.open_processes)) {
    history.insert(history.end() - (input.current_user_message ? 1 : 0), *state);
  }

  // Half-limit rule: shed the oldest kept messages, never the initial
  // context, the working state, the compaction items or the current message.
  ASSIGN_OR_RETURN(const int64_t max_tokens,
                   HistoryCeiling(options_, input.request.instructions + input.request.tools_json));
  int64_t tokens = EstimateTokens(history);
  const size_t first = input.initial_context.size();
  const size_t end = history.size() - (input.current_user_message ? 1 : 0);
  std::vector<bool> removed(history.size(), false);
  for (size_t i = first; i < end && tokens > max_tokens; ++i) {
    if (history[i].kind != core::ItemKind::kMessage || IsWorkingStateMessage(history[i])) continue;
    tokens -= EstimateItemTokens(history[i]);
    removed[i] = true;
  }
  if (tokens > max_tokens) return local_.Compact(input, cancel);
  std::vector<core::Item> kept;
  kept.reserve(history.size());
  for (size_t i = 0; i < history.size(); ++i) {
    if (!removed[i]) kept.push_back(std::move(history[i]));
  }

  core::CompactionOutput out;
  out.mode = "remote";
  out.dropped_items = dropped;
  out.kept = KeptSummary(kept);
  out.tokens_before = EstimateTokens(transcript);
  out.tokens_after = tokens;
  out.new_history = std::move(kept);
  return out;
}

}  // namespace codex::compaction
