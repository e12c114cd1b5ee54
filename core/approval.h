// The approval policy: whether a command the model wants to run may run, in
// or out of the sandbox, with or without asking the user. Pure decisions plus
// the seam (Approver) through which the CLI asks.
//
// Semantics (as in Codex), for the sandboxed modes read-only and
// workspace-write:
//   untrusted   ask before anything that is not known-safe;
//   on-failure  run everything in the sandbox; when a sandboxed run fails,
//               ask whether to rerun it without the sandbox;
//   on-request  run in the sandbox; ask only when the model requests
//               escalated permissions (to run outside the sandbox);
//   never       never ask: run in the sandbox, failures go back to the model,
//               escalation requests are rejected.
// Known-safe commands (sandbox/safe_command.h) never need asking, but still
// run in the sandbox. A command the user approved "for the session" runs again
// without asking, the way it was approved. With danger-full-access there is
// no sandbox: only untrusted asks. Without Landlock the sandbox is
// unavailable: policies that may ask offer to run unsandboxed, `never`
// rejects. Pure functions; SessionApprovals is thread-compatible.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "core/cancel.h"
#include "core/command_runner.h"
#include "core/config.h"
#include "core/user_input.h"

namespace codex::core {

// How a command runs once it may run.
enum class SandboxChoice { kSandboxed, kUnsandboxed };

struct ApprovalInput {
  ApprovalPolicy policy = ApprovalPolicy::kOnRequest;
  SandboxMode sandbox = SandboxMode::kWorkspaceWrite;
  std::vector<std::string> argv;
  bool known_safe = false;            // sandbox::IsKnownSafeCommand(argv)
  bool escalation_requested = false;  // the model asked to run outside the sandbox
  // Deciding about a retry: the sandboxed run of this command just failed.
  bool sandboxed_run_failed = false;
  bool sandbox_available = true;  // false when the kernel lacks Landlock
  // How the user approved this exact argv earlier in the session, if they did
  // ("approve for the session"); see SessionApprovals.
  std::optional<SandboxChoice> session_approval;
};

struct ApprovalPlan {
  enum class Action {
    kRun,     // run now as `sandbox` says, without asking
    kAsk,     // ask the user; if approved, run as `sandbox` says
    kReject,  // do not run; `reason` goes back to the model
  };
  Action action = Action::kReject;
  SandboxChoice sandbox = SandboxChoice::kSandboxed;
  // Why: shown to the user for kAsk, returned to the model for kReject.
  std::string reason;
};

// The decision table described above.
ApprovalPlan DecideApproval(const ApprovalInput& input);

// Heuristic for ApprovalInput::sandboxed_run_failed: a sandboxed run that
// exited non-zero (not by timeout) and whose output mentions a denied
// operation ("Permission denied", "Operation not permitted", "Read-only file
// system") or failed name resolution / connection (the network is off). A
// plain failure such as `grep` finding nothing does not count, so the user is
// not asked to lift the sandbox for it.
bool LooksLikeSandboxDenial(const CommandResult& result);

// What a user can answer.
enum class ReviewDecision {
  kApproveOnce,        // run this time
  kApproveForSession,  // run, and run this exact command again without asking
  kDeny,               // do not run; tell the model it was denied
  kAbort,              // do not run, and stop the turn
};

// What the CLI shows when asking.
struct ApprovalRequest {
  std::string call_id;
  std::vector<std::string> argv;
  std::string cwd;
  SandboxChoice sandbox = SandboxChoice::kSandboxed;  // how it would run
  std::string reason;                                 // ApprovalPlan::reason
  // The model's question to the user when it asked for escalation (the
  // shell tool's `justification`), shown as given; "" when none.
  std::string justification;
};

// The user side of approvals, implemented by the CLI: `codex exec` never
// asks (it answers kDeny, so with a policy that asks, the model is told),
// the interactive UI asks on the terminal. Called one question at a time
// (ApprovalFlow's mutex), on the session's thread or on the thread of a
// call running beside others of its response.
class Approver {
 public:
  virtual ~Approver() = default;
  // Blocks until the user answers; returns kAbort when `cancel` is set.
  virtual ReviewDecision Review(const ApprovalRequest& request, const CancelToken& cancel) = 0;
  // request_user_input (core/user_input.h): puts `questions` to the user and
  // blocks until every one is answered; nullopt when no one can answer here
  // (the model then gets {"answers":{}}, as from Codex's `exec`); kCancelled
  // when the user interrupted instead (Esc, Ctrl-C: the turn stops) or
  // `cancel` fired.
  virtual Result<std::optional<std::vector<UserInputAnswer>>> AskUserInput(
      const std::vector<UserInputQuestion>& questions, const CancelToken& cancel) {
    (void)questions;
    (void)cancel;
    return std::optional<std::vector<UserInputAnswer>>();
  }
};

// An Approver for non-interactive runs: denies every request.
class DenyAllApprover : public Approver {
 public:
  ReviewDecision Review(const ApprovalRequest& request, const CancelToken& cancel) override;
};

// The commands approved "for the session": exact argv -> how it may run.
// Approving unsandboxed also covers sandboxed runs of the same argv.
class SessionApprovals {
 public:
  void Approve(const std::vector<std::string>& argv, SandboxChoice sandbox);
  std::optional<SandboxChoice> Find(const std::vector<std::string>& argv) const;

 private:
  std::map<std::vector<std::string>, SandboxChoice> approved_;
};

// The step after the user answered a kAsk plan.
struct ReviewOutcome {
  enum class Action { kRun, kDenied, kAbortTurn };
  Action action = Action::kDenied;
  SandboxChoice sandbox = SandboxChoice::kSandboxed;
};

// Turns the answer into the next step, remembering kApproveForSession in
// `approvals` (may be null when the session keeps none).
ReviewOutcome ApplyReviewDecision(ReviewDecision decision, const ApprovalPlan& plan,
                                  const std::vector<std::string>& argv,
                                  SessionApprovals* approvals);

// "approve once" | "approve for session" | "deny" | "abort".
std::string_view ReviewDecisionName(ReviewDecision decision);

// --- Escalation, Codex's way ---
// Under on-request a command tool declares two more parameters, named, typed
// and described as Codex 0.169 declares them: `sandbox_permissions` (a
// string: "use_default", or "require_escalated" to run outside the sandbox)
// and `justification` (the question shown to the user). Any command tool
// (shell today; exec_command later) declares them with EscalationProperties
// and reads them with ParseEscalation, so what is honoured is exactly what is
// declared: under other policies, or for an undeclared field such as an older
// `with_escalated_permissions`, nothing escalates. A denied request is
// reported to the model as kRejectedByUser, Codex's own output.
inline constexpr const char* kSandboxPermissionsField = "sandbox_permissions";
inline constexpr const char* kJustificationField = "justification";
inline constexpr std::string_view kRejectedByUser = "exec command rejected by user";

struct EscalationRequest {
  bool escalate = false;      // sandbox_permissions == "require_escalated"
  std::string justification;  // the model's question ("" = none); only with escalate
};

// Whether command tools declare the escalation fields under `policy`.
bool DeclaresEscalation(ApprovalPolicy policy);

// The two parameter schemas, to add to a tool's "properties".
nlohmann::ordered_json EscalationProperties();

// The escalation a call's arguments ask for under `policy`. kInvalidArgument
// (the message goes back to the model) for a `sandbox_permissions` that is
// neither value.
Result<EscalationRequest> ParseEscalation(const nlohmann::ordered_json& args,
                                          ApprovalPolicy policy);

}  // namespace codex::core
