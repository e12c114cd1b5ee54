#include "cli/work_progress.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>

namespace codex::cli {

namespace {

constexpr std::chrono::milliseconds kTerminalInterval{200};
constexpr std::chrono::milliseconds kLineInterval{2'000};
constexpr int kBarWidth = 20;

}  // namespace

WorkProgress::WorkProgress(std::string verb, std::string unit, int64_t total, Output output,
                           std::FILE* out, Clock clock)
    : verb_(std::move(verb)),
      unit_(std::move(unit)),
      total_(total),
      output_(output),
      out_(out),
      clock_(clock ? std::move(clock) : Clock([] { return std::chrono::steady_clock::now(); })) {
  start_ = last_ = clock_();
}

WorkProgress::Output WorkProgress::OutputFor(bool silent) {
  if (silent) return Output::kSilent;
  return isatty(STDERR_FILENO) != 0 ? Output::kTerminal : Output::kLines;
}

std::string WorkProgress::FormatDuration(std::chrono::seconds s) {
  const long long t = s.count();
  char buf[32];
  if (t >= 3600) {
    std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", t / 3600, t / 60 % 60, t % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%lld:%02lld", t / 60, t % 60);
  }
  return buf;
}

std::string WorkProgress::Line(int64_t done, double rate, bool terminal) const {
  std::string count = std::to_string(done);
  if (total_ > 0) count += "/" + std::to_string(total_);
  count += " " + unit_;
  char rate_text[32];
  std::snprintf(rate_text, sizeof rate_text, rate >= 10 ? "%.0f/s" : "%.1f/s", rate);
  std::string eta;
  if (total_ > 0 && rate > 0 && done < total_) {
    eta = "ETA " + FormatDuration(std::chrono::seconds(
                       static_cast<int64_t>(std::ceil(static_cast<double>(total_ - done) / rate))));
  }
  if (!terminal) {
    return verb_ + ": " + count + ", " + rate_text + (eta.empty() ? "" : ", " + eta);
  }
  std::string bar;
  if (total_ > 0) {
    const int filled = static_cast<int>(std::min<int64_t>(kBarWidth, done * kBarWidth / total_));
    bar = "[" + std::string(static_cast<size_t>(filled), '#') +
          std::string(static_cast<size_t>(kBarWidth - filled), '-') + "]  ";
  }
  return verb_ + " " + bar + count + "  " + rate_text + (eta.empty() ? "" : "  " + eta);
}

void WorkProgress::Update(int64_t done) {
  if (output_ == Output::kSilent) return;
  const auto now = clock_();
  const auto interval = output_ == Output::kTerminal ? kTerminalInterval : kLineInterval;
  // The first report waits a whole line interval: short runs stay quiet.
  if (now - last_ < (shown_ ? interval : kLineInterval)) return;
  last_ = now;
  const double secs = std::chrono::duration<double>(now - start_).count();
  const double rate = secs > 0 ? static_cast<double>(done) / secs : 0;
  if (output_ == Output::kTerminal) {
    // \r and erase-line: the bar is redrawn in place.
    std::fprintf(out_, "\r\x1b[2K%s", Line(done, rate, true).c_str());
  } else {
    std::fprintf(out_, "%s\n", Line(done, rate, false).c_str());
  }
  std::fflush(out_);
  shown_ = true;
}

void WorkProgress::Finish() {
  if (output_ == Output::kTerminal && shown_) {
    std::fputs("\r\x1b[2K", out_);
    std::fflush(out_);
  }
  shown_ = false;
}

}  // namespace codex::cli
