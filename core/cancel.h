// CancelToken: a flag set from a signal handler or another thread and polled
// by long operations (streams, tool runs). Thread-safe and async-signal-safe
// to Cancel(). A token made with a parent (borrowed; it must outlive the
// child) is cancelled also once the parent is: a group of tool calls run
// together (core/conversation.cc) stops when the user interrupts the turn or
// when one of them stops the group.
#pragma once

#include <atomic>

namespace codex::core {

class CancelToken {
 public:
  CancelToken() = default;
  explicit CancelToken(const CancelToken* parent) : parent_(parent) {}
  CancelToken(const CancelToken&) = delete;
  CancelToken& operator=(const CancelToken&) = delete;

  void Cancel() { cancelled_.store(true, std::memory_order_relaxed); }
  void Reset() { cancelled_.store(false, std::memory_order_relaxed); }
  bool cancelled() const {
    return cancelled_.load(std::memory_order_relaxed) ||
           (parent_ != nullptr && parent_->cancelled());
  }

 private:
  std::atomic<bool> cancelled_{false};
  const CancelToken* parent_ = nullptr;
};

}  // namespace codex::core
