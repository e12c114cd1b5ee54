// TurnView: the interactive terminal's screen below the transcript, and its
// view of a running turn as a core::TurnObserver.
//
// The bottom of the screen is a live region: while a turn runs, a spinner
// line with the elapsed seconds (redrawn every 100 ms by a helper thread),
// and under it the footer the session sets (the composer with any queued
// messages). Everything else is written above the live region, which is
// then drawn again, so the composer stays usable while the agent streams.
// The assistant's Markdown is written as its lines become final, the
// reasoning summary dim as it streams (unless hidden), tool calls compactly
// (the command as the user would type it, a few lines of output, the exit
// status; "denied" when the user said no; the files a patch touched; the
// plan). While a command runs, the last lines of its output are shown live
// above the spinner (OutputView, redrawn at most every 100 ms); when it ends
// or is interrupted, a head + tail excerpt of it stays in the transcript.
//
// Threads: observer callbacks come from the turn's thread, the footer from
// the thread reading the keys, the spinner from its own; a mutex serialises
// them and every drawing goes through the Terminal's lock. BeginTurn()
// starts the spinner thread and EndTurn() joins it. Borrows the Terminal for
// its lifetime.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cli/interactive/drawn_lines.h"
#include "cli/interactive/line_editor.h"
#include "cli/interactive/markdown.h"
#include "cli/interactive/output_view.h"
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
  // Hides the live region while something else (an approval menu) draws
  // below the transcript; Resume draws it again.
  void PauseSpinner();
  void ResumeSpinner();

  // Sets the footer (drawn under the spinner; the terminal cursor is put at
  // its editing cursor) and redraws the live region. A footer laid out for
  // another width than the terminal's (the window was resized since) is not
  // drawn: the view calls Terminal::Wake() so the session lays it out again.
  void SetFooter(const EditorLayout& footer);
  // Leaves the footer in the transcript as it is now drawn (cursor moved past
  // it) and starts an empty live region under it.
  void CommitFooter();
  // Erases the live region and forgets it (before other output takes over).
  void ClearLive();
  // Redraws the live region from scratch at the cursor's row (after a
  // resize or a cleared screen).
  void Redraw(bool forget_drawn);

  // Writes complete lines above the live region.
  void Print(std::string_view text);
  // Keeps `text`, which another drawer (an approval question) wrote above
  // the live region, for the re-layout after a resize.
  void Remember(std::string_view text);
  // Forgets what was printed (the screen and its scrollback were cleared and
  // are drawn again from elsewhere: an Esc-Esc branch).
  void ForgetPrinted();

  // The approval prompt's answer for the command of `call_id`, about to be
  // reported: a denied one is shown as denied rather than as a failure (by
  // call, as other calls of the response may report in between).
  void NoteDenied(std::string call_id) {
    std::lock_guard<std::mutex> lock(mutex_);
    denied_call_ = std::move(call_id);
  }

  const Style& style() const { return style_; }
  // hide_agent_reasoning: reasoning summaries are neither shown nor used as
  // the spinner's label.
  void set_hide_reasoning(bool hide) { hide_reasoning_ = hide; }
  // show_raw_agent_reasoning: raw reasoning text is shown as summaries are.
  void set_show_raw_reasoning(bool show) { show_raw_reasoning_ = show; }
  // file_opener: file references in rendered messages become hyperlinks for
  // that editor (Style::FileLink), relative ones against `cwd`. Before a turn.
  void set_file_opener(const std::string& scheme, const std::string& cwd) {
    style_ = style_.WithFileLinks(scheme, cwd);
  }

  void OnTextDelta(std::string_view delta) override;
  void OnReasoningDelta(std::string_view delta) override;
  void OnRawReasoningDelta(std::string_view delta) override;
  void OnItemCompleted(const core::Item& item) override;
  void OnToolStarted(const core::ToolActivity& activity) override;
  void OnToolOutput(std::string_view call_id, std::string_view chunk) override;
  void OnToolCompleted(const core::ToolActivity& activity) override;
  void OnCompaction(const core::CompactionNotice& notice) override;
  void OnTurnCompleted(const core::TokenUsage& usage, int context_left_percent) override;
  void OnTurnFailed(const Status& status) override;
  void OnNotice(std::string_view message) override;

 private:
  void SpinnerLoop();
  // All with mutex_ held.
  // Takes the Terminal's lock for one drawing and reads its width for it.
  std::unique_lock<std::mutex> LockTerminal();
  // Writes `out` (under LockTerminal()).
  void Emit(std::string_view out);
  // Forgets the live region as drawn (nothing of it is on screen any more,
  // or what is stays as printed text): the next draw starts afresh.
  void ForgetDrawnRegion();
  // `remember`: kept for the re-layout as printed (an answer's lines are
  // kept as its Markdown source instead).
  void WriteAbove(std::string_view text, bool remember = true);
  // With LockTerminal() held.
  void WriteAboveLocked(std::string_view text, bool remember);
  // Prints what was held while paused (with both locks held, paused_ false).
  void PrintHeld();
  void Log(std::string_view text);
  // The window's width changed since what is above the live region was
  // printed: the screen and scrollback are cleared and all of it is printed
  // again, each answer's Markdown laid out at the new width (as Codex renders
  // its history again). With LockTerminal() held; "" when nothing changed.
  std::string Relayout();
  std::string EraseLiveText();
  std::string DrawLiveText();
  // Erases, then draws, the live region.
  std::string Redrawn();
  // How many rows above the cursor the live region starts now: as drawn, or,
  // when the width changed on a terminal that re-wraps, as re-wrapped.
  int RowsAboveCursor() const;
  // Whether the footer was laid out for another width than the terminal's
  // now: it is not drawn until the session lays it out again (Wake()).
  bool FooterStale() const;
  std::string SpinnerLine() const;
  bool SpinnerVisible() const { return running_ && !paused_; }
  void StartMessage();
  void FinishMessage(const core::Item* item);
  void FinishReasoning();
  void ShowReasoning(std::string_view delta);  // without mutex_ held
  void Separate();

  Terminal& terminal_;
  Style style_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::thread spinner_;
  bool running_ = false;  // between BeginTurn and EndTurn
  bool paused_ = false;
  // What was printed while paused_: a question's menu is on the screen, drawn
  // again in place at each key, and would erase lines written under it. They
  // are printed, in order, once the question is answered (ResumeSpinner).
  std::vector<std::pair<std::string, bool>> held_;  // text, remember
  int frame_ = 0;
  std::string label_ = "Working";
  std::string reasoning_;  // for the spinner's headline
  bool hide_reasoning_ = false;
  bool show_raw_reasoning_ = false;
  std::chrono::steady_clock::time_point started_;
  std::optional<MarkdownRenderer> markdown_;      // while a message streams
  std::optional<MarkdownRenderer> reasoning_md_;  // while a reasoning summary streams
  bool printed_ = false;                          // something was printed in this turn
  std::string denied_call_;                       // NoteDenied's, until that call completes
  // Calls of one response run together: each call started and not yet
  // completed, with its output so far. The live region shows one of them,
  // `live_call_`: it stays on a call while that call prints, and moves to
  // another that prints once the shown one has been quiet for a second (or
  // has ended), so a silent call started last never hides a busy one.
  struct RunningCall {
    int64_t order = 0;    // start order
    std::string command;  // the shell command as shown ("" for other tools)
    OutputView output;
    std::chrono::steady_clock::time_point last_output;
  };
  std::map<std::string, RunningCall> calls_;
  int64_t started_calls_ = 0;
  std::string live_call_;  // a key of calls_, or ""
  // The call whose header was printed last (a completion under another
  // call's header names its own).
  std::string last_header_call_;
  // The call the live region should show now (with mutex_ held).
  std::string PickLiveCall() const;
  bool output_dirty_ = false;  // output arrived since the live region was drawn
  std::chrono::steady_clock::time_point output_drawn_at_;

  // The live region as drawn: whether the spinner line is in it, the
  // footer, and how many rows below the region's top the cursor sits.
  bool drawn_spinner_ = false;
  bool drawn_ = false;
  bool drawn_footer_ = false;
  int drawn_output_rows_ = 0;  // rows of command output above the spinner
  // The live region's lines as drawn, to find its top again after the
  // terminal re-wrapped them (RowsAboveCursor); the spinner's is line
  // spinner_line_ of them.
  DrawnLines drawn_lines_;
  int drawn_columns_ = 0;
  int columns_ = 0;  // the terminal's width, read under LockTerminal()
  size_t spinner_line_ = 0;
  int live_cursor_row_ = 0;
  EditorLayout footer_;
  bool has_footer_ = false;
  // What was printed above the live region, oldest first, to print it again
  // at a new width: text as printed, or an answer's Markdown source.
  struct Printed {
    std::string text;
    bool markdown = false;
    std::string shown;  // markdown: the lines printed of it so far
  };
  std::deque<Printed> log_;
  size_t log_bytes_ = 0;
  std::optional<size_t> open_answer_;  // log_ index of the answer streaming now
  int log_columns_ = 0;                // the width log_ was last printed at
  // The last lines printed above the live region (WriteAbove), as long as
  // nothing else wrote since (own_writes_ is the Terminal's count after our
  // last write): printed again after a width change (EraseLiveText).
  static constexpr size_t kAboveKept = 64;
  std::deque<std::string> above_;
  uint64_t own_writes_ = 0;
};

}  // namespace codex::cli
