// ScriptedModelClient: a core::ModelClient whose answers a test scripts
// (test support, never linked into codex). Every request body is recorded.
// A POST /responses is answered by the next of `steps` (in order); when none
// is left, by `on_stream` (its items are streamed to the observer before it
// returns). A POST /responses/compact is answered by `on_compact`. A request
// nothing answers prints what it was and aborts the test binary: an
// unexpected request is a failure, never a silently made-up answer.
// Not thread-safe: one turn drives it.
#pragma once

#include <deque>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/model_client.h"

namespace codex::testing {

class ScriptedModelClient final : public core::ModelClient {
 public:
  // One scripted answer: may stream items into the observer, returns the
  // response (or the failure the server would cause).
  using Step = std::function<Result<core::ModelResponse>(core::StreamObserver&)>;

  Result<core::ModelResponse> Stream(std::string_view request_body, core::StreamObserver& observer,
                                     const core::CancelToken& cancel) override;
  Result<std::string> Compact(std::string_view request_body,
                              const core::CancelToken& cancel) override;

  std::deque<Step> steps;
  std::function<Result<core::ModelResponse>(const std::string& body)> on_stream;
  std::function<Result<std::string>(const std::string& body)> on_compact;
  std::vector<std::string> stream_bodies;   // every POST /responses body, in order
  std::vector<std::string> compact_bodies;  // every POST /responses/compact body
};

// A step that streams `items` and completes with `total_tokens` of usage.
ScriptedModelClient::Step Respond(std::vector<core::Item> items, int64_t total_tokens = 100);

// A step that streams `items` and then drops (kUnavailable, kStreamClosed).
ScriptedModelClient::Step Drop(std::vector<core::Item> items);

// A response holding one assistant message.
Result<core::ModelResponse> AssistantReply(std::string_view text);

// The server's answer to an input larger than the window.
Status ContextOverflow();

}  // namespace codex::testing
