// ManualClock: a codex::Clock (base/clock.h) that moves only when the test
// says so (test support). Stays at its start time until Set or Advance;
// thread-safe (a store's heartbeat thread may read it while the test moves it).
#pragma once

#include <atomic>
#include <cstdint>

#include "base/clock.h"

namespace codex::testing {

class ManualClock final : public Clock {
 public:
  explicit ManualClock(int64_t now_ms = 1'000) : now_ms_(now_ms) {}
  int64_t NowMs() const override { return now_ms_.load(); }
  void Set(int64_t now_ms) { now_ms_.store(now_ms); }
  void Advance(int64_t ms) { now_ms_.fetch_add(ms); }

 private:
  std::atomic<int64_t> now_ms_;
};

}  // namespace codex::testing
