// WorkProgress (cli/work_progress.h) with a clock the test moves.
#include "cli/work_progress.h"

#include <pty.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <string>

using codex::cli::WorkProgress;
using namespace std::chrono_literals;

namespace {

struct Capture {
  std::FILE* f = std::tmpfile();
  ~Capture() { std::fclose(f); }
  std::string Text() const {
    std::fflush(f);
    std::rewind(f);
    std::string s;
    for (int c; (c = std::fgetc(f)) != EOF;) s += static_cast<char>(c);
    return s;
  }
};

struct FakeClock {
  std::chrono::steady_clock::time_point now{};
  WorkProgress::Clock Fn() {
    return [this] { return now; };
  }
};

}  // namespace

TEST_CASE("Plain lines every 2 s with count, rate and time left; nothing for a short run") {
  Capture out;
  FakeClock clock;
  WorkProgress p("importing", "files", 1000, WorkProgress::Output::kLines, out.f, clock.Fn());
  for (int i = 1; i <= 100; ++i) {
    clock.now += 10ms;  // 1 s for 100 files
    p.Update(i);
  }
  CHECK(out.Text().empty());
  clock.now += 1s;  // 2 s, 100 files: 50/s, 900 left = 18 s
  p.Update(100);
  CHECK(out.Text() == "importing: 100/1000 files, 50/s, ETA 0:18\n");
  clock.now += 1s;  // within the interval: no new line
  p.Update(150);
  CHECK(out.Text() == "importing: 100/1000 files, 50/s, ETA 0:18\n");
  clock.now += 1s;  // 4 s, 200 files
  p.Update(200);
  p.Finish();
  CHECK(out.Text() ==
        "importing: 100/1000 files, 50/s, ETA 0:18\nimporting: 200/1000 files, 50/s, ETA 0:16\n");
}

TEST_CASE("A terminal gets one bar redrawn in place, cleared at the end") {
  Capture out;
  FakeClock clock;
  WorkProgress p("migrating", "sessions", 40, WorkProgress::Output::kTerminal, out.f, clock.Fn());
  clock.now += 2s;
  p.Update(10);
  clock.now += 100ms;  // faster than a redraw
  p.Update(11);
  clock.now += 200ms;
  p.Update(20);
  p.Finish();
  const std::string text = out.Text();
  CHECK(text ==
        "\r\x1b[2Kmigrating [#####---------------]  10/40 sessions  5.0/s  ETA 0:06"
        "\r\x1b[2Kmigrating [##########----------]  20/40 sessions  8.7/s  ETA 0:03"
        "\r\x1b[2K");
  CHECK(text.find('\n') == std::string::npos);
}

TEST_CASE("Silent progress (--json) prints nothing; durations read as h:mm:ss") {
  Capture out;
  FakeClock clock;
  WorkProgress p("purging", "sessions", 10, WorkProgress::Output::kSilent, out.f, clock.Fn());
  clock.now += 10s;
  p.Update(5);
  p.Finish();
  CHECK(out.Text().empty());
  CHECK(WorkProgress::FormatDuration(3727s) == "1:02:07");
  CHECK(WorkProgress::FormatDuration(37s) == "0:37");
}

TEST_CASE("On a terminal the bar fits its width at each redraw, and a resize is followed") {
  int master = -1, slave = -1;
  winsize ws{};
  ws.ws_row = 24;
  ws.ws_col = 80;
  REQUIRE(::openpty(&master, &slave, nullptr, nullptr, &ws) == 0);
  std::FILE* out = ::fdopen(slave, "w");
  REQUIRE(out != nullptr);
  auto drain = [&] {
    std::string got;
    char buf[4096];
    for (ssize_t n; (n = ::read(master, buf, sizeof buf)) > 0;) {
      got.append(buf, static_cast<size_t>(n));
      if (n < static_cast<ssize_t>(sizeof buf)) break;
    }
    return got;
  };
  FakeClock clock;
  WorkProgress p("importing", "files", 20001, WorkProgress::Output::kTerminal, out, clock.Fn());
  clock.now += 2s;
  p.Update(1234);
  CHECK(drain() == "\r\x1b[2Kimporting [#-------------------]  1234/20001 files  617/s  ETA 0:31");
  ws.ws_col = 40;  // narrower: the bar goes first
  REQUIRE(::ioctl(master, TIOCSWINSZ, &ws) == 0);
  clock.now += 1s;
  p.Update(2000);
  CHECK(drain() == "\r\x1b[2Kimporting 2000/20001 files  667/s");  // and then the ETA
  ws.ws_col = 20;  // narrower still: the count alone, in 19 columns
  REQUIRE(::ioctl(master, TIOCSWINSZ, &ws) == 0);
  clock.now += 1s;
  p.Update(3000);
  CHECK(drain() == "\r\x1b[2K3000/20001 files");
  // A line the command prints: the bar is erased first, drawn again at once after it.
  p.Clear();
  CHECK(drain() == "\r\x1b[2K");
  clock.now += 10ms;
  p.Update(3001);
  CHECK(drain() == "\r\x1b[2K3001/20001 files");
  p.Finish();
  CHECK(drain() == "\r\x1b[2K");
  std::fclose(out);
  ::close(master);
}

TEST_CASE("One big unit: the bar, the rate and the ETA move with the part done of it") {
  Capture out;
  FakeClock clock;
  WorkProgress p("importing", "files", 1, WorkProgress::Output::kLines, out.f, clock.Fn());
  clock.now += 2s;
  p.Update(0, 0.5);  // half the only file in 2 s: 0.25 files/s, 2 s left
  clock.now += 2s;
  p.Update(0, 0.75);
  CHECK(out.Text() ==
        "importing: 0/1 files, 0.2/s, ETA 0:02\nimporting: 0/1 files, 0.2/s, ETA 0:02\n");
  Capture bar;
  WorkProgress t("importing", "files", 1, WorkProgress::Output::kTerminal, bar.f, clock.Fn());
  clock.now += 2s;
  t.Update(0, 0.5);
  CHECK(bar.Text() == "\r\x1b[2Kimporting [##########----------]  0/1 files  0.2/s  ETA 0:02");
}
