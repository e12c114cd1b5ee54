// TurnView: the interactive terminal's view of a running turn, as a
// core::TurnObserver. The assistant's Markdown is rendered line by line as
// it streams in, tool calls are shown compactly (the command, a few lines of
// output, the exit status; the files a patch touched; the plan), and while
// the model works a spinner line with the elapsed seconds stays at the
// bottom, redrawn by a helper thread every 100 ms.
//
// Threads: observer callbacks come from the turn's thread, the spinner
// thread only redraws its own line; both write through the Terminal's lock.
// BeginTurn() starts the spinner thread and EndTurn() joins it. Borrows the
// Terminal for its lifetime.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "cli/interactive/markdown.h"
#include "cli/interactive/style.h"
#include "cli/interactive/terminal.h"
#include "core/turn_observer.h"

namespace codex::cli {

class TurnView final : public core::TurnObserver {
 public:
  TurnView(Terminal& terminal, const Style& style) : terminal_(terminal), style_(style) {}
  ~TurnView() override;

  // `label` is the spinner text ("Working", "Compacting").
  void BeginTurn(std::string label = "Working");
  void EndTurn();
  // Hides the spinner while something else (an approval menu) owns the screen.
  void PauseSpinner();
  void ResumeSpinner();

  // Writes complete lines above the spinner.
  void Print(std::string_view text);

  const Style& style() const { return style_; }
  // hide_agent_reasoning: reasoning text never becomes the spinner label.
  void set_hide_reasoning(bool hide) { hide_reasoning_ = hide; }

  void OnTextDelta(std::string_view delta) override;
  void OnReasoningDelta(std::string_view delta) override;
  void OnItemCompleted(const core::Item& item) override;
  void OnToolStarted(const core::ToolActivity& activity) override;
  void OnToolCompleted(const core::ToolActivity& activity) override;
  void OnCompaction(const core::CompactionNotice& notice) override;
  void OnTurnCompleted(const core::TokenUsage& usage, int context_left_percent) override;
  void OnTurnFailed(const Status& status) override;
  void OnNotice(std::string_view message) override;

 private:
  void SpinnerLoop();
  // Both with mutex_ held.
  void WriteAbove(std::string_view text);
  std::string SpinnerLine() const;
  void StartMessage();
  void FinishMessage(const core::Item* item);
  void Separate();

  Terminal& terminal_;
  Style style_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::thread spinner_;
  bool running_ = false;  // between BeginTurn and EndTurn
  bool paused_ = false;
  bool spinner_shown_ = false;
  int frame_ = 0;
  std::string label_ = "Working";
  std::string reasoning_;
  bool hide_reasoning_ = false;
  std::chrono::steady_clock::time_point started_;
  std::optional<MarkdownRenderer> markdown_;  // while a message streams
  bool printed_ = false;                      // something was printed in this turn
};

}  // namespace codex::cli
