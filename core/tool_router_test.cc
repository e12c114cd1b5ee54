// ToolRouter's dispatch and execution (core/tool_router.h): each call reaches
// its tool, runs (a fake runner records commands; apply_patch writes real
// files in a temporary directory), and yields exactly one output item, also
// for bad arguments and unknown tools, whose text is the one line the
// decoders and the router give.
#include "core/tool_router.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "testing/fake_command_runner.h"
#include "testing/files.h"
#include "testing/items.h"
#include "testing/manual_clock.h"
#include "testing/temp_dir.h"

using namespace codex::core;

namespace {

using CallJson = nlohmann::ordered_json;

class ActivityLog : public TurnObserver {
 public:
  void OnToolStarted(const ToolActivity& a) override { started.push_back(a.tool); }
  void OnToolCompleted(const ToolActivity& a) override { completed.push_back(a); }
  std::vector<std::string> started;
  std::vector<ToolActivity> completed;
};

struct RouterRig {
  explicit RouterRig(const std::string& cwd) {
    config.cwd = cwd;
    config.approval_policy = ApprovalPolicy::kNever;
    config.sandbox_mode = SandboxMode::kDangerFullAccess;
    config.unified_exec = false;
  }
  ToolOutcome Call(const std::string& name, const std::string& arguments) {
    CallJson body = {
        {"type", "function_call"}, {"name", name}, {"arguments", arguments}, {"call_id", "c1"}};
    return Run(codex::testing::Decoded(body.dump()));
  }
  ToolOutcome Run(const Item& call) {
    if (!router) router = std::make_unique<ToolRouter>(config, runner, approver, log);
    auto outcome = router->Dispatch(call, cancel);
    REQUIRE(outcome.ok());
    CHECK(outcome->output.call_id == call.call_id);
    return *outcome;
  }
  Config config;
  codex::testing::FakeCommandRunner runner;
  ActivityLog log;
  CancelToken cancel;
  Approver* approver = nullptr;
  std::unique_ptr<ToolRouter> router;
};

// A user who answers request_user_input's questions as told (or interrupts),
// and remembers what was asked.
class ScriptedAsker : public Approver {
 public:
  ReviewDecision Review(const ApprovalRequest&, const CancelToken&) override {
    return ReviewDecision::kDeny;
  }
  codex::Result<std::optional<std::vector<UserInputAnswer>>> AskUserInput(
      const std::vector<UserInputQuestion>& questions, const CancelToken&) override {
    asked.push_back(questions);
    if (interrupt) return codex::CancelledError("the user interrupted");
    return std::optional<std::vector<UserInputAnswer>>(answers);
  }
  std::vector<UserInputAnswer> answers;
  bool interrupt = false;
  std::vector<std::vector<UserInputQuestion>> asked;
};

// The output item's text (its `output` string).
std::string OutputText(const ToolOutcome& outcome) {
  const CallJson body = CallJson::parse(outcome.output.body);
  return body["output"].is_string() ? body["output"].get<std::string>() : body["output"].dump();
}

}  // namespace

TEST_CASE("shell runs the argv in the workdir and reports output and exit code") {
  codex::testing::TempDir dir;
  RouterRig rig(dir.str());
  const ToolOutcome out = rig.Call("shell", R"({"command":["echo","hi"],"workdir":"sub"})");
  REQUIRE(rig.runner.ran.size() == 1);
  CHECK(rig.runner.ran[0] == std::vector<std::string>{"echo", "hi"});
  CHECK(out.output.kind == ItemKind::kFunctionCallOutput);
  const CallJson result = CallJson::parse(OutputText(out));
  CHECK(result["output"] == "ran hi\n");
  CHECK(result["metadata"]["exit_code"] == 0);
  CHECK_FALSE(out.stop_turn);
  REQUIRE(rig.log.completed.size() == 1);
  CHECK(rig.log.completed[0].command == "echo hi");
  CHECK(rig.log.completed[0].success);
  // container.exec and a local_shell_call run the same way.
  rig.Call("container.exec", R"({"command":["true"]})");
  rig.Run(
      codex::testing::Decoded(R"({"type":"local_shell_call","call_id":"c2","status":"completed",)"
                              R"("action":{"type":"exec","command":["ls","-a"]}})"));
  REQUIRE(rig.runner.ran.size() == 3);
  CHECK(rig.runner.ran[2] == std::vector<std::string>{"ls", "-a"});
}

TEST_CASE("bad arguments and unknown tools are one output line; nothing runs") {
  codex::testing::TempDir dir;
  RouterRig rig(dir.str());
  CHECK(OutputText(rig.Call("shell", R"({"command":"echo hi"})")) ==
        "shell: `command` must be a non-empty array of strings");
  CHECK(OutputText(rig.Call("shell", "not json")) ==
        "failed to parse the arguments of 'shell' as a JSON object");
  CHECK(OutputText(rig.Call("apply_patch", R"({})")) ==
        "apply_patch: `input` must be the patch text");
  CHECK(OutputText(rig.Call("nope", R"({})")) == "unknown tool 'nope'");
  CHECK(OutputText(rig.Run(codex::testing::Decoded(
            R"({"type":"custom_tool_call","name":"nope","input":"x","call_id":"c3"})"))) ==
        "unknown custom tool 'nope'");
  CHECK(rig.runner.ran.empty());
}

TEST_CASE("update_plan records the plan; a bad plan leaves the last one") {
  codex::testing::TempDir dir;
  RouterRig rig(dir.str());
  CHECK(OutputText(rig.Call("update_plan", R"({"plan":[{"step":"read","status":"in_progress"},)"
                                           R"({"step":"fix","status":"pending"}]})")) ==
        "Plan updated");
  REQUIRE(rig.router->plan().size() == 2);
  CHECK(rig.router->plan()[0].step == "read");
  CHECK(OutputText(rig.Call("update_plan", R"({"plan":[{"step":"x","status":"later"}]})")) ==
        "update_plan: status 'later' is not one of pending, in_progress, completed");
  CHECK(rig.router->plan().size() == 2);
}

TEST_CASE("apply_patch writes the file, also when the model runs it through shell") {
  codex::testing::TempDir dir;
  RouterRig rig(dir.str());
  const std::string patch = "*** Begin Patch\n*** Add File: hello.txt\n+hello\n*** End Patch\n";
  const ToolOutcome out = rig.Call("apply_patch", CallJson{{"input", patch}}.dump());
  CHECK(codex::testing::ReadFile(dir.path() / "hello.txt") == "hello\n");
  CHECK(OutputText(out).find("hello.txt") != std::string::npos);

  const std::string second = "*** Begin Patch\n*** Add File: again.txt\n+again\n*** End Patch\n";
  rig.Call("shell", CallJson{{"command", {"apply_patch", second}}}.dump());
  CHECK(codex::testing::ReadFile(dir.path() / "again.txt") == "again\n");
  CHECK(rig.runner.ran.empty());  // applied by the router, not run as a command
}

TEST_CASE("unified exec: a runner that cannot keep processes, an unknown session") {
  codex::testing::TempDir dir;
  RouterRig rig(dir.str());
  rig.config.unified_exec = true;
  CHECK(OutputText(rig.Call("exec_command", R"({"cmd":"sleep 5"})")) ==
        "exec_command failed: this runner cannot keep processes running");
  CHECK(OutputText(rig.Call("exec_command", R"({"cmd":5})")) ==
        "exec_command: `cmd` must be the command to run, as a string");
  CHECK(OutputText(rig.Call("write_stdin", R"({"session_id":1234,"chars":"q"})")) ==
        "write_stdin failed: Unknown process id 1234");
  CHECK(rig.router->OpenProcesses().empty());
}

TEST_CASE("view_image: a missing file and bad arguments are text outputs") {
  codex::testing::TempDir dir;
  RouterRig rig(dir.str());
  CHECK(OutputText(rig.Call("view_image", R"({"path":7})")) ==
        "view_image: `path` must be the image's path, as a string");
  const std::string missing = OutputText(rig.Call("view_image", R"({"path":"none.png"})"));
  CHECK_FALSE(missing.empty());
  CHECK(missing.find("input_image") == std::string::npos);
}

TEST_CASE("request_user_input: Codex's refusal unless the feature is on, then the user's answers") {
  codex::testing::TempDir dir;
  RouterRig rig(dir.path().string());
  ScriptedAsker user;
  user.answers = {{"db", "PostgreSQL", ""}, {"name", "None of the above", "orders"}};
  rig.approver = &user;
  const std::string args =
      R"({"questions":[{"id":"db","header":"Database","question":"Which?","options":[)"
      R"({"label":"SQLite","description":"One file."},{"label":"PostgreSQL","description":"A server."}]},)"
      R"({"id":"name","header":"Name","question":"Called?","options":[)"
      R"({"label":"items","description":"d"}]}]})";
  // Off (the default): Codex 0.169's line, before the arguments are even read.
  CHECK(OutputText(rig.Call("request_user_input", args)) ==
        "request_user_input is unavailable in Default mode");
  CHECK(OutputText(rig.Call("request_user_input", "not json")) ==
        "request_user_input is unavailable in Default mode");
  CHECK(user.asked.empty());

  rig.config.default_mode_request_user_input = true;
  rig.router.reset();
  CHECK(OutputText(rig.Call("request_user_input", args)) ==
        R"({"answers":{"db":{"answers":["PostgreSQL"]},"name":{"answers":)"
        R"(["None of the above","user_note: orders"]}}})");
  REQUIRE(user.asked.size() == 1);
  REQUIRE(user.asked[0].size() == 2);
  CHECK(user.asked[0][1].question == "Called?");
  CHECK(user.asked[0][0].options[1].label == "PostgreSQL");
  // Bad arguments: one line back, nobody asked.
  CHECK(OutputText(rig.Call("request_user_input",
                            R"({"questions":[{"id":"a","header":"h","question":"q"}]})")) ==
        "request_user_input requires non-empty options for every question");
  CHECK(OutputText(rig.Call("request_user_input", "[1]")) ==
        "failed to parse the arguments of 'request_user_input' as a JSON object");
  CHECK(user.asked.size() == 1);
  CHECK(rig.runner.ran.empty());

  // The user interrupts: the call is cancelled (the turn stops, the call reads "aborted").
  user.interrupt = true;
  CallJson body = {{"type", "function_call"},
                   {"name", "request_user_input"},
                   {"arguments", args},
                   {"call_id", "c2"}};
  auto interrupted = rig.router->Dispatch(codex::testing::Decoded(body.dump()), rig.cancel);
  REQUIRE_FALSE(interrupted.ok());
  CHECK(interrupted.status().code() == codex::StatusCode::kCancelled);

  // No one to ask (codex exec): Codex's empty answer.
  rig.approver = nullptr;
  rig.router.reset();
  CHECK(OutputText(rig.Call("request_user_input", args)) == R"({"answers":{}})");
}

TEST_CASE("goal tools: create, get, update answer as Codex 0.169; refusals change nothing") {
  codex::testing::TempDir dir;
  RouterRig rig(dir.str());
  codex::testing::ManualClock clock(1'795'677'809'177);
  rig.router = std::make_unique<ToolRouter>(rig.config, rig.runner, nullptr, rig.log);
  rig.router->goals().Reset("thread-1", std::nullopt, &clock);
  // No goal yet: get answers nulls, update is refused.
  CHECK(OutputText(rig.Call("get_goal", "{}")) ==
        R"({"goal":null,"remainingTokens":null,"completionBudgetReport":null})");
  CHECK(OutputText(rig.Call("update_goal", R"({"status":"complete"})")) ==
        "cannot update goal because this thread has no goal");
  CHECK_FALSE(rig.router->goals().TakeChange().has_value());
  // Bad budgets and blank objectives are refused before anything changes.
  CHECK(OutputText(rig.Call("create_goal", R"({"objective":"x","token_budget":0})")) ==
        "goal budgets must be positive when provided");
  CHECK(OutputText(rig.Call("create_goal", R"({"objective":"  \n"})")) ==
        "goal objective must not be empty");
  CHECK_FALSE(rig.router->goal().has_value());

  const std::string created =
      R"({"goal":{"threadId":"thread-1","objective":"Ship the feature","status":"active",)"
      R"("tokenBudget":5000,"tokensUsed":0,"timeUsedSeconds":0,"createdAt":1795677809,)"
      R"("updatedAt":1795677809},"remainingTokens":5000,"completionBudgetReport":null})";
  CHECK(OutputText(rig.Call("create_goal",
                            R"({"objective":"Ship the feature","token_budget":5000})")) == created);
  const std::optional<ThreadGoal> change = rig.router->goals().TakeChange();
  REQUIRE(change.has_value());
  CHECK(change->status == "active");
  CHECK_FALSE(rig.router->goals().TakeChange().has_value());  // reported once
  CHECK(OutputText(rig.Call("get_goal", "{}")) == created);

  // A second goal while one is unfinished; statuses the model may not set.
  CHECK(OutputText(rig.Call("create_goal", R"({"objective":"Another"})")) ==
        "cannot create a new goal because this thread has an unfinished goal; complete the "
        "existing goal first");
  for (const char* status : {"active", "budgetLimited", "usageLimited"}) {
    CHECK(OutputText(rig.Call("update_goal", std::string(R"({"status":")") + status + "\"}")) ==
          "update_goal can only mark the existing goal complete, blocked, or paused at the "
          "user's explicit request; resume, budget-limited, and usage-limited status changes "
          "are controlled by the user or system");
  }
  CHECK_FALSE(rig.router->goals().TakeChange().has_value());

  // The two seconds the goal was active count (Codex's timeUsedSeconds); the
  // completing answer of a goal with a budget asks for a usage report, later
  // reads do not.
  clock.Advance(2'000);
  const CallJson completed =
      CallJson::parse(OutputText(rig.Call("update_goal", R"({"status":"complete"})")));
  CHECK(completed["goal"].dump() ==
        R"({"threadId":"thread-1","objective":"Ship the feature","status":"complete",)"
        R"("tokenBudget":5000,"tokensUsed":0,"timeUsedSeconds":2,"createdAt":1795677809,)"
        R"("updatedAt":1795677811})");
  CHECK(completed["remainingTokens"] == 5000);
  CHECK(completed["completionBudgetReport"].get<std::string>().find("tokensUsed") !=
        std::string::npos);
  CHECK(nlohmann::json::parse(OutputText(rig.Call("get_goal", "{}")))["completionBudgetReport"]
            .is_null());
  REQUIRE(rig.router->goals().TakeChange().has_value());
  // A complete goal is replaced by the next one (no budget: no tokenBudget key).
  CHECK(OutputText(rig.Call("create_goal", R"({"objective":"Next"})")) ==
        R"({"goal":{"threadId":"thread-1","objective":"Next","status":"active","tokensUsed":0,)"
        R"("timeUsedSeconds":0,"createdAt":1795677811,"updatedAt":1795677811},)"
        R"("remainingTokens":null,"completionBudgetReport":null})");
}

TEST_CASE("goal events: the stored row round-trips; a damaged payload is refused") {
  ThreadGoal goal;
  goal.goal_id = "g1";
  goal.objective = "Ship";
  goal.status = "budget_limited";
  goal.token_budget = 10;
  goal.tokens_used = 12;
  goal.created_at_ms = 5'000;
  goal.updated_at_ms = 6'000;
  const std::string payload = GoalEventPayload(goal);
  auto back = ParseGoalEventPayload(payload);
  REQUIRE(back.ok());
  CHECK(GoalEventPayload(*back) == payload);
  // Codex's stored status word becomes its camelCase wire word; used > budget leaves 0.
  CHECK(GoalToolOutput("t", *back) ==
        R"({"goal":{"threadId":"t","objective":"Ship","status":"budgetLimited","tokenBudget":10,)"
        R"("tokensUsed":12,"timeUsedSeconds":0,"createdAt":5,"updatedAt":6},"remainingTokens":0,)"
        R"("completionBudgetReport":null})");
  CHECK_FALSE(ParseGoalEventPayload(R"({"objective":"x","status":"finished"})").ok());
  CHECK_FALSE(ParseGoalEventPayload("[]").ok());
}

TEST_CASE("a call whose fields have the wrong JSON types gets one line back, never a crash") {
  // A provider (or a proxy) may send anything: `arguments` that is not a
  // string, a `name` that is not one, an update_plan `explanation` that is a
  // number. Every one still yields exactly one output item.
  codex::testing::TempDir dir;
  RouterRig rig(dir.path().string());
  const std::vector<CallJson> bodies = {
      {{"type", "function_call"},
       {"name", "update_plan"},
       {"arguments", {{"plan", 1}}},
       {"call_id", "c1"}},
      {{"type", "function_call"}, {"name", "shell"}, {"arguments", 42}, {"call_id", "c1"}},
      {{"type", "function_call"}, {"name", 7}, {"arguments", "{}"}, {"call_id", "c1"}},
      {{"type", "function_call"},
       {"name", "exec_command"},
       {"arguments", nullptr},
       {"call_id", "c1"}},
      {{"type", "function_call"}, {"name", "get_goal"}, {"arguments", {1, 2}}, {"call_id", "c1"}},
      {{"type", "function_call"},
       {"name", "update_plan"},
       {"arguments", R"({"plan":[{"step":"a","status":"pending"}],"explanation":5})"},
       {"call_id", "c1"}},
      {{"type", "custom_tool_call"}, {"name", "apply_patch"}, {"input", 3}, {"call_id", "c1"}},
  };
  for (const CallJson& body : bodies) {
    INFO(body.dump());
    const ToolOutcome out = rig.Run(codex::testing::Decoded(body.dump()));
    CHECK_FALSE(OutputText(out).empty());
    CHECK(OutputText(out).find('\n') == std::string::npos);
  }
}

TEST_CASE("which calls run in parallel: Codex's parallel-capable tools, and no others") {
  codex::testing::TempDir dir;
  RouterRig rig(dir.str());
  rig.router = std::make_unique<ToolRouter>(rig.config, rig.runner, rig.approver, rig.log);
  auto call = [](const std::string& name, const std::string& arguments,
                 const std::string& ns = "") {
    CallJson body = {
        {"type", "function_call"}, {"name", name}, {"arguments", arguments}, {"call_id", "c1"}};
    if (!ns.empty()) body["namespace"] = ns;
    return codex::testing::Decoded(body.dump());
  };
  auto parallel = [&](const Item& item) { return rig.router->RunsInParallel(item); };
  CHECK(parallel(call("shell", R"({"command":["ls"]})")));
  CHECK(parallel(call("container.exec", R"({"command":["ls"]})")));
  CHECK(parallel(call("exec_command", R"({"cmd":"sleep 1"})")));
  CHECK(parallel(call("view_image", R"({"path":"a.png"})")));
  CHECK(parallel(call("list_mcp_resources", "{}")));
  CHECK(parallel(call("read_mcp_resource", R"({"server":"s","uri":"u"})")));
  CHECK(parallel(
      codex::testing::Decoded(R"({"type":"local_shell_call","call_id":"c2","status":"completed",)"
                              R"("action":{"type":"exec","command":["ls","-a"]}})")));
  // A call that only gets an error back touches nothing: it may run along.
  CHECK(parallel(call("shell", "not json")));

  CHECK_FALSE(parallel(call("write_stdin", R"({"session_id":1000})")));
  CHECK_FALSE(parallel(call("update_plan", R"({"plan":[]})")));
  CHECK_FALSE(parallel(call("apply_patch", R"({"input":"x"})")));
  CHECK_FALSE(parallel(call("request_user_input", R"({"questions":[]})")));
  CHECK_FALSE(parallel(call("create_goal", R"({"objective":"x"})")));
  CHECK_FALSE(parallel(call("spawn_agent", "{}", "multi_agent_v1")));
  CHECK_FALSE(parallel(call("exec_command", R"({"cmd":"ls"})", "mcp__srv__")));
  CHECK_FALSE(parallel(codex::testing::Decoded(
      R"({"type":"custom_tool_call","call_id":"c3","name":"apply_patch","input":"x"})")));
  // apply_patch sent through shell changes files through the patch path: alone.
  const std::string patch = "*** Begin Patch\n*** Add File: a.txt\n+a\n*** End Patch\n";
  CHECK_FALSE(parallel(call("shell", CallJson{{"command", {"apply_patch", patch}}}.dump())));
}

TEST_CASE("Dispatch says when a call is past its approval gate, before it runs, once") {
  codex::testing::TempDir dir;
  RouterRig rig(dir.str());
  rig.router = std::make_unique<ToolRouter>(rig.config, rig.runner, rig.approver, rig.log);
  std::vector<size_t> ran_at_gate;  // how many commands had run when the gate passed
  auto gate = [&] { ran_at_gate.push_back(rig.runner.ran.size()); };
  auto dispatch = [&](const std::string& name, const std::string& arguments) {
    CallJson body = {
        {"type", "function_call"}, {"name", name}, {"arguments", arguments}, {"call_id", "c1"}};
    REQUIRE(rig.router->Dispatch(codex::testing::Decoded(body.dump()), rig.cancel, gate).ok());
  };
  dispatch("shell", R"({"command":["echo","hi"]})");
  CHECK(ran_at_gate == std::vector<size_t>{0});
  CHECK(rig.runner.ran.size() == 1);
  // A call refused before any gate, and a tool that asks nothing: once each.
  dispatch("shell", R"({"command":"echo hi"})");
  dispatch("view_image", R"({"path":"missing.png"})");
  CHECK(ran_at_gate == std::vector<size_t>{0, 1, 1});
  // A command the policy rejects is past its gate too (and does not run).
  rig.config.approval_policy = ApprovalPolicy::kUntrusted;
  rig.router = std::make_unique<ToolRouter>(rig.config, rig.runner, rig.approver, rig.log);
  dispatch("shell", R"({"command":["touch","x"]})");
  CHECK(ran_at_gate == std::vector<size_t>{0, 1, 1, 1});
  CHECK(rig.runner.ran.size() == 1);
}

namespace {

// A live process that only counts how many of its kind are alive.
class CountedProcess final : public LiveProcess {
 public:
  explicit CountedProcess(std::atomic<int>& alive, bool exited = false)
      : alive_(alive), exited_(exited) {
    ++alive_;
  }
  ~CountedProcess() override { --alive_; }
  bool Exited() override { return exited_; }
  codex::Status Write(std::string_view) override { return codex::OkStatus(); }
  Chunk Collect(int64_t, size_t, const CancelToken&,
                const std::function<void(std::string_view)>&) override {
    return {};
  }

 private:
  std::atomic<int>& alive_;
  bool exited_ = false;
};

}  // namespace

TEST_CASE("unified exec sessions: at the limit an exited process goes first, the recent are kept") {
  // Codex 0.169's rule: the 8 most recently used are spared; of the rest, the
  // least recently used that already exited, else the least recently used.
  ExecSessions sessions;
  std::atomic<int> alive{0};
  std::vector<int64_t> ids;
  for (size_t i = 0; i < kMaxExecSessions; ++i) {
    // #10 exited (never polled since); #60 exited too, but among the recent.
    ids.push_back(sessions.Add(std::make_unique<CountedProcess>(alive, i == 10 || i == 60), "c"));
  }
  auto has = [&](int64_t id) { return sessions.Find(id) != nullptr; };
  const int64_t first = sessions.Add(std::make_unique<CountedProcess>(alive), "next");
  CHECK(sessions.size() == kMaxExecSessions);
  CHECK_FALSE(has(ids[10]));  // the exited one, although #0 is older
  CHECK(has(ids[0]));
  // No exited one left outside the recent eight: the least recently used.
  // (Find above marked #0 as used, so #1 is now the oldest.)
  sessions.Add(std::make_unique<CountedProcess>(alive), "again");
  CHECK_FALSE(has(ids[1]));
  CHECK(has(ids[60]));
  CHECK(has(first));
  CHECK(alive == static_cast<int>(kMaxExecSessions));
}

TEST_CASE("unified exec sessions: exec_command calls running together each get their own ID") {
  // Calls of one response run together; each still-running command is kept
  // under an ID of its own, and the 64-process limit holds.
  ExecSessions sessions;
  std::atomic<int> alive{0};
  constexpr int kThreads = 8;
  constexpr int kEach = 20;
  std::vector<std::vector<int64_t>> ids(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        ids[static_cast<size_t>(t)].push_back(
            sessions.Add(std::make_unique<CountedProcess>(alive), "cmd"));
      }
    });
  }
  for (auto& thread : threads) thread.join();
  std::set<int64_t> distinct;
  for (const auto& mine : ids) distinct.insert(mine.begin(), mine.end());
  CHECK(distinct.size() == static_cast<size_t>(kThreads * kEach));
  CHECK(sessions.size() == kMaxExecSessions);
  CHECK(alive == static_cast<int>(kMaxExecSessions));  // the evicted ones were killed
  CHECK(sessions.List().size() == kMaxExecSessions);
}
