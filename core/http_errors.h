// What an HTTP attempt of the Responses client came to: the Status a reply
// that is not 2xx maps to (with its StatusReason), whether the attempt may be
// retried, and the server's Retry-After (the backoff is core::RetryDelayMs,
// core/retry_policy.h). Pure functions; thread-safe. Internal to core/
// (responses_client.cc); the mapping is documented in responses_client.h.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"
#include "core/config.h"

namespace codex::core::http_internal {

// One attempt's outcome.
struct AttemptResult {
  bool retry = false;  // true: `status` is retryable and nothing was delivered
  Status status;       // the final status (OK on success) or why to retry
  long long retry_after_ms = 0;
};

// A reply with a non-2xx status `http_status` and (the start of) its `body`
// from `url`: 401/403 kUnauthenticated naming the provider's env_key; a body
// whose error code is context_length_exceeded, insufficient_quota or
// usage_not_included as ClassifyResponseError; 429 retryable kResourceExhausted
// (kRateLimitExceeded) with the Retry-After header's or the message's delay;
// 5xx retryable kUnavailable (kServerError); other 4xx kInvalidArgument
// (kRejectedByServer); anything else kUnavailable (kServerError). `retry` is
// core::IsRetryable(status) (core/retry_policy.h), the rule the turn loop uses.
AttemptResult ClassifyHttpError(int http_status, const std::string& body,
                                std::string_view retry_after_header, const std::string& url,
                                const ProviderInfo& provider);

}  // namespace codex::core::http_internal
