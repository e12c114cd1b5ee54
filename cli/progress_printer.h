// ProgressPrinter: the human-readable progress of `codex exec` on stderr
// (stdout carries only the final message). Tool calls are shown compactly:
// the command, a few lines of output, the exit code; when calls run together
// and another call printed in between, a completed command is named again
// above its output. Not thread-safe (the tool router serializes its calls).
#pragma once

#include <cstddef>
#include <cstdio>
#include <map>
#include <string>

#include "cli/interactive/style.h"
#include "core/turn_observer.h"

namespace codex::cli {

class ProgressPrinter final : public core::TurnObserver {
 public:
  // `color` (exec --color): headers and exit marks in ANSI colour.
  // `show_raw_reasoning` (show_raw_agent_reasoning): a reasoning item's raw
  // text is printed under "thinking".
  explicit ProgressPrinter(std::FILE* err, Color color = Color::kDisabled,
                           bool show_raw_reasoning = false)
      : err_(err), style_(color), show_raw_reasoning_(show_raw_reasoning) {}

  void OnItemCompleted(const core::Item& item) override;
  void OnToolStarted(const core::ToolActivity& activity) override;
  void OnToolCompleted(const core::ToolActivity& activity) override;
  void OnCompaction(const core::CompactionNotice& notice) override;
  void OnTurnFailed(const Status& status) override;
  void OnNotice(std::string_view message) override;

 private:
  // "exec $ <command>", the command terminal-safe.
  void PrintCommandHeader(const std::string& command);

  std::FILE* err_;
  Style style_;
  bool show_raw_reasoning_ = false;
  std::map<std::string, std::string> running_commands_;  // call id -> command
  std::string last_header_call_;                         // the call whose lines were printed last
};

// The first `max_lines` lines of `text`, each prefixed with `indent`, and a
// "… +N lines" marker when cut, with control sequences neutralised
// (terminal_text.h): safe to write to the terminal. A line longer than
// `max_line_bytes` (0: no limit) is cut there and ends in "…": a command's
// output may be one line of megabytes, which no terminal wants whole.
inline constexpr size_t kExcerptLineBytes = 1024;  // as the interactive live view's
std::string Excerpt(const std::string& text, int max_lines, const std::string& indent,
                    size_t max_line_bytes = 0);

// How a command's call ended, as both the interactive screen and `codex exec`
// show it under its output: "  ↻ running in the background (session N)\n"
// for an exec_command still running when its call returned, "  ✓ exit 0\n"
// or "  ✗ exit N\n", "" when there is no exit code.
std::string CommandEndLine(const core::ToolActivity& activity, const Style& style);

}  // namespace codex::cli
