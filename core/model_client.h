// ModelClient: the seam between the turn loop and the Responses API.
//
// Implementations: ResponsesClient (HTTP(S) + SSE). Stream() sends one
// request body (built by request_builder.h) and reports stream events to a
// StreamObserver as they arrive, on the calling thread. Transport errors,
// 5xx and 429 answered before any event are retried inside the client; a
// stream that drops after events arrived is returned as kUnavailable with
// reason "stream_closed" so the turn loop can retry from what was committed.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "core/cancel.h"
#include "core/item.h"
#include "core/token_usage.h"

namespace codex::core {

// The reasons (base/status.h) a model request's error carries: what callers
// retry, compact or report on.
namespace reason {
inline constexpr StatusReason kContextLengthExceeded{"context_length_exceeded"};  // does not fit
inline constexpr StatusReason kInsufficientQuota{"insufficient_quota"};  // the quota is used up
inline constexpr StatusReason kUsageNotIncluded{"usage_not_included"};   // the plan lacks API use
inline constexpr StatusReason kRateLimitExceeded{
    "rate_limit_exceeded"};                                    // 429, retry after a delay
inline constexpr StatusReason kServerError{"server_error"};    // 5xx or response.failed
inline constexpr StatusReason kIncomplete{"incomplete"};       // response.incomplete
inline constexpr StatusReason kStreamClosed{"stream_closed"};  // ended before response.completed
inline constexpr StatusReason kTransport{"transport"};         // connect/read failure below HTTP
inline constexpr StatusReason kTls{"tls"};                     // TLS failure (not retried)
inline constexpr StatusReason kRejectedByServer{"rejected_by_server"};  // a 4xx for a sound request
inline constexpr StatusReason kRetriesExhausted{"retries_exhausted"};   // every retry failed
}  // namespace reason

// Callbacks made while a response streams. Returning a non-OK Status from
// OnOutputItemDone aborts the stream with that status.
class StreamObserver {
 public:
  virtual ~StreamObserver() = default;
  // An assistant text delta of the item `item_id`.
  virtual void OnTextDelta(std::string_view item_id, std::string_view delta) {
    (void)item_id, (void)delta;
  }
  // A reasoning summary delta.
  virtual void OnReasoningDelta(std::string_view item_id, std::string_view delta) {
    (void)item_id, (void)delta;
  }
  // A raw reasoning text delta (response.reasoning_text.delta), shown only
  // with show_raw_agent_reasoning.
  virtual void OnRawReasoningDelta(std::string_view item_id, std::string_view delta) {
    (void)item_id, (void)delta;
  }
  // A new output item started (its JSON as received).
  virtual void OnOutputItemAdded(std::string_view item_json) { (void)item_json; }
  // A complete output item, decoded; commit it before returning, or hold it
  // to commit with the others of its batch in OnBatchEnd.
  virtual Status OnOutputItemDone(const Item& item) = 0;
  // Every byte received so far has been fed (the items of bytes that arrived
  // together: one batch): commit what OnOutputItemDone held. Called after
  // each batch, whatever its end, before the client waits for more bytes or
  // returns; an error ends the exchange as OnOutputItemDone's would.
  virtual Status OnBatchEnd() { return OkStatus(); }
  // A non-fatal oddity in the stream (e.g. a data line that is not JSON).
  virtual void OnWarning(std::string_view message) { (void)message; }
  // The client is about to retry (message like "Reconnecting 1/5…").
  virtual void OnRetry(std::string_view message) { (void)message; }
};

// Commits nothing: for a request whose response is not part of the session
// (a compaction's summary or replacement history).
class DiscardingObserver final : public StreamObserver {
 public:
  Status OnOutputItemDone(const Item& item) override {
    (void)item;
    return OkStatus();
  }
};

struct ModelResponse {
  std::string response_id;
  std::optional<TokenUsage> usage;  // nullopt when response.completed had none
  std::vector<Item> items;          // every output item, in order
};

class ModelClient {
 public:
  virtual ~ModelClient() = default;

  // POST {base_url}/responses with `request_body` (JSON). Errors:
  //  kUnavailable (reason "stream_closed", "server_error", "transport") — retryable;
  //    reason "retries_exhausted" once the client's own request_max_retries are
  //    spent (any code; callers must not retry again), "tls" for a failed
  //    certificate or host check (never retried);
  //  kResourceExhausted reason "context_length_exceeded" | "insufficient_quota" |
  //    "rate_limit_exceeded" | "usage_not_included";
  //  kFailedPrecondition reason "incomplete" (message names incomplete_details.reason);
  //  kUnauthenticated (401/403); kInvalidArgument reason "rejected_by_server" (other 4xx);
  //  kCancelled.
  virtual Result<ModelResponse> Stream(std::string_view request_body, StreamObserver& observer,
                                       const CancelToken& cancel) = 0;

  // POST {base_url}/responses/compact with `request_body`; returns the JSON
  // response body text (a CompactResource). Same error classes as Stream.
  virtual Result<std::string> Compact(std::string_view request_body, const CancelToken& cancel) = 0;
};

}  // namespace codex::core
