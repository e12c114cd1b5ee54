// Unified exec end to end: the real `codex exec` with its default harness
// (Codex 0.169's: exec_command + write_stdin) against the scripted Responses
// server. A scripted
// model starts an interactive Python on a terminal with exec_command, talks
// to it across three write_stdin calls (its state survives between them)
// and finds it confined; a background loop keeps running between calls and a
// later poll sees its newer output; nothing of either outlives codex.
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "sandbox/landlock.h"
#include "sandbox/process.h"
#include "testing/files.h"
#include "tests/e2e_checks.h"
#include "tests/e2e_support.h"

namespace codex::testing {
namespace {

using e2e::MakeEnv;
using e2e::ModelOutput;
using e2e::Run;

// No config: unified exec is the default, as in Codex 0.169.
constexpr const char* kConfig = "";

bool HaveLandlock() {
  if (sandbox::landlock::AbiVersion() >= 1) return true;
  WARN("skipped: Landlock is not available on this kernel");
  return false;
}

// Processes whose command line holds `marker` (pgrep, outside any sandbox).
std::string Survivors(const std::string& marker) {
  sandbox::SpawnOptions options;
  options.argv = {"pgrep", "-f", marker};
  auto r = sandbox::RunProcess(options);
  REQUIRE(r.ok());
  return r->stdout_text;
}

// The text after "Output:\n".
std::string OutputPart(const std::string& text) {
  size_t at = text.find("\nOutput:\n");
  return at == std::string::npos ? "" : text.substr(at + 9);
}

}  // namespace

TEST_CASE("unified exec: a Python REPL on a terminal across three write_stdin calls, sandboxed") {
  if (!HaveLandlock()) return;
  const std::string marker = "codex-uexec-repl-" + std::to_string(::getpid());
  const std::string script = R"({"responses": [
    {"output": [{"function_call": "exec_command", "call_id": "start", "arguments":
      {"cmd": "python3 -q -i -c '' )" +
                             marker + R"(", "tty": true, "login": false,
       "yield_time_ms": 1500}}]},
    {"output": [{"function_call": "write_stdin", "call_id": "w1", "arguments":
      {"session_id": 1000, "chars": "x = 6 * 7\n", "yield_time_ms": 500}}]},
    {"output": [{"function_call": "write_stdin", "call_id": "w2", "arguments":
      {"session_id": 1000, "chars": "print('answer', x + 1)\n", "yield_time_ms": 1000}}]},
    {"output": [{"function_call": "write_stdin", "call_id": "w3", "arguments":
      {"session_id": 1000, "chars": "open('escape-' + str(x), 'w')\n", "yield_time_ms": 1000}}]},
    {"output": [{"function_call": "write_stdin", "call_id": "unknown", "arguments":
      {"session_id": 4242, "chars": "x\n"}}]},
    "done",
    {"output": [{"shell": ["echo", "one-shot"], "call_id": "shell-after"}]},
    "resumed with shell",
    "back to unified exec"]})";
  auto env = MakeEnv(script, kConfig);
  auto run = Run(*env, {"exec", "talk to python"});
  INFO("stderr: " << run.err);
  CHECK(run.exit_code == 0);
  CHECK(run.out == "done\n");

  // The tools offered are Codex's unified exec pair, not `shell`.
  auto requests = env->server().requests_to("/responses");
  REQUIRE_FALSE(requests.empty());
  const std::string tools = requests.front().body.dump();
  CHECK_THAT(tools, Catch::Contains("\"exec_command\"") && Catch::Contains("\"write_stdin\""));
  CHECK(tools.find("\"name\":\"shell\"") == std::string::npos);

  const std::string start = ModelOutput(*env, "start");
  INFO("start: " << start);
  CHECK(std::regex_search(start, std::regex("^Chunk ID: [0-9a-f]{6}\nWall time: [0-9]+\\.[0-9]{4} "
                                            "seconds\nProcess running with session ID 1000\n"
                                            "Original token count: [0-9]+\nOutput:\n")));
  CHECK_THAT(ModelOutput(*env, "w1"), Catch::Contains("Process running with session ID 1000"));
  // x set by the previous call is still there: the same process.
  const std::string w2 = ModelOutput(*env, "w2");
  INFO("w2: " << w2);
  CHECK_THAT(OutputPart(w2), Catch::Contains("answer 43"));
  // It runs in the sandbox (exec's default read-only): no write to the workspace.
  const std::string w3 = ModelOutput(*env, "w3");
  INFO("w3: " << w3);
  CHECK((w3.find("Read-only file system") != std::string::npos ||
         w3.find("Permission denied") != std::string::npos));
  CHECK_FALSE(std::filesystem::exists(env->workdir() / "escape-42"));
  CHECK_THAT(ModelOutput(*env, "unknown"), Catch::Contains("Unknown process id 4242"));
  // The REPL was still open when the session ended: it is gone with codex.
  CHECK(Survivors(marker).empty());

  // Resumed with the one-shot shell harness: the exec_command and write_stdin
  // calls and their outputs are resent as they were (the server checks every
  // call has its output), and the model now gets `shell`.
  auto resumed = Run(*env, {"exec", "-c", "features.unified_exec=false", "resume", "--last",
                            "go on with the shell"});
  INFO("resume stderr: " << resumed.err);
  CHECK(resumed.exit_code == 0);
  CHECK(resumed.out == "resumed with shell\n");
  requests = env->server().requests_to("/responses");
  const Json& last = requests.back().body;
  const std::string input = last["input"].dump();
  CHECK_THAT(input, Catch::Contains("\"name\":\"exec_command\"") &&
                        Catch::Contains("\"name\":\"write_stdin\"") &&
                        Catch::Contains("answer 43"));
  CHECK_THAT(last["tools"].dump(), Catch::Contains("\"name\":\"shell\""));
  CHECK(last["tools"].dump().find("\"exec_command\"") == std::string::npos);
  CHECK_THAT(ModelOutput(*env, "shell-after"), Catch::Contains("one-shot"));

  // And back: the shell call is resent to a model offered exec_command.
  auto again = Run(*env, {"exec", "resume", "--last", "and again"});
  CHECK(again.exit_code == 0);
  CHECK(again.out == "back to unified exec\n");
  requests = env->server().requests_to("/responses");
  CHECK_THAT(requests.back().body["input"].dump(), Catch::Contains("\"name\":\"shell\""));
  CHECK_THAT(requests.back().body["tools"].dump(), Catch::Contains("\"exec_command\""));
}

TEST_CASE("unified exec: a background loop keeps running and a later call polls it") {
  if (!HaveLandlock()) return;
  const std::string marker = "codex-uexec-loop-" + std::to_string(::getpid());
  const std::string script = R"({"responses": [
    {"output": [{"function_call": "exec_command", "call_id": "bg", "arguments":
      {"cmd": "i=0; while [ $i -lt 3000 ]; do i=$((i+1)); echo tick $i; sleep 0.05; done # )" +
                             marker + R"(", "login": false, "yield_time_ms": 300}}]},
    {"output": [{"function_call": "exec_command", "call_id": "other", "arguments":
      {"cmd": "echo meanwhile; exit 3", "login": false}}]},
    {"output": [{"function_call": "write_stdin", "call_id": "poll", "arguments":
      {"session_id": 1000, "chars": "", "yield_time_ms": 1000}}]},
    "done"]})";
  auto env = MakeEnv(script, kConfig);
  auto run = Run(*env, {"exec", "start a server"});
  INFO("stderr: " << run.err);
  CHECK(run.exit_code == 0);
  const std::string bg = ModelOutput(*env, "bg");
  INFO("bg: " << bg);
  CHECK_THAT(bg, Catch::Contains("Process running with session ID 1000"));
  CHECK_THAT(OutputPart(bg), Catch::StartsWith("tick 1\n"));
  // A command that ends within its yield reports its exit code, no session.
  const std::string other = ModelOutput(*env, "other");
  CHECK_THAT(other, Catch::Contains("Process exited with code 3"));
  CHECK(OutputPart(other) == "meanwhile\n");
  // The poll sees the loop's later lines, not the ones already returned.
  const std::string poll = ModelOutput(*env, "poll");
  INFO("poll: " << poll);
  CHECK_THAT(poll, Catch::Contains("Process running with session ID 1000"));
  const std::string later = OutputPart(poll);
  CHECK(later.find("tick 1\n") != 0);
  CHECK(std::regex_search(later, std::regex("tick [0-9]{2,}")));
  CHECK(Survivors(marker).empty());
  // What the user reads: the loop still running, not an exit status it
  // never had; the command that ended, its real one.
  CHECK_THAT(run.err, Catch::Contains("↻ running in the background (session 1000)"));
  CHECK_THAT(run.err, Catch::Contains("✗ exit 3"));
  CHECK_THAT(run.err, !Catch::Contains("✓ exit 0"));
}

TEST_CASE("unified exec: escalation goes through the shell tool's approval path") {
  if (!HaveLandlock()) return;
  const std::string script = R"({"responses": [
    {"output": [{"function_call": "exec_command", "call_id": "esc", "arguments":
      {"cmd": "touch escaped-by-model", "login": false,
       "sandbox_permissions": "require_escalated", "justification": "needs to write"}}]},
    {"output": [{"function_call": "exec_command", "call_id": "plain", "arguments":
      {"cmd": "touch inside-sandbox", "login": false}}]},
    "done"]})";
  auto env = e2e::MakeEnv(script, kConfig);
  // Under never the escalation fields are not honoured (core/approval.h:
  // only on-request declares them): the command runs in the sandbox.
  auto never = e2e::Run(*env, {"exec", "-c", "approval_policy=\"never\"", "escalate"});
  CHECK(never.exit_code == 0);
  CHECK_THAT(e2e::ModelOutput(*env, "esc"), Catch::Contains("Read-only file system"));
  CHECK_FALSE(std::filesystem::exists(env->workdir() / "escaped-by-model"));
  // Without escalation it runs, in the (read-only) sandbox.
  CHECK_THAT(e2e::ModelOutput(*env, "plain"), Catch::Contains("Process exited with code 1"));
  CHECK_FALSE(std::filesystem::exists(env->workdir() / "inside-sandbox"));
}

TEST_CASE("unified exec: on-failure reruns what the sandbox stopped once the user agrees") {
  if (!HaveLandlock()) return;
  const std::string script = R"({"responses": [
    {"output": [{"function_call": "exec_command", "call_id": "grep", "arguments":
      {"cmd": "grep absent-pattern data.txt", "login": false}}]},
    {"output": [{"function_call": "exec_command", "call_id": "touch", "arguments":
      {"cmd": "touch rerun-outside", "login": false}}]},
    "done"]})";
  // Approvals without a terminal are read from stdin: the prompt, then "y".
  auto env = e2e::MakeEnv(script, std::string("approval_policy = \"on-failure\"\n") +
                                      "sandbox_mode = \"read-only\"\n" + kConfig);
  std::ofstream(env->workdir() / "data.txt") << "nothing to see\n";
  auto run = env->RunCodex({}, "make it\ny\n");
  REQUIRE(run.ok());
  INFO(run->err);
  CHECK(run->exit_code == 0);
  // grep finding nothing is the model's business: exit 1, nobody asked.
  CHECK_THAT(e2e::ModelOutput(*env, "grep"), Catch::Contains("Process exited with code 1"));
  size_t asked = 0;
  for (size_t at = run->err.find("Allow this command?"); at != std::string::npos;
       at = run->err.find("Allow this command?", at + 1)) {
    ++asked;
  }
  CHECK(asked == 1);
  // The sandbox's refusal is what the user decides on; once approved the
  // command runs again outside it and the model gets that run.
  CHECK_THAT(run->err, Catch::Contains("Read-only file system"));
  CHECK_THAT(run->err, Catch::Contains("command approved"));
  CHECK(std::filesystem::exists(env->workdir() / "rerun-outside"));
  const std::string touched = e2e::ModelOutput(*env, "touch");
  CHECK_THAT(touched, Catch::Contains("Process exited with code 0"));
  CHECK_THAT(touched, !Catch::Contains("Read-only file system"));
}

TEST_CASE("unified exec: a sandbox denial under on-request or a run that cannot ask stays denied") {
  if (!HaveLandlock()) return;
  const std::string script = R"({"responses": [
    {"output": [{"function_call": "exec_command", "call_id": "touch", "arguments":
      {"cmd": "touch stays-out", "login": false}}]},
    "done"]})";
  auto env = e2e::MakeEnv(script, std::string("sandbox_mode = \"read-only\"\n") + kConfig);
  // on-request: as in Codex, no rerun is offered; the model gets the denial.
  auto on_request = e2e::Run(*env, {"exec", "-a", "on-request", "try"});
  CHECK(on_request.exit_code == 0);
  CHECK(on_request.err.find("needs approval") == std::string::npos);
  CHECK_THAT(e2e::ModelOutput(*env, "touch"), Catch::Contains("Read-only file system"));
  CHECK_FALSE(std::filesystem::exists(env->workdir() / "stays-out"));
  // on-failure in `exec`: the rerun needs the user, whom this run cannot ask.
  auto env2 = e2e::MakeEnv(script, std::string("sandbox_mode = \"read-only\"\n") + kConfig);
  auto on_failure = e2e::Run(*env2, {"exec", "-a", "on-failure", "try"});
  CHECK(on_failure.exit_code == 0);
  CHECK_THAT(on_failure.err, Catch::Contains("needs approval under the on-failure policy; "
                                             "declined because this run cannot ask"));
  CHECK_THAT(e2e::ModelOutput(*env2, "touch"), Catch::Contains("Read-only file system"));
  CHECK_FALSE(std::filesystem::exists(env2->workdir() / "stays-out"));
}

TEST_CASE("view_image: a local image reaches the model as an input_image; bad paths say why") {
  const std::string script = R"({"responses": [
    {"output": [{"function_call": "view_image", "call_id": "png", "arguments": {"path": "dot.png"}},
                {"function_call": "view_image", "call_id": "missing",
                 "arguments": {"path": "nowhere.png"}},
                {"function_call": "view_image", "call_id": "text",
                 "arguments": {"path": "notes.txt"}}]},
    "seen"]})";
  auto env = MakeEnv(script, kConfig);  // offered by default, as in Codex 0.169
  // A 1x1 PNG.
  const std::string png =
      std::string("\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0\x1f\x15\xc4\x89",
                  33) +
      std::string(
          "\0\0\0\rIDATx\x9c"
          "c\xf8\x0f\0\0\x01\x01\0\x05\x18\xd8N\0\0\0\0IEND\xae"
          "B`\x82",
          34);
  WriteFile(env->workdir() / "dot.png", png);
  WriteFile(env->workdir() / "notes.txt", "not an image\n");
  auto run = Run(*env, {"exec", "look at the picture"});
  INFO("stderr: " << run.err);
  CHECK(run.exit_code == 0);
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 2);
  CHECK_THAT(requests[0].body["tools"].dump(), Catch::Contains("\"view_image\""));
  const Json input = requests[1].body["input"];
  Json image;
  for (const auto& item : input) {
    if (item.value("type", "") == "function_call_output" && item.value("call_id", "") == "png") {
      image = item["output"];
    }
  }
  REQUIRE(image.is_array());
  REQUIRE(image.size() == 1);
  CHECK(image[0]["type"] == "input_image");
  CHECK(image[0]["image_url"].get<std::string>().rfind("data:image/png;base64,iVBORw0KGgo", 0) ==
        0);
  CHECK_THAT(ModelOutput(*env, "missing"), Catch::Contains("unable to locate image at"));
  CHECK_THAT(ModelOutput(*env, "text"), Catch::Contains("is not a PNG, JPEG, GIF or WebP image"));
}

TEST_CASE("web_search: offered when configured; its calls show in --json and are resent") {
  const std::string script = R"({"responses": [
    {"output": [{"type": "web_search_call", "status": "completed",
                 "action": {"type": "search", "query": "codex unified exec"}},
                {"message": "found it"}]},
    "again"]})";
  auto env = MakeEnv(script, "[tools]\nweb_search = true\n");
  auto run = Run(*env, {"exec", "--json", "search the web"});
  INFO("stderr: " << run.err);
  CHECK(run.exit_code == 0);
  CHECK_THAT(run.out, Catch::Contains(R"("type":"web_search","query":"codex unified exec")"));
  auto requests = env->server().requests_to("/responses");
  REQUIRE_FALSE(requests.empty());
  CHECK_THAT(requests[0].body["tools"].dump(), Catch::Contains(R"({"type":"web_search"})"));
  auto resumed = Run(*env, {"exec", "resume", "--last", "and again"});
  CHECK(resumed.exit_code == 0);
  requests = env->server().requests_to("/responses");
  CHECK_THAT(requests.back().body["input"].dump(),
             Catch::Contains("web_search_call") && Catch::Contains("codex unified exec"));
}

namespace {

// The names of the tools of a request, in order ("web_search" for the hosted one).
std::vector<std::string> ToolNames(const Json& body) {
  std::vector<std::string> names;
  for (const auto& t : body["tools"]) names.push_back(t.value("name", t.value("type", "")));
  return names;
}

// The parameter names a tool declares, sorted.
std::vector<std::string> ParameterNames(const Json& body, const std::string& tool) {
  std::vector<std::string> names;
  for (const auto& t : body["tools"]) {
    if (t.value("name", "") != tool) continue;
    for (const auto& [k, v] : t["parameters"]["properties"].items()) names.push_back(k);
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

TEST_CASE(
    "default harness: Codex 0.169's tools and order; features.unified_exec=false gives shell") {
  auto env = MakeEnv(R"({"responses": [], "default": "reply {{n}}"})");
  e2e::RunOk(*env, {"exec", "one"});
  e2e::RunOk(*env, {"exec", "-c", "features.unified_exec=false", "two"});
  e2e::RunOk(*env, {"exec", "-c", "features.unified_exec=false", "-c", "tools.view_image=false",
                    "-c", "tools.web_search=true", "three"});
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 3);
  // What Codex 0.169 offers the unknown model "gpt-test" (the reference
  // requests and tests/compat/codex-0.169-mcp-capture.json) in its order,
  // less the tools this codex does not implement, and then apply_patch and
  // update_plan.
  CHECK(ToolNames(requests[0].body) ==
        std::vector<std::string>{"exec_command", "write_stdin", "request_user_input", "view_image",
                                 "multi_agent_v1", "get_goal", "create_goal", "update_goal",
                                 "apply_patch", "update_plan"});
  // Codex 0.169's parameter names (the reference requests list them).
  CHECK(ParameterNames(requests[0].body, "exec_command") ==
        std::vector<std::string>{"cmd", "justification", "login", "max_output_tokens",
                                 "prefix_rule", "sandbox_permissions", "shell", "tty", "workdir",
                                 "yield_time_ms"});
  CHECK(ParameterNames(requests[0].body, "write_stdin") ==
        std::vector<std::string>{"chars", "max_output_tokens", "session_id", "yield_time_ms"});
  CHECK(ParameterNames(requests[0].body, "view_image") == std::vector<std::string>{"path"});
  // Codex's key for the one-shot harness (Codex 0.169 reads it, yet offers
  // exec_command anyway): here `shell` takes the pair's place.
  CHECK(ToolNames(requests[1].body) ==
        std::vector<std::string>{"shell", "request_user_input", "view_image", "multi_agent_v1",
                                 "get_goal", "create_goal", "update_goal", "apply_patch",
                                 "update_plan"});
  CHECK(ToolNames(requests[2].body) ==
        std::vector<std::string>{"shell", "request_user_input", "multi_agent_v1", "get_goal",
                                 "create_goal", "update_goal", "apply_patch", "update_plan",
                                 "web_search"});
}

namespace {

// The items of `input` for `call_id` (the call and its output), as sent.
std::vector<std::string> ItemsOf(const Json& input, const std::string& call_id) {
  std::vector<std::string> out;
  for (const auto& item : input) {
    if (item.value("call_id", "") == call_id) out.push_back(item.dump());
  }
  return out;
}

}  // namespace

TEST_CASE("a session recorded with shell resumes under the default harness, resent unchanged") {
  auto env = MakeEnv(R"({"responses": [
    {"output": [{"shell": ["sh", "-c", "echo recorded-by-shell; exit 3"], "call_id": "old"}]},
    "shell turn done",
    {"output": [{"shell": ["sh", "-c", "echo still-runs"], "call_id": "late"}]},
    "resumed done"]})");
  auto first = Run(*env, {"exec", "-c", "features.unified_exec=false", "use the shell"});
  INFO("stderr: " << first.err);
  REQUIRE(first.exit_code == 0);
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 2);
  const std::vector<std::string> recorded = ItemsOf(requests[1].body["input"], "old");
  REQUIRE(recorded.size() == 2);  // the call and its output
  CHECK_THAT(recorded[1], Catch::Contains("recorded-by-shell"));

  // Resumed with no config: the model now gets exec_command, the old shell
  // call and output are resent byte for byte, and a late `shell` call from a
  // model that remembers the old tool still runs (in the sandbox).
  auto resumed = Run(*env, {"exec", "resume", "--last", "go on"});
  INFO("resume stderr: " << resumed.err);
  CHECK(resumed.exit_code == 0);
  CHECK(resumed.out == "resumed done\n");
  requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 4);
  CHECK(ItemsOf(requests[2].body["input"], "old") == recorded);
  CHECK(ItemsOf(requests[3].body["input"], "old") == recorded);
  CHECK(ToolNames(requests[2].body).front() == "exec_command");
  CHECK_THAT(ModelOutput(*env, "late"), Catch::Contains("still-runs"));
}

}  // namespace codex::testing