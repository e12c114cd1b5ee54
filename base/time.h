// Time, once (issue 29): the wall clock in milliseconds and the ways a time
// is written for people and files. Thread-safe.
#pragma once

#include <cstdint>
#include <string>

namespace codex {

// Milliseconds since the Unix epoch (the wall clock: what sessions, leases
// and purges record and compare).
int64_t NowMs();

// Milliseconds on the monotonic clock (for deadlines and durations only).
int64_t SteadyNowMs();

// RFC 3339 in UTC with milliseconds: "2026-11-26T03:40:39.123Z".
std::string FormatRfc3339Ms(int64_t unix_ms);
// RFC 3339 in UTC, whole seconds: "2026-11-26T03:40:39Z".
std::string FormatRfc3339(int64_t unix_ms);

// `unix_ms` in the local time zone with a strftime format, e.g. "%H:%M".
std::string FormatLocalTime(int64_t unix_ms, const char* strftime_format);

// How long ago `then_ms` was at `now_ms`: "just now", "42s ago", "5m ago",
// "3h ago", "2d ago" (a time in the future is "just now").
std::string Ago(int64_t then_ms, int64_t now_ms);

}  // namespace codex
