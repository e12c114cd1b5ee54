#include "base/status.h"

#include <catch2/catch.hpp>
#include <cerrno>
#include <set>
#include <string>

using namespace codex;

TEST_CASE("Every StatusReason has its own snake_case name; kNone has none") {
  CHECK(StatusReasonName(StatusReason::kNone).empty());
  std::set<std::string> names;
  for (int r = 1; r <= static_cast<int>(StatusReason::kAmbiguousPrefix); ++r) {
    const std::string name(StatusReasonName(static_cast<StatusReason>(r)));
    INFO(r);
    CHECK_FALSE(name.empty());
    CHECK(name.find_first_not_of("abcdefghijklmnopqrstuvwxyz_") == std::string::npos);
    names.insert(name);
  }
  CHECK(names.size() == static_cast<size_t>(StatusReason::kAmbiguousPrefix));
  CHECK(StatusReasonName(StatusReason::kContextLengthExceeded) == "context_length_exceeded");
  CHECK(StatusReasonName(StatusReason::kSessionAdvanced) == "session_advanced");
}

TEST_CASE("A Status carries code, message, reason and retry delay; ToString names them") {
  Status s = ResourceExhaustedError("slow down");
  CHECK(s.reason() == StatusReason::kNone);
  CHECK(s.ToString() == "RESOURCE_EXHAUSTED: slow down");
  s.WithReason(StatusReason::kRateLimitExceeded).WithRetryAfterMs(1500);
  CHECK_FALSE(s.ok());
  CHECK(s.code() == StatusCode::kResourceExhausted);
  CHECK(s.reason() == StatusReason::kRateLimitExceeded);
  CHECK(s.retry_after_ms() == 1500);
  CHECK(s.ToString() == "RESOURCE_EXHAUSTED: slow down [rate_limit_exceeded]");
  CHECK(OkStatus().ok());
  CHECK(OkStatus().ToString() == "OK");
  CHECK(Status(StatusCode::kPermissionDenied, "x").ToString() == "PERMISSION_DENIED: x");
}

namespace {

Result<int> Half(int n) {
  if (n % 2 != 0) return InvalidArgumentError(std::to_string(n) + " is odd");
  return n / 2;
}

Result<int> Quarter(int n) {
  ASSIGN_OR_RETURN(int half, Half(n));
  ASSIGN_OR_RETURN(int quarter, Half(half));
  return quarter;
}

Status CheckEven(int n) {
  RETURN_IF_ERROR(Half(n).status());
  return OkStatus();
}

}  // namespace

TEST_CASE("Result and the macros propagate the first error unchanged") {
  REQUIRE(Quarter(8).ok());
  CHECK(*Quarter(8) == 2);
  CHECK(Quarter(6).status().message() == "3 is odd");
  CHECK(Quarter(6).status().code() == StatusCode::kInvalidArgument);
  CHECK(CheckEven(4).ok());
  CHECK(CheckEven(5).message() == "5 is odd");
}

TEST_CASE("ErrnoMessage names the call and the errno text") {
  CHECK(ErrnoMessage("open 'x'", ENOENT) == "open 'x': No such file or directory");
}
