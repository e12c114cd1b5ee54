#include "core/retry_policy.h"

namespace codex::core {

bool IsRetryable(const Status& status) {
  if (status.ok()) return false;
  if (status.reason() == StatusReason::kRetriesExhausted || status.reason() == StatusReason::kTls) {
    return false;
  }
  return status.code() == StatusCode::kUnavailable ||
         status.reason() == StatusReason::kRateLimitExceeded;
}

}  // namespace codex::core
