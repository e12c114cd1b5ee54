#include "base/time.h"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <ctime>

using namespace codex;

TEST_CASE("RFC 3339 in UTC, with and without milliseconds") {
  CHECK(FormatRfc3339Ms(0) == "1970-01-01T00:00:00.000Z");
  CHECK(FormatRfc3339Ms(1764128439123) == "2025-11-26T03:40:39.123Z");
  CHECK(FormatRfc3339(1764128439999) == "2025-11-26T03:40:39Z");
  CHECK(FormatRfc3339Ms(-1) == "1969-12-31T23:59:59.999Z");
}

TEST_CASE("Local time uses the TZ zone and the given format") {
  const char* old = std::getenv("TZ");
  const std::string saved = old != nullptr ? old : "";
  ::setenv("TZ", "UTC+2", 1);  // POSIX: two hours west of UTC
  ::tzset();
  CHECK(FormatLocalTime(1764128439123, "%Y-%m-%d %H:%M") == "2025-11-26 01:40");
  if (old != nullptr) {
    ::setenv("TZ", saved.c_str(), 1);
  } else {
    ::unsetenv("TZ");
  }
  ::tzset();
}

TEST_CASE("Ago rounds down to the largest whole unit") {
  const int64_t now = 10'000'000'000;
  CHECK(Ago(now, now) == "just now");
  CHECK(Ago(now + 60'000, now) == "just now");  // the future
  CHECK(Ago(now - 4'999, now) == "just now");
  CHECK(Ago(now - 5'000, now) == "5s ago");
  CHECK(Ago(now - 59'999, now) == "59s ago");
  CHECK(Ago(now - 60'000, now) == "1m ago");
  CHECK(Ago(now - 3'600'000, now) == "1h ago");
  CHECK(Ago(now - 86'399'999, now) == "23h ago");
  CHECK(Ago(now - 3 * 86'400'000LL, now) == "3d ago");
}

TEST_CASE("NowMs is the wall clock; SteadyNowMs never goes back") {
  const int64_t wall = NowMs();
  const int64_t c = static_cast<int64_t>(std::time(nullptr)) * 1000;
  CHECK(wall >= c - 2000);
  CHECK(wall <= c + 2000);
  const int64_t a = SteadyNowMs();
  CHECK(SteadyNowMs() >= a);
}
