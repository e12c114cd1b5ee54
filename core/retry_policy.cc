#include "core/retry_policy.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "core/model_client.h"

namespace codex::core {

bool IsRetryable(const Status& status) {
  if (status.ok()) return false;
  if (status.reason() == core::reason::kRetriesExhausted || status.reason() == core::reason::kTls) {
    return false;
  }
  return status.code() == StatusCode::kUnavailable ||
         status.reason() == core::reason::kRateLimitExceeded;
}

int64_t RetryDelayMs(int64_t retry_after_ms, int64_t base_ms, int retry) {
  if (retry_after_ms > 0) return std::min(retry_after_ms, kMaxRetryDelayMs);
  thread_local std::mt19937_64 rng{std::random_device{}()};
  std::uniform_real_distribution<double> jitter(0.9, 1.1);
  const double grown = std::ldexp(static_cast<double>(base_ms), std::clamp(retry - 1, 0, 20));
  return static_cast<int64_t>(std::min(grown * jitter(rng), static_cast<double>(kMaxRetryDelayMs)));
}

}  // namespace codex::core
