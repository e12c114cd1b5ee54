// Eventually: how a test waits for something another thread or process does
// (a file appears, a log line is written, a request arrives, a row changes):
// it polls that observable condition against a deadline, and never sleeps a
// fixed time hoping the other side is done (test support).
#pragma once

#include <chrono>
#include <thread>

namespace codex::testing {

// True as soon as `pred()` holds; false when it still does not after
// `timeout` (generous: a loaded machine is slow, a broken one never gets there).
template <typename Pred>
bool Eventually(Pred pred, std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < until) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return pred();
}

}  // namespace codex::testing
