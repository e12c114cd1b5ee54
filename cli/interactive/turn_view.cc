#include "cli/interactive/turn_view.h"

#include <algorithm>

#include "cli/interactive/command_text.h"
#include "cli/progress_printer.h"
#include "cli/terminal_text.h"

namespace codex::cli {

namespace {

constexpr const char* kFrames[] = {"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"};
constexpr int kFrameCount = 10;

// The first line of `s`, with "…" when there were more.
std::string FirstLineWithEllipsis(std::string_view s) {
  size_t nl = s.find('\n');
  if (nl == std::string_view::npos) return std::string(s);
  return std::string(s.substr(0, nl)) + " …";
}

// The newest **Heading** of a reasoning summary, "" when none is complete.
std::string ReasoningHeadline(const std::string& text) {
  size_t end = text.rfind("**");
  if (end == std::string::npos || end < 2) return "";
  size_t start = text.rfind("**", end - 1);
  if (start == std::string::npos || end - start <= 2) return "";
  std::string head = text.substr(start + 2, end - start - 2);
  if (head.find('\n') != std::string::npos || head.size() > 80) return "";
  return head;
}

// "\x1b[nA" / "\x1b[nB" / "\x1b[nC", "" for n <= 0.
std::string Move(int n, char dir) {
  if (n <= 0) return "";
  return "\x1b[" + std::to_string(n) + dir;
}

}  // namespace

TurnView::~TurnView() { EndTurn(); }

void TurnView::BeginTurn(std::string label) {
  EndTurn();
  std::lock_guard<std::mutex> lock(mutex_);
  running_ = true;
  paused_ = false;
  held_.clear();
  denied_call_.clear();
  calls_.clear();
  live_call_.clear();
  last_header_call_.clear();
  label_ = std::move(label);
  reasoning_.clear();
  printed_ = false;
  started_ = std::chrono::steady_clock::now();
  spinner_ = std::thread([this] { SpinnerLoop(); });
}

void TurnView::EndTurn() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!running_) return;
    if (markdown_) FinishMessage(nullptr);
    FinishReasoning();
    running_ = false;
  }
  wake_.notify_all();
  spinner_.join();
  std::lock_guard<std::mutex> lock(mutex_);
  paused_ = false;
  auto term = LockTerminal();
  PrintHeld();
  Emit(Redrawn());
}

void TurnView::PauseSpinner() {
  std::lock_guard<std::mutex> lock(mutex_);
  auto term = LockTerminal();
  Emit(EraseLiveText());
  paused_ = true;
}

void TurnView::ResumeSpinner() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    paused_ = false;
    auto term = LockTerminal();
    PrintHeld();
    Emit(Redrawn());
  }
  wake_.notify_all();
}

void TurnView::SetFooter(const EditorLayout& footer) {
  std::lock_guard<std::mutex> lock(mutex_);
  footer_ = footer;
  has_footer_ = true;
  if (paused_) return;
  auto term = LockTerminal();
  Emit(Redrawn());
}

void TurnView::CommitFooter() {
  std::lock_guard<std::mutex> lock(mutex_);
  auto term = LockTerminal();
  std::string out;
  if (drawn_ && drawn_footer_) {
    out += Move(footer_.end_row - footer_.cursor_row, 'B');
    out += "\r\n";
    Log(footer_.text + "\r\n");  // the prompt as sent stays in the transcript
  } else if (drawn_) {
    out += "\r\n";  // under the spinner: it stays, as the footer would
  }
  ForgetDrawnRegion();
  has_footer_ = false;
  above_.clear();  // the footer now lies between those lines and the live region
  Emit(out);
}

void TurnView::ClearLive() {
  std::lock_guard<std::mutex> lock(mutex_);
  auto term = LockTerminal();
  Emit(EraseLiveText());
  has_footer_ = false;
}

void TurnView::Redraw(bool forget_drawn) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto term = LockTerminal();
  if (forget_drawn) {
    ForgetDrawnRegion();
  }
  Emit(Redrawn());
}

std::string TurnView::Redrawn() {
  std::string out = EraseLiveText();  // first: drawing changes what erasing must undo
  out += DrawLiveText();
  return out;
}

std::unique_lock<std::mutex> TurnView::LockTerminal() {
  auto lock = terminal_.Lock();
  // Someone else wrote (a prompt, a notice): the lines above the live region
  // are no longer known to be the ones printed here.
  if (terminal_.writes() != own_writes_) above_.clear();
  columns_ = terminal_.Columns();  // once per drawing: every row of it agrees
  if (std::string out = Relayout(); !out.empty()) Emit(out);
  return lock;
}

namespace {

constexpr size_t kPrintedKeptBytes = 4 << 20;  // the oldest printed blocks go beyond this

}  // namespace

void TurnView::Log(std::string_view text) {
  if (text.empty()) return;
  if (log_.empty()) log_columns_ = columns_ > 0 ? columns_ : terminal_.Columns();
  if (log_.empty() || log_.back().markdown) log_.push_back({});
  log_.back().text.append(text);
  log_bytes_ += text.size();
  while (log_bytes_ > kPrintedKeptBytes && log_.size() > 1 && open_answer_ != size_t{0}) {
    log_bytes_ -= log_.front().text.size();
    log_.pop_front();
    if (open_answer_) --*open_answer_;
  }
}

std::string TurnView::Relayout() {
  if (log_.empty() || paused_ || columns_ <= 0 || columns_ == log_columns_) return "";
  log_columns_ = columns_;
  const int width = columns_ - 1;
  // Home, erase the screen, erase the scrollback (xterm's 3J, which tmux,
  // VTE, kitty and the rest honour): nothing of the old layout stays.
  std::string out = "\x1b[H\x1b[2J\x1b[3J";
  for (size_t i = 0; i < log_.size(); ++i) {
    const Printed& p = log_[i];
    if (!p.markdown) {
      out += p.text;
    } else if (open_answer_ && *open_answer_ == i && markdown_) {
      // Still streaming: its lines so far as printed (a renderer laying it
      // out again would hold back the words of the block still open, which
      // were printed already); the renderer takes the new width from its
      // next block, and the whole answer is laid out again at the next
      // change of width once it has ended.
      out += p.shown;
      markdown_->SetWidth(width);
    } else {
      // Its last line ends, as a streamed answer's does (fed whole without
      // it, the renderer would keep that line back as still partial).
      MarkdownRenderer md(style_, width);
      out += md.Feed(p.text);
      if (!p.text.empty() && p.text.back() != '\n') out += md.Feed("\n");
      out += md.Finish();
    }
  }
  ForgetDrawnRegion();
  above_.clear();
  return out;
}

void TurnView::Remember(std::string_view text) {
  std::lock_guard<std::mutex> lock(mutex_);
  Log(text);
}

void TurnView::ForgetPrinted() {
  std::lock_guard<std::mutex> lock(mutex_);
  log_.clear();
  log_bytes_ = 0;
  open_answer_.reset();
}

void TurnView::ForgetDrawnRegion() {
  drawn_ = false;
  drawn_footer_ = false;
  drawn_lines_.Clear();
  drawn_spinner_ = false;
  drawn_output_rows_ = 0;
  live_cursor_row_ = 0;
}

void TurnView::Emit(std::string_view out) {
  terminal_.WriteLocked(out);
  own_writes_ = terminal_.writes();
}

std::string TurnView::EraseLiveText() {
  if (!drawn_) return "";
  int up = RowsAboveCursor();
  std::string reprint;
  if (columns_ > drawn_columns_ && drawn_columns_ > 0 && terminal_.reflows()) {
    // The frames drawn for drawn_columns_ may have been laid out by the
    // terminal at the new width: a terminal that re-wraps (tmux) re-wraps its
    // screen first and reads what was already written to it after, and this
    // process learns the new width later still. Such a frame joined rows
    // that its cursor motions counted apart, so it moved up too far, by at
    // most the live region's wrapped rows above the cursor, and drew over the
    // bottom rows of the lines printed above it. Those lines are printed
    // again, so whatever such a frame left there is gone.
    const int over = live_cursor_row_ - static_cast<int>(drawn_lines_.lines()) + 1;
    const int screen = terminal_.Rows();
    int rows = 0;
    size_t first = above_.size();
    while (first > 0 && static_cast<int>(above_.size() - first) < over) {
      const int r = WrappedRows(above_[first - 1], columns_);
      if (up + rows + r >= screen) break;  // never above the screen's top
      rows += r;
      --first;
    }
    for (size_t i = first; i < above_.size(); ++i) reprint += above_[i] + "\n";
    up += rows;
  }
  std::string out = Move(up, 'A') + kEraseToEnd + reprint;
  ForgetDrawnRegion();
  return out;
}

// Autowrap off while drawing rows that must stay one row each (the spinner,
// the command's output): should the terminal be narrower than this process
// knows yet (tmux re-wraps its screen before the window size reaches the
// pty), such a row is cut at the edge instead of wrapping, so the cursor
// stays where the next redraw expects it.
constexpr char kWrapOff[] = "\x1b[?7l";
constexpr char kWrapOn[] = "\x1b[?7h";

std::string TurnView::DrawLiveText() {
  if (paused_) return "";
  std::string out = "\r";
  int row = 0;
  const int columns = columns_;
  const bool footer = has_footer_ && !FooterStale();
  if (has_footer_ && !footer) terminal_.Wake();  // the session lays it out again
  drawn_columns_ = columns;
  // The hard lines drawn (without cursor motions), for drawn_lines_.
  std::string lines;
  size_t cursor = std::string::npos;
  const auto live = calls_.find(live_call_);
  if (live != calls_.end() && !live->second.output.empty()) {
    // The running command's last lines, each one row (cut, never wrapped);
    // when other calls run beside it, a first row names whose they are.
    const std::string rows = live->second.output.LiveRows(
        columns - 1, "  └ ", "    ", calls_.size() > 1 ? live->second.command : "");
    size_t pos = 0;
    out += kWrapOff;
    while (pos < rows.size()) {
      size_t nl = rows.find('\n', pos);
      std::string line = style_.Dim(rows.substr(pos, nl - pos)) + "\r\n";
      out += line;
      lines += line;
      ++row;
      pos = nl + 1;
    }
    out += kWrapOn;
    drawn_output_rows_ = row;
    drawn_ = true;
    output_dirty_ = false;
    output_drawn_at_ = std::chrono::steady_clock::now();
  }
  if (SpinnerVisible()) {
    std::string spinner = SpinnerLine();
    out += kWrapOff + spinner + kWrapOn;
    spinner_line_ = static_cast<size_t>(row);
    lines += spinner;
    ++frame_;
    drawn_spinner_ = true;
    drawn_ = true;
    if (footer) {
      out += "\r\n";
      lines += "\r\n";
      ++row;
    } else {
      cursor = lines.size();  // the cursor ends the spinner's line
    }
  }
  live_cursor_row_ = row;
  if (footer) {
    out += footer_.text;
    out += Move(footer_.end_row - footer_.cursor_row, 'A');
    out += "\r" + Move(footer_.cursor_col, 'C');
    live_cursor_row_ = row + footer_.cursor_row;
    cursor = lines.size() + footer_.cursor_offset;
    lines += footer_.text;
    drawn_ = true;
    drawn_footer_ = true;
  }
  if (cursor == std::string::npos) cursor = lines.size();
  drawn_lines_.Record(lines, cursor, columns);
  return out;
}

bool TurnView::FooterStale() const {
  return has_footer_ && footer_.columns != 0 && footer_.columns != columns_;
}

int TurnView::RowsAboveCursor() const {
  const int columns = columns_;
  if (columns == drawn_columns_ || columns <= 0) return live_cursor_row_;
  // A terminal that re-wraps has laid every line drawn at the old width out
  // again at the new one; the cursor kept its place in its line.
  return drawn_lines_.RowsAboveCursor(columns, terminal_.reflows());
}

std::string TurnView::SpinnerLine() const {
  auto secs =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - started_)
          .count();
  std::string label = label_;
  if (std::string head = ReasoningHeadline(reasoning_); !head.empty()) label = head;
  std::string line = style_.Cyan(kFrames[frame_ % kFrameCount]) + " " + style_.Bold(label) +
                     style_.Dim(" (" + std::to_string(secs) + "s · Esc to interrupt)");
  // Never wider than the terminal: a wrapped spinner could not be erased.
  if (DisplayWidth(line) >= columns_)
    line = style_.Cyan(kFrames[frame_ % kFrameCount]) + " " + std::to_string(secs) + "s";
  return line;
}

void TurnView::SpinnerLoop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (running_) {
    if (SpinnerVisible()) {
      auto term = LockTerminal();
      if (drawn_spinner_ && !output_dirty_ && columns_ == drawn_columns_ &&
          drawn_footer_ == (has_footer_ && !FooterStale())) {
        // Only the spinner row changes: the composer under it is left alone.
        const int up = live_cursor_row_ - drawn_output_rows_;
        std::string spinner = SpinnerLine();
        std::string out = Move(up, 'A') + "\r\x1b[K" + kWrapOff + spinner + kWrapOn;
        drawn_lines_.ReplaceLine(spinner_line_, spinner);
        ++frame_;
        if (up > 0) out += "\r" + Move(up, 'B') + Move(footer_.cursor_col, 'C');
        Emit(out);
      } else {
        Emit(Redrawn());
      }
    }
    wake_.wait_for(lock, std::chrono::milliseconds(100));
  }
}

void TurnView::WriteAbove(std::string_view text, bool remember) {
  auto term = LockTerminal();
  WriteAboveLocked(text, remember);
}

void TurnView::WriteAboveLocked(std::string_view text, bool remember) {
  if (paused_) {
    held_.emplace_back(text, remember);
    printed_ = true;
    return;
  }
  if (remember) Log(text);
  std::string out = EraseLiveText();
  out.append(text);
  // Its lines, kept to be printed again should a frame have drawn over them.
  if (!text.empty() && text.back() != '\n') {
    above_.clear();  // the live region now starts mid-row: nothing to repair
  } else {
    size_t pos = 0;
    while (pos < text.size()) {
      size_t nl = text.find('\n', pos);
      std::string_view line = text.substr(pos, nl - pos);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      above_.emplace_back(line);
      pos = nl + 1;
    }
    while (above_.size() > kAboveKept) above_.pop_front();
  }
  out += DrawLiveText();
  Emit(out);
  printed_ = true;
}

void TurnView::PrintHeld() {
  std::vector<std::pair<std::string, bool>> held;
  held.swap(held_);
  for (const auto& [text, remember] : held) WriteAboveLocked(text, remember);
}

void TurnView::Print(std::string_view text) {
  std::lock_guard<std::mutex> lock(mutex_);
  WriteAbove(text);
}

void TurnView::Separate() {
  if (printed_) WriteAbove("\n");
}

void TurnView::StartMessage() {
  FinishReasoning();
  Separate();
  WriteAbove(style_.Bold(style_.Magenta("codex")) + "\n");
  markdown_.emplace(style_, terminal_.Columns() - 1);
  log_.push_back({"", true, ""});
  open_answer_ = log_.size() - 1;
}

void TurnView::FinishMessage(const core::Item* item) {
  if (!markdown_) {
    // Not streamed (no deltas arrived): render the whole message now.
    if (item == nullptr) return;
    std::string text = core::MessageText(*item);
    if (text.empty()) return;
    // Its last line ends too, as a streamed message's does (else the next
    // line drawn would overwrite it).
    if (text.back() != '\n') text += '\n';
    StartMessage();
    auto term = LockTerminal();
    const std::string source = NeutralizeControls(text);
    if (open_answer_) {
      log_[*open_answer_].text += source;
      log_bytes_ += source.size();
    }
    std::string out = markdown_->Feed(source) + markdown_->Finish();
    if (open_answer_) log_[*open_answer_].shown += out;
    if (!out.empty()) WriteAboveLocked(out, false);
    markdown_.reset();
    open_answer_.reset();
    return;
  }
  auto term = LockTerminal();  // a re-layout first, so the rest is laid out as the lines above
  std::string out = markdown_->Finish();
  if (open_answer_) log_[*open_answer_].shown += out;
  if (!out.empty()) WriteAboveLocked(out, false);
  markdown_.reset();
  open_answer_.reset();
}

namespace {

// Reasoning is shown dim and italic, line by line.
std::string DimLines(const Style& style, std::string_view lines) {
  std::string out;
  size_t pos = 0;
  while (pos < lines.size()) {
    size_t nl = lines.find('\n', pos);
    if (nl == std::string_view::npos) nl = lines.size();
    std::string_view line = lines.substr(pos, nl - pos);
    out += (line.empty() ? std::string() : style.Dim(style.Italic(line))) + "\n";
    pos = nl + 1;
  }
  return out;
}

}  // namespace

void TurnView::FinishReasoning() {
  if (!reasoning_md_) return;
  std::string out = reasoning_md_->Finish();
  while (!out.empty() && out.back() == '\n' && out.size() >= 2 && out[out.size() - 2] == '\n') {
    out.pop_back();
  }
  if (!out.empty()) WriteAbove(DimLines(style_, out));
  reasoning_md_.reset();
}

void TurnView::OnTextDelta(std::string_view delta) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!markdown_) StartMessage();
  // A new width lays out the whole answer again (Relayout, under the lock)
  // before this delta is rendered.
  auto term = LockTerminal();
  const std::string source = NeutralizeControls(delta);
  if (open_answer_) {
    log_[*open_answer_].text += source;
    log_bytes_ += source.size();
  }
  std::string out = markdown_->Feed(source);
  if (open_answer_) log_[*open_answer_].shown += out;
  if (!out.empty()) WriteAboveLocked(out, false);
}

void TurnView::OnReasoningDelta(std::string_view delta) {
  if (hide_reasoning_) return;
  ShowReasoning(delta);
}

void TurnView::OnRawReasoningDelta(std::string_view delta) {
  if (show_raw_reasoning_) ShowReasoning(delta);
}

void TurnView::ShowReasoning(std::string_view raw_delta) {
  const std::string delta = NeutralizeControls(raw_delta);
  std::lock_guard<std::mutex> lock(mutex_);
  reasoning_.append(delta);
  if (reasoning_.size() > 4096) reasoning_.erase(0, reasoning_.size() - 2048);
  if (!reasoning_md_) {
    if (markdown_) FinishMessage(nullptr);
    Separate();
    reasoning_md_.emplace(Style(Color::kDisabled), terminal_.Columns() - 1);
  }
  std::string out = reasoning_md_->Feed(delta);
  if (!out.empty()) WriteAbove(DimLines(style_, out));
}

void TurnView::OnItemCompleted(const core::Item& item) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (item.kind == core::ItemKind::kMessage && item.role == "assistant") {
    FinishMessage(&item);
  } else if (item.kind == core::ItemKind::kReasoning) {
    FinishReasoning();
    reasoning_.clear();
  }
}

std::string TurnView::PickLiveCall() const {
  const auto now = std::chrono::steady_clock::now();
  const auto shown = calls_.find(live_call_);
  // The shown call keeps the region while it prints (or until another prints).
  if (shown != calls_.end() && !shown->second.output.empty() &&
      now - shown->second.last_output < std::chrono::seconds(1)) {
    return live_call_;
  }
  // Else the call that printed last; with none, the one started last.
  const std::pair<const std::string, RunningCall>* best = nullptr;
  for (const auto& entry : calls_) {
    const RunningCall& c = entry.second;
    if (best == nullptr) {
      best = &entry;
      continue;
    }
    const RunningCall& b = best->second;
    const bool printed = !c.output.empty(), best_printed = !b.output.empty();
    if (printed != best_printed ? printed
                                : (printed ? c.last_output > b.last_output : c.order > b.order)) {
      best = &entry;
    }
  }
  return best == nullptr ? std::string() : best->first;
}

void TurnView::OnToolStarted(const core::ToolActivity& activity) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (markdown_) FinishMessage(nullptr);
  FinishReasoning();
  if (activity.tool == "update_plan") return;
  RunningCall& call = calls_[activity.call_id];
  call = RunningCall{};
  call.order = started_calls_++;
  live_call_ = PickLiveCall();
  last_header_call_ = activity.call_id;
  Separate();
  const bool denied = !denied_call_.empty() && activity.call_id == denied_call_;
  if (activity.tool == "shell") {
    std::string command =
        FirstLineWithEllipsis(NeutralizeControls(ShownCommandLine(activity.command)));
    call.command = command;
    WriteAbove(style_.Bold(denied ? "• Denied " : "• Running ") + style_.Cyan(command) + "\n");
  } else if (activity.tool == "apply_patch") {
    WriteAbove(style_.Bold(denied ? "• Denied patch" : "• Applying patch") + "\n");
  } else if (activity.tool == "collab") {
    WriteAbove(style_.Bold("• Agents: ") + style_.Cyan(activity.command) + "\n");
  } else {
    WriteAbove(style_.Bold("• " + activity.tool) + "\n");
  }
}

void TurnView::OnToolOutput(std::string_view call_id, std::string_view chunk) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = calls_.find(std::string(call_id));
  if (it == calls_.end()) return;
  it->second.output.Feed(chunk);
  it->second.last_output = std::chrono::steady_clock::now();
  const std::string live = PickLiveCall();
  if (live != live_call_) {
    live_call_ = live;
  } else if (call_id != live_call_) {
    return;  // another call's output, not shown now
  }
  output_dirty_ = true;
  // At most every 100 ms; the spinner thread draws what arrives in between.
  if (paused_ ||
      std::chrono::steady_clock::now() - output_drawn_at_ < std::chrono::milliseconds(100)) {
    return;
  }
  auto term = LockTerminal();
  Emit(Redrawn());
}

void TurnView::OnToolCompleted(const core::ToolActivity& activity) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::string out;
  // Another call printed since this one's header: name it again above its
  // output, so that each output stays under its own command.
  std::string header;
  if (auto it = calls_.find(activity.call_id); it != calls_.end()) {
    if (last_header_call_ != activity.call_id) header = it->second.command;
    calls_.erase(it);
  }
  if (activity.call_id == live_call_) {
    live_call_ = PickLiveCall();
    output_dirty_ = true;
  }
  last_header_call_ = activity.call_id;
  const bool noted = !denied_call_.empty() && activity.call_id == denied_call_;
  const bool denied = noted && !activity.success && !activity.exit_code;
  if (noted) denied_call_.clear();
  if (denied) {
    WriteAbove("  " + style_.Red("✗ denied by you") + style_.Dim(" (not run)") + "\n");
    return;
  }
  if (activity.tool == "update_plan") {
    Separate();
    out += style_.Bold("• Updated plan") + "\n";
    if (!activity.explanation.empty()) {
      out += "  " + style_.Italic(NeutralizeControls(activity.explanation)) + "\n";
    }
    for (const auto& step : activity.plan) {
      if (step.status == "completed") {
        out += "  " + style_.Green("☑ ") + style_.Dim(NeutralizeControls(step.step)) + "\n";
      } else if (step.status == "in_progress") {
        out += "  " + style_.Cyan("◐ ") + style_.Bold(NeutralizeControls(step.step)) + "\n";
      } else {
        out += "  ☐ " + NeutralizeControls(step.step) + "\n";
      }
    }
    WriteAbove(out);
    return;
  }
  if (activity.tool == "apply_patch") {
    for (const auto& change : activity.changes) {
      std::string mark = change.kind == "add"      ? style_.Green("A")
                         : change.kind == "delete" ? style_.Red("D")
                                                   : style_.Yellow("M");
      out += "  " + mark + " " + NeutralizeControls(change.path) + "\n";
    }
    if (!activity.success) {
      out += style_.Red(Excerpt(activity.output, 5, "  ", kExcerptLineBytes));
      out += "  " + style_.Red("✗ patch failed") + "\n";
    } else {
      out += "  " + style_.Green("✓ applied") + "\n";
    }
    WriteAbove(out);
    return;
  }
  if (!header.empty()) {
    Separate();
    out += style_.Bold("• Ran ") + style_.Cyan(header) + "\n";
  }
  // What stays in the transcript: the captured output's head and tail.
  OutputView captured;
  captured.Feed(activity.output);
  out += style_.Dim(captured.Excerpt("  └ ", "    "));
  out += CommandEndLine(activity, style_);
  if (activity.exec_session < 0 && !activity.exit_code && !activity.success) {
    out += "  " + style_.Red("✗ failed") + "\n";
  }
  WriteAbove(out);
}

void TurnView::OnCompaction(const core::CompactionNotice& notice) {
  std::lock_guard<std::mutex> lock(mutex_);
  Separate();
  std::string out = style_.Dim("• Compacted the conversation (" + notice.mode + ", " +
                               notice.trigger + "): ~" + GroupThousands(notice.tokens_before) +
                               " → ~" + GroupThousands(notice.tokens_after) + " tokens") +
                    "\n";
  // What the execution frontier kept (compaction/working_state.h), its own line.
  if (!notice.kept.empty()) out += style_.Dim("  kept: " + NeutralizeControls(notice.kept)) + "\n";
  WriteAbove(out);
}

void TurnView::OnTurnCompleted(const core::TokenUsage& usage, int context_left_percent) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (markdown_) FinishMessage(nullptr);
  FinishReasoning();
  std::string line = GroupThousands(usage.total_tokens) + " tokens";
  if (usage.cached_input_tokens > 0)
    line += " (" + GroupThousands(usage.cached_input_tokens) + " cached)";
  line += " · " + std::to_string(context_left_percent) + "% context left";
  WriteAbove(style_.Dim("  " + line) + "\n");
}

void TurnView::OnTurnFailed(const Status& status) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (markdown_) FinishMessage(nullptr);
  FinishReasoning();
  if (status.code() == StatusCode::kCancelled) {
    // What each running call printed before it was stopped stays in view,
    // in the order they started, each under its command when another's
    // header was printed since.
    std::vector<const std::pair<const std::string, RunningCall>*> stopped;
    for (const auto& entry : calls_) stopped.push_back(&entry);
    std::sort(stopped.begin(), stopped.end(),
              [](const auto* a, const auto* b) { return a->second.order < b->second.order; });
    for (const auto* entry : stopped) {
      std::string shown;
      if (entry->first != last_header_call_ && !entry->second.command.empty()) {
        Separate();
        shown += style_.Bold("• Ran ") + style_.Cyan(entry->second.command) + "\n";
      }
      last_header_call_ = entry->first;
      shown += style_.Dim(entry->second.output.Excerpt("  └ ", "    "));
      WriteAbove(shown + "  " + style_.Red("✗ interrupted") + style_.Dim(" (stopped)") + "\n");
    }
    calls_.clear();
    live_call_.clear();
    WriteAbove(style_.Red("■ Interrupted.") + style_.Dim(" Type a new message to continue.") +
               "\n");
  }
}

void TurnView::OnNotice(std::string_view message) {
  std::lock_guard<std::mutex> lock(mutex_);
  // A long notice wraps at word boundaries (CJK between characters), not
  // mid-word where the terminal would cut it.
  std::string wrapped = WrapLine(NeutralizeControls(message), terminal_.Columns() - 1, "⚠ ", "  ");
  if (!wrapped.empty() && wrapped.back() == '\n') wrapped.pop_back();
  WriteAbove(style_.Yellow(wrapped) + "\n");
}

}  // namespace codex::cli
