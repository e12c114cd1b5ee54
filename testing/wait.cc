#include "testing/wait.h"

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <thread>

namespace codex::testing {

namespace {
constexpr int kPolls = 600;  // 50 ms apart: 30 s
constexpr std::chrono::milliseconds kPollEvery{50};
}  // namespace

bool ReleaseFifo(const std::filesystem::path& path) {
  for (int i = 0; i < kPolls; ++i) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd >= 0) {
      ::close(fd);
      return true;
    }
    std::this_thread::sleep_for(kPollEvery);
  }
  return false;
}

}  // namespace codex::testing
