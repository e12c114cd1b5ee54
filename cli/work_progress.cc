#include "cli/work_progress.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string_view>
#include <vector>

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

WorkProgress::Parts WorkProgress::PartsOf(int64_t done, double progress, double rate) const {
  Parts p;
  p.count = std::to_string(done);
  if (total_ > 0) p.count += "/" + std::to_string(total_);
  p.count += " " + unit_;
  char rate_text[32];
  std::snprintf(rate_text, sizeof rate_text, rate >= 10 ? "%.0f/s" : "%.1f/s", rate);
  p.rate = rate_text;
  if (total_ > 0 && rate > 0 && done < total_) {
    p.eta = "ETA " + FormatDuration(std::chrono::seconds(static_cast<int64_t>(
                         std::ceil((static_cast<double>(total_) - progress) / rate))));
  }
  if (total_ > 0) {
    const int filled = static_cast<int>(std::min<double>(
        kBarWidth, std::floor(progress * kBarWidth / static_cast<double>(total_))));
    p.bar = "[" + std::string(static_cast<size_t>(filled), '#') +
            std::string(static_cast<size_t>(kBarWidth - filled), '-') + "]";
  }
  return p;
}

std::string WorkProgress::Line(int64_t done, double progress, double rate) const {
  const Parts p = PartsOf(done, progress, rate);
  return verb_ + ": " + p.count + ", " + p.rate + (p.eta.empty() ? "" : ", " + p.eta);
}

std::string WorkProgress::FittedLine(int64_t done, double progress, double rate,
                                     int columns) const {
  const Parts p = PartsOf(done, progress, rate);
  auto join = [](std::initializer_list<const std::string*> parts) {
    std::string out;
    for (const std::string* part : parts) {
      if (part->empty()) continue;
      if (!out.empty()) out += "  ";
      out += *part;
    }
    return out;
  };
  // "importing [###---]  1234/20001 files  512/s  ETA 0:37"; the verb and the
  // bar are one space apart.
  const std::string verb_bar = p.bar.empty() ? verb_ : verb_ + " " + p.bar;
  const std::string verb_count = verb_ + " " + p.count;
  const std::vector<std::string> widest_first = {join({&verb_bar, &p.count, &p.rate, &p.eta}),
                                                 join({&verb_count, &p.rate, &p.eta}),
                                                 join({&verb_count, &p.rate}), verb_count, p.count};
  if (columns <= 0) return widest_first.front();
  // The last column stays empty: writing it makes some terminals wrap.
  const size_t fit = static_cast<size_t>(std::max(columns - 1, 1));
  // Narrower terminals drop the bar, then the ETA, then the rate, then the verb.
  for (const std::string& line : widest_first) {
    if (line.size() <= fit) return line;
  }
  return p.count.substr(0, fit);  // ASCII only: figures and the unit
}

void WorkProgress::Update(int64_t done, double part) {
  if (output_ == Output::kSilent) return;
  const auto now = clock_();
  const auto interval = output_ == Output::kTerminal ? kTerminalInterval : kLineInterval;
  // The first report waits a whole line interval: short runs stay quiet.
  if (!cleared_ && now - last_ < (shown_ ? interval : kLineInterval)) return;
  last_ = now;
  cleared_ = false;
  const double secs = std::chrono::duration<double>(now - start_).count();
  const double progress = static_cast<double>(done) + std::clamp(part, 0.0, 1.0);
  const double rate = secs > 0 ? progress / secs : 0;
  if (output_ == Output::kTerminal) {
    winsize ws{};
    const int columns = ::ioctl(fileno(out_), TIOCGWINSZ, &ws) == 0 ? ws.ws_col : 0;
    // \r and erase-line: the bar is redrawn in place.
    std::fprintf(out_, "\r\x1b[2K%s", FittedLine(done, progress, rate, columns).c_str());
  } else {
    std::fprintf(out_, "%s\n", Line(done, progress, rate).c_str());
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
