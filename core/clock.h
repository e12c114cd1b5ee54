// Clock: wall time in milliseconds since the epoch, behind an interface so
// tests can fix it. SystemClock is thread-safe.
#pragma once

#include <cstdint>

#include "base/time.h"

namespace codex::core {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual int64_t NowMs() const = 0;
};

class SystemClock final : public Clock {
 public:
  int64_t NowMs() const override { return codex::NowMs(); }
};

}  // namespace codex::core
