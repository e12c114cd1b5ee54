// ResponseStream: interprets one Responses API event stream (SSE bytes) for
// a StreamObserver and produces the ModelResponse or a classified error.
//
// Events are told apart by the `type` of each `data:` JSON; the `event:` line
// is ignored, as Codex does. A data payload that is not a JSON object with a
// string `type` is skipped with StreamObserver::OnWarning. Unknown types are
// ignored. Handled:
//   response.created / in_progress / queued  -> remember the response id
//   response.output_item.added               -> OnOutputItemAdded(item JSON)
//   response.output_item.done                -> DecodeItem -> OnOutputItemDone
//                                               (a non-OK Status aborts the stream)
//   response.output_text.delta               -> OnTextDelta
//   response.reasoning_summary_text.delta    -> OnReasoningDelta
//   response.reasoning_text.delta            -> OnRawReasoningDelta
//   response.reasoning_summary_part.added    -> OnReasoningDelta("\n\n") between parts
//   error                                    -> remembered (flat or nested payload)
//   response.completed / failed / incomplete -> the outcome (the first one wins)
// Deliberately ignored (the finished item carries the same content):
// content_part.*, output_text.done, refusal.*, output_text.annotation.added,
// reasoning_summary_part.done, reasoning_summary_text.done,
// reasoning_text.done, function_call_arguments.*, custom_tool_call_input.*.
//
// Finish() reports the outcome, classified as model_client.h documents:
//   completed  -> ModelResponse{id, usage (nullopt when absent), items}
//   incomplete -> kFailedPrecondition, reason "incomplete",
//                 message "response incomplete: <incomplete_details.reason>"
//   failed     -> ClassifyResponseError(error.code, error.message)
//   none       -> kUnavailable, reason "stream_closed",
//                 "stream closed before response.completed" (plus the message
//                 of an `error` event if one came)
//
// Not thread-safe; the observer is borrowed and must outlive the stream.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "core/model_client.h"
#include "core/sse_parser.h"

namespace codex::core {

class ResponseStream {
 public:
  explicit ResponseStream(StreamObserver& observer);

  ResponseStream(const ResponseStream&) = delete;
  ResponseStream& operator=(const ResponseStream&) = delete;

  // Parses SSE bytes and handles every complete event. A non-OK Status (the
  // observer aborted, or an event exceeded the size limit) ends the stream.
  Status Feed(std::string_view bytes);

  // Handles one event's data payload directly (no SSE framing).
  Status HandleData(std::string_view data);

  // The byte stream ended. Flushes a final unterminated event and returns the
  // outcome. Call once.
  Result<ModelResponse> Finish();

  // True once an observer callback has been made for this stream (a delta or
  // an item): from then on the request must not be silently repeated.
  bool delivered() const { return delivered_; }
  // True once response.completed, response.failed or response.incomplete came.
  bool terminal() const { return outcome_ != Outcome::kNone; }
  // The response id from response.created (or a later lifecycle event).
  const std::string& response_id() const { return response_.response_id; }

 private:
  enum class Outcome { kNone, kCompleted, kFailed, kIncomplete };

  Status HandleEvent(std::string_view data);
  // The steps of HandleEvent for the events that carry state.
  Status OnOutputItemDone(const nlohmann::ordered_json& event);
  void OnErrorEvent(const nlohmann::ordered_json& event);
  void OnOutcome(std::string_view type, const nlohmann::ordered_json& event);

  StreamObserver& observer_;
  SseParser parser_;
  ModelResponse response_;
  bool delivered_ = false;
  Outcome outcome_ = Outcome::kNone;
  Status failure_;             // for kFailed / kIncomplete
  std::string error_code_;     // from a top-level `error` event
  std::string error_message_;  // "" when no `error` event came
  bool saw_error_event_ = false;
};

// Maps a response error {code, message} to a Status:
//   context_length_exceeded -> kResourceExhausted "context_length_exceeded"
//   insufficient_quota      -> kResourceExhausted "insufficient_quota" (fatal)
//   usage_not_included      -> kResourceExhausted "usage_not_included" (fatal)
//   rate_limit_exceeded     -> kResourceExhausted "rate_limit_exceeded", with
//                              retry_after_ms from ParseRetryAfterMs(message)
//   anything else           -> kUnavailable "server_error" (retryable)
Status ClassifyResponseError(std::string_view code, std::string_view message);

// The delay in "… try again in 11.054s …", in milliseconds (rounded), with
// the semantics of the regex `(?i)try again in\s*(\d+(?:\.\d+)?)\s*(s|ms|seconds?)`.
// nullopt when the message holds no such phrase.
std::optional<int64_t> ParseRetryAfterMs(std::string_view message);

}  // namespace codex::core
