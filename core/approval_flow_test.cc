// The approval flow (core/approval_flow.h): who is asked, what the user's
// answer does, what the model is told, and the on-failure rerun offer. The
// decision table itself is approval_test's; here the modes avoid the kernel's
// Landlock question (danger-full-access, or an ApprovalInput given whole).
#include "core/approval_flow.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "testing/items.h"
#include "testing/scoped_env.h"

using namespace codex::core;

namespace {

// The user, answering from a script and keeping what was asked.
class ScriptedUser : public Approver {
 public:
  ReviewDecision Review(const ApprovalRequest& request, const CancelToken&) override {
    asked.push_back(request);
    if (on_review) on_review();
    return answer;
  }
  ReviewDecision answer = ReviewDecision::kApproveOnce;
  std::vector<ApprovalRequest> asked;
  std::function<void()> on_review;
};

class NoticeLog : public TurnObserver {
 public:
  void OnNotice(std::string_view message) override { notices.emplace_back(message); }
  std::vector<std::string> notices;
};

Config FlowConfig(ApprovalPolicy policy, SandboxMode mode) {
  Config config;
  config.cwd = "/work";
  config.approval_policy = policy;
  config.sandbox_mode = mode;
  return config;
}

Item ShellCall() {
  return codex::testing::Decoded(
      R"({"type":"function_call","name":"shell","arguments":"{}","call_id":"call-7"})");
}

const std::vector<std::string> kBuild = {"cargo", "build"};

}  // namespace

TEST_CASE("untrusted: an ordinary command asks the user, with what and where") {
  const Config config = FlowConfig(ApprovalPolicy::kUntrusted, SandboxMode::kDangerFullAccess);
  ScriptedUser user;
  NoticeLog log;
  ApprovalFlow flow(config, &user, log);
  CancelToken cancel;
  auto gate = flow.ApproveCommand(ShellCall(), kBuild, "/work/sub", EscalationRequest{}, cancel);
  REQUIRE(gate.ok());
  CHECK(gate->run);
  REQUIRE(user.asked.size() == 1);
  CHECK(user.asked[0].call_id == "call-7");
  CHECK(user.asked[0].argv == kBuild);
  CHECK(user.asked[0].cwd == "/work/sub");
  CHECK_FALSE(user.asked[0].reason.empty());
  CHECK(flow.can_ask());
}

TEST_CASE("a known-safe command runs without asking") {
  // Known-safe also needs a PATH of absolute directories only.
  codex::testing::ScopedEnv path("PATH", "/usr/bin:/bin");
  const Config config = FlowConfig(ApprovalPolicy::kUntrusted, SandboxMode::kDangerFullAccess);
  ScriptedUser user;
  NoticeLog log;
  ApprovalFlow flow(config, &user, log);
  auto gate = flow.ApproveCommand(ShellCall(), {"ls", "-l"}, "/work", {}, CancelToken());
  REQUIRE(gate.ok());
  CHECK(gate->run);
  CHECK(user.asked.empty());
}

TEST_CASE("approved for the session: the same argv runs again without asking") {
  const Config config = FlowConfig(ApprovalPolicy::kUntrusted, SandboxMode::kDangerFullAccess);
  ScriptedUser user;
  user.answer = ReviewDecision::kApproveForSession;
  NoticeLog log;
  ApprovalFlow flow(config, &user, log);
  REQUIRE(flow.ApproveCommand(ShellCall(), kBuild, "/work", {}, CancelToken())->run);
  CHECK(flow.approvals().Find(kBuild).has_value());
  REQUIRE(flow.ApproveCommand(ShellCall(), kBuild, "/work", {}, CancelToken())->run);
  CHECK(user.asked.size() == 1);
  // Another argv is asked about again.
  REQUIRE(flow.ApproveCommand(ShellCall(), {"cargo", "test"}, "/work", {}, CancelToken())->run);
  CHECK(user.asked.size() == 2);
}

TEST_CASE("the user's no, and the user stopping the turn") {
  const Config config = FlowConfig(ApprovalPolicy::kUntrusted, SandboxMode::kDangerFullAccess);
  ScriptedUser user;
  NoticeLog log;
  ApprovalFlow flow(config, &user, log);
  user.answer = ReviewDecision::kDeny;
  auto denied = flow.ApproveCommand(ShellCall(), kBuild, "/work", {}, CancelToken());
  REQUIRE(denied.ok());
  CHECK_FALSE(denied->run);
  CHECK(denied->rejected_by_user);
  CHECK(denied->refusal == kRejectedByUser);  // Codex's bare sentence
  CHECK_FALSE(denied->stop);
  CHECK_FALSE(flow.approvals().Find(kBuild).has_value());

  user.answer = ReviewDecision::kAbort;
  auto stopped = flow.ApproveCommand(ShellCall(), kBuild, "/work", {}, CancelToken());
  REQUIRE(stopped.ok());
  CHECK_FALSE(stopped->run);
  CHECK(stopped->stop);
  CHECK(stopped->refusal == "the user denied running this command and stopped the turn");
}

TEST_CASE("a run that cannot ask declines, tells the model why and says so to the user") {
  const Config config = FlowConfig(ApprovalPolicy::kUntrusted, SandboxMode::kDangerFullAccess);
  NoticeLog log;
  ApprovalFlow flow(config, nullptr, log);
  CHECK_FALSE(flow.can_ask());
  auto gate = flow.ApproveCommand(ShellCall(), kBuild, "/work", {}, CancelToken());
  REQUIRE(gate.ok());
  CHECK_FALSE(gate->run);
  CHECK_FALSE(gate->rejected_by_user);
  CHECK(gate->refusal.find("non-interactive run cannot ask") != std::string::npos);
  REQUIRE(log.notices.size() == 1);
  CHECK(log.notices[0] ==
        "`cargo build` needs approval under the untrusted policy; declined because this run "
        "cannot ask");
}

TEST_CASE("an interrupt while the user is asked cancels the call") {
  const Config config = FlowConfig(ApprovalPolicy::kUntrusted, SandboxMode::kDangerFullAccess);
  ScriptedUser user;
  NoticeLog log;
  CancelToken cancel;
  user.on_review = [&] { cancel.Cancel(); };
  ApprovalFlow flow(config, &user, log);
  auto gate = flow.ApproveCommand(ShellCall(), kBuild, "/work", {}, cancel);
  REQUIRE_FALSE(gate.ok());
  CHECK(gate.status().code() == codex::StatusCode::kCancelled);
}

TEST_CASE("never: an escalation request is refused without asking") {
  const Config config = FlowConfig(ApprovalPolicy::kNever, SandboxMode::kWorkspaceWrite);
  ScriptedUser user;
  NoticeLog log;
  ApprovalFlow flow(config, &user, log);
  EscalationRequest escalate;
  escalate.escalate = true;
  auto gate = flow.ApproveCommand(ShellCall(), kBuild, "/work", escalate, CancelToken());
  REQUIRE(gate.ok());
  CHECK_FALSE(gate->run);
  CHECK(gate->refusal.rfind("command rejected: ", 0) == 0);
  CHECK(user.asked.empty());
}

TEST_CASE("on-failure: a sandbox denial is offered a rerun outside the sandbox") {
  const Config config = FlowConfig(ApprovalPolicy::kOnFailure, SandboxMode::kWorkspaceWrite);
  ScriptedUser user;
  NoticeLog log;
  ApprovalFlow flow(config, &user, log);
  ApprovalInput input;
  input.policy = ApprovalPolicy::kOnFailure;
  input.sandbox = SandboxMode::kWorkspaceWrite;
  input.argv = kBuild;
  input.sandbox_available = true;

  CommandResult plain;  // grep finding nothing: the model's to handle
  plain.exit_code = 1;
  plain.output = "no match\n";
  CHECK(*flow.RetryWithoutSandbox(ShellCall(), kBuild, "/work", input, plain, CancelToken()) ==
        ReviewOutcome::Action::kDenied);
  CHECK(user.asked.empty());

  CommandResult denied;
  denied.exit_code = 1;
  denied.output = std::string(1000, 'x') + "\nerror: /work/target: Permission denied\n";
  CHECK(*flow.RetryWithoutSandbox(ShellCall(), kBuild, "/work", input, denied, CancelToken()) ==
        ReviewOutcome::Action::kRun);
  REQUIRE(user.asked.size() == 1);
  CHECK(user.asked[0].sandbox == SandboxChoice::kUnsandboxed);
  // The user decides on the sandbox's last words, not the whole output.
  const std::string& reason = user.asked[0].reason;
  CHECK(reason.find("Permission denied") != std::string::npos);
  CHECK(reason.find(std::string(700, 'x')) == std::string::npos);

  user.answer = ReviewDecision::kAbort;
  CHECK(*flow.RetryWithoutSandbox(ShellCall(), kBuild, "/work", input, denied, CancelToken()) ==
        ReviewOutcome::Action::kAbortTurn);
}

TEST_CASE("on-request and never leave a sandbox denial to the model") {
  for (ApprovalPolicy policy : {ApprovalPolicy::kOnRequest, ApprovalPolicy::kNever}) {
    const Config config = FlowConfig(policy, SandboxMode::kWorkspaceWrite);
    ScriptedUser user;
    NoticeLog log;
    ApprovalFlow flow(config, &user, log);
    ApprovalInput input;
    input.policy = policy;
    input.sandbox = SandboxMode::kWorkspaceWrite;
    input.argv = kBuild;
    CommandResult denied;
    denied.exit_code = 1;
    denied.output = "touch: cannot touch 'x': Read-only file system\n";
    CHECK(*flow.RetryWithoutSandbox(ShellCall(), kBuild, "/work", input, denied, CancelToken()) ==
          ReviewOutcome::Action::kDenied);
    CHECK(user.asked.empty());
  }
}

TEST_CASE("calls running together are asked one at a time, and share what was approved") {
  // Two calls of one response gate the same command at once (their threads,
  // core/conversation.cc). The user is never asked two things at once, and
  // the second call sees the first's "for the session" instead of asking.
  const Config config = FlowConfig(ApprovalPolicy::kUntrusted, SandboxMode::kDangerFullAccess);
  ScriptedUser user;
  user.answer = ReviewDecision::kApproveForSession;
  std::atomic<int> inside{0};
  std::atomic<int> most{0};
  user.on_review = [&] {
    most = std::max(most.load(), ++inside);
    // Long enough for the other thread to come in, were it let in.
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    --inside;
  };
  NoticeLog log;
  ApprovalFlow flow(config, &user, log);
  CancelToken cancel;
  std::atomic<int> ran{0};
  auto gate = [&] {
    auto g = flow.ApproveCommand(ShellCall(), kBuild, "/work", {}, cancel);
    if (g.ok() && g->run) ++ran;
  };
  std::thread other(gate);
  gate();
  other.join();
  CHECK(ran == 2);
  CHECK(most == 1);
  CHECK(user.asked.size() == 1);
}

TEST_CASE("a rerun approved for the session holds for the same command failing beside it") {
  // Two calls of one response ran the same command in the sandbox and both
  // failed: each passed its gate before the user answered anything. The
  // first's rerun is approved for the session; the second reruns outside
  // without asking, as a call after it would have run outside at its gate.
  // Another command is still asked.
  const Config config = FlowConfig(ApprovalPolicy::kOnFailure, SandboxMode::kWorkspaceWrite);
  ScriptedUser user;
  user.answer = ReviewDecision::kApproveForSession;
  NoticeLog log;
  ApprovalFlow flow(config, &user, log);
  auto gated = [&](const std::vector<std::string>& argv) {
    ApprovalInput input;
    input.policy = ApprovalPolicy::kOnFailure;
    input.sandbox = SandboxMode::kWorkspaceWrite;
    input.argv = argv;
    input.sandbox_available = true;
    return input;
  };
  ApprovalInput first = gated(kBuild);
  ApprovalInput second = gated(kBuild);
  const std::vector<std::string> other_argv = {"cargo", "test"};
  ApprovalInput other = gated(other_argv);
  CommandResult denied;
  denied.exit_code = 1;
  denied.output = "error: /work/target: Permission denied\n";
  CancelToken cancel;
  CHECK(*flow.RetryWithoutSandbox(ShellCall(), kBuild, "/work", first, denied, cancel) ==
        ReviewOutcome::Action::kRun);
  REQUIRE(user.asked.size() == 1);
  CHECK(*flow.RetryWithoutSandbox(ShellCall(), kBuild, "/work", second, denied, cancel) ==
        ReviewOutcome::Action::kRun);
  CHECK(user.asked.size() == 1);
  user.answer = ReviewDecision::kDeny;
  CHECK(*flow.RetryWithoutSandbox(ShellCall(), other_argv, "/work", other, denied, cancel) ==
        ReviewOutcome::Action::kDenied);
  CHECK(user.asked.size() == 2);
}

TEST_CASE("once the user stops the turn at one call's question, no other call is asked") {
  // The window between the user's stop and the group's cancel
  // (core/conversation.cc): a call running beside the stopped one comes to
  // its gate or its rerun offer while the token is not yet cancelled. It is
  // not asked and ends as a cancelled call; a new turn asks again.
  const Config config = FlowConfig(ApprovalPolicy::kUntrusted, SandboxMode::kDangerFullAccess);
  ScriptedUser user;
  user.answer = ReviewDecision::kAbort;
  NoticeLog log;
  ApprovalFlow flow(config, &user, log);
  CancelToken cancel;
  auto stopped = flow.ApproveCommand(ShellCall(), kBuild, "/work", {}, cancel);
  REQUIRE(stopped.ok());
  CHECK(stopped->stop);
  REQUIRE(user.asked.size() == 1);

  user.answer = ReviewDecision::kApproveOnce;
  auto next = flow.ApproveCommand(ShellCall(), {"make"}, "/work", {}, cancel);
  REQUIRE_FALSE(next.ok());
  CHECK(next.status().code() == codex::StatusCode::kCancelled);
  ApprovalInput input;
  input.policy = ApprovalPolicy::kOnFailure;
  input.sandbox = SandboxMode::kWorkspaceWrite;
  input.argv = kBuild;
  input.sandbox_available = true;
  CommandResult denied;
  denied.exit_code = 1;
  denied.output = "touch: cannot touch 'x': Read-only file system\n";
  auto retry = flow.RetryWithoutSandbox(ShellCall(), kBuild, "/work", input, denied, cancel);
  REQUIRE_FALSE(retry.ok());
  CHECK(retry.status().code() == codex::StatusCode::kCancelled);
  ApprovalPlan plan;
  plan.action = ApprovalPlan::Action::kAsk;
  CHECK(flow.Ask(ShellCall(), kBuild, "/work", plan, "", cancel).action ==
        ReviewOutcome::Action::kAbortTurn);
  CHECK(user.asked.size() == 1);

  flow.BeginTurn();
  auto later = flow.ApproveCommand(ShellCall(), {"make"}, "/work", {}, cancel);
  REQUIRE(later.ok());
  CHECK(later->run);
  CHECK(user.asked.size() == 2);
}
