#include "base/status.h"

#include <cstring>

namespace codex {

std::string_view StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "OK";
    case StatusCode::kCancelled:
      return "CANCELLED";
    case StatusCode::kInvalidArgument:
      return "INVALID_ARGUMENT";
    case StatusCode::kNotFound:
      return "NOT_FOUND";
    case StatusCode::kFailedPrecondition:
      return "FAILED_PRECONDITION";
    case StatusCode::kResourceExhausted:
      return "RESOURCE_EXHAUSTED";
    case StatusCode::kDeadlineExceeded:
      return "DEADLINE_EXCEEDED";
    case StatusCode::kUnavailable:
      return "UNAVAILABLE";
    case StatusCode::kUnauthenticated:
      return "UNAUTHENTICATED";
    case StatusCode::kPermissionDenied:
      return "PERMISSION_DENIED";
    case StatusCode::kDataLoss:
      return "DATA_LOSS";
    case StatusCode::kInternal:
      return "INTERNAL";
  }
  return "UNKNOWN";
}

std::string_view StatusReasonName(StatusReason reason) {
  switch (reason) {
    case StatusReason::kNone:
      return "";
    case StatusReason::kContextLengthExceeded:
      return "context_length_exceeded";
    case StatusReason::kInsufficientQuota:
      return "insufficient_quota";
    case StatusReason::kUsageNotIncluded:
      return "usage_not_included";
    case StatusReason::kRateLimitExceeded:
      return "rate_limit_exceeded";
    case StatusReason::kServerError:
      return "server_error";
    case StatusReason::kIncomplete:
      return "incomplete";
    case StatusReason::kStreamClosed:
      return "stream_closed";
    case StatusReason::kTransport:
      return "transport";
    case StatusReason::kTls:
      return "tls";
    case StatusReason::kRejectedByServer:
      return "rejected_by_server";
    case StatusReason::kRetriesExhausted:
      return "retries_exhausted";
    case StatusReason::kSessionAdvanced:
      return "session_advanced";
    case StatusReason::kSessionBusy:
      return "session_busy";
    case StatusReason::kAmbiguousPrefix:
      return "ambiguous_prefix";
  }
  return "";
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  std::string s(StatusCodeName(code_));
  s += ": ";
  s += message_;
  if (reason_ != StatusReason::kNone) s += " [" + std::string(StatusReasonName(reason_)) + "]";
  return s;
}

std::string ErrnoMessage(const std::string& what, int err) {
  return what + ": " + std::strerror(err);
}

}  // namespace codex
