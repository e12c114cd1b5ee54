// RemoteCompactor: server-side compaction (ARCHITECTURE.md, Compaction).
//
// Inline form (OpenAI; `try_inline`): POST /responses with the session's
// request unchanged (instructions, tools, input: the same bytes the turn loop
// sends) plus {"type":"compaction_trigger"} as the last input item, so the
// whole prefix is a prompt-cache hit. The answer must hold a `compaction`
// item; the new history is RebuildHistoryAround(transcript, initial context,
// that item kept byte for byte, current message) under HistoryCeiling. When
// the server refuses the form (HTTP 4xx, or an answer without a compaction
// item) the compactor remembers it and uses the endpoint form from then on.
//
// Endpoint form (legacy): Compact() sends core::BuildCompactRequest({model, input: transcript,
// instructions}) through ModelClient::Compact and reads the CompactResource's
// `output` array. The new history is RemoteHistory(): the session's initial
// context re-injected, then the server's messages and `compaction` item (its
// encrypted_content kept byte for byte), then mid-turn the current message.
//
// Half-limit rule, as for LocalCompactor: when that history is bigger than
// HistoryCeiling(options, instructions), the oldest kept user/assistant
// messages are removed;
// if the server's items are still too big, the compaction is redone locally
// (mode "local"). A provider answering 404 (no such endpoint: kNotFound, or
// kInvalidArgument with "HTTP 404" as ResponsesClient reports it) is also
// compacted locally. A request that overflows the window drops the
// oldest input items and retries, exactly like LocalCompactor. Other client
// errors are returned unchanged; a body that is not a CompactResource gives
// kInvalidArgument. Never writes to a store. Not thread-safe; the client is
// borrowed and must outlive the compactor.
#pragma once

#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "compaction/compactor_options.h"
#include "compaction/local_compactor.h"
#include "core/compactor.h"
#include "core/model_client.h"

namespace codex::compaction {

class RemoteCompactor final : public core::Compactor {
 public:
  // `try_inline`: use the inline form first (see the top of this file).
  RemoteCompactor(core::ModelClient& client, CompactorOptions options, bool try_inline = false);

  int64_t context_window() const override { return options_.context_window; }
  int64_t auto_compact_limit() const override { return options_.auto_compact_limit; }
  int64_t soft_compact_limit() const override { return options_.soft_compact_limit; }

  Result<core::CompactionOutput> Compact(const core::CompactionInput& input,
                                         const core::CancelToken& cancel) override;

 private:
  Result<core::CompactionOutput> CompactInline(const core::CompactionInput& input,
                                               const core::CancelToken& cancel);
  Result<core::CompactionOutput> CompactEndpoint(const core::CompactionInput& input,
                                                 const core::CancelToken& cancel);

  core::ModelClient& client_;
  CompactorOptions options_;
  LocalCompactor local_;  // the fallback
  bool try_inline_ = false;
  bool inline_refused_ = false;  // the provider refused the inline form once: not asked again
};

// {"type":"compaction_trigger"}: the last input item of an inline compaction request.
core::Item CompactionTriggerItem();

// The decoded items of a CompactResource body's `output` array, in order
// (server ids stripped into Item::server_id, as core::DecodeItem does).
// kInvalidArgument when the body is not a JSON object with such an array or
// an element is not a valid item.
Result<std::vector<core::Item>> ParseCompactOutput(std::string_view body);

// The history after a remote compaction: `initial_context`, then of the
// server's `output` the `compaction` items and the user and assistant
// messages that are not injected context (developer/system messages, context
// markers and copies of initial-context items are dropped: ours are
// re-injected; reasoning and tool items are dropped: a call must not be
// resent without its output), then `current_user_message` last (its copy in
// the output, if any, is not repeated). Pure.
std::vector<core::Item> RemoteHistory(std::span<const core::Item> output,
                                      std::span<const core::Item> initial_context,
                                      const std::optional<core::Item>& current_user_message);

}  // namespace codex::compaction
