// Which failures may be retried: the one rule the Responses client (per HTTP
// attempt, core/responses_client.cc with core/http_errors.cc) and the turn
// loop (per model stream, core/conversation.cc) share.
//
// Retryable: kUnavailable (5xx, a dropped or idle stream, a connect or read
// failure below HTTP, a response.failed the server gave as a server error) and
// rate limits (reason kRateLimitExceeded, after Retry-After). Never: a TLS
// failure (the certificate will not change by waiting), a status whose
// retries were already spent (reason kRetriesExhausted: the layer below
// retried, the layer above must not retry again), and every other code
// (bad requests, authentication, quota, context window, cancellation).
//
// Where a retry happens is the caller's policy: the client retries only while
// nothing of the attempt reached the observer; the turn loop retries what is
// left, from what was committed. Pure; thread-safe.
#pragma once

#include <cstdint>

#include "base/status.h"

namespace codex::core {

// The longest wait before a retry, whether the server asked for it
// (Retry-After) or the backoff grew to it.
inline constexpr int64_t kMaxRetryDelayMs = 120'000;

bool IsRetryable(const Status& status);

// The wait before retry number `retry` (1-based): the server's `retry_after_ms`
// when it gave one (> 0), else `base_ms` doubled per retry with +-10% jitter;
// at most kMaxRetryDelayMs. The one backoff of the client's HTTP retries and
// the turn loop's stream retries. Thread-safe (the jitter's generator is per thread).
int64_t RetryDelayMs(int64_t retry_after_ms, int64_t base_ms, int retry);

}  // namespace codex::core
