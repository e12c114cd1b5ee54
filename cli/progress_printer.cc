#include "cli/progress_printer.h"

#include <string>

#include "cli/json_events.h"
#include "cli/terminal_text.h"

namespace codex::cli {

std::string Excerpt(const std::string& raw, int max_lines, const std::string& indent,
                    size_t max_line_bytes) {
  const std::string text = NeutralizeControls(raw);
  std::string out;
  int lines = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    if (lines < max_lines) {
      size_t len = nl - pos;
      const bool cut = max_line_bytes > 0 && len > max_line_bytes;
      if (cut) {
        len = max_line_bytes;
        // Never inside a UTF-8 sequence.
        while (len > 0 && (static_cast<unsigned char>(text[pos + len]) & 0xC0) == 0x80) --len;
      }
      out += indent + text.substr(pos, len) + (cut ? "…\n" : "\n");
    }
    ++lines;
    pos = nl + 1;
  }
  if (lines > max_lines) out += indent + "… +" + std::to_string(lines - max_lines) + " lines\n";
  return out;
}

void ProgressPrinter::OnItemCompleted(const core::Item& item) {
  if (item.kind == core::ItemKind::kReasoning && show_raw_reasoning_) {
    const std::string raw = ReasoningText(item, "content");
    if (!raw.empty()) {
      std::fprintf(err_, "%s\n%s", style_.Magenta(style_.Italic("thinking")).c_str(),
                   Excerpt(raw, 1000, "  ").c_str());
    }
    return;
  }
  if (item.kind == core::ItemKind::kMessage && item.role == "assistant") {
    std::fprintf(err_, "%s\n%s", style_.Magenta(style_.Bold("codex")).c_str(),
                 Excerpt(core::MessageText(item), 1000, "  ").c_str());
  }
}

void ProgressPrinter::PrintCommandHeader(const std::string& command) {
  std::fprintf(err_, "%s $ %s\n", style_.Magenta(style_.Bold("exec")).c_str(),
               NeutralizeControls(command).c_str());
}

void ProgressPrinter::OnToolStarted(const core::ToolActivity& activity) {
  last_header_call_ = activity.call_id;
  if (activity.tool == "shell") {
    running_commands_[activity.call_id] = activity.command;
    PrintCommandHeader(activity.command);
  }
  if (activity.tool == "apply_patch") {
    std::fprintf(err_, "%s\n", style_.Magenta(style_.Bold("apply_patch")).c_str());
  }
  if (activity.tool == "collab") {
    std::fprintf(err_, "%s %s\n", style_.Magenta(style_.Bold("agents")).c_str(),
                 activity.command.c_str());
  }
  if (activity.tool == "mcp") {
    std::fprintf(err_, "%s %s(%s)\n", style_.Magenta(style_.Bold("mcp")).c_str(),
                 NeutralizeControls(activity.command).c_str(),
                 NeutralizeControls(activity.mcp_arguments).c_str());
  }
}

void ProgressPrinter::OnToolCompleted(const core::ToolActivity& activity) {
  // Calls of one response run together: a command whose header is no longer
  // the last one printed is named again above its output.
  if (auto it = running_commands_.find(activity.call_id); it != running_commands_.end()) {
    if (last_header_call_ != activity.call_id) PrintCommandHeader(it->second);
    running_commands_.erase(it);
  }
  last_header_call_ = activity.call_id;
  if (activity.tool == "update_plan") {
    std::fprintf(err_, "plan%s%s\n", activity.explanation.empty() ? "" : ": ",
                 NeutralizeControls(activity.explanation).c_str());
    for (const auto& s : activity.plan) {
      const char* mark =
          s.status == "completed" ? "[x]" : (s.status == "in_progress" ? "[>]" : "[ ]");
      std::fprintf(err_, "  %s %s\n", mark, NeutralizeControls(s.step).c_str());
    }
    return;
  }
  if (activity.tool == "apply_patch") {
    for (const auto& c : activity.changes) {
      std::fprintf(err_, "  %s %s\n", c.kind.c_str(), NeutralizeControls(c.path).c_str());
    }
    if (!activity.success) {
      std::fprintf(err_, "%s", Excerpt(activity.output, 5, "  ", kExcerptLineBytes).c_str());
    }
    return;
  }
  std::fprintf(err_, "%s", Excerpt(activity.output, 5, "  ", kExcerptLineBytes).c_str());
  std::fprintf(err_, "%s", CommandEndLine(activity, style_).c_str());
}

std::string CommandEndLine(const core::ToolActivity& activity, const Style& style) {
  if (activity.exec_session >= 0) {
    // Still running (exec_command's yield passed): no exit status yet; the
    // model may write to it or poll it later.
    return "  " +
           style.Cyan("↻ running in the background (session " +
                      std::to_string(activity.exec_session) + ")") +
           "\n";
  }
  if (!activity.exit_code) return "";
  const std::string text = "exit " + std::to_string(*activity.exit_code);
  return "  " + (activity.success ? style.Green("✓ " + text) : style.Red("✗ " + text)) + "\n";
}

void ProgressPrinter::OnCompaction(const core::CompactionNotice& notice) {
  std::fprintf(err_, "compacted the conversation (%s, %s): ~%lld → ~%lld tokens\n",
               notice.mode.c_str(), notice.trigger.c_str(),
               static_cast<long long>(notice.tokens_before),
               static_cast<long long>(notice.tokens_after));
  if (!notice.kept.empty()) {
    std::fprintf(err_, "  kept: %s\n", NeutralizeControls(notice.kept).c_str());
  }
}

void ProgressPrinter::OnTurnFailed(const Status& status) {
  if (status.code() == StatusCode::kCancelled) {
    std::fprintf(err_, "turn interrupted\n");
  }
}

void ProgressPrinter::OnNotice(std::string_view message) {
  std::fprintf(err_, "%s\n", NeutralizeControls(message).c_str());
}

}  // namespace codex::cli
