// Terminal: the controlling terminal of an interactive session, in raw
// mode for as long as the object lives.
//
// Open() saves the termios state and switches to raw input (no echo, no
// line buffering, no CR->NL translation, no flow control; output post-
// processing stays on so "\n" still starts a new line), and turns bracketed
// paste on; the destructor restores everything. Ctrl-C is a key while the
// prompt is read (CtrlC::kAsKey) and a SIGINT while a turn runs
// (CtrlC::kAsSignal, see TurnInterrupt). Writes are serialised by a mutex, so
// the spinner thread and the turn thread can both draw. Everything else is
// for the thread that owns the session.
#pragma once

#include <termios.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "base/status.h"
#include "core/cancel.h"

namespace codex::cli {

enum class CtrlC { kAsKey, kAsSignal };

// Erases from the start of the cursor's row to the end of the screen. Not
// "\r\x1b[J": from the top-left corner that is a whole-screen clear, which
// tmux (scroll-on-clear) answers by pushing the screen into the scrollback,
// leaving a copy of what was erased there.
inline constexpr char kEraseToEnd[] = "\r\x1b[C\x1b[J\r\x1b[K";

enum class ReadStatus {
  kData,     // bytes were appended
  kTimeout,  // nothing arrived in time
  kResized,  // the window size changed (SIGWINCH); redraw
  kWoken,    // another thread called Wake()
  kEof,      // the terminal hung up
};

class Terminal {
 public:
  // kFailedPrecondition when `in_fd` is not a terminal.
  static Result<std::unique_ptr<Terminal>> Open(int in_fd, int out_fd);
  ~Terminal();
  Terminal(const Terminal&) = delete;
  Terminal& operator=(const Terminal&) = delete;

  void SetCtrlC(CtrlC mode);

  // Writes all of `s` (thread-safe).
  void Write(std::string_view s);
  // Holds the write lock while the caller composes a multi-part drawing.
  std::unique_lock<std::mutex> Lock() { return std::unique_lock<std::mutex>(write_mutex_); }
  // Writes without taking the lock (the caller holds Lock()).
  void WriteLocked(std::string_view s);
  // How many writes were made so far (the caller holds Lock()): a drawer
  // that remembers what it left on the screen can tell whether anyone else
  // wrote since.
  uint64_t writes() const { return writes_; }

  // Appends what is available on the input to `*out`, waiting up to
  // `timeout_ms` (-1 = until something happens).
  ReadStatus Read(std::string* out, int timeout_ms);
  // Makes a Read() in progress (or the next one) return kWoken. Thread-safe;
  // the turn thread uses it to hand work to the thread reading the keys.
  void Wake();

  int Columns() const;
  int Rows() const;
  // Whether the terminal re-wraps lines already on the screen when its width
  // changes (see TerminalReflows); decided once, at Open.
  bool reflows() const { return reflows_; }

 private:
  Terminal(int in_fd, int out_fd) : in_fd_(in_fd), out_fd_(out_fd) {}
  void Apply(CtrlC mode);

  int in_fd_;
  int out_fd_;
  int wake_[2] = {-1, -1};  // a pipe: Wake() writes, Read() polls
  struct termios saved_ {};
  std::mutex write_mutex_;
  uint64_t writes_ = 0;  // under write_mutex_
  bool reflows_ = false;
};

// Whether the terminal described by `env` (the environment: TMUX, TERM,
// TERM_PROGRAM, VTE_VERSION ...) re-wraps its lines on a resize: tmux, VTE
// (GNOME Terminal, Tilix ...), kitty, WezTerm, Alacritty, foot, Konsole,
// iTerm2, Apple Terminal, Windows Terminal, VS Code, Ghostty do; xterm, the
// Linux console, st and anything unknown are taken not to (a wrong "no"
// leaves a stale line on the screen; a wrong "yes" would erase transcript
// lines). A terminal cannot be asked which it does.
bool TerminalReflows(const std::function<const char*(const char*)>& getenv);

// While alive, SIGINT cancels `token` (the turn stops and is recorded as
// interrupted); a second SIGINT restores the terminal and exits with 130.
// Only one may exist at a time; `token` must outlive it.
class TurnInterrupt {
 public:
  explicit TurnInterrupt(core::CancelToken* token);
  ~TurnInterrupt();
  TurnInterrupt(const TurnInterrupt&) = delete;
  TurnInterrupt& operator=(const TurnInterrupt&) = delete;
};

}  // namespace codex::cli
