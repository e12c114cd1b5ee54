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
  return ApplyReviewDecision(decision, plan, argv, &approvals_);
}

Result<CommandGate> ApprovalFlow::ApproveCommand(const Item& call,
                                                 const std::vector<std::string>& argv,
                                                 const std::string& cwd,
                                                 const EscalationRequest& escalation,
                                                 const CancelToken& cancel) {
  std::lock_guard<std::mutex> lock(mu_);
  CommandGate gate;
  ApprovalInput& input = gate.input;
  input.policy = config_.approval_policy;
  input.sandbox = config_.sandbox_mode;
  input.argv = argv;
  // Known-safe also needs the PATH the command will see to hold only
  // absolute directories (else a planted ./cat could run instead).
  input.known_safe = sandbox::IsKnownSafeCommand(
      argv, sandbox::LookupEnv(sandbox::BuildEnvironment(config_.shell_environment_policy,
                                                         sandbox::CurrentEnvironment()),
                               "PATH", "/usr/bin:/bin"));
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

ReviewOutcome::Action ApprovalFlow::RetryWithoutSandbox(
    const Item& call, const std::vector<std::string>& argv, const std::string& cwd,
    ApprovalInput& input, const CommandResult& failed, const CancelToken& cancel) {
  // Other failures (grep finding nothing, a failing test) are the model's to
  // handle: no point asking the user to lift the sandbox for them.
  if (!LooksLikeSandboxDenial(failed)) return ReviewOutcome::Action::kDenied;
  input.sandboxed_run_failed = true;
  ApprovalPlan retry = DecideApproval(input);
  if (retry.action != ApprovalPlan::Action::kAsk || retry.sandbox != SandboxChoice::kUnsandboxed) {
    return ReviewOutcome::Action::kDenied;
  }
  // The user decides on what the sandbox refused: its last words.
  const std::string& out = failed.output;
  retry.reason += "\n" + out.substr(out.size() > 400 ? out.size() - 400 : 0);
  return Ask(call, argv, cwd, retry, "", cancel).action;  // takes mu_
}

}  // namespace codex::core
