// The CLI side of approvals (core::Approver): the question put to the user
// before a command runs or a patch is applied, and the two ways of asking
// it: on the terminal (a menu with the command or the diff shown; y / a / n /
// Esc, or arrows + Enter) and on plain stdin/stdout (the question on stderr,
// the answer read as a line).
//
// The tool router remembers commands approved for the session; patches
// (which it asks about every time) are remembered here, by their set of
// files, so "don't ask again for these files" holds. Not thread-safe: the
// turn loop asks on its own thread.
#pragma once

#include <cstdio>
#include <functional>
#include <map>
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
class TtyApprovalPrompt final : public ApprovalPrompt {
 public:
  using RunOnUi = std::function<void(const std::function<void()>&)>;
  TtyApprovalPrompt(Terminal& terminal, TurnView& view, const Style& style,
                    RunOnUi run_on_ui = nullptr)
      : terminal_(terminal), view_(view), style_(style), run_on_ui_(std::move(run_on_ui)) {}

 protected:
  core::ReviewDecision AskUser(const ApprovalQuestion& question) override;

 private:
  core::ReviewDecision AskHere(const ApprovalQuestion& question);

  Terminal& terminal_;
  TurnView& view_;
  Style style_;
  RunOnUi run_on_ui_;
};

// The line prompt: the question on `err`, the answer a line of `in`
// (y, a, n, s or the words yes, always, no, stop; EOF = stop).
class LineApprovalPrompt final : public ApprovalPrompt {
 public:
  LineApprovalPrompt(std::FILE* in, std::FILE* err) : in_(in), err_(err) {}

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

// The question as text lines (header, command or diff excerpt), styled.
std::string DescribeApproval(const ApprovalQuestion& question, const Style& style,
                             int max_diff_lines);

}  // namespace codex::cli
