#include "base/time.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>

namespace codex {
namespace {

std::tm Utc(int64_t unix_ms) {
  int64_t secs = unix_ms / 1000;
  if (unix_ms % 1000 < 0) --secs;  // floor, for times before the epoch
  const auto t = static_cast<std::time_t>(secs);
  std::tm tm{};
  gmtime_r(&t, &tm);
  return tm;
}

std::string Strftime(const std::tm& tm, const char* format) {
  char buf[128];
  const size_t n = std::strftime(buf, sizeof buf, format, &tm);
  return std::string(buf, n);
}

}  // namespace

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int64_t SteadyNowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string FormatRfc3339Ms(int64_t unix_ms) {
  const int ms = static_cast<int>(((unix_ms % 1000) + 1000) % 1000);
  char frac[8];
  std::snprintf(frac, sizeof frac, ".%03dZ", ms);
  return Strftime(Utc(unix_ms), "%Y-%m-%dT%H:%M:%S") + frac;
}

std::string FormatRfc3339(int64_t unix_ms) { return Strftime(Utc(unix_ms), "%Y-%m-%dT%H:%M:%SZ"); }

std::string FormatLocalTime(int64_t unix_ms, const char* strftime_format) {
  const auto t = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  localtime_r(&t, &tm);
  return Strftime(tm, strftime_format);
}

std::string Ago(int64_t then_ms, int64_t now_ms) {
  const int64_t s = std::max<int64_t>(0, (now_ms - then_ms) / 1000);
  if (s < 5) return "just now";
  if (s < 60) return std::to_string(s) + "s ago";
  if (s < 3600) return std::to_string(s / 60) + "m ago";
  if (s < 86400) return std::to_string(s / 3600) + "h ago";
  return std::to_string(s / 86400) + "d ago";
}

}  // namespace codex
