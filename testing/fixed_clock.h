// FixedClock: a core::Clock that always says the same time (test support).
// Thread-safe (it only reads a constant).
#pragma once

#include <cstdint>

#include "core/clock.h"

namespace codex::testing {

class FixedClock final : public core::Clock {
 public:
  explicit FixedClock(int64_t now_ms = 1'000) : now_ms_(now_ms) {}
  int64_t NowMs() const override { return now_ms_; }

 private:
  int64_t now_ms_;
};

}  // namespace codex::testing
