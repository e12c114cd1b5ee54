// The approval flow of the tools that run things: whether a command may run
// (the decision table of core/approval.h over the session's policies, what
// the user approved for the session, and the known-safe rule), asking the
// Approver when the table says ask, and the on-failure offer to rerun a
// sandboxed command outside the sandbox. One path for every tool that runs
// commands (shell, exec_command); apply_patch and MCP calls ask through Ask.
// Without an approver (a non-interactive run) every request is declined and
// the model is told why. Thread-safe (tool calls of one response run
// together): one question at a time — every approver question and every
// read or change of the session's approvals holds one mutex, so prompts
// never interleave and the second of two identical commands sees what the
// user answered to the first; once the user stops the turn at one call's
// question, no other call of it is asked anything. Borrows the config,
// approver and observer for its lifetime.
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "base/status.h"
#include "core/approval.h"
#include "core/cancel.h"
#include "core/command_runner.h"
#include "core/config.h"
#include "core/item.h"
#include "core/turn_observer.h"

namespace codex::core {

// Whether and how a command may run.
struct CommandGate {
  bool run = false;
  SandboxChoice choice = SandboxChoice::kSandboxed;
  std::string refusal;  // why not, for the model, when !run
  bool stop = false;    // the user stopped the turn
  // The user said no: `refusal` is Codex's bare kRejectedByUser, the
  // whole output the model gets.
  bool rejected_by_user = false;
  ApprovalInput input;  // what was decided on (for an on-failure retry)
};

class ApprovalFlow {
 public:
  // `approver` answers approval requests; null = decline every request (the
  // model is told, and `observer` gets a notice naming the command).
  ApprovalFlow(const Config& config, Approver* approver, TurnObserver& observer);

  // The gate for `argv` run in `cwd` by `call`, with the escalation the model
  // asked for. kCancelled when `cancel` fired while the user was asked, or
  // when the user already stopped the turn at another call's question.
  Result<CommandGate> ApproveCommand(const Item& call, const std::vector<std::string>& argv,
                                     const std::string& cwd, const EscalationRequest& escalation,
                                     const CancelToken& cancel);
  // on-failure: a sandboxed run of `argv` that failed like a sandbox denial
  // (LooksLikeSandboxDenial) may be rerun without the sandbox when the policy
  // says so (DecideApproval with sandboxed_run_failed), after asking the user
  // with the run's last words. kRun = rerun unsandboxed; kAbortTurn = the user
  // stopped the turn; kDenied = keep the failed run (also when no rerun is
  // offered: on-request and never leave it to the model, as Codex does). A
  // command approved outside the sandbox for the session since the gate (by a
  // call running beside this one) is rerun without asking. kCancelled when
  // the user already stopped the turn at another call's question.
  Result<ReviewOutcome::Action> RetryWithoutSandbox(const Item& call,
                                                    const std::vector<std::string>& argv,
                                                    const std::string& cwd, ApprovalInput& input,
                                                    const CommandResult& failed,
                                                    const CancelToken& cancel);
  // Asks the approver about `plan` (a kAsk plan), remembering an approval for
  // the session. `justification` is the model's question when it asked for
  // escalation.
  ReviewOutcome Ask(const Item& call, const std::vector<std::string>& argv, const std::string& cwd,
                    const ApprovalPlan& plan, const std::string& justification,
                    const CancelToken& cancel);

  // A new turn: a stop the user gave in the last one no longer holds. Once
  // the user answers a question with stop, every later question of the turn
  // (a call running beside the stopped one) is answered stop without asking.
  void BeginTurn();

  // Whether a user can be asked (an approver is attached).
  bool can_ask() const { return approver_ != nullptr; }
  // The approver (null = none), for request_user_input's questions.
  Approver* approver() const { return approver_; }
  // What the user approved for the session (commands, and MCP tools under
  // the key {"mcp", server, tool}), as now.
  SessionApprovals approvals() const {
    std::lock_guard<std::mutex> lock(mu_);
    return approvals_;
  }

 private:
  // Ask, with mu_ held.
  ReviewOutcome AskLocked(const Item& call, const std::vector<std::string>& argv,
                          const std::string& cwd, const ApprovalPlan& plan,
                          const std::string& justification, const CancelToken& cancel);

  const Config& config_;
  Approver* approver_;
  mutable std::mutex mu_;  // one question at a time; guards approvals_
  SessionApprovals approvals_;
  bool stopped_ = false;  // the user stopped this turn at a question; guarded by mu_
  TurnObserver& observer_;
};

}  // namespace codex::core
