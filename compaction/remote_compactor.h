// RemoteCompactor: compaction through the provider's POST /responses/compact
// (ARCHITECTURE.md, Compaction, "Remote").
//
// Compact() sends core::BuildCompactRequest({model, input: transcript,
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
  RemoteCompactor(core::ModelClient& client, CompactorOptions options);

  int64_t context_window() const override { return options_.context_window; }
  int64_t auto_compact_limit() const override { return options_.auto_compact_limit; }

  Result<core::CompactionOutput> Compact(const core::CompactionInput& input,
                                         const core::CancelToken& cancel) override;

 private:
  core::ModelClient& client_;
  CompactorOptions options_;
  LocalCompactor local_;  // the fallback
};

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
