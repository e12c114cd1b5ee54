// Support for tests that drive a program through a pseudo-terminal, the way
// a person at a terminal would: PtyProcess runs a child on a new pty
// (forkpty), writes keystrokes to it and feeds what it prints into a
// Screen, a small model of a VT100-style terminal (cursor motion, erase,
// deferred wrap, scrolling with scrollback; colours and modes ignored), so
// tests assert on the text a user would see rather than on escape codes.
//
//   auto p = PtyProcess::Spawn(env.CodexCommand({}));
//   REQUIRE((*p)->WaitForText("› ", 10s).ok());
//   (*p)->Write("hello\r");
//   REQUIRE((*p)->WaitForText("Hello from the script", 10s).ok());
//
// Neither class is thread-safe. PtyProcess's destructor SIGKILLs the child's
// process group and reaps it.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "tests/e2e_support.h"

namespace codex::testing {

class Screen {
 public:
  Screen(int rows, int cols);

  void Feed(std::string_view bytes);
  // Changes the size the way a terminal that does not re-wrap does (xterm):
  // rows are cut or padded at the right, lines leave at the top when the
  // screen gets shorter, the cursor is kept inside.
  void Resize(int rows, int cols);

  // Scrollback plus the visible rows, each without trailing blanks, joined
  // with "\n"; trailing empty rows are dropped.
  std::string Text() const;
  // Only the visible rows, joined the same way.
  std::string Visible() const;
  std::string Row(int row) const;
  int cursor_row() const { return row_; }
  int cursor_col() const { return col_; }
  int rows() const { return rows_; }
  int cols() const { return cols_; }

 private:
  void Put(std::string cell, int width);
  void LineFeed();
  void Csi(std::string_view params, char final);
  std::string RowText(const std::vector<std::string>& row) const;

  int rows_;
  int cols_;
  std::vector<std::vector<std::string>> grid_;  // "" = blank, "\x01" = wide continuation
  std::vector<std::string> scrollback_;
  int row_ = 0;
  int col_ = 0;
  bool wrap_pending_ = false;
  int saved_row_ = 0;
  int saved_col_ = 0;
  std::string pending_;  // an incomplete escape or UTF-8 sequence
};

class PtyProcess {
 public:
  // Runs options.argv on a new pty of `rows` x `cols` (TERM=xterm-256color
  // unless options.env sets TERM), in options.cwd with options.env added.
  static Result<std::unique_ptr<PtyProcess>> Spawn(const ProcessOptions& options, int rows = 30,
                                                   int cols = 100);
  ~PtyProcess();
  PtyProcess(const PtyProcess&) = delete;
  PtyProcess& operator=(const PtyProcess&) = delete;

  pid_t pid() const { return pid_; }

  // Types `bytes` (keys as a terminal sends them: "\r" for Enter, "\x03" for Ctrl-C).
  Status Write(std::string_view bytes);
  // Resizes the terminal (the child gets SIGWINCH) and the screen model.
  Status Resize(int rows, int cols);

  // Reads output until `done(screen)` holds; kDeadlineExceeded after
  // `timeout` (the message holds the screen), kUnavailable if the child
  // exits first without satisfying it.
  Status WaitFor(const std::function<bool(const Screen&)>& done, std::chrono::milliseconds timeout);
  // Waits until `text` appears in Text() at or after byte `from` of it.
  Status WaitForText(std::string_view text, std::chrono::milliseconds timeout, size_t from = 0);
  // Waits for the child to exit; its exit code (-1 when killed by a signal).
  Result<int> WaitExit(std::chrono::milliseconds timeout);

  const Screen& screen() const { return screen_; }
  // Everything the child printed, escape codes included.
  const std::string& raw() const { return raw_; }

 private:
  PtyProcess(int rows, int cols) : screen_(rows, cols) {}
  // Reads what is available within `wait_ms`; false once the pty is closed.
  bool Pump(int wait_ms);
  bool Reap(bool block);

  pid_t pid_ = -1;
  int master_ = -1;
  Screen screen_;
  std::string raw_;
  bool closed_ = false;
  bool exited_ = false;
  int wait_status_ = 0;
};

}  // namespace codex::testing
