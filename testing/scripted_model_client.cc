#include "testing/scripted_model_client.h"

#include <cstdio>
#include <cstdlib>

#include "core/model_client.h"

namespace codex::testing {

namespace {

[[noreturn]] void Unscripted(const char* what, const std::string& body) {
  std::fprintf(stderr,
               "ScriptedModelClient: unexpected %s (nothing scripted answers it): %.2000s\n", what,
               body.c_str());
  std::abort();
}

}  // namespace

Result<core::ModelResponse> ScriptedModelClient::Stream(std::string_view request_body,
                                                        core::StreamObserver& observer,
                                                        const core::CancelToken& cancel) {
  (void)cancel;
  stream_bodies.emplace_back(request_body);
  if (!steps.empty()) {
    Step step = std::move(steps.front());
    steps.pop_front();
    return step(observer);
  }
  if (!on_stream) Unscripted("POST /responses", stream_bodies.back());
  Result<core::ModelResponse> response = on_stream(stream_bodies.back());
  if (response.ok()) {
    for (const auto& item : response->items) RETURN_IF_ERROR(observer.OnOutputItemDone(item));
  }
  return response;
}

Result<std::string> ScriptedModelClient::Compact(std::string_view request_body,
                                                 const core::CancelToken& cancel) {
  (void)cancel;
  compact_bodies.emplace_back(request_body);
  if (!on_compact) Unscripted("POST /responses/compact", compact_bodies.back());
  return on_compact(compact_bodies.back());
}

ScriptedModelClient::Step Respond(std::vector<core::Item> items, int64_t total_tokens) {
  return [items = std::move(items),
          total_tokens](core::StreamObserver& observer) -> Result<core::ModelResponse> {
    core::ModelResponse r;
    for (const core::Item& item : items) {
      RETURN_IF_ERROR(observer.OnOutputItemDone(item));
      r.items.push_back(item);
    }
    core::TokenUsage usage;
    usage.total_tokens = total_tokens;
    r.usage = usage;
    return r;
  };
}

ScriptedModelClient::Step Drop(std::vector<core::Item> items) {
  return [items = std::move(items)](core::StreamObserver& observer) -> Result<core::ModelResponse> {
    for (const core::Item& item : items) RETURN_IF_ERROR(observer.OnOutputItemDone(item));
    return UnavailableError("stream closed before response.completed")
        .WithReason(core::reason::kStreamClosed);
  };
}

Result<core::ModelResponse> AssistantReply(std::string_view text) {
  core::ModelResponse response;
  response.response_id = "resp_test";
  response.items.push_back(core::AssistantMessage(text));
  return response;
}

Status ContextOverflow() {
  Status status = ResourceExhaustedError(
      "Your input exceeds the context window of this model. Please adjust your input and try "
      "again.");
  status.WithReason(core::reason::kContextLengthExceeded);
  return status;
}

}  // namespace codex::testing
