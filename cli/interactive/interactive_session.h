// InteractiveSession: the session behind RunInteractive (interactive_app.h),
// private to cli/interactive/. Its parts live apart: the input box's state
// in Composer, a turn driven with the composer live in LiveTurn, the screen
// in TurnView, the text commands print in session_reports.h. The class wires
// them to the engine and the conversation; its members are defined by
// concept: start, output, input and turns (interactive_app.cc), the slash
// commands and the session picker (session_commands.cc).
#pragma once

#include <stdio.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cli/interactive/approval_prompt.h"
#include "cli/interactive/composer.h"
#include "cli/interactive/interactive_app.h"
#include "cli/interactive/live_turn.h"
#include "cli/interactive/prompt_history.h"
#include "cli/interactive/slash_commands.h"
#include "cli/interactive/style.h"
#include "cli/interactive/terminal.h"
#include "cli/interactive/turn_view.h"
#include "cli/progress_printer.h"
#include "cli/session_controller.h"
#include "cli/terminal_text.h"
#include "core/undo.h"

namespace codex::cli::interactive_internal {

// Whether `text` (one submitted input) is blank.
bool Blank(std::string_view text);

// Without a terminal: every assistant message goes to stdout once, as it
// completes (so a message before a tool call is not lost either), and the
// rest of the progress to stderr.
class PlainObserver final : public core::TurnObserver {
 public:
  explicit PlainObserver(std::FILE* err) : progress_(err) {}

  void OnItemCompleted(const core::Item& item) override {
    if (item.kind != core::ItemKind::kMessage || item.role != "assistant") return;
    std::string text = core::MessageText(item);
    if (text.empty()) return;
    if (text.back() != '\n') text += '\n';
    PrintText(stdout, text);  // neutralised when stdout is a terminal
    std::fflush(stdout);
  }
  void OnToolStarted(const core::ToolActivity& a) override { progress_.OnToolStarted(a); }
  void OnToolCompleted(const core::ToolActivity& a) override { progress_.OnToolCompleted(a); }
  void OnCompaction(const core::CompactionNotice& n) override { progress_.OnCompaction(n); }
  void OnTurnFailed(const Status& s) override { progress_.OnTurnFailed(s); }
  void OnNotice(std::string_view m) override { progress_.OnNotice(m); }

 private:
  ProgressPrinter progress_;
};

// The session: the engine and the conversation it drives, the input read
// (the Composer on a terminal, lines otherwise), turns run (LiveTurn on a
// terminal) and the slash commands dispatched. What is drawn is the
// TurnView's; what the commands print comes from session_reports.h.
class InteractiveSession {
 public:
  InteractiveSession(const GlobalOptions& global, InteractiveOptions options);

  // OK when the session ends normally or no session was chosen in the picker;
  // otherwise why it could not start (main prints it, exit_codes.h).
  Status Run();

 private:
  // --- start and the engine ---
  // The terminal (or the plain observers), the engine and prompt history.
  // false when the user left at the trust question.
  Result<bool> Open();
  // "Trust this folder?" when it is to be asked (cli/interactive/trust_prompt.h),
  // then the sandbox and approval flags the trust gives the unnamed settings;
  // false when the user left instead of answering.
  Result<bool> ApplyTrust();
  // The conversation to start with: new, resumed, or picked.
  // Ok(false) when the picker was cancelled.
  Result<bool> OpenConversation(bool* resumed);
  Status StartEngine(const RunFlags& flags, std::unique_ptr<SessionController>* out);
  Status SwitchTo(core::SessionInfo session, bool announce);
  Result<std::optional<core::SessionInfo>> Pick(bool all);
  Status Reopen(const RunFlags& flags);
  // The engine and the open session's conversation (session_controller.h).
  Engine& engine() { return session_->engine(); }
  core::Conversation& conversation() { return session_->conversation(); }
  core::TurnObserver& observer() {
    return tty_ ? static_cast<core::TurnObserver&>(*view_)
                : static_cast<core::TurnObserver&>(*plain_);
  }

  // --- output ---
  // `Say` for results of commands, `Warn` for errors.
  void Say(std::string_view text);
  void Warn(std::string_view message);
  void Banner(bool resumed);
  void ReplayTranscript();

  // --- input ---
  std::optional<std::string> ReadInput();
  std::optional<std::string> ReadInputTty();
  std::optional<std::string> ReadInputPlain();
  // Acts on an event of the composer at the prompt; the submitted text, if any.
  std::optional<std::optional<std::string>> OnPromptEvent(const EditorEvent& ev);
  std::string FitToScreen(std::string_view text) const;
  void ShowComposer();
  // The footer under the prompt: model (and reasoning effort), context left,
  // the directory; set at each prompt (not read while a turn runs).
  void UpdateStatus();
  // Leaves `text` in the transcript as the submitted prompt.
  void EchoPrompt(const std::string& text);
  // Leaves the composer in the transcript as it is (leaving the session).
  void CommitComposer();
  // Esc-Esc: the user's messages of this session for the composer to walk.
  void StartBacktrack();
  // Branches the session just before the edited message (sent as an edit).
  Status ForkForEdit(std::optional<int64_t> target, const std::string& edit);

  // --- turns ---
  // Handles one submitted input: a "!cmd", a slash command or a prompt;
  // false to quit.
  bool Dispatch(const std::string& input);
  // Runs one user turn; failures are shown and the session goes on.
  void RunUserTurn(const std::string& text);
  // "!cmd": runs `command` under the session's sandbox, shows it like a tool
  // call, and records it and its output in the transcript for the model.
  void RunLocalShell(const std::string& command);
  // Appends `record` (a user message) to the session and reloads it.
  Status AppendUserRecord(const std::string& record);
  // The same for any item (/undo's developer message).
  Status AppendRecord(core::Item record);

  // --- slash commands ---
  // Runs a slash command; false to quit.
  bool RunSlash(const SlashCommand& cmd);
  void ForkCommand(const SlashCommand& cmd);
  void ResumeCommand(const SlashCommand& cmd);
  void ModelCommand(const SlashCommand& cmd);
  void ApprovalsCommand(const SlashCommand& cmd);
  void NewCommand();
  // more_commands.cc:
  void InitCommand();
  void PermissionsCommand(const SlashCommand& cmd);
  void CopyCommand();
  void ExportCommand(const SlashCommand& cmd);
  void McpCommand();
  void RenameCommand(const SlashCommand& cmd);
  // /review: a review session of its own (core/review.h), shown here as it runs.
  void ReviewCommand(const SlashCommand& cmd);
  void ShowStatus();
  void ShowSessions();
  void ShowDiff();
  void Compact();
  // undo_command.cc: /undo and the snapshots around each turn
  // (core/undo.h). The WorkspaceUndo of the current session, opened on
  // first use and again when the session changes; null when it cannot be.
  core::WorkspaceUndo* UndoForSession();
  void BeginUndoSnapshot();
  void EndUndoSnapshot(const std::string& turn_id);
  void UndoCommand();
  // A y/n question (Enter, Esc, Ctrl-C: no); the terminal's key or a stdin line.
  bool AskYesNo(const std::string& question);
  // The picker under the prompt (the one for /model, /approvals, /permissions,
  // /review; Composer::OpenChoice): choosing runs "/<command> <value>"; `title`
  // (if any) and how to choose are drawn above the items; `search` non-empty
  // makes typing filter them (its placeholder).
  void OpenChoice(const std::string& command, const std::string& current,
                  std::vector<Choice> choices, const std::string& title = "",
                  const std::string& search = "");

  GlobalOptions global_;  // a copy: /model EFFORT adds a -c override
  InteractiveOptions options_;
  RunFlags flags_;
  const bool tty_;
  Style style_;
  std::unique_ptr<Terminal> terminal_;
  std::unique_ptr<TurnView> view_;
  std::unique_ptr<LiveTurn> live_;
  std::unique_ptr<ApprovalPrompt> approvals_;
  std::unique_ptr<SessionController> session_;  // the engine and the open session
  std::unique_ptr<PromptHistory> history_;
  std::unique_ptr<PlainObserver> plain_;
  Composer composer_;
  std::optional<EditTarget> pending_edit_;  // set when an edited message was sent
  core::TokenUsage usage_;                  // this run's usage, all sessions
  // Steered messages sent again as a turn of their own (too late for theirs):
  // already in history.jsonl.
  std::multiset<std::string> in_history_;
  std::unique_ptr<core::WorkspaceUndo> undo_;
  std::string undo_warned_for_;  // the session told why its snapshots are off (once)
};

}  // namespace codex::cli::interactive_internal
