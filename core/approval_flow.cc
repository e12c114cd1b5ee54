#include "core/approval_flow.h"

#include "base/shell.h"
#include "sandbox/environment.h"
#include "sandbox/landlock.h"
#include "sandbox/safe_command.h"

namespace codex::core {

ApprovalFlow::ApprovalFlow(const Config& config, Approver* approver, TurnObserver& observer)
    : config_(config), approver_(approver), observer_(observer) {}

ReviewOutcome ApprovalFlow::Ask(const Item& call, const std::vector<std::string>& argv,
                                const std::string& cwd, const ApprovalPlan& plan,
                                const std::string& justification, const CancelToken& cancel) {
  std::lock_guard<std::mutex> lock(mu_);
  return AskLocked(call, argv, cwd, plan, justification, cancel);
}

ReviewOutcome ApprovalFlow::AskLocked(const Item& call, const std::vector<std::string>& argv,
                                      const std::string& cwd, const ApprovalPlan& plan,
                                      const std::string& justification, const CancelToken& cancel) {
  ApprovalRequest request;
  request.call_id = call.call_id;
  request.argv = argv;
  request.cwd = cwd;
  request.sandbox = plan.sandbox;
  request.reason = plan.reason;
  request.justification = justification;
  if (stopped_) {
    // The user stopped this turn at another call's question: the turn is
    // over, nothing more is asked in it.
    return {ReviewOutcome::Action::kAbortTurn, plan.sandbox};
  }
  if (approver_ == nullptr) {
    // Non-interactive: nobody can answer, so the request is declined.
    observer_.OnNotice("`" + ShellJoin(argv) + "` needs approval under the " +
                       std::string(ApprovalPolicyName(config_.approval_policy)) +
                       " policy; declined because this run cannot ask");
    ReviewOutcome declined;
    declined.action = ReviewOutcome::Action::kDenied;
    return declined;
  }
  const ReviewDecision decision = approver_->Review(request, cancel);
  // Set before the lock is let go: a call running beside this one must not
  // get its question in between the user's stop and the group's cancel.
  if (decision == ReviewDecision::kAbort) stopped_ = true;
  return ApplyReviewDecision(decision, plan, argv, &approvals_);
}

Result<CommandGate> ApprovalFlow::ApproveCommand(const Item& call,
                                                 const std::vector<std::string>& argv,
                                                 const std::string& cwd,
                                                 const EscalationRequest& escalation,
                                                 const CancelToken& cancel) {
  std::lock_guard<std::mutex> lock(mu_);
  // Another call of the group stopped the turn: this one does not start, as
  // one after a stopped call would not.
  if (stopped_) return CancelledError("the user stopped the turn");
  CommandGate gate;
  ApprovalInput& input = gate.input;
  input.policy = config_.approval_policy;
  input.sandbox = config_.sandbox_mode;
  input.argv = argv;
  // Known-safe also needs the PATH the command will see to hold only
  // absolute directories (else a planted ./cat could run instead).
  input.known_safe = sandbox::IsKnownSafeCommand(
      argv, sandbox::PolicyValueOf(config_.shell_environment_policy, "PATH", "/usr/bin:/bin"));
  input.escalation_requested = escalation.escalate;
  input.sandbox_available =
      config_.sandbox_mode == SandboxMode::kDangerFullAccess || sandbox::landlock::AbiVersion() > 0;
  input.session_approval = approvals_.Find(argv);
  ApprovalPlan plan = DecideApproval(input);
  gate.choice = plan.sandbox;
  if (plan.action == ApprovalPlan::Action::kReject) {
    gate.refusal = "command rejected: " + plan.reason;
    return gate;
  }
  if (plan.action == ApprovalPlan::Action::kAsk) {
    ReviewOutcome review = AskLocked(call, argv, cwd, plan, escalation.justification, cancel);
    if (cancel.cancelled()) return CancelledError("interrupted");
    if (review.action == ReviewOutcome::Action::kDenied) {
      gate.rejected_by_user = approver_ != nullptr;
      gate.refusal = approver_ != nullptr
                         ? std::string(kRejectedByUser)
                         : "this command needs the user's approval, which a non-interactive run "
                           "cannot ask for; do without it or ask the user to rerun with another "
                           "approval policy";
      return gate;
    }
    if (review.action == ReviewOutcome::Action::kAbortTurn) {
      gate.refusal = "the user denied running this command and stopped the turn";
      gate.stop = true;
      return gate;
    }
    gate.choice = review.sandbox;
  }
  gate.run = true;
  return gate;
}

Result<ReviewOutcome::Action> ApprovalFlow::RetryWithoutSandbox(
    const Item& call, const std::vector<std::string>& argv, const std::string& cwd,
    ApprovalInput& input, const CommandResult& failed, const CancelToken& cancel) {
  // Other failures (grep finding nothing, a failing test) are the model's to
  // handle: no point asking the user to lift the sandbox for them.
  if (!LooksLikeSandboxDenial(failed)) return ReviewOutcome::Action::kDenied;
  std::lock_guard<std::mutex> lock(mu_);
  if (stopped_) return CancelledError("the user stopped the turn");
  input.sandboxed_run_failed = true;
  // What the user approved since this call's gate: a call running beside
  // this one may have had the same command approved outside the sandbox for
  // the session, which holds here as it would for a call after it.
  input.session_approval = approvals_.Find(argv);
  ApprovalPlan retry = DecideApproval(input);
  if (retry.sandbox != SandboxChoice::kUnsandboxed) return ReviewOutcome::Action::kDenied;
  if (retry.action == ApprovalPlan::Action::kRun) return ReviewOutcome::Action::kRun;
  if (retry.action != ApprovalPlan::Action::kAsk) return ReviewOutcome::Action::kDenied;
  // The user decides on what the sandbox refused: its last words.
  const std::string& out = failed.output;
  retry.reason += "\n" + out.substr(out.size() > 400 ? out.size() - 400 : 0);
  return AskLocked(call, argv, cwd, retry, "", cancel).action;
}

void ApprovalFlow::BeginTurn() {
  std::lock_guard<std::mutex> lock(mu_);
  stopped_ = false;
}

}  // namespace codex::core
