// Clock: wall time in milliseconds since the epoch, behind an interface so
// tests can fix it. SystemClock is thread-safe.
#pragma once

#include <chrono>
#include <cstdint>

namespace codex::core {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual int64_t NowMs() const = 0;
};

class SystemClock final : public Clock {
 public:
  int64_t NowMs() const override {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
};

}  // namespace codex::core
