#include "core/approval.h"

#include <catch2/catch.hpp>

using namespace codex::core;
using Action = ApprovalPlan::Action;

namespace {

constexpr auto kUntrusted = ApprovalPolicy::kUntrusted;
constexpr auto kOnFailure = ApprovalPolicy::kOnFailure;
constexpr auto kOnRequest = ApprovalPolicy::kOnRequest;
constexpr auto kNever = ApprovalPolicy::kNever;
constexpr auto kSandboxed = SandboxChoice::kSandboxed;
constexpr auto kUnsandboxed = SandboxChoice::kUnsandboxed;

ApprovalInput Input(ApprovalPolicy policy, SandboxMode mode = SandboxMode::kWorkspaceWrite) {
  ApprovalInput in;
  in.policy = policy;
  in.sandbox = mode;
  in.argv = {"cargo", "build"};
  return in;
}

void Expect(const ApprovalInput& in, Action action, SandboxChoice sandbox) {
  ApprovalPlan plan = DecideApproval(in);
  INFO("policy " << ApprovalPolicyName(in.policy) << ", sandbox " << SandboxModeName(in.sandbox)
                 << ", safe " << in.known_safe << ", escalate " << in.escalation_requested
                 << ", failed " << in.sandboxed_run_failed);
  CHECK(plan.action == action);
  if (action != Action::kReject) CHECK(plan.sandbox == sandbox);
  if (action != Action::kRun) CHECK_FALSE(plan.reason.empty());
}

}  // namespace

TEST_CASE("First run of an ordinary command, in a sandboxed mode") {
  for (SandboxMode mode : {SandboxMode::kReadOnly, SandboxMode::kWorkspaceWrite}) {
    Expect(Input(kUntrusted, mode), Action::kAsk, kSandboxed);
    Expect(Input(kOnFailure, mode), Action::kRun, kSandboxed);
    Expect(Input(kOnRequest, mode), Action::kRun, kSandboxed);
    Expect(Input(kNever, mode), Action::kRun, kSandboxed);
  }
}

TEST_CASE("Known-safe commands never ask and still run sandboxed") {
  for (ApprovalPolicy policy : {kUntrusted, kOnFailure, kOnRequest, kNever}) {
    auto in = Input(policy);
    in.known_safe = true;
    Expect(in, Action::kRun, kSandboxed);
  }
}

TEST_CASE("Escalation requests ask, except under never") {
  for (ApprovalPolicy policy : {kUntrusted, kOnFailure, kOnRequest}) {
    auto in = Input(policy);
    in.escalation_requested = true;
    Expect(in, Action::kAsk, kUnsandboxed);
    in.known_safe = true;  // known-safe does not waive leaving the sandbox
    Expect(in, Action::kAsk, kUnsandboxed);
  }
  auto never = Input(kNever);
  never.escalation_requested = true;
  Expect(never, Action::kReject, kSandboxed);
  CHECK(DecideApproval(never).reason.find("never") != std::string::npos);
}

TEST_CASE("After a sandboxed failure only on-failure and untrusted offer an unsandboxed retry") {
  auto in = Input(kOnFailure);
  in.sandboxed_run_failed = true;
  Expect(in, Action::kAsk, kUnsandboxed);
  in.policy = kUntrusted;
  Expect(in, Action::kAsk, kUnsandboxed);
  in.policy = kOnRequest;
  Expect(in, Action::kReject, kSandboxed);
  CHECK(DecideApproval(in).reason.find("escalated permissions") != std::string::npos);
  in.policy = kNever;
  Expect(in, Action::kReject, kSandboxed);
}

TEST_CASE("danger-full-access runs unsandboxed and only untrusted asks") {
  const auto full = SandboxMode::kDangerFullAccess;
  Expect(Input(kUntrusted, full), Action::kAsk, kUnsandboxed);
  Expect(Input(kOnFailure, full), Action::kRun, kUnsandboxed);
  Expect(Input(kOnRequest, full), Action::kRun, kUnsandboxed);
  Expect(Input(kNever, full), Action::kRun, kUnsandboxed);
  auto safe = Input(kUntrusted, full);
  safe.known_safe = true;
  Expect(safe, Action::kRun, kUnsandboxed);
  auto escalate = Input(kOnRequest, full);
  escalate.escalation_requested = true;
  Expect(escalate, Action::kRun, kUnsandboxed);
  auto failed = Input(kOnFailure, full);
  failed.sandboxed_run_failed = true;
  Expect(failed, Action::kReject, kUnsandboxed);
}

TEST_CASE("Without Landlock, asking policies offer an unsandboxed run and never rejects") {
  for (ApprovalPolicy policy : {kUntrusted, kOnFailure, kOnRequest}) {
    auto in = Input(policy);
    in.sandbox_available = false;
    Expect(in, Action::kAsk, kUnsandboxed);
    in.known_safe = true;
    Expect(in, Action::kAsk, kUnsandboxed);
  }
  auto never = Input(kNever);
  never.sandbox_available = false;
  Expect(never, Action::kReject, kSandboxed);
  CHECK(DecideApproval(never).reason.find("Landlock") != std::string::npos);
}

TEST_CASE("Session approvals skip the question the way they were given") {
  auto in = Input(kUntrusted);
  in.session_approval = kSandboxed;
  Expect(in, Action::kRun, kSandboxed);

  auto retry = Input(kOnFailure);
  retry.sandboxed_run_failed = true;
  retry.session_approval = kUnsandboxed;
  Expect(retry, Action::kRun, kUnsandboxed);

  // A sandboxed approval does not cover leaving the sandbox.
  auto escalate = Input(kOnRequest);
  escalate.escalation_requested = true;
  escalate.session_approval = kSandboxed;
  Expect(escalate, Action::kAsk, kUnsandboxed);
  escalate.session_approval = kUnsandboxed;
  Expect(escalate, Action::kRun, kUnsandboxed);

  auto untrusted_full = Input(kUntrusted, SandboxMode::kDangerFullAccess);
  untrusted_full.session_approval = kUnsandboxed;
  Expect(untrusted_full, Action::kRun, kUnsandboxed);
}

TEST_CASE("SessionApprovals remember exact argv and keep the wider grant") {
  SessionApprovals approvals;
  const std::vector<std::string> argv = {"make", "test"};
  CHECK_FALSE(approvals.Find(argv).has_value());
  approvals.Approve(argv, kSandboxed);
  CHECK(approvals.Find(argv) == kSandboxed);
  CHECK_FALSE(approvals.Find({"make", "test", "-j2"}).has_value());
  CHECK_FALSE(approvals.Find({"make"}).has_value());
  approvals.Approve(argv, kUnsandboxed);
  CHECK(approvals.Find(argv) == kUnsandboxed);
  approvals.Approve(argv, kSandboxed);
  CHECK(approvals.Find(argv) == kUnsandboxed);
}

TEST_CASE("ApplyReviewDecision maps the four answers") {
  SessionApprovals approvals;
  const std::vector<std::string> argv = {"cargo", "build"};
  ApprovalPlan plan{Action::kAsk, kUnsandboxed, "why"};

  auto once = ApplyReviewDecision(ReviewDecision::kApproveOnce, plan, argv, &approvals);
  CHECK(once.action == ReviewOutcome::Action::kRun);
  CHECK(once.sandbox == kUnsandboxed);
  CHECK_FALSE(approvals.Find(argv).has_value());

  auto session = ApplyReviewDecision(ReviewDecision::kApproveForSession, plan, argv, &approvals);
  CHECK(session.action == ReviewOutcome::Action::kRun);
  CHECK(approvals.Find(argv) == kUnsandboxed);

  CHECK(ApplyReviewDecision(ReviewDecision::kDeny, plan, argv, &approvals).action ==
        ReviewOutcome::Action::kDenied);
  CHECK(ApplyReviewDecision(ReviewDecision::kAbort, plan, argv, nullptr).action ==
        ReviewOutcome::Action::kAbortTurn);
  CHECK(ApplyReviewDecision(ReviewDecision::kApproveForSession, plan, argv, nullptr).action ==
        ReviewOutcome::Action::kRun);

  // The next identical request runs without asking.
  auto again = Input(kOnFailure);
  again.sandboxed_run_failed = true;
  again.session_approval = approvals.Find(argv);
  Expect(again, Action::kRun, kUnsandboxed);
}

TEST_CASE("DenyAllApprover denies") {
  DenyAllApprover approver;
  CancelToken cancel;
  CHECK(approver.Review(ApprovalRequest{}, cancel) == ReviewDecision::kDeny);
  CHECK(ReviewDecisionName(ReviewDecision::kApproveForSession) == "approve for session");
}

TEST_CASE("LooksLikeSandboxDenial needs a failure that mentions a denial") {
  CommandResult r;
  r.exit_code = 1;
  r.output = "touch: cannot touch 'x': Permission denied\n";
  CHECK(LooksLikeSandboxDenial(r));
  r.output = "mkdir: cannot create directory: Read-only file system";
  CHECK(LooksLikeSandboxDenial(r));
  r.output = "curl: (6) Could not resolve host: example.com";
  CHECK(LooksLikeSandboxDenial(r));
  r.output = "socket: OPERATION NOT PERMITTED";
  CHECK(LooksLikeSandboxDenial(r));
  r.output = "";  // grep found nothing
  CHECK_FALSE(LooksLikeSandboxDenial(r));
  r.output = "error: expected ';' before '}' token";
  CHECK_FALSE(LooksLikeSandboxDenial(r));
  r.output = "Permission denied";
  r.exit_code = 0;
  CHECK_FALSE(LooksLikeSandboxDenial(r));
  r.exit_code = 124;
  r.timed_out = true;
  CHECK_FALSE(LooksLikeSandboxDenial(r));
}

TEST_CASE("ParseEscalation honours only the fields the tool declares") {
  using Json = nlohmann::ordered_json;
  auto parse = [](Json args, ApprovalPolicy policy) { return ParseEscalation(args, policy); };
  // Declared under on-request: require_escalated escalates, with its question.
  auto asked = parse({{"sandbox_permissions", "require_escalated"}, {"justification", "May I?"}},
                     kOnRequest);
  REQUIRE(asked.ok());
  CHECK(asked->escalate);
  CHECK(asked->justification == "May I?");
  auto plain =
      parse({{"sandbox_permissions", "use_default"}, {"justification", "ignored"}}, kOnRequest);
  REQUIRE(plain.ok());
  CHECK_FALSE(plain->escalate);
  CHECK(plain->justification.empty());
  CHECK_FALSE(parse({{"sandbox_permissions", "everything"}}, kOnRequest).ok());
  CHECK_FALSE(parse({{"sandbox_permissions", true}}, kOnRequest).ok());
  // Never declared: an older field name, under any policy.
  for (auto policy : {kOnRequest, kNever, kUntrusted, kOnFailure}) {
    auto old = parse({{"with_escalated_permissions", true}}, policy);
    REQUIRE(old.ok());
    CHECK_FALSE(old->escalate);
  }
  // Not declared under the other policies: ignored, not honoured.
  for (auto policy : {kNever, kUntrusted, kOnFailure}) {
    auto r = parse({{"sandbox_permissions", "require_escalated"}}, policy);
    REQUIRE(r.ok());
    CHECK_FALSE(r->escalate);
  }
  CHECK(DeclaresEscalation(kOnRequest));
  CHECK_FALSE(DeclaresEscalation(kNever));
  CHECK(EscalationProperties().size() == 2);
}
