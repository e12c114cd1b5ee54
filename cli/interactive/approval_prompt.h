// The CLI side of approvals (core::Approver): the question put to the user
// before a command runs or a patch is applied, and the two ways of asking
// it: on the terminal (a menu with the command or the diff shown; y / a / n /
// Esc, or arrows + Enter) and on plain stdin/stdout (the question on stderr,
// the answer read as a line).
//
// The tool router remembers commands approved for the session; patches
// (which it asks about every time) are remembered here, by their set of
// files, so "don't ask again for these files" holds. Not thread-safe: the
// tool router asks one question at a time (core/approval_flow.h), from the
// turn's thread or from the thread of a call running beside others.
#pragma once

#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "cli/interactive/style.h"
#include "core/approval.h"

namespace codex::cli {

class Terminal;
class TurnView;

enum class ApprovalKind { kCommand, kPatch };

struct ApprovalQuestion {
  ApprovalKind kind = ApprovalKind::kCommand;
  std::string call_id;             // the tool call asking (ApprovalRequest::call_id)
  std::string command;             // kCommand: the command as the user would type it
  std::string cwd;                 // kCommand: where it runs
  std::string reason;              // kCommand: why approval is needed ("" = not given)
  std::string justification;       // kCommand: the model's own question ("" = none given)
  bool unsandboxed = false;        // kCommand: it would run outside the sandbox
  std::string diff;                // kPatch: the patch text or unified diff
  std::vector<std::string> files;  // kPatch: the files it touches
  // kCommand: the words the "don't ask again for commands that start with"
  // answer would remember; empty when not offered (a compound script or a
  // command of fewer than three words). Given for a run outside the sandbox,
  // it covers later runs outside it too; given for a sandboxed run, only
  // sandboxed ones.
  std::vector<std::string> prefix;
};

// Whether a sandboxed command (`words`, as the user would type them) starts
// with the remembered `prefix`, word for word.
bool MatchesPrefix(const std::vector<std::string>& words, const std::vector<std::string>& prefix);

// The question for a request of the tool router: a patch when argv is
// {"apply_patch", files...} (the reason then holds the diff), else a command.
ApprovalQuestion QuestionFor(const core::ApprovalRequest& request);

// A one-line account of the answer ("command approved for the session").
std::string DescribeDecision(const ApprovalQuestion& question, core::ReviewDecision decision);

class ApprovalPrompt : public core::Approver {
 public:
  // Answers kAbort without asking once `cancel` is set; patches approved
  // for the session are approved again without asking.
  core::ReviewDecision Review(const core::ApprovalRequest& request,
                              const core::CancelToken& cancel) override;
  // Forgets the session approvals (a new or resumed session).
  void ResetSession() {
    approved_patches_.clear();
    approved_prefixes_.clear();
  }

 protected:
  virtual core::ReviewDecision AskUser(const ApprovalQuestion& question) = 0;
  // For AskUser: the user approved every sandboxed command starting with
  // `prefix` for the session (it then answers kApproveOnce).
  void ApprovePrefix(std::vector<std::string> prefix, bool outside_sandbox) {
    bool& outside = approved_prefixes_[std::move(prefix)];
    outside = outside || outside_sandbox;
  }

 private:
  std::set<std::vector<std::string>> approved_patches_;
  std::map<std::vector<std::string>, bool> approved_prefixes_;  // prefix -> outside the sandbox too
};

// The terminal menu. `view` hides its live region while the menu is up.
// The turn runs on its own thread while another one reads the keys, so the
// menu is handed to that thread through `run_on_ui` (which runs a closure
// there and returns when it has run); without one it runs on the caller's.
//
// It also puts request_user_input's questions (core/user_input.h), one at a
// time as Codex 0.169 does: "Question 1/2 (2 unanswered)", the question, its
// options numbered with their descriptions, and "None of the above"; arrows
// or a digit select, Tab adds notes to the selected answer (typed in place;
// Tab or Esc again clears them), Enter answers and goes to the next
// question, Esc or Ctrl-C interrupts the turn. Every text from the model is
// drawn terminal-safe. Once answered, a summary stays in the transcript.
class TtyApprovalPrompt final : public ApprovalPrompt {
 public:
  using RunOnUi = std::function<void(const std::function<void()>&)>;
  TtyApprovalPrompt(Terminal& terminal, TurnView& view, const Style& style,
                    RunOnUi run_on_ui = nullptr)
      : terminal_(terminal), view_(view), style_(style), run_on_ui_(std::move(run_on_ui)) {}

  Result<std::optional<std::vector<core::UserInputAnswer>>> AskUserInput(
      const std::vector<core::UserInputQuestion>& questions,
      const core::CancelToken& cancel) override;

 protected:
  core::ReviewDecision AskUser(const ApprovalQuestion& question) override;

 private:
  core::ReviewDecision AskHere(const ApprovalQuestion& question);
  // The question form; nullopt when the user interrupted.
  std::optional<std::vector<core::UserInputAnswer>> AskQuestionsHere(
      const std::vector<core::UserInputQuestion>& questions);

  Terminal& terminal_;
  TurnView& view_;
  Style style_;
  RunOnUi run_on_ui_;
};

// The line prompt: the question on `err`, the answer a line of `in`
// (y, a, n, s or the words yes, always, no, stop; EOF = stop).
// request_user_input's questions are put the same way, one by one: a line
// holding an option's number picks it, any other text is "None of the
// above" with that text as the note; EOF interrupts the turn.
class LineApprovalPrompt final : public ApprovalPrompt {
 public:
  LineApprovalPrompt(std::FILE* in, std::FILE* err) : in_(in), err_(err) {}

  Result<std::optional<std::vector<core::UserInputAnswer>>> AskUserInput(
      const std::vector<core::UserInputQuestion>& questions,
      const core::CancelToken& cancel) override;

 protected:
  core::ReviewDecision AskUser(const ApprovalQuestion& question) override;

 private:
  std::FILE* in_;
  std::FILE* err_;
};

// One line of a unified diff (file names and contents are untrusted),
// neutralised (cli/terminal_text.h) then coloured: headers bold, + green,
// - red, @@ cyan. Used by the approval prompt and /diff.
std::string StyledDiffLine(const Style& style, std::string_view line);

// request_user_input's form for `questions[index]` with option `selected`
// (the last is "None of the above") and the notes being typed (`notes` open
// or not), as drawn: each line ends "\r\n"; model text neutralised.
std::string DescribeUserInputQuestion(const std::vector<core::UserInputQuestion>& questions,
                                      size_t index, size_t selected, bool notes_open,
                                      const std::string& notes, const Style& style);
// What stays in the transcript once every question is answered (Codex's
// "Questions 2/2 answered" and each answer and note), neutralised.
std::string DescribeUserInputAnswers(const std::vector<core::UserInputQuestion>& questions,
                                     const std::vector<core::UserInputAnswer>& answers,
                                     const Style& style);

// The question as text lines (header, command or diff excerpt), styled.
std::string DescribeApproval(const ApprovalQuestion& question, const Style& style,
                             int max_diff_lines);

}  // namespace codex::cli
