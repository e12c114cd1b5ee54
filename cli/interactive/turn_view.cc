#include "cli/interactive/turn_view.h"

#include "cli/progress_printer.h"
#include "cli/terminal_text.h"

namespace codex::cli {

namespace {

constexpr const char* kFrames[] = {"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"};
constexpr int kFrameCount = 10;

// The first line of `s`, with "…" when there were more.
std::string FirstLine(std::string_view s) {
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

}  // namespace

TurnView::~TurnView() { EndTurn(); }

void TurnView::BeginTurn(std::string label) {
  EndTurn();
  std::lock_guard<std::mutex> lock(mutex_);
  running_ = true;
  paused_ = false;
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
    running_ = false;
    if (markdown_) FinishMessage(nullptr);
  }
  wake_.notify_all();
  spinner_.join();
  std::lock_guard<std::mutex> lock(mutex_);
  if (spinner_shown_) {
    terminal_.Write("\r\x1b[K");
    spinner_shown_ = false;
  }
}

void TurnView::PauseSpinner() {
  std::lock_guard<std::mutex> lock(mutex_);
  paused_ = true;
  if (spinner_shown_) {
    terminal_.Write("\r\x1b[K");
    spinner_shown_ = false;
  }
}

void TurnView::ResumeSpinner() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    paused_ = false;
  }
  wake_.notify_all();
}

std::string TurnView::SpinnerLine() const {
  auto secs =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - started_)
          .count();
  std::string label = label_;
  if (std::string head = ReasoningHeadline(reasoning_); !head.empty()) label = head;
  std::string line = style_.Cyan(kFrames[frame_ % kFrameCount]) + " " + style_.Bold(label) +
                     style_.Dim(" (" + std::to_string(secs) + "s · Ctrl-C to interrupt)");
  // Never wider than the terminal: a wrapped spinner could not be erased.
  int cols = terminal_.Columns();
  if (DisplayWidth(line) >= cols)
    line = style_.Cyan(kFrames[frame_ % kFrameCount]) + " " + std::to_string(secs) + "s";
  return line;
}

void TurnView::SpinnerLoop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (running_) {
    if (!paused_) {
      auto term = terminal_.Lock();
      terminal_.WriteLocked("\r\x1b[K" + SpinnerLine());
      spinner_shown_ = true;
      ++frame_;
    }
    wake_.wait_for(lock, std::chrono::milliseconds(100));
  }
}

void TurnView::WriteAbove(std::string_view text) {
  auto term = terminal_.Lock();
  if (spinner_shown_) terminal_.WriteLocked("\r\x1b[K");
  terminal_.WriteLocked(text);
  if (running_ && !paused_) {
    terminal_.WriteLocked(SpinnerLine());
    spinner_shown_ = true;
  } else {
    spinner_shown_ = false;
  }
  printed_ = true;
}

void TurnView::Print(std::string_view text) {
  std::lock_guard<std::mutex> lock(mutex_);
  WriteAbove(text);
}

void TurnView::Separate() {
  if (printed_) WriteAbove("\n");
}

void TurnView::StartMessage() {
  Separate();
  WriteAbove(style_.Bold(style_.Magenta("codex")) + "\n");
  markdown_.emplace(style_, terminal_.Columns() - 1);
}

void TurnView::FinishMessage(const core::Item* item) {
  if (!markdown_) {
    // Not streamed (no deltas arrived): render the whole message now.
    if (item == nullptr) return;
    std::string text = core::MessageText(*item);
    if (text.empty()) return;
    StartMessage();
    std::string out = markdown_->Feed(NeutralizeControls(text)) + markdown_->Finish();
    if (!out.empty()) WriteAbove(out);
    markdown_.reset();
    return;
  }
  std::string out = markdown_->Finish();
  if (!out.empty()) WriteAbove(out);
  markdown_.reset();
}

void TurnView::OnTextDelta(std::string_view delta) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!markdown_) StartMessage();
  std::string out = markdown_->Feed(NeutralizeControls(delta));
  if (!out.empty()) WriteAbove(out);
}

void TurnView::OnReasoningDelta(std::string_view delta) {
  if (hide_reasoning_) return;
  std::lock_guard<std::mutex> lock(mutex_);
  reasoning_.append(delta);
  if (reasoning_.size() > 4096) reasoning_.erase(0, reasoning_.size() - 2048);
}

void TurnView::OnItemCompleted(const core::Item& item) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (item.kind == core::ItemKind::kMessage && item.role == "assistant") {
    FinishMessage(&item);
  } else if (item.kind == core::ItemKind::kReasoning) {
    reasoning_.clear();
  }
}

void TurnView::OnToolStarted(const core::ToolActivity& activity) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (markdown_) FinishMessage(nullptr);
  if (activity.tool == "update_plan") return;
  Separate();
  if (activity.tool == "shell") {
    WriteAbove(style_.Bold("• Running ") +
               style_.Cyan(FirstLine(NeutralizeControls(activity.command))) + "\n");
  } else if (activity.tool == "apply_patch") {
    WriteAbove(style_.Bold("• Applying patch") + "\n");
  } else {
    WriteAbove(style_.Bold("• " + activity.tool) + "\n");
  }
}

void TurnView::OnToolCompleted(const core::ToolActivity& activity) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::string out;
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
      out += style_.Red(Excerpt(activity.output, 5, "  "));
      out += "  " + style_.Red("✗ patch failed") + "\n";
    } else {
      out += "  " + style_.Green("✓ applied") + "\n";
    }
    WriteAbove(out);
    return;
  }
  std::string excerpt = Excerpt(activity.output, 5, "    ");
  if (!excerpt.empty()) excerpt.replace(0, 4, "  └ ");
  out += style_.Dim(excerpt);
  if (activity.exit_code) {
    out += "  " +
           (activity.success ? style_.Green("✓ exit " + std::to_string(*activity.exit_code))
                             : style_.Red("✗ exit " + std::to_string(*activity.exit_code))) +
           "\n";
  } else if (!activity.success) {
    out += "  " + style_.Red("✗ failed") + "\n";
  }
  WriteAbove(out);
}

void TurnView::OnCompaction(const core::CompactionNotice& notice) {
  std::lock_guard<std::mutex> lock(mutex_);
  Separate();
  WriteAbove(style_.Dim("• Compacted the conversation (" + notice.mode + ", " + notice.trigger +
                        "): ~" + GroupThousands(notice.tokens_before) + " → ~" +
                        GroupThousands(notice.tokens_after) + " tokens") +
             "\n");
}

void TurnView::OnTurnCompleted(const core::TokenUsage& usage, int context_left_percent) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (markdown_) FinishMessage(nullptr);
  std::string line = GroupThousands(usage.total_tokens) + " tokens";
  if (usage.cached_input_tokens > 0)
    line += " (" + GroupThousands(usage.cached_input_tokens) + " cached)";
  line += " · " + std::to_string(context_left_percent) + "% context left";
  WriteAbove(style_.Dim("  " + line) + "\n");
}

void TurnView::OnTurnFailed(const Status& status) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (markdown_) FinishMessage(nullptr);
  if (status.code() == StatusCode::kCancelled) {
    WriteAbove(style_.Red("■ Interrupted.") + style_.Dim(" Type a new message to continue.") +
               "\n");
  }
}

void TurnView::OnNotice(std::string_view message) {
  std::lock_guard<std::mutex> lock(mutex_);
  WriteAbove(style_.Yellow("⚠ " + NeutralizeControls(message)) + "\n");
}

}  // namespace codex::cli
