// TmuxCodex: codex in a detached tmux session, for end-to-end tests of the
// interactive UI on a terminal that re-wraps its lines as real ones do
// (tests/interactive_e2e_test.cc, tests/interactive_daily_e2e_test.cc).
#pragma once

#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <functional>
#include <regex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "testing/skip.h"
#include "tests/e2e_support.h"

namespace codex::testing {

// codex in a detached tmux session of its own (a private server socket):
// tmux re-wraps the lines on its screen when the width changes, as VTE,
// kitty and most terminals do, unlike the Screen model (xterm's rules).
class TmuxCodex {
 public:
  static constexpr std::chrono::seconds kTmuxWait{20};

  // `shell_lines` lines are printed first, as a terminal a user starts codex
  // in holds a shell's output: when a narrower window re-wraps the screen,
  // tmux moves its top rows (as many as the re-wrapping added) into the
  // scrollback, where no program can erase them; on a screen that was full,
  // those are the shell's rows.
  // `extra_env` is added to codex's environment.
  TmuxCodex(CodexTestEnv& env, std::vector<std::string> args, int cols, int rows,
            int shell_lines = 0, std::vector<std::pair<std::string, std::string>> extra_env = {})
      : socket_(NextSocket(env)) {
    ProcessOptions codex = env.CodexCommand(std::move(args));
    for (auto& [k, v] : extra_env) codex.env[k] = v;
    std::vector<std::string> argv = {"new-session", "-d",
                                     "-s",          "t",
                                     "-x",          std::to_string(cols),
                                     "-y",          std::to_string(rows),
                                     "-c",          codex.cwd.string()};
    if (shell_lines > 0) {
      for (const char* a : {"sh", "-c", "seq 1 \"$0\" | sed 's/^/shell line /'; exec \"$@\""}) {
        argv.push_back(a);
      }
      argv.push_back(std::to_string(shell_lines));
    }
    argv.push_back("env");
    for (const auto& name : codex.unset_env) {
      argv.push_back("-u");
      argv.push_back(name);
    }
    for (const auto& [k, v] : codex.env) argv.push_back(k + "=" + v);
    argv.insert(argv.end(), codex.argv.begin(), codex.argv.end());
    auto started = Tmux(argv);
    INFO(started.err);
    REQUIRE(started.exit_code == 0);
    // The window keeps the size it is given, not its (absent) client's.
    REQUIRE(Tmux({"set-option", "-g", "window-size", "manual"}).exit_code == 0);
    // What codex printed last stays readable after it exits.
    REQUIRE(Tmux({"set-option", "-g", "remain-on-exit", "on"}).exit_code == 0);
  }
  // kill-server returns before the server has gone; a later TmuxCodex in
  // the same test uses a socket of its own, never one whose server is still
  // exiting (a client that reaches that one fails: "server exited
  // unexpectedly").
  ~TmuxCodex() { (void)Tmux({"kill-server"}); }

  static bool Available() {
    ProcessOptions o;
    o.argv = {"tmux", "-V"};
    auto r = RunProcess(o);
    return r.ok() && r->exit_code == 0;
  }
  // The one skip of the tmux suites: true (after SkipPart, testing/skip.h,
  // which fails under CI) when tmux is absent; `what` says what goes untested.
  static bool Missing(std::string_view what) {
    if (Available()) return false;
    SkipPart("tmux is not installed (scripts/install-deps.sh): " + std::string(what));
    return true;
  }
  void Type(const std::string& text) {
    REQUIRE(Tmux({"send-keys", "-t", "t", "-l", text}).exit_code == 0);
  }
  void Key(const std::string& key) { REQUIRE(Tmux({"send-keys", "-t", "t", key}).exit_code == 0); }
  // Types `text` and presses Enter: what a user does to send a prompt or a command.
  void Submit(const std::string& text) {
    Type(text);
    Key("Enter");
  }
  // Resizes the window, then waits until codex's terminal has the new size:
  // tmux re-wraps its screen at once but tells the pty (SIGWINCH) up to
  // 250 ms later, and what codex draws in between is laid out for the old
  // width on the re-wrapped screen.
  void Resize(int cols) {
    REQUIRE(Tmux({"resize-window", "-t", "t", "-x", std::to_string(cols)}).exit_code == 0);
    std::string tty = Tmux({"display", "-p", "-t", "t", "#{pane_tty}"}).out;
    while (!tty.empty() && tty.back() == '\n') tty.pop_back();
    const auto end = std::chrono::steady_clock::now() + kTmuxWait;
    while (std::chrono::steady_clock::now() < end) {
      int fd = ::open(tty.c_str(), O_RDONLY | O_NOCTTY | O_CLOEXEC);
      REQUIRE(fd >= 0);
      struct winsize ws {};
      const int r = ::ioctl(fd, TIOCGWINSZ, &ws);
      ::close(fd);
      if (r == 0 && ws.ws_col == cols) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    FAIL("the pane's terminal never got width " << cols);
  }
  // The pane's history and screen, one row a line (wrapped rows apart).
  std::string Text() { return Tmux({"capture-pane", "-p", "-t", "t", "-S", "-"}).out; }
  void WaitFor(const std::function<bool(const std::string&)>& done) {
    const auto end = std::chrono::steady_clock::now() + kTmuxWait;
    std::string text;
    while (std::chrono::steady_clock::now() < end) {
      text = Text();
      if (done(text)) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    INFO(text);
    FAIL("the tmux pane never showed what was waited for");
  }
  void WaitForText(const std::string& needle) {
    WaitFor([&](const std::string& t) { return t.find(needle) != std::string::npos; });
  }
  // The same, on the pane's rows with the rows the terminal wrapped joined.
  void WaitForJoined(const std::string& needle) {
    WaitFor([&](const std::string&) { return Joined().find(needle) != std::string::npos; });
  }
  // The pane's history and screen with its colours as escape sequences.
  std::string EscapedText() { return Tmux({"capture-pane", "-p", "-e", "-t", "t", "-S", "-"}).out; }
  // The visible screen only, one row a line, and with wrapped rows joined.
  std::string Screen() { return Tmux({"capture-pane", "-p", "-t", "t"}).out; }
  std::string Joined() { return Tmux({"capture-pane", "-p", "-J", "-t", "t", "-S", "-"}).out; }
  // What the screen shows from the cursor to the end of its row (trailing
  // blanks dropped), i.e. the characters right of where the user is typing.
  std::string AtCursor() {
    std::string pos = Tmux({"display", "-p", "-t", "t", "#{cursor_x} #{cursor_y}"}).out;
    int x = 0, y = 0;
    REQUIRE(std::sscanf(pos.c_str(), "%d %d", &x, &y) == 2);
    std::string screen = Screen();
    size_t start = 0;
    for (int r = 0; r < y; ++r) {
      start = screen.find('\n', start);
      REQUIRE(start != std::string::npos);
      ++start;
    }
    std::string row = screen.substr(start, screen.find('\n', start) - start);
    // Column x: characters by their width (CJK and emoji take two columns).
    size_t i = 0;
    for (int col = 0; col < x && i < row.size();) {
      const unsigned char lead = static_cast<unsigned char>(row[i]);
      col += (lead >= 0xE3 && lead <= 0xE9) || lead >= 0xF0 ? 2 : 1;
      ++i;
      while (i < row.size() && (static_cast<unsigned char>(row[i]) & 0xC0) == 0x80) ++i;
    }
    std::string rest = row.substr(std::min(i, row.size()));
    while (!rest.empty() && rest.back() == ' ') rest.pop_back();
    return rest;
  }
  // The pane's title (what an OSC 0/2 sequence written to the terminal set).
  std::string PaneTitle() { return Tmux({"display", "-p", "-t", "t", "#{pane_title}"}).out; }
  // Waits until the screen stops changing (the spinner's seconds aside).
  void WaitStill() {
    std::string last;
    int same = 0;
    const auto end = std::chrono::steady_clock::now() + kTmuxWait;
    while (std::chrono::steady_clock::now() < end && same < 3) {
      std::this_thread::sleep_for(std::chrono::milliseconds(150));
      std::string now = std::regex_replace(Text(), std::regex("[0-9]+s"), "Ns");
      now = std::regex_replace(now, std::regex("[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]"), "*");
      same = now == last ? same + 1 : 0;
      last = now;
    }
  }

 private:
  ProcessResult Tmux(std::vector<std::string> args) {
    ProcessOptions o;
    o.argv = {"tmux", "-S", socket_};
    o.argv.insert(o.argv.end(), args.begin(), args.end());
    auto r = RunProcess(o);
    REQUIRE(r.ok());
    return *r;
  }
  static std::string NextSocket(CodexTestEnv& env) {
    static int count = 0;
    return (env.workdir().parent_path() / ("tmux" + std::to_string(++count) + ".sock")).string();
  }
  std::string socket_;
};

}  // namespace codex::testing
