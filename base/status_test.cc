#include "base/status.h"

#include <catch2/catch.hpp>
#include <cerrno>
#include <set>
#include <string>

using namespace codex;

namespace {
// Reasons are an open code: a module defines its own (none live in base/).
constexpr StatusReason kSlowDown{"slow_down"};
constexpr StatusReason kOther{"other"};
}  // namespace

TEST_CASE("A StatusReason is its name: equal names are one reason, none is empty") {
  CHECK(StatusReason().empty());
  CHECK(StatusReasonName(StatusReason()).empty());
  CHECK(StatusReason() == StatusReason());
  CHECK(kSlowDown.name() == "slow_down");
  CHECK(kSlowDown == StatusReason{"slow_down"});
  CHECK_FALSE(kSlowDown == kOther);
  CHECK_FALSE(kSlowDown == StatusReason());
  CHECK(OkStatus().reason().empty());
}

TEST_CASE("A Status carries code, message, reason and retry delay; ToString names them") {
  Status s = ResourceExhaustedError("slow down");
  CHECK(s.reason().empty());
  CHECK(s.ToString() == "RESOURCE_EXHAUSTED: slow down");
  s.WithReason(kSlowDown).WithRetryAfterMs(1500);
  CHECK_FALSE(s.ok());
  CHECK(s.code() == StatusCode::kResourceExhausted);
  CHECK(s.reason() == kSlowDown);
  CHECK(s.retry_after_ms() == 1500);
  CHECK(s.ToString() == "RESOURCE_EXHAUSTED: slow down [slow_down]");
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
