// Status and Result<T>: the one error mechanism of the project (STYLE.md).
//
// A Status is a code plus a one-line message meant for a user. Result<T> holds
// either a value or a non-OK Status. Neither throws. Thread-compatible.
//
// This is the base target (codex_base): sandbox/ and core/ both build on it,
// and it includes nothing else of ours.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace codex {

enum class StatusCode {
  kOk = 0,
  kCancelled,           // the user interrupted
  kInvalidArgument,     // bad input from the user or a peer
  kNotFound,            // unknown session, file, ...
  kFailedPrecondition,  // e.g. session advanced by another process
  kResourceExhausted,   // 429, quota, context window
  kDeadlineExceeded,    // timeouts
  kUnavailable,         // retryable: 5xx, dropped stream, connect failure
  kUnauthenticated,     // 401/403, missing API key
  kPermissionDenied,    // a program exists but may not be executed
  kDataLoss,            // corrupt data
  kInternal,
};

std::string_view StatusCodeName(StatusCode code);

// A finer-grained reason within a code that callers branch on (retry, compact,
// exit code 3). An open code: base/ knows none of them. The module whose
// errors carry a reason defines it as a constant beside them
// (core/model_client.h: the model's and the transport's, core/session_store.h:
// the session store's), e.g.
//   inline constexpr StatusReason kSessionBusy{"session_busy"};
// and callers compare with those constants, never with literal text. The name
// is snake_case and unique across the modules (logs and tests print it).
class StatusReason {
 public:
  constexpr StatusReason() = default;  // no reason
  constexpr explicit StatusReason(std::string_view name) : name_(name) {}

  // "context_length_exceeded"; empty for no reason.
  constexpr std::string_view name() const { return name_; }
  constexpr bool empty() const { return name_.empty(); }

  friend constexpr bool operator==(StatusReason a, StatusReason b) { return a.name_ == b.name_; }

 private:
  std::string_view name_;  // a string literal of the defining module
};

// The snake_case name of a reason ("context_length_exceeded"), for logs and tests.
constexpr std::string_view StatusReasonName(StatusReason reason) { return reason.name(); }

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // A finer-grained reason within the code, e.g. core::reason::kContextLengthExceeded.
  StatusReason reason() const { return reason_; }
  Status& WithReason(StatusReason reason) {
    reason_ = reason;
    return *this;
  }
  // Server-suggested delay before retrying, in milliseconds (0 = none).
  long long retry_after_ms() const { return retry_after_ms_; }
  Status& WithRetryAfterMs(long long ms) {
    retry_after_ms_ = ms;
    return *this;
  }

  // "CODE: message" for logs; users see message() alone.
  std::string ToString() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
  StatusReason reason_;
  long long retry_after_ms_ = 0;
};

inline Status OkStatus() { return Status(); }
inline Status CancelledError(std::string m) { return {StatusCode::kCancelled, std::move(m)}; }
inline Status InvalidArgumentError(std::string m) {
  return {StatusCode::kInvalidArgument, std::move(m)};
}
inline Status NotFoundError(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
inline Status FailedPreconditionError(std::string m) {
  return {StatusCode::kFailedPrecondition, std::move(m)};
}
inline Status ResourceExhaustedError(std::string m) {
  return {StatusCode::kResourceExhausted, std::move(m)};
}
inline Status DeadlineExceededError(std::string m) {
  return {StatusCode::kDeadlineExceeded, std::move(m)};
}
inline Status UnavailableError(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
inline Status UnauthenticatedError(std::string m) {
  return {StatusCode::kUnauthenticated, std::move(m)};
}
inline Status DataLossError(std::string m) { return {StatusCode::kDataLoss, std::move(m)}; }
inline Status InternalError(std::string m) { return {StatusCode::kInternal, std::move(m)}; }

// Either a T or a non-OK Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}        // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {  // NOLINT: implicit by design
    assert(!std::get<Status>(v_).ok() && "Result constructed from an OK status");
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Status> v_;
};

// "<what>: <strerror(err)>", for messages built after a failed system call.
std::string ErrnoMessage(const std::string& what, int err);

}  // namespace codex

#define CODEX_CONCAT_INNER(a, b) a##b
#define CODEX_CONCAT(a, b) CODEX_CONCAT_INNER(a, b)

// Returns from the current function when `expr` (a Status) is not OK.
#define RETURN_IF_ERROR(expr)                      \
  do {                                             \
    ::codex::Status codex_status_ = (expr);        \
    if (!codex_status_.ok()) return codex_status_; \
  } while (0)

// `ASSIGN_OR_RETURN(auto x, MakeX());` binds the value or returns the error.
#define ASSIGN_OR_RETURN(lhs, expr) \
  CODEX_ASSIGN_OR_RETURN_IMPL(CODEX_CONCAT(codex_result_, __LINE__), lhs, expr)
#define CODEX_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                \
  if (!tmp.ok()) return tmp.status();               \
  lhs = std::move(tmp).value()
