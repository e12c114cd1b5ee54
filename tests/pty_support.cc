#include "tests/pty_support.h"

#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>

namespace codex::testing {

namespace {

using Clock = std::chrono::steady_clock;

int RemainingMs(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return static_cast<int>(std::max<int64_t>(0, left.count()));
}

size_t Utf8Len(unsigned char b) {
  return b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xe ? 3 : (b >> 3) == 0x1e ? 4 : 1;
}

// East Asian wide and emoji ranges, enough for tests.
int CellWidth(std::string_view cp) {
  auto b = static_cast<unsigned char>(cp[0]);
  if (b < 0x80) return 1;
  char32_t c = b & (0xffu >> (cp.size() + 1));
  for (size_t k = 1; k < cp.size(); ++k) c = (c << 6) | (static_cast<unsigned char>(cp[k]) & 0x3fu);
  if ((c >= 0x300 && c <= 0x36f) || (c >= 0x200b && c <= 0x200f) || (c >= 0xfe00 && c <= 0xfe0f) ||
      (c >= 0x1f3fb && c <= 0x1f3ff)) {
    return 0;
  }
  if ((c >= 0x1100 && c <= 0x115f) || (c >= 0x2e80 && c <= 0xa4cf) ||
      (c >= 0xac00 && c <= 0xd7a3) || (c >= 0xf900 && c <= 0xfaff) ||
      (c >= 0xff00 && c <= 0xff60) || (c >= 0x1f300 && c <= 0x1f64f) ||
      (c >= 0x1f900 && c <= 0x1f9ff)) {
    return 2;
  }
  return 1;
}

}  // namespace

Screen::Screen(int rows, int cols)
    : rows_(rows),
      cols_(cols),
      grid_(static_cast<size_t>(rows), std::vector<std::string>(static_cast<size_t>(cols))) {}

void Screen::Resize(int rows, int cols) {
  for (auto& line : grid_) line.resize(static_cast<size_t>(cols));
  while (static_cast<int>(grid_.size()) > rows) {
    // Like xterm: the lines above the cursor leave through the top first.
    if (row_ > 0) {
      scrollback_.push_back(RowText(grid_[0]));
      grid_.erase(grid_.begin());
      --row_;
    } else {
      grid_.pop_back();
    }
  }
  while (static_cast<int>(grid_.size()) < rows) grid_.emplace_back(static_cast<size_t>(cols));
  rows_ = rows;
  cols_ = cols;
  row_ = std::min(row_, rows_ - 1);
  col_ = std::min(col_, cols_ - 1);
  wrap_pending_ = false;
}

void Screen::LineFeed() {
  if (row_ == rows_ - 1) {
    scrollback_.push_back(RowText(grid_[0]));
    grid_.erase(grid_.begin());
    grid_.emplace_back(static_cast<size_t>(cols_));
  } else {
    ++row_;
  }
}

void Screen::Put(std::string cell, int width) {
  if (width == 0) {  // combining: attach to the previous cell
    if (col_ > 0) grid_[static_cast<size_t>(row_)][static_cast<size_t>(col_ - 1)] += cell;
    return;
  }
  if (wrap_pending_ || col_ + width > cols_) {
    col_ = 0;
    LineFeed();
    wrap_pending_ = false;
  }
  auto& line = grid_[static_cast<size_t>(row_)];
  line[static_cast<size_t>(col_)] = std::move(cell);
  if (width == 2 && col_ + 1 < cols_) line[static_cast<size_t>(col_ + 1)] = "\x01";
  col_ += width;
  if (col_ >= cols_) {
    col_ = cols_ - 1;
    wrap_pending_ = true;
  }
}

void Screen::Csi(std::string_view params, char final) {
  bool private_mode = !params.empty() && (params[0] == '?' || params[0] == '>' || params[0] == '<');
  if (private_mode) return;  // modes (bracketed paste, cursor keys, ...) do not change the text
  std::vector<int> p;
  int cur = -1;
  for (char c : params) {
    if (c >= '0' && c <= '9') {
      cur = (cur < 0 ? 0 : cur * 10) + (c - '0');
    } else if (c == ';') {
      p.push_back(cur);
      cur = -1;
    }
  }
  p.push_back(cur);
  auto arg = [&](size_t i, int def) { return i < p.size() && p[i] >= 0 ? p[i] : def; };
  auto clamp_cursor = [&] {
    row_ = std::clamp(row_, 0, rows_ - 1);
    col_ = std::clamp(col_, 0, cols_ - 1);
    wrap_pending_ = false;
  };
  auto clear = [&](int row, int from, int to) {
    auto& line = grid_[static_cast<size_t>(row)];
    for (int c = std::max(0, from); c < std::min(cols_, to); ++c)
      line[static_cast<size_t>(c)].clear();
  };
  switch (final) {
    case 'A':
      row_ -= std::max(1, arg(0, 1));
      clamp_cursor();
      break;
    case 'B':
      row_ += std::max(1, arg(0, 1));
      clamp_cursor();
      break;
    case 'C':
      col_ += std::max(1, arg(0, 1));
      clamp_cursor();
      break;
    case 'D':
      col_ -= std::max(1, arg(0, 1));
      clamp_cursor();
      break;
    case 'G':
      col_ = arg(0, 1) - 1;
      clamp_cursor();
      break;
    case 'H':
    case 'f':
      row_ = arg(0, 1) - 1;
      col_ = arg(1, 1) - 1;
      clamp_cursor();
      break;
    case 'K': {
      int mode = arg(0, 0);
      if (mode == 0) clear(row_, col_, cols_);
      if (mode == 1) clear(row_, 0, col_ + 1);
      if (mode == 2) clear(row_, 0, cols_);
      break;
    }
    case 'J': {
      int mode = arg(0, 0);
      if (mode == 0) {
        clear(row_, col_, cols_);
        for (int r = row_ + 1; r < rows_; ++r) clear(r, 0, cols_);
      } else if (mode == 1) {
        for (int r = 0; r < row_; ++r) clear(r, 0, cols_);
        clear(row_, 0, col_ + 1);
      } else if (mode == 2) {
        for (int r = 0; r < rows_; ++r) clear(r, 0, cols_);
      } else if (mode == 3) {
        scrollback_.clear();  // xterm's "erase saved lines"
      }
      break;
    }
    default:
      break;  // SGR and everything else: no effect on the text
  }
}

void Screen::Feed(std::string_view bytes) {
  std::string data = pending_ + std::string(bytes);
  pending_.clear();
  size_t i = 0;
  while (i < data.size()) {
    auto b = static_cast<unsigned char>(data[i]);
    if (b == 0x1b) {
      if (i + 1 >= data.size()) {
        pending_ = data.substr(i);
        return;
      }
      char c = data[i + 1];
      if (c == '[') {
        size_t j = i + 2;
        while (j < data.size() && !(data[j] >= 0x40 && data[j] <= 0x7e)) ++j;
        if (j >= data.size()) {
          pending_ = data.substr(i);
          return;
        }
        Csi(std::string_view(data).substr(i + 2, j - i - 2), data[j]);
        i = j + 1;
      } else if (c == ']') {
        size_t j = i + 2;
        while (j < data.size() && data[j] != '\a' &&
               !(data[j] == '\x1b' && j + 1 < data.size() && data[j + 1] == '\\'))
          ++j;
        if (j >= data.size()) {
          pending_ = data.substr(i);
          return;
        }
        i = j + (data[j] == '\a' ? 1 : 2);
      } else if (c == '7') {
        saved_row_ = row_;
        saved_col_ = col_;
        i += 2;
      } else if (c == '8') {
        row_ = saved_row_;
        col_ = saved_col_;
        wrap_pending_ = false;
        i += 2;
      } else {
        i += 2;
      }
      continue;
    }
    if (b == '\r') {
      col_ = 0;
      wrap_pending_ = false;
      ++i;
    } else if (b == '\n') {
      LineFeed();
      wrap_pending_ = false;
      ++i;
    } else if (b == '\b') {
      if (col_ > 0) --col_;
      wrap_pending_ = false;
      ++i;
    } else if (b == '\t') {
      col_ = std::min(cols_ - 1, (col_ / 8 + 1) * 8);
      ++i;
    } else if (b < 0x20 || b == 0x7f) {
      ++i;  // BEL and other controls
    } else {
      size_t len = Utf8Len(b);
      if (i + len > data.size()) {
        pending_ = data.substr(i);
        return;
      }
      std::string cp = data.substr(i, len);
      Put(cp, CellWidth(cp));
      i += len;
    }
  }
}

std::string Screen::RowText(const std::vector<std::string>& row) const {
  std::string out;
  for (const auto& cell : row) {
    if (cell == "\x01") continue;
    out += cell.empty() ? " " : cell;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::string Screen::Row(int row) const { return RowText(grid_[static_cast<size_t>(row)]); }

std::string Screen::Visible() const {
  std::vector<std::string> lines;
  for (const auto& row : grid_) lines.push_back(RowText(row));
  while (!lines.empty() && lines.back().empty()) lines.pop_back();
  std::string out;
  for (size_t k = 0; k < lines.size(); ++k) {
    if (k > 0) out += '\n';
    out += lines[k];
  }
  return out;
}

std::string Screen::Text() const {
  std::string out;
  for (const auto& line : scrollback_) out += line + "\n";
  return out + Visible();
}

Result<std::unique_ptr<PtyProcess>> PtyProcess::Spawn(const ProcessOptions& options, int rows,
                                                      int cols) {
  if (options.argv.empty()) return InvalidArgumentError("PtyProcess: argv is empty");
  ::signal(SIGPIPE, SIG_IGN);
  // Everything the child needs is prepared before forking.
  const ExecArgs exec(options, {{"TERM", "xterm-256color"}}, {"NO_COLOR"});

  std::unique_ptr<PtyProcess> p(new PtyProcess(rows, cols));
  struct winsize ws {};
  ws.ws_row = static_cast<unsigned short>(rows);
  ws.ws_col = static_cast<unsigned short>(cols);
  int master = -1;
  pid_t pid = ::forkpty(&master, nullptr, nullptr, &ws);
  if (pid < 0) return UnavailableError(std::string("forkpty failed: ") + std::strerror(errno));
  if (pid == 0) {
    if (!exec.cwd().empty() && ::chdir(exec.cwd().c_str()) != 0) _exit(127);
    ::execvpe(exec.argv()[0], exec.argv(), exec.envp());
    _exit(127);
  }
  p->pid_ = pid;
  p->master_ = master;
  ::fcntl(master, F_SETFD, FD_CLOEXEC);
  return p;
}

PtyProcess::~PtyProcess() {
  if (!exited_ && pid_ > 0) {
    ::kill(pid_, SIGKILL);  // forkpty made it a session (and group) leader
    ::kill(-pid_, SIGKILL);
    Reap(true);
  }
  if (master_ >= 0) ::close(master_);
}

bool PtyProcess::Reap(bool block) {
  if (exited_) return true;
  int status = 0;
  pid_t r;
  do {
    r = ::waitpid(pid_, &status, block ? 0 : WNOHANG);
  } while (r < 0 && errno == EINTR);
  if (r == pid_) {
    exited_ = true;
    wait_status_ = status;
  }
  return exited_;
}

Status PtyProcess::Write(std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::write(master_, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return UnavailableError(std::string("writing to the pty failed: ") + std::strerror(errno));
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return OkStatus();
}

Status PtyProcess::Resize(int rows, int cols) {
  struct winsize ws {};
  ws.ws_row = static_cast<unsigned short>(rows);
  ws.ws_col = static_cast<unsigned short>(cols);
  // The kernel sends SIGWINCH to the terminal's foreground process group.
  if (::ioctl(master_, TIOCSWINSZ, &ws) != 0) {
    return UnavailableError(std::string("resizing the pty failed: ") + std::strerror(errno));
  }
  screen_.Resize(rows, cols);
  return OkStatus();
}

bool PtyProcess::Pump(int wait_ms) {
  if (closed_) return false;
  struct pollfd pfd {};
  pfd.fd = master_;
  pfd.events = POLLIN;
  int r = ::poll(&pfd, 1, wait_ms);
  if (r <= 0) return true;
  char buf[8192];
  ssize_t n = ::read(master_, buf, sizeof buf);
  if (n <= 0) {
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return true;
    closed_ = true;  // EIO: the child side is gone
    return false;
  }
  raw_.append(buf, static_cast<size_t>(n));
  screen_.Feed(std::string_view(buf, static_cast<size_t>(n)));
  return true;
}

Status PtyProcess::WaitFor(const std::function<bool(const Screen&)>& done,
                           std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  while (true) {
    if (done(screen_)) return OkStatus();
    if (closed_) {
      return UnavailableError("the program exited first; screen:\n" + screen_.Text());
    }
    int left = RemainingMs(deadline);
    if (left == 0) return DeadlineExceededError("timed out; screen:\n" + screen_.Text());
    Pump(std::min(left, 50));
  }
}

Status PtyProcess::WaitForText(std::string_view text, std::chrono::milliseconds timeout,
                               size_t from) {
  return WaitFor(
      [&](const Screen& s) {
        std::string all = s.Text();
        return all.size() > from && all.find(text, from) != std::string::npos;
      },
      timeout);
}

Result<int> PtyProcess::WaitExit(std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  while (!Reap(false)) {
    if (RemainingMs(deadline) == 0)
      return DeadlineExceededError("the program did not exit; screen:\n" + screen_.Text());
    Pump(20);
  }
  while (Pump(0) && !closed_) {
    struct pollfd pfd {};
    pfd.fd = master_;
    pfd.events = POLLIN;
    if (::poll(&pfd, 1, 0) <= 0) break;
  }
  if (WIFEXITED(wait_status_)) return WEXITSTATUS(wait_status_);
  return -1;
}

}  // namespace codex::testing
