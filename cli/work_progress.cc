#include "cli/work_progress.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string_view>

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
  if (isatty(STDERR_FILENO) == 0) return Output::kLines;
  // A terminal without cursor control (an editor's shell buffer) shows
  // "\r\x1b[2K" as text: plain lines there.
  const char* term = std::getenv("TERM");
  if (term != nullptr && std::string_view(term) == "dumb") return Output::kLines;
  return Output::kTerminal;
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

std::string WorkProgress::Line(int64_t done, double rate, bool terminal, bool bar) const {
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
  std::string bar_text;
  if (bar && total_ > 0) {
    const int filled = static_cast<int>(std::min<int64_t>(kBarWidth, done * kBarWidth / total_));
    bar_text = "[" + std::string(static_cast<size_t>(filled), '#') +
               std::string(static_cast<size_t>(kBarWidth - filled), '-') + "]  ";
  }
  return verb_ + " " + bar_text + count + "  " + rate_text + (eta.empty() ? "" : "  " + eta);
}

std::string WorkProgress::FittedLine(int64_t done, double rate, int columns) const {
  std::string line = Line(done, rate, true, true);
  if (columns <= 0) return line;
  // The last column stays empty: writing it makes some terminals wrap.
  const size_t fit = static_cast<size_t>(std::max(columns - 1, 1));
  if (line.size() > fit) line = Line(done, rate, true, false);
  if (line.size() > fit) line.resize(fit);  // ASCII only: verb, unit and figures
  return line;
}

void WorkProgress::Update(int64_t done) {
  if (output_ == Output::kSilent) return;
  const auto now = clock_();
  const auto interval = output_ == Output::kTerminal ? kTerminalInterval : kLineInterval;
  // The first report waits a whole line interval: short runs stay quiet.
  if (!cleared_ && now - last_ < (shown_ ? interval : kLineInterval)) return;
  last_ = now;
  cleared_ = false;
  const double secs = std::chrono::duration<double>(now - start_).count();
  const double rate = secs > 0 ? static_cast<double>(done) / secs : 0;
  if (output_ == Output::kTerminal) {
    winsize ws{};
    const int columns = ::ioctl(fileno(out_), TIOCGWINSZ, &ws) == 0 ? ws.ws_col : 0;
    // \r and erase-line: the bar is redrawn in place.
    std::fprintf(out_, "\r\x1b[2K%s", FittedLine(done, rate, columns).c_str());
  } else {
    std::fprintf(out_, "%s\n", Line(done, rate, false, false).c_str());
  }
  std::fflush(out_);
  shown_ = true;
}

void WorkProgress::Clear() {
  if (output_ != Output::kTerminal || !shown_ || cleared_) return;
  std::fputs("\r\x1b[2K", out_);
  std::fflush(out_);
  cleared_ = true;
}

void WorkProgress::Finish() {
  if (output_ == Output::kTerminal && shown_ && !cleared_) {
    std::fputs("\r\x1b[2K", out_);
    std::fflush(out_);
  }
  shown_ = false;
  cleared_ = false;
}

}  // namespace codex::cli
