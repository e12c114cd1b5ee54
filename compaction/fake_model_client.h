// FakeModelClient: a core::ModelClient for the compaction unit tests. Each
// request body is recorded; the test decides the answer with a handler.
// Test-only (compiled into test binaries, never into codex_compaction).
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/model_client.h"

namespace codex::compaction::testing {

class FakeModelClient final : public core::ModelClient {
 public:
  std::function<Result<core::ModelResponse>(const std::string& body)> on_stream;
  std::function<Result<std::string>(const std::string& body)> on_compact;
  std::vector<std::string> stream_bodies;
  std::vector<std::string> compact_bodies;

  Result<core::ModelResponse> Stream(std::string_view request_body, core::StreamObserver& observer,
                                     const core::CancelToken& cancel) override {
    (void)cancel;
    stream_bodies.emplace_back(request_body);
    if (!on_stream) return InternalError("unexpected POST /responses");
    Result<core::ModelResponse> response = on_stream(stream_bodies.back());
    if (response.ok()) {
      for (const auto& item : response->items) RETURN_IF_ERROR(observer.OnOutputItemDone(item));
    }
    return response;
  }

  Result<std::string> Compact(std::string_view request_body,
                              const core::CancelToken& cancel) override {
    (void)cancel;
    compact_bodies.emplace_back(request_body);
    if (!on_compact) return InternalError("unexpected POST /responses/compact");
    return on_compact(compact_bodies.back());
  }
};

// A response holding one assistant message.
inline Result<core::ModelResponse> AssistantReply(std::string_view text) {
  core::ModelResponse response;
  response.response_id = "resp_test";
  response.items.push_back(core::AssistantMessage(text));
  return response;
}

// The server's answer to an input larger than the window.
inline Status ContextOverflow() {
  Status status = ResourceExhaustedError(
      "Your input exceeds the context window of this model. Please adjust your input and try "
      "again.");
  status.WithReason(StatusReason::kContextLengthExceeded);
  return status;
}

}  // namespace codex::compaction::testing
