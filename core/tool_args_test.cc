// The built-in tools' argument decoders (core/tool_args.h): typed values and
// Codex's defaults from good arguments, one line naming the tool and the
// fault for bad ones.
#include "core/tool_args.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "core/unified_exec.h"
#include "testing/scoped_env.h"

using namespace codex::core;

namespace {

using ArgsJson = nlohmann::ordered_json;

ArgsJson ArgsOf(const char* text) { return ArgsJson::parse(text); }

// The one line a failed decode sends back to the model.
template <typename T>
std::string FaultOf(const codex::Result<T>& decoded) {
  REQUIRE_FALSE(decoded.ok());
  CHECK(decoded.status().code() == codex::StatusCode::kInvalidArgument);
  CHECK(decoded.status().message().find('\n') == std::string::npos);
  return decoded.status().message();
}

}  // namespace

TEST_CASE("arguments must be a JSON object") {
  CHECK(DecodeArgumentsObject("shell", R"({"command":["ls"]})").ok());
  for (const char* bad : {"", "[1]", "\"ls\"", "{\"command\":", "null"}) {
    INFO(bad);
    CHECK(FaultOf(DecodeArgumentsObject("shell", bad)) ==
          "failed to parse the arguments of 'shell' as a JSON object");
  }
}

TEST_CASE("shell: argv, workdir and timeout, with the configured timeout by default") {
  auto shell = DecodeShellArgs(ArgsOf(R"({"command":["bash","-lc","ls"],"workdir":"sub"})"), 7000);
  REQUIRE(shell.ok());
  CHECK(shell->argv == std::vector<std::string>{"bash", "-lc", "ls"});
  CHECK(shell->workdir == "sub");
  CHECK(shell->timeout_ms == 7000);
  shell = DecodeShellArgs(ArgsOf(R"({"command":["ls"],"timeout_ms":250,"workdir":5})"), 7000);
  REQUIRE(shell.ok());
  CHECK(shell->timeout_ms == 250);
  CHECK(shell->workdir.empty());  // not a string: the session's cwd

  CHECK(FaultOf(DecodeShellArgs(ArgsOf(R"({})"), 1)) ==
        "shell: `command` must be a non-empty array of strings");
  CHECK(FaultOf(DecodeShellArgs(ArgsOf(R"({"command":[]})"), 1)) ==
        "shell: `command` must be a non-empty array of strings");
  CHECK(FaultOf(DecodeShellArgs(ArgsOf(R"({"command":"ls -l"})"), 1)) ==
        "shell: `command` must be a non-empty array of strings");
  CHECK(FaultOf(DecodeShellArgs(ArgsOf(R"({"command":["ls",3]})"), 1)) ==
        "shell: `command` must be an array of strings");
}

TEST_CASE("a local_shell_call's action: string argv entries, its directory and timeout") {
  const ShellArgs shell = DecodeLocalShellAction(
      ArgsOf(R"({"type":"local_shell_call","action":{"type":"exec","command":["ls",1,"-a"],)"
             R"("working_directory":"/w","timeout_ms":900}})"),
      10'000);
  CHECK(shell.argv == std::vector<std::string>{"ls", "-a"});
  CHECK(shell.workdir == "/w");
  CHECK(shell.timeout_ms == 900);
  const ShellArgs bare = DecodeLocalShellAction(ArgsOf(R"({"type":"local_shell_call"})"), 10'000);
  CHECK(bare.argv.empty());
  CHECK(bare.timeout_ms == 10'000);
}

TEST_CASE("apply_patch and view_image take one string") {
  CHECK(*DecodeApplyPatchInput(ArgsOf(R"({"input":"*** Begin Patch"})")) == "*** Begin Patch");
  CHECK(FaultOf(DecodeApplyPatchInput(ArgsOf(R"({"patch":"x"})"))) ==
        "apply_patch: `input` must be the patch text");
  CHECK(*DecodeViewImagePath(ArgsOf(R"({"path":"a.png"})")) == "a.png");
  CHECK(FaultOf(DecodeViewImagePath(ArgsOf(R"({"path":["a.png"]})"))) ==
        "view_image: `path` must be the image's path, as a string");
}

TEST_CASE("update_plan: steps with a known status, at most one in progress") {
  auto plan = DecodeUpdatePlanArgs(
      ArgsOf(R"({"explanation":"why","plan":[{"step":"a","status":"completed"},)"
             R"({"step":"b","status":"in_progress"},{"step":"c","status":"pending"}]})"));
  REQUIRE(plan.ok());
  REQUIRE(plan->plan.size() == 3);
  CHECK(plan->plan[1].step == "b");
  CHECK(plan->plan[1].status == "in_progress");
  CHECK(plan->explanation == "why");

  CHECK(FaultOf(DecodeUpdatePlanArgs(ArgsOf(R"({"plan":{}})"))) ==
        "update_plan: `plan` must be an array of {step, status}");
  CHECK(FaultOf(DecodeUpdatePlanArgs(ArgsOf(R"({"plan":[{"step":"a"}]})"))) ==
        "update_plan: every step needs a string `step` and `status`");
  CHECK(FaultOf(DecodeUpdatePlanArgs(ArgsOf(R"({"plan":[{"step":"a","status":"done"}]})"))) ==
        "update_plan: status 'done' is not one of pending, in_progress, completed");
  CHECK(FaultOf(DecodeUpdatePlanArgs(ArgsOf(R"({"plan":[{"step":"a","status":"in_progress"},)"
                                            R"({"step":"b","status":"in_progress"}]})"))) ==
        "update_plan: at most one step may be in_progress");
}

TEST_CASE("exec_command: Codex's defaults, the yield clamped, escalation as declared") {
  codex::testing::ScopedEnv shell_env("SHELL", "/bin/zsh");
  auto exec = DecodeExecCommandArgs(ArgsOf(R"({"cmd":"make"})"), ApprovalPolicy::kNever);
  REQUIRE(exec.ok());
  CHECK(exec->cmd == "make");
  CHECK(exec->workdir.empty());
  CHECK(exec->shell == "/bin/zsh");
  CHECK(exec->login);
  CHECK_FALSE(exec->tty);
  CHECK(exec->yield_ms == kExecDefaultYieldMs);
  CHECK(exec->max_tokens == kDefaultMaxOutputTokens);
  CHECK_FALSE(exec->escalation.escalate);

  exec = DecodeExecCommandArgs(
      ArgsOf(R"({"cmd":"make","workdir":"w","shell":"/bin/sh","login":false,"tty":true,)"
             R"("yield_time_ms":1,"max_output_tokens":5,"sandbox_permissions":"require_escalated",)"
             R"("justification":"needs the network"})"),
      ApprovalPolicy::kOnRequest);
  REQUIRE(exec.ok());
  CHECK(exec->workdir == "w");
  CHECK(exec->shell == "/bin/sh");
  CHECK_FALSE(exec->login);
  CHECK(exec->tty);
  CHECK(exec->yield_ms == kMinYieldMs);
  CHECK(exec->max_tokens == 5);
  CHECK(exec->escalation.escalate);
  CHECK(exec->escalation.justification == "needs the network");
  CHECK(DecodeExecCommandArgs(ArgsOf(R"({"cmd":"x","yield_time_ms":99999999})"),
                              ApprovalPolicy::kNever)
            ->yield_ms == kMaxYieldMs);

  {
    codex::testing::ScopedEnv relative("SHELL", "zsh");  // not absolute: not trusted
    CHECK(DecodeExecCommandArgs(ArgsOf(R"({"cmd":"x"})"), ApprovalPolicy::kNever)->shell ==
          "/bin/bash");
  }
  CHECK(FaultOf(DecodeExecCommandArgs(ArgsOf(R"({"cmd":["make"]})"), ApprovalPolicy::kNever)) ==
        "exec_command: `cmd` must be the command to run, as a string");
  const std::string bad_escalation = FaultOf(DecodeExecCommandArgs(
      ArgsOf(R"({"cmd":"x","sandbox_permissions":"root"})"), ApprovalPolicy::kOnRequest));
  CHECK(bad_escalation.rfind("exec_command: ", 0) == 0);
}

TEST_CASE("write_stdin: the session id, characters and a short default yield") {
  auto write = DecodeWriteStdinArgs(ArgsOf(R"({"session_id":1001,"chars":"q\n"})"));
  REQUIRE(write.ok());
  CHECK(write->session_id == 1001);
  CHECK(write->chars == "q\n");
  CHECK(write->yield_ms == kWriteStdinDefaultYieldMs);
  CHECK(write->max_tokens == kDefaultMaxOutputTokens);
  CHECK(DecodeWriteStdinArgs(ArgsOf(R"({"session_id":1})"))->chars.empty());
  CHECK(FaultOf(DecodeWriteStdinArgs(ArgsOf(R"({"session_id":"1001"})"))) ==
        "write_stdin: `session_id` must be the number exec_command returned");
}

TEST_CASE("request_user_input: questions with options; Codex's line when one has none") {
  auto decoded = DecodeRequestUserInputArgs(ArgsOf(
      R"({"questions":[{"id":"db","header":"Database","question":"Which?","options":[)"
      R"({"label":"SQLite","description":"One file."},{"label":"PG","description":"A server."}]},)"
      R"({"id":"n","header":"Name","question":"Called?","options":[)"
      R"({"label":"items","description":"d"}],"extra":1}]})"));
  REQUIRE(decoded.ok());
  REQUIRE(decoded->size() == 2);
  CHECK((*decoded)[0].id == "db");
  CHECK((*decoded)[0].header == "Database");
  CHECK((*decoded)[0].question == "Which?");
  REQUIRE((*decoded)[0].options.size() == 2);
  CHECK((*decoded)[0].options[1].label == "PG");
  CHECK((*decoded)[0].options[1].description == "A server.");
  CHECK((*decoded)[1].options.size() == 1);
  // No questions: nothing to ask (Codex answers {"answers":{}}).
  decoded = DecodeRequestUserInputArgs(ArgsOf(R"({"questions":[]})"));
  REQUIRE(decoded.ok());
  CHECK(decoded->empty());
  // Codex 0.169's words for missing or empty options, whichever question.
  const std::string no_options = "request_user_input requires non-empty options for every question";
  CHECK(FaultOf(DecodeRequestUserInputArgs(
            ArgsOf(R"({"questions":[{"id":"a","header":"h","question":"q?","options":[]}]})"))) ==
        no_options);
  CHECK(FaultOf(DecodeRequestUserInputArgs(ArgsOf(
            R"({"questions":[{"id":"a","header":"h","question":"q?","options":[{"label":"x",)"
            R"("description":"y"}]},{"id":"b","header":"h","question":"q?"}]})"))) == no_options);
  // Shape errors: Codex's prefix, then what was wrong, where.
  CHECK(FaultOf(DecodeRequestUserInputArgs(ArgsOf(R"({"questions":"x"})"))) ==
        "failed to parse function arguments: request_user_input: `questions` must be an array "
        "of questions");
  CHECK(FaultOf(DecodeRequestUserInputArgs(ArgsOf(R"({})"))).find("`questions`") !=
        std::string::npos);
  CHECK(FaultOf(DecodeRequestUserInputArgs(
            ArgsOf(R"({"questions":[{"header":"h","question":"q","options":[]}]})"))) ==
        "failed to parse function arguments: request_user_input: questions[0].id must be a "
        "string");
  CHECK(
      FaultOf(DecodeRequestUserInputArgs(ArgsOf(
          R"({"questions":[{"id":"a","header":"h","question":"q","options":[{"label":3}]}]})"))) ==
      "failed to parse function arguments: request_user_input: questions[0].options[0] must "
      "have a string label and description");
}

TEST_CASE("request_user_input's answer: Codex's JSON, labels then the user's note") {
  CHECK(UserInputAnswersJson({}) == R"({"answers":{}})");
  CHECK(UserInputAnswersJson(
            {{"db", "SQLite (Recommended)", ""}, {"name", "None of the above", "orders \"v2\""}}) ==
        R"~({"answers":{"db":{"answers":["SQLite (Recommended)"]},"name":{"answers":)~"
        R"~(["None of the above","user_note: orders \"v2\""]}}})~");
}

TEST_CASE("create_goal: the objective and an optional budget, serde's messages") {
  auto ok = DecodeCreateGoalArgs(R"({"objective":"Ship it","token_budget":5000,"extra":1})");
  REQUIRE(ok.ok());
  CHECK(ok->objective == "Ship it");
  CHECK(ok->token_budget == 5000);
  auto bare = DecodeCreateGoalArgs(R"({"objective":"x","token_budget":null})");
  REQUIRE(bare.ok());
  CHECK_FALSE(bare->token_budget.has_value());
  // Codex 0.169's words (captured): the position is the object's end.
  CHECK(DecodeCreateGoalArgs("{}").status().message() ==
        "missing field `objective` at line 1 column 2");
  CHECK(DecodeCreateGoalArgs("{\n  \"token_budget\": 5\n}").status().message() ==
        "missing field `objective` at line 3 column 1");
  CHECK(DecodeCreateGoalArgs(R"({"objective":7})")
            .status()
            .message()
            .starts_with("invalid type: integer `7`, expected a string"));
  CHECK(DecodeCreateGoalArgs(R"({"objective":"x","token_budget":"lots"})")
            .status()
            .message()
            .starts_with("invalid type: string \"lots\", expected i64"));
  CHECK(DecodeCreateGoalArgs("not json").status().message() ==
        "failed to parse the arguments of 'create_goal' as a JSON object");
}

TEST_CASE("update_goal: one of Codex's six statuses, else serde's unknown variant") {
  CHECK(*DecodeUpdateGoalStatus(R"({"status":"complete"})") == "complete");
  CHECK(*DecodeUpdateGoalStatus(R"({"status":"budgetLimited"})") == "budgetLimited");
  // Captured from Codex 0.169: the column is the value's closing quote.
  CHECK(DecodeUpdateGoalStatus(R"({"status":"bogus"})").status().message() ==
        "unknown variant `bogus`, expected one of `active`, `paused`, `blocked`, `usageLimited`, "
        "`budgetLimited`, `complete` at line 1 column 17");
  CHECK(DecodeUpdateGoalStatus("{\n \"status\": \"nope\"}").status().message() ==
        "unknown variant `nope`, expected one of `active`, `paused`, `blocked`, `usageLimited`, "
        "`budgetLimited`, `complete` at line 2 column 17");
  // A key that merely contains the word, and an escaped quote, do not mislead it.
  CHECK(DecodeUpdateGoalStatus(R"({"note":"\"status\"","status":"a\"b"})").status().message() ==
        "unknown variant `a\"b`, expected one of `active`, `paused`, `blocked`, `usageLimited`, "
        "`budgetLimited`, `complete` at line 1 column 36");
  CHECK(DecodeUpdateGoalStatus("{}").status().message() ==
        "missing field `status` at line 1 column 2");
  CHECK(DecodeUpdateGoalStatus(R"({"status":true})")
            .status()
            .message()
            .starts_with("invalid type: boolean `true`, expected a string"));
}
