#include "core/approval.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace codex::core {
namespace {

ApprovalPlan Run(SandboxChoice sandbox) { return {ApprovalPlan::Action::kRun, sandbox, ""}; }

ApprovalPlan Ask(SandboxChoice sandbox, std::string reason) {
  return {ApprovalPlan::Action::kAsk, sandbox, std::move(reason)};
}

ApprovalPlan Reject(std::string reason) {
  return {ApprovalPlan::Action::kReject, SandboxChoice::kSandboxed, std::move(reason)};
}

bool MayAsk(ApprovalPolicy policy) { return policy != ApprovalPolicy::kNever; }

}  // namespace

ApprovalPlan DecideApproval(const ApprovalInput& in) {
  const bool full_access = in.sandbox == SandboxMode::kDangerFullAccess;

  if (in.sandboxed_run_failed) {
    // Only on-failure (and untrusted, which asks about everything anyway)
    // offer the unsandboxed retry; otherwise the failure is the model's.
    if (full_access) return Reject("the command failed; there is no sandbox to lift");
    if (in.session_approval == SandboxChoice::kUnsandboxed) return Run(SandboxChoice::kUnsandboxed);
    if (in.policy == ApprovalPolicy::kOnFailure || in.policy == ApprovalPolicy::kUntrusted) {
      return Ask(SandboxChoice::kUnsandboxed,
                 "the command failed in the sandbox; run it again without the sandbox?");
    }
    if (in.policy == ApprovalPolicy::kOnRequest) {
      return Reject(
          "the command failed in the sandbox; request escalated permissions if it needs to run "
          "outside it");
    }
    return Reject(
        "the command failed in the sandbox (approval policy 'never': no retry outside it)");
  }

  if (full_access) {
    // Nothing to escalate to; only untrusted still asks.
    if (in.policy != ApprovalPolicy::kUntrusted || in.known_safe || in.session_approval) {
      return Run(SandboxChoice::kUnsandboxed);
    }
    return Ask(SandboxChoice::kUnsandboxed, "the command is not on the known-safe list");
  }

  if (in.escalation_requested) {
    if (in.session_approval == SandboxChoice::kUnsandboxed) return Run(SandboxChoice::kUnsandboxed);
    if (!MayAsk(in.policy)) {
      return Reject(
          "running outside the sandbox is not possible with approval policy 'never'; run the "
          "command without escalated permissions");
    }
    return Ask(SandboxChoice::kUnsandboxed, "the model asks to run this outside the sandbox");
  }

  if (!in.sandbox_available) {
    if (in.session_approval == SandboxChoice::kUnsandboxed) return Run(SandboxChoice::kUnsandboxed);
    if (!MayAsk(in.policy)) {
      return Reject(
          "the sandbox is not available (Landlock is missing) and approval policy 'never' "
          "forbids running without it");
    }
    return Ask(SandboxChoice::kUnsandboxed,
               "the sandbox is not available on this kernel (no Landlock); run without it?");
  }

  if (in.session_approval) return Run(*in.session_approval);
  if (in.known_safe) return Run(SandboxChoice::kSandboxed);
  if (in.policy == ApprovalPolicy::kUntrusted) {
    return Ask(SandboxChoice::kSandboxed, "the command is not on the known-safe list");
  }
  return Run(SandboxChoice::kSandboxed);
}

bool LooksLikeSandboxDenial(const CommandResult& result) {
  if (result.exit_code == 0 || result.timed_out) return false;
  static constexpr std::array<std::string_view, 8> kMarkers = {
      "permission denied",         "operation not permitted",
      "read-only file system",     "network is unreachable",
      "could not resolve host",    "temporary failure in name resolution",
      "name or service not known", "failed to connect"};
  std::string lower = result.output;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return std::any_of(kMarkers.begin(), kMarkers.end(), [&](std::string_view marker) {
    return lower.find(marker) != std::string::npos;
  });
}

ReviewDecision DenyAllApprover::Review(const ApprovalRequest& request, const CancelToken& cancel) {
  (void)request;
  (void)cancel;
  return ReviewDecision::kDeny;
}

void SessionApprovals::Approve(const std::vector<std::string>& argv, SandboxChoice sandbox) {
  auto [it, inserted] = approved_.emplace(argv, sandbox);
  if (!inserted && sandbox == SandboxChoice::kUnsandboxed) it->second = sandbox;
}

std::optional<SandboxChoice> SessionApprovals::Find(const std::vector<std::string>& argv) const {
  auto it = approved_.find(argv);
  if (it == approved_.end()) return std::nullopt;
  return it->second;
}

ReviewOutcome ApplyReviewDecision(ReviewDecision decision, const ApprovalPlan& plan,
                                  const std::vector<std::string>& argv,
                                  SessionApprovals* approvals) {
  switch (decision) {
    case ReviewDecision::kApproveForSession:
      if (approvals != nullptr) approvals->Approve(argv, plan.sandbox);
      return {ReviewOutcome::Action::kRun, plan.sandbox};
    case ReviewDecision::kApproveOnce:
      return {ReviewOutcome::Action::kRun, plan.sandbox};
    case ReviewDecision::kDeny:
      return {ReviewOutcome::Action::kDenied, plan.sandbox};
    case ReviewDecision::kAbort:
      break;
  }
  return {ReviewOutcome::Action::kAbortTurn, plan.sandbox};
}

std::string_view ReviewDecisionName(ReviewDecision decision) {
  switch (decision) {
    case ReviewDecision::kApproveOnce:
      return "approve once";
    case ReviewDecision::kApproveForSession:
      return "approve for session";
    case ReviewDecision::kDeny:
      return "deny";
    case ReviewDecision::kAbort:
      break;
  }
  return "abort";
}

nlohmann::ordered_json EscalationProperties() {
  return nlohmann::ordered_json{
      {kSandboxPermissionsField,
       {{"type", "string"},
        {"description",
         "Per-command sandbox override. Defaults to `use_default`; use `require_escalated` for "
         "unsandboxed execution."}}},
      {kJustificationField,
       {{"type", "string"},
        {"description",
         "User-facing approval question for `require_escalated`; omit otherwise."}}}};
}

bool DeclaresEscalation(ApprovalPolicy policy) { return policy == ApprovalPolicy::kOnRequest; }

Result<EscalationRequest> ParseEscalation(const nlohmann::ordered_json& args,
                                          ApprovalPolicy policy) {
  EscalationRequest out;
  // Fields the tool does not declare under this policy (or that no policy
  // declares, such as an older `with_escalated_permissions`) are ignored:
  // the command runs as any other, in the sandbox.
  if (!DeclaresEscalation(policy)) return out;
  if (auto p = args.find(kSandboxPermissionsField); p != args.end() && !p->is_null()) {
    const std::string value = p->is_string() ? p->get<std::string>() : std::string();
    if (value == "require_escalated") {
      out.escalate = true;
    } else if (value != "use_default") {
      return InvalidArgumentError(std::string("`") + kSandboxPermissionsField +
                                  "` must be \"use_default\" or \"require_escalated\"");
    }
  }
  // The question is for the user who is asked; without escalation nobody is.
  if (auto j = args.find(kJustificationField); out.escalate && j != args.end() && j->is_string()) {
    out.justification = j->get<std::string>();
  }
  return out;
}

}  // namespace codex::core
