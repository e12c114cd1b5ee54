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

#include "base/status.h"

namespace codex::core {

bool IsRetryable(const Status& status);

}  // namespace codex::core
