#include "core/retry_policy.h"

#include <catch2/catch.hpp>

#include "core/http_errors.h"
#include "core/model_client.h"

using namespace codex;
using namespace codex::core;

TEST_CASE("IsRetryable: unavailable and rate limits, never TLS or exhausted retries") {
  CHECK_FALSE(IsRetryable(OkStatus()));
  CHECK(IsRetryable(UnavailableError("502").WithReason(core::reason::kServerError)));
  CHECK(IsRetryable(UnavailableError("drop").WithReason(core::reason::kStreamClosed)));
  CHECK(IsRetryable(UnavailableError("refused").WithReason(core::reason::kTransport)));
  CHECK(IsRetryable(UnavailableError("no reason")));
  CHECK(IsRetryable(ResourceExhaustedError("429").WithReason(core::reason::kRateLimitExceeded)));

  CHECK_FALSE(IsRetryable(UnavailableError("bad cert").WithReason(core::reason::kTls)));
  CHECK_FALSE(IsRetryable(UnavailableError("502").WithReason(core::reason::kRetriesExhausted)));
  CHECK_FALSE(IsRetryable(
      ResourceExhaustedError("window").WithReason(core::reason::kContextLengthExceeded)));
  CHECK_FALSE(
      IsRetryable(ResourceExhaustedError("quota").WithReason(core::reason::kInsufficientQuota)));
  CHECK_FALSE(IsRetryable(ResourceExhaustedError("plain resource exhausted")));
  CHECK_FALSE(IsRetryable(InvalidArgumentError("400").WithReason(core::reason::kRejectedByServer)));
  CHECK_FALSE(IsRetryable(UnauthenticatedError("401")));
  CHECK_FALSE(IsRetryable(CancelledError("ctrl-c")));
  CHECK_FALSE(IsRetryable(DeadlineExceededError("slow")));
  CHECK_FALSE(IsRetryable(
      FailedPreconditionError("response incomplete").WithReason(core::reason::kIncomplete)));
}

TEST_CASE("The client's HTTP classification retries what IsRetryable allows, nothing else") {
  ProviderInfo provider;
  provider.id = "openai";
  provider.env_key = "OPENAI_API_KEY";
  const std::string url = "http://127.0.0.1:1/v1";
  auto retried = [&](int code, const std::string& body) {
    const http_internal::AttemptResult a =
        http_internal::ClassifyHttpError(code, body, "", url, provider);
    CHECK(a.retry == IsRetryable(a.status));
    return a.retry;
  };
  for (int code : {429, 500, 502, 503, 504, 599}) {
    INFO(code);
    CHECK(retried(code, ""));
    CHECK(retried(code, R"({"error":{"message":"busy"}})"));
  }
  for (int code : {400, 401, 403, 404, 409, 413, 422}) {
    INFO(code);
    CHECK_FALSE(retried(code, ""));
  }
  // The body's verdict wins over the status line: never retried.
  for (int code : {400, 429, 500}) {
    INFO(code);
    CHECK_FALSE(retried(code, R"({"error":{"code":"context_length_exceeded","message":"x"}})"));
    CHECK_FALSE(retried(code, R"({"error":{"code":"insufficient_quota","message":"x"}})"));
  }
  // An unexpected status (a redirect not followed) is kUnavailable, so
  // retryable by the one rule, here as in the turn loop.
  CHECK(retried(302, ""));
}

TEST_CASE("RetryDelayMs: the server's delay first, else doubling with jitter, capped") {
  using codex::core::kMaxRetryDelayMs;
  using codex::core::RetryDelayMs;
  CHECK(RetryDelayMs(1500, 200, 1) == 1500);  // Retry-After wins, undisturbed
  CHECK(RetryDelayMs(10 * kMaxRetryDelayMs, 200, 1) == kMaxRetryDelayMs);
  for (int retry = 1; retry <= 6; ++retry) {
    const double expected = 200.0 * (1 << (retry - 1));
    for (int i = 0; i < 50; ++i) {
      const int64_t d = RetryDelayMs(0, 200, retry);
      INFO("retry " << retry << ": " << d << " ms");
      CHECK(d >= static_cast<int64_t>(expected * 0.9) - 1);
      CHECK(d <= static_cast<int64_t>(expected * 1.1) + 1);
    }
  }
  CHECK(RetryDelayMs(0, 200, 40) == kMaxRetryDelayMs);  // grows no further
  CHECK(RetryDelayMs(0, 200, 0) <= 220);                // a retry number below 1 is the first
}
