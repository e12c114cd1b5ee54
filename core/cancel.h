// CancelToken: a flag set from a signal handler or another thread and polled
// by long operations (streams, tool runs). Thread-safe and async-signal-safe
// to Cancel().
#pragma once

#include <atomic>

namespace codex::core {

class CancelToken {
 public:
  void Cancel() { cancelled_.store(true, std::memory_order_relaxed); }
  void Reset() { cancelled_.store(false, std::memory_order_relaxed); }
  bool cancelled() const { return cancelled_.load(std::memory_order_relaxed); }

 private:
  std::atomic<bool> cancelled_{false};
};

}  // namespace codex::core
