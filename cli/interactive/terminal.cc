#include "cli/interactive/terminal.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <string_view>

namespace codex::cli {

namespace {

constexpr char kPasteOn[] = "\x1b[?2004h";
constexpr char kPasteOff[] = "\x1b[?2004l";

// State the signal handlers need: the terminal to restore before exiting.
int g_in_fd = -1;
int g_out_fd = -1;
struct termios g_saved {};
volatile sig_atomic_t g_have_saved = 0;
volatile sig_atomic_t g_resized = 0;
std::atomic<core::CancelToken*> g_ui_token{nullptr};
volatile sig_atomic_t g_ui_interrupts = 0;

void RestoreForExit() {
  if (!g_have_saved) return;
  (void)!::write(g_out_fd, kPasteOff, sizeof kPasteOff - 1);
  ::tcsetattr(g_in_fd, TCSAFLUSH, &g_saved);
}

void OnWinch(int) { g_resized = 1; }

void OnInterrupt(int sig) {
  g_ui_interrupts = g_ui_interrupts + 1;
  if (g_ui_interrupts > 1 || sig == SIGTERM || sig == SIGHUP) {
    RestoreForExit();
    constexpr char kMsg[] = "\r\n\x1b[Kinterrupted\r\n";
    (void)!::write(g_out_fd >= 0 ? g_out_fd : STDERR_FILENO, kMsg, sizeof kMsg - 1);
    _exit(128 + sig);
  }
  if (core::CancelToken* token = g_ui_token.load()) token->Cancel();
}

// Restores the terminal on SIGTERM/SIGHUP outside turns too.
void OnTerminate(int sig) {
  RestoreForExit();
  _exit(128 + sig);
}

void Handle(int sig, void (*handler)(int)) {
  struct sigaction sa {};
  sa.sa_handler = handler;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: poll() wakes up with EINTR
  sigaction(sig, &sa, nullptr);
}

}  // namespace

Result<std::unique_ptr<Terminal>> Terminal::Open(int in_fd, int out_fd) {
  if (!isatty(in_fd)) return FailedPreconditionError("standard input is not a terminal");
  std::unique_ptr<Terminal> t(new Terminal(in_fd, out_fd));
  if (tcgetattr(in_fd, &t->saved_) != 0) {
    return FailedPreconditionError("cannot read the terminal settings");
  }
  g_in_fd = in_fd;
  g_out_fd = out_fd;
  g_saved = t->saved_;
  g_have_saved = 1;
  Handle(SIGWINCH, OnWinch);
  Handle(SIGTERM, OnTerminate);
  Handle(SIGHUP, OnTerminate);
  if (::pipe2(t->wake_, O_CLOEXEC | O_NONBLOCK) != 0) {
    return FailedPreconditionError("cannot create a pipe for the terminal");
  }
  t->Apply(CtrlC::kAsKey);
  t->Write(kPasteOn);
  t->reflows_ = TerminalReflows([](const char* name) { return std::getenv(name); });
  return t;
}

Terminal::~Terminal() {
  Write(kPasteOff);
  tcsetattr(in_fd_, TCSAFLUSH, &saved_);
  g_have_saved = 0;
  signal(SIGWINCH, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  signal(SIGHUP, SIG_DFL);
  signal(SIGINT, SIG_DFL);
  for (int fd : wake_) {
    if (fd >= 0) ::close(fd);
  }
}

void Terminal::Wake() {
  char b = 1;
  (void)!::write(wake_[1], &b, 1);  // a full pipe already wakes the reader
}

void Terminal::Apply(CtrlC mode) {
  struct termios raw = saved_;
  raw.c_iflag &= ~static_cast<tcflag_t>(BRKINT | ICRNL | INPCK | ISTRIP | IXON);
  raw.c_cflag |= CS8;
  raw.c_lflag &= ~static_cast<tcflag_t>(ECHO | ICANON | IEXTEN | ISIG);
  if (mode == CtrlC::kAsSignal) raw.c_lflag |= ISIG;
  raw.c_cc[VMIN] = 1;
  raw.c_cc[VTIME] = 0;
  // TCSADRAIN keeps type-ahead: keys typed while a turn ran reach the prompt.
  tcsetattr(in_fd_, TCSADRAIN, &raw);
}

void Terminal::SetCtrlC(CtrlC mode) { Apply(mode); }

void Terminal::WriteLocked(std::string_view s) {
  ++writes_;
  while (!s.empty()) {
    ssize_t n = ::write(out_fd_, s.data(), s.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return;  // the terminal is gone; nothing useful to do
    }
    s.remove_prefix(static_cast<size_t>(n));
  }
}

void Terminal::Write(std::string_view s) {
  std::lock_guard<std::mutex> lock(write_mutex_);
  WriteLocked(s);
}

ReadStatus Terminal::Read(std::string* out, int timeout_ms) {
  while (true) {
    if (g_resized) {
      g_resized = 0;
      return ReadStatus::kResized;
    }
    struct pollfd p[2]{};
    p[0].fd = in_fd_;
    p[0].events = POLLIN;
    p[1].fd = wake_[0];
    p[1].events = POLLIN;
    int r = ::poll(p, 2, timeout_ms);
    if (r < 0) {
      if (errno == EINTR) continue;
      return ReadStatus::kEof;
    }
    if (r == 0) return ReadStatus::kTimeout;
    if (p[1].revents & POLLIN) {
      char drain[64];
      while (::read(wake_[0], drain, sizeof drain) > 0) {
      }
      return ReadStatus::kWoken;
    }
    char buf[4096];
    ssize_t n = ::read(in_fd_, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return ReadStatus::kEof;
    }
    if (n == 0) return ReadStatus::kEof;
    out->append(buf, static_cast<size_t>(n));
    return ReadStatus::kData;
  }
}

int Terminal::Columns() const {
  struct winsize ws {};
  if (ioctl(out_fd_, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  if (ioctl(in_fd_, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  return 80;
}

int Terminal::Rows() const {
  struct winsize ws {};
  if (ioctl(out_fd_, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0) return ws.ws_row;
  if (ioctl(in_fd_, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0) return ws.ws_row;
  return 24;
}

TurnInterrupt::TurnInterrupt(core::CancelToken* token) {
  g_ui_token.store(token);
  g_ui_interrupts = 0;
  Handle(SIGINT, OnInterrupt);
}

TurnInterrupt::~TurnInterrupt() {
  signal(SIGINT, SIG_IGN);
  g_ui_token.store(nullptr);
}

}  // namespace codex::cli

namespace codex::cli {

bool TerminalReflows(const std::function<const char*(const char*)>& getenv) {
  auto set = [&](const char* name) {
    const char* v = getenv(name);
    return v != nullptr && *v != '\0';
  };
  auto value = [&](const char* name) {
    const char* v = getenv(name);
    return std::string_view(v == nullptr ? "" : v);
  };
  // A multiplexer is the terminal the program talks to: its rules count.
  if (set("TMUX")) return true;
  if (set("STY")) return false;  // GNU screen keeps its lines as they are
  for (const char* name : {"VTE_VERSION", "KITTY_WINDOW_ID", "WEZTERM_PANE", "ALACRITTY_WINDOW_ID",
                           "ALACRITTY_SOCKET", "KONSOLE_VERSION", "WT_SESSION"}) {
    if (set(name)) return true;
  }
  const std::string_view program = value("TERM_PROGRAM");
  for (std::string_view p :
       {"iTerm.app", "Apple_Terminal", "WezTerm", "vscode", "ghostty", "tmux"}) {
    if (program == p) return true;
  }
  const std::string_view term = value("TERM");
  for (std::string_view t :
       {"tmux", "xterm-kitty", "alacritty", "foot", "wezterm", "xterm-ghostty"}) {
    if (term.substr(0, t.size()) == t) return true;
  }
  return false;
}

}  // namespace codex::cli
