// Clock: the wall clock behind an interface, so that what records and judges
// time (the conversation's stamps, the session stores, the turn lease) can be
// handed a clock a test controls (testing/manual_clock.h). Every user takes a
// Clock and defaults to SystemClock(); nothing else of ours reads the wall
// clock on their behalf. Implementations are thread-safe.
#pragma once

#include <cstdint>

#include "base/time.h"

namespace codex {

class Clock {
 public:
  virtual ~Clock() = default;
  // Milliseconds since the Unix epoch.
  virtual int64_t NowMs() const = 0;
};

// The real wall clock (codex::NowMs, base/time.h).
class RealClock final : public Clock {
 public:
  int64_t NowMs() const override { return ::codex::NowMs(); }
};

// The process's one RealClock: the default of every Clock* left null.
inline const Clock& SystemClock() {
  static const RealClock clock;
  return clock;
}

// `clock` when set, else SystemClock().
inline const Clock& ClockOr(const Clock* clock) {
  return clock != nullptr ? *clock : SystemClock();
}

}  // namespace codex
