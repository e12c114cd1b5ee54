// End-to-end tests of the tools through the real `codex` binary against the
// scripted Responses server: the shell tool (argv, workdir, timeout, output
// truncation, --json command_execution), the sandbox as `codex exec` applies
// it (read-only default, --full-auto, .git, network), approvals without an
// approver, apply_patch in its three shapes, update_plan, and the project
// context (AGENTS.md, <environment_context>, updates appended on resume).
//
// Paths that must lie outside every writable root of workspace-write (which
// includes /tmp and $TMPDIR) are made beside this test binary, in the build
// tree. Sandbox cases need Landlock: without it they WARN and return.
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "sandbox/landlock.h"
#include "testing/files.h"
#include "testing/loopback_listener.h"
#include "testing/skip.h"
#include "testing/temp_dir.h"
#include "tests/e2e_checks.h"
#include "tests/e2e_support.h"

namespace codex::testing {
namespace {

namespace fs = std::filesystem;
using e2e::CheckWireRules;
using e2e::CompletedItems;
using e2e::InputExtends;
using e2e::JsonLines;
using e2e::MakeEnv;
using e2e::ModelOutput;
using e2e::OutputFor;
using e2e::RunOk;
using e2e::SessionIdFromBanner;
using e2e::ShellResult;

// Runs codex in `cwd` (the env's workdir when empty) to completion.
ProcessResult Run(CodexTestEnv& env, std::vector<std::string> args, const fs::path& cwd = {}) {
  ProcessOptions p = env.CodexCommand(std::move(args));
  if (!cwd.empty()) p.cwd = cwd;
  return e2e::RunChecked(p);
}

// A message item's text (all content parts).
std::string ItemText(const Json& item) {
  std::string text;
  if (!item.contains("content") || !item["content"].is_array()) return text;
  for (const auto& part : item["content"]) text += part.value("text", "");
  return text;
}

std::string Quoted(const fs::path& p) { return Json(p.string()).dump(); }
std::string Quoted(const std::string& s) { return Json(s).dump(); }

// A scratch directory outside /tmp and $TMPDIR (NonTempBase), removed on
// destruction.
struct BuildTreeDir : TempDir {
  BuildTreeDir() : TempDir("tools-e2e-", NonTempBase()) {}
  // True when the directory is really outside /tmp and $TMPDIR.
  bool OutsideTemp() const { return !UnderTemp(path()); }
};

bool HaveLandlock() {
  if (sandbox::landlock::AbiVersion() > 0) return true;
  codex::testing::SkipPart(
      "Landlock is missing on this kernel: sandbox enforcement not tested here");
  return false;
}

constexpr char kAddHello[] = "*** Begin Patch\n*** Add File: hello.txt\n+hi\n*** End Patch\n";
constexpr char kUpdateHello[] =
    "*** Begin Patch\n*** Update File: hello.txt\n@@\n-hi\n+hello\n*** End Patch\n";

}  // namespace

// ---------------------------------------------------------------------------
// 1. The shell tool.

TEST_CASE("shell: argv runs without a shell; workdir is relative to cwd or absolute") {
  auto env = MakeEnv(R"({"responses": [
    {"output": [{"shell": ["echo", "$HOME", "a;b", "*", "`id`"], "call_id": "argv"}]},
    {"output": [{"shell": ["pwd"], "workdir": "sub/dir", "call_id": "rel"}]},
    {"output": [{"shell": ["pwd"], "workdir": "/", "call_id": "abs"}]},
    {"output": [{"shell": ["pwd"], "workdir": "missing", "call_id": "missing"}]},
    "done"]})");
  fs::create_directories(env->workdir() / "sub" / "dir");
  auto run = Run(*env, {"exec", "run things"});
  CHECK(run.exit_code == 0);
  CHECK(run.out == "done\n");
  auto argv = ShellResult(*env, "argv");
  CHECK(argv.output == "$HOME a;b * `id`\n");
  CHECK(argv.exit_code == 0);
  CHECK(ShellResult(*env, "rel").output ==
        fs::canonical(env->workdir() / "sub" / "dir").string() + "\n");
  CHECK(ShellResult(*env, "abs").output == "/\n");
  auto missing = ShellResult(*env, "missing");
  CHECK(missing.exit_code != 0);
  CHECK_THAT(missing.output, Catch::Contains("missing"));
  for (const auto& r : env->server().requests_to("/responses")) {
    CheckWireRules(r, SessionIdFromBanner(run.err));
  }
}

TEST_CASE("shell: timeout_ms kills a long command; the model sees exit 124") {
  auto env = MakeEnv(R"({"responses": [
    {"output": [{"shell": ["sleep", "5"], "timeout_ms": 300, "call_id": "slow"}]},
    "gave up"]})");
  auto run = Run(*env, {"exec", "sleep"});
  CHECK(run.exit_code == 0);
  auto slow = ShellResult(*env, "slow");
  CHECK(slow.exit_code == 124);
  CHECK_THAT(slow.output, Catch::Contains("timed out"));
}

TEST_CASE("shell --json: long output reaches the model cut head+tail; command_execution items") {
  auto env = MakeEnv(R"({"responses": [
    {"output": [{"shell": ["seq", "1", "6000"], "call_id": "long"}]},
    {"output": [{"shell": ["sh", "-c", "echo oops; exit 3"], "call_id": "fails"}]},
    "done"]})");
  auto run = Run(*env, {"exec", "--json", "print a lot"});
  REQUIRE(run.exit_code == 0);

  std::string full;
  for (int i = 1; i <= 6000; ++i) full += std::to_string(i) + "\n";
  auto seq = ShellResult(*env, "long");
  CHECK(seq.exit_code == 0);
  CHECK(seq.output.size() < 11 * 1024);
  CHECK(seq.output.rfind("1\n2\n3\n", 0) == 0);
  CHECK(seq.output.size() > 12);
  CHECK(seq.output.compare(seq.output.size() - 10, 10, "5999\n6000\n") == 0);
  CHECK_THAT(seq.output, Catch::Contains("bytes (") && Catch::Contains("omitted"));
  CHECK(seq.output.find("\n3000\n") == std::string::npos);

  auto fails = ShellResult(*env, "fails");
  CHECK(fails.exit_code == 3);
  CHECK(fails.output == "oops\n");

  auto items = CompletedItems(run.out, "command_execution");
  REQUIRE(items.size() == 2);
  CHECK(items[0].value("command", "") == "seq 1 6000");
  CHECK(items[0].value("aggregated_output", "") == full);
  CHECK(items[0]["exit_code"] == 0);
  CHECK(items[0].value("status", "") == "completed");
  CHECK(items[1].value("command", "") == "sh -c 'echo oops; exit 3'");
  CHECK(items[1].value("aggregated_output", "") == "oops\n");
  CHECK(items[1]["exit_code"] == 3);
  CHECK(items[1].value("status", "") == "failed");
  // Each command_execution was announced first with the same id.
  int started = 0;
  for (const auto& e : JsonLines(run.out)) {
    if (e.value("type", "") == "item.started" &&
        e["item"].value("type", "") == "command_execution") {
      CHECK(e["item"].value("status", "") == "in_progress");
      CHECK((e["item"].value("id", "") == items[0].value("id", "") ||
             e["item"].value("id", "") == items[1].value("id", "")));
      ++started;
    }
  }
  CHECK(started == 2);
}

// ---------------------------------------------------------------------------
// 2. The sandbox as `codex exec` applies it.

TEST_CASE("sandbox: exec defaults to read-only; the model sees the failed write") {
  if (!HaveLandlock()) return;
  auto env = MakeEnv(R"({"responses": [
    {"output": [{"shell": ["touch", "made-by-model"], "call_id": "touch"}]},
    "could not write"]})");
  auto run = Run(*env, {"exec", "touch a file"});
  CHECK(run.exit_code == 0);
  CHECK_THAT(run.err, Catch::Contains("sandbox read-only"));
  CHECK_FALSE(fs::exists(env->workdir() / "made-by-model"));
  auto touch = ShellResult(*env, "touch");
  CHECK(touch.exit_code != 0);
  CHECK_THAT(touch.output, Catch::Contains("made-by-model"));
}

TEST_CASE("sandbox: --full-auto writes the workspace and /tmp, not outside them, not .git") {
  if (!HaveLandlock()) return;
  BuildTreeDir dir;
  if (!dir.OutsideTemp()) {
    WARN("the build tree " << dir.path() << " is under /tmp or $TMPDIR; skipped");
    return;
  }
  const fs::path ws = dir.path() / "ws";
  const fs::path outside = dir.path() / "outside";
  fs::create_directories(ws / ".git");
  fs::create_directories(ws / "src");
  fs::create_directories(outside);
  std::ofstream(ws / "README") << "old\n";
  TempDir tmp("codex-tools-e2e-", "/tmp");
  const fs::path in_tmp = tmp.path() / "f";
  auto env = MakeEnv(R"({"responses": [
    {"output": [{"shell": ["sh", "-c", "echo new > src/inside && echo more >> README"],
                 "call_id": "inside"}]},
    {"output": [{"shell": ["touch", )" +
                     Quoted(outside / "f") + R"(], "call_id": "outside"}]},
    {"output": [{"shell": ["touch", ".git/hook"], "call_id": "git"}]},
    {"output": [{"shell": ["touch", )" +
                     Quoted(in_tmp) + R"(], "call_id": "tmp"}]},
    "done",
    {"output": [{"shell": ["touch", )" +
                     Quoted(outside / "added") + R"(], "call_id": "added"}]},
    "done again"]})");
  auto run = Run(*env, {"exec", "--full-auto", "write things"}, ws);
  CHECK(run.exit_code == 0);
  CHECK(ShellResult(*env, "inside").exit_code == 0);
  CHECK(ReadFile(ws / "src" / "inside") == "new\n");
  CHECK(ReadFile(ws / "README") == "old\nmore\n");
  auto out = ShellResult(*env, "outside");
  CHECK(out.exit_code != 0);
  // The read-only mount answers first (EROFS); Landlock alone says EACCES.
  CHECK_THAT(out.output,
             Catch::Contains("Permission denied") || Catch::Contains("Read-only file system"));
  CHECK_FALSE(fs::exists(outside / "f"));
  CHECK(ShellResult(*env, "git").exit_code != 0);
  CHECK_FALSE(fs::exists(ws / ".git" / "hook"));
  CHECK(ShellResult(*env, "tmp").exit_code == 0);
  CHECK(fs::exists(in_tmp));

  // --add-dir makes another root writable.
  auto added = Run(*env, {"exec", "--add-dir", outside.string(), "--full-auto", "write there"}, ws);
  CHECK(added.exit_code == 0);
  CHECK(ShellResult(*env, "added").exit_code == 0);
  CHECK(fs::exists(outside / "added"));
}

TEST_CASE("sandbox: the model's workdir does not widen the writable roots") {
  if (!HaveLandlock()) return;
  BuildTreeDir dir;
  if (!dir.OutsideTemp()) {
    WARN("the build tree " << dir.path() << " is under /tmp or $TMPDIR; skipped");
    return;
  }
  const fs::path ws = dir.path() / "ws";
  const fs::path outside = dir.path() / "outside";
  fs::create_directories(ws);
  fs::create_directories(outside);
  auto env = MakeEnv(R"({"responses": [
    {"output": [{"shell": ["touch", "via-workdir"], "workdir": )" +
                     Quoted(outside) + R"(, "call_id": "workdir"}]},
    "done"]})");
  auto run = Run(*env, {"exec", "--full-auto", "write elsewhere"}, ws);
  CHECK(run.exit_code == 0);
  CHECK(ShellResult(*env, "workdir").exit_code != 0);
  CHECK_FALSE(fs::exists(outside / "via-workdir"));
}

TEST_CASE("sandbox: no network in workspace-write, network with danger-full-access") {
  if (!HaveLandlock()) return;
  LoopbackListener listener;
  const std::string connect =
      "exec 3<>/dev/tcp/127.0.0.1/" + std::to_string(listener.port()) + " && echo connected";
  auto env = MakeEnv(R"({"responses": [
    {"output": [{"shell": ["bash", "-c", )" +
                     Quoted(connect) + R"(], "call_id": "confined"}]},
    "no network",
    {"output": [{"shell": ["bash", "-c", )" +
                     Quoted(connect) + R"(], "call_id": "free"}]},
    "network"]})");
  auto confined = Run(*env, {"exec", "-s", "workspace-write", "connect"});
  CHECK(confined.exit_code == 0);
  auto c = ShellResult(*env, "confined");
  CHECK(c.exit_code != 0);
  CHECK(c.output.find("connected") == std::string::npos);

  auto free = Run(*env, {"exec", "-s", "danger-full-access", "connect"});
  CHECK(free.exit_code == 0);
  auto f = ShellResult(*env, "free");
  CHECK(f.exit_code == 0);
  CHECK(f.output == "connected\n");
}

// ---------------------------------------------------------------------------
// 3. Approvals in exec: there is no one to ask.

TEST_CASE("approvals: -a untrusted denies what needs asking, runs known-safe commands") {
  auto env = MakeEnv(R"({"responses": [
    {"output": [{"shell": ["touch", "not-approved"], "call_id": "touch"}]},
    {"output": [{"shell": ["ls"], "call_id": "ls"}]},
    "done"]})");
  std::ofstream(env->workdir() / "listed-file") << "x";
  auto run = Run(*env, {"exec", "-a", "untrusted", "-s", "workspace-write", "try"});
  CHECK(run.exit_code == 0);
  // The write would succeed in workspace-write: it was not run at all.
  CHECK_FALSE(fs::exists(env->workdir() / "not-approved"));
  auto touch = ShellResult(*env, "touch");
  CHECK(touch.exit_code != 0);
  CHECK_THAT(touch.output, Catch::Contains("needs the user's approval"));
  CHECK_THAT(run.err, Catch::Contains("`touch not-approved` needs approval under the untrusted "
                                      "policy; declined because this run cannot ask"));
  auto ls = ShellResult(*env, "ls");
  CHECK(ls.exit_code == 0);
  CHECK_THAT(ls.output, Catch::Contains("listed-file"));
}

TEST_CASE("approvals: -a never runs in the sandbox without asking") {
  auto env = MakeEnv(R"({"responses": [
    {"output": [{"shell": ["touch", "written"], "call_id": "write"}]},
    "done",
    {"output": [{"shell": ["touch", "refused"], "call_id": "ro"}]},
    "done"]})");
  auto run = Run(*env, {"exec", "-a", "never", "-s", "workspace-write", "write"});
  CHECK(run.exit_code == 0);
  CHECK(ShellResult(*env, "write").exit_code == 0);
  CHECK(fs::exists(env->workdir() / "written"));
  CHECK(run.err.find("needs approval") == std::string::npos);
  if (!HaveLandlock()) return;
  auto ro = Run(*env, {"exec", "-a", "never", "-s", "read-only", "write"});
  CHECK(ro.exit_code == 0);
  CHECK(ShellResult(*env, "ro").exit_code != 0);
  CHECK_FALSE(fs::exists(env->workdir() / "refused"));
  CHECK(ro.err.find("needs approval") == std::string::npos);
}

TEST_CASE("approvals: on-failure offers a rerun only for failures that look like the sandbox") {
  if (!HaveLandlock()) return;
  auto env = MakeEnv(R"({"responses": [
    {"output": [{"shell": ["grep", "absent-pattern", "data.txt"], "call_id": "grep"}]},
    {"output": [{"shell": ["touch", "blocked"], "call_id": "touch"}]},
    "done"]})");
  std::ofstream(env->workdir() / "data.txt") << "nothing to see\n";
  auto run = Run(*env, {"exec", "-a", "on-failure", "try"});
  CHECK(run.exit_code == 0);
  CHECK(ShellResult(*env, "grep").exit_code == 1);
  CHECK(run.err.find("`grep absent-pattern data.txt` needs approval") == std::string::npos);
  CHECK(ShellResult(*env, "touch").exit_code != 0);
  CHECK_THAT(run.err, Catch::Contains("`touch blocked` needs approval under the on-failure "
                                      "policy; declined because this run cannot ask"));
  CHECK_FALSE(fs::exists(env->workdir() / "blocked"));
}

// ---------------------------------------------------------------------------
// 4. apply_patch.

TEST_CASE("apply_patch as a freeform custom tool in workspace-write, with file_change events") {
  auto env = MakeEnv(R"({"responses": [
    {"output": [{"custom_tool_call": "apply_patch", "input": )" +
                     Quoted(std::string(kAddHello)) + R"(, "call_id": "add"}]},
    {"output": [{"custom_tool_call": "apply_patch", "input": )" +
                     Quoted(std::string(kUpdateHello)) + R"(, "call_id": "update"}]},
    "patched"]})");
  auto run = Run(*env, {"exec", "--json", "--full-auto", "patch"});
  REQUIRE(run.exit_code == 0);
  CHECK(ReadFile(env->workdir() / "hello.txt") == "hello\n");
  CHECK(ModelOutput(*env, "add") == "Success. Updated the following files:\nA hello.txt\n");
  CHECK(ModelOutput(*env, "update") == "Success. Updated the following files:\nM hello.txt\n");

  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 3);
  CHECK(ItemsOfType(requests[2], "custom_tool_call_output").size() == 2);
  bool offered = false;
  for (const auto& tool : requests[0].body["tools"]) {
    if (tool.value("name", "") == "apply_patch") offered = tool.value("type", "") == "custom";
  }
  CHECK(offered);

  auto changes = CompletedItems(run.out, "file_change");
  REQUIRE(changes.size() == 2);
  // Absolute paths, as Codex reports them.
  const std::string hello = fs::weakly_canonical(env->workdir() / "hello.txt").string();
  CHECK(changes[0]["changes"] == Json::array({{{"path", hello}, {"kind", "add"}}}));
  CHECK(changes[0].value("status", "") == "completed");
  CHECK(changes[1]["changes"] == Json::array({{{"path", hello}, {"kind", "update"}}}));
  CHECK(changes[1].value("status", "") == "completed");
}

TEST_CASE("apply_patch through the shell tool is intercepted and applied the same way") {
  const std::string heredoc = "apply_patch <<'EOF'\n" + std::string(kAddHello) + "EOF\n";
  auto env = MakeEnv(R"({"responses": [
    {"output": [{"shell": ["apply_patch", )" +
                     Quoted(std::string(kAddHello)) + R"(], "call_id": "argv"}]},
    {"output": [{"shell": ["bash", "-lc", )" +
                     Quoted(heredoc) + R"(], "workdir": "sub", "call_id": "heredoc"}]},
    "patched"]})");
  fs::create_directories(env->workdir() / "sub");
  auto run = Run(*env, {"exec", "--json", "-s", "workspace-write", "patch"});
  REQUIRE(run.exit_code == 0);
  CHECK(ReadFile(env->workdir() / "hello.txt") == "hi\n");
  CHECK(ReadFile(env->workdir() / "sub" / "hello.txt") == "hi\n");
  CHECK_THAT(ModelOutput(*env, "argv"), Catch::Contains("A hello.txt"));
  CHECK_THAT(ModelOutput(*env, "heredoc"), Catch::Contains("A hello.txt"));
  CHECK(CompletedItems(run.out, "file_change").size() == 2);
  CHECK(CompletedItems(run.out, "command_execution").empty());
}

TEST_CASE("apply_patch refuses paths escaping the workspace, .git, and read-only sessions") {
  BuildTreeDir dir;
  if (!dir.OutsideTemp()) {
    WARN("the build tree " << dir.path() << " is under /tmp or $TMPDIR; skipped");
    return;
  }
  const fs::path ws = dir.path() / "ws";
  fs::create_directories(ws / ".git");
  const std::string escape = "*** Begin Patch\n*** Add File: ../escaped.txt\n+x\n*** End Patch\n";
  const std::string git =
      "*** Begin Patch\n*** Add File: .git/hooks/pre-commit\n+x\n*** End Patch\n";
  auto env = MakeEnv(R"({"responses": [
    {"output": [{"custom_tool_call": "apply_patch", "input": )" +
                     Quoted(escape) + R"(, "call_id": "escape"}]},
    {"output": [{"shell": ["apply_patch", )" +
                     Quoted(escape) + R"(], "call_id": "escape-shell"}]},
    {"output": [{"custom_tool_call": "apply_patch", "input": )" +
                     Quoted(git) + R"(, "call_id": "git"}]},
    "refused",
    {"output": [{"custom_tool_call": "apply_patch", "input": )" +
                     Quoted(std::string(kAddHello)) + R"(, "call_id": "ro"}]},
    "refused again"]})");
  auto run = Run(*env, {"exec", "--json", "-s", "workspace-write", "escape"}, ws);
  REQUIRE(run.exit_code == 0);
  CHECK_FALSE(fs::exists(dir.path() / "escaped.txt"));
  CHECK_THAT(ModelOutput(*env, "escape"), Catch::Contains("outside the writable roots"));
  CHECK_THAT(ModelOutput(*env, "escape-shell"), Catch::Contains("outside the writable roots"));
  CHECK_FALSE(fs::exists(ws / ".git" / "hooks" / "pre-commit"));
  CHECK_THAT(ModelOutput(*env, "git"), Catch::Contains(".git"));
  for (const auto& change : CompletedItems(run.out, "file_change")) {
    CHECK(change.value("status", "") == "failed");
  }

  // exec's defaults: read-only, approval never.
  auto ro = Run(*env, {"exec", "--json", "patch"}, ws);
  REQUIRE(ro.exit_code == 0);
  CHECK_FALSE(fs::exists(ws / "hello.txt"));
  CHECK_THAT(ModelOutput(*env, "ro"), Catch::Contains("read-only"));
}

TEST_CASE("apply_patch as a JSON function when the provider asks for it") {
  auto env = MakeEnv(R"({"responses": [
    {"output": [{"function_call": "apply_patch", "arguments": {"input": )" +
                     Quoted(std::string(kAddHello)) + R"(}, "call_id": "fn"}]},
    {"output": [{"function_call": "apply_patch", "arguments": {"patch": "x"}, "call_id": "bad"}]},
    "patched"]})");
  auto run = Run(*env, {"-c", "model_providers.scripted.apply_patch_tool_type=\"function\"", "exec",
                        "--full-auto", "patch"});
  REQUIRE(run.exit_code == 0);
  CHECK(ReadFile(env->workdir() / "hello.txt") == "hi\n");
  CHECK_THAT(ModelOutput(*env, "fn"), Catch::Contains("A hello.txt"));
  CHECK_THAT(ModelOutput(*env, "bad"), Catch::Contains("input"));
  auto requests = env->server().requests_to("/responses");
  REQUIRE(!requests.empty());
  Json tool;
  for (const auto& t : requests[0].body["tools"]) {
    if (t.value("name", "") == "apply_patch") tool = t;
  }
  CHECK(tool.value("type", "") == "function");
  CHECK(tool["parameters"]["required"] == Json::parse(R"(["input"])"));
}

// ---------------------------------------------------------------------------
// 5. update_plan.

TEST_CASE(
    "update_plan: a todo_list event, invalid plans told to the model, stored in the session") {
  auto env = MakeEnv(R"({"responses": [
    {"output": [{"function_call": "update_plan", "call_id": "plan", "arguments":
      {"explanation": "three steps", "plan": [{"step": "read", "status": "completed"},
                                              {"step": "write", "status": "in_progress"},
                                              {"step": "test", "status": "pending"}]}}]},
    {"output": [{"function_call": "update_plan", "call_id": "twice", "arguments":
      {"plan": [{"step": "a", "status": "in_progress"}, {"step": "b", "status": "in_progress"}]}}]},
    "planned",
    "resumed"]})");
  auto run = Run(*env, {"exec", "--json", "make a plan"});
  REQUIRE(run.exit_code == 0);
  auto lists = CompletedItems(run.out, "todo_list");
  REQUIRE(lists.size() == 1);
  CHECK(lists[0]["items"] == Json::parse(R"([{"text":"read","completed":true},
                                            {"text":"write","completed":false},
                                            {"text":"test","completed":false}])"));
  CHECK(ModelOutput(*env, "plan") == "Plan updated");
  CHECK_THAT(ModelOutput(*env, "twice"), Catch::Contains("at most one step may be in_progress"));

  // The calls and their outputs are items of the session: a resumed turn sends them.
  auto resumed = Run(*env, {"exec", "resume", "--last", "go on"});
  REQUIRE(resumed.exit_code == 0);
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 4);
  CHECK(InputExtends(requests[2], requests[3]));
  std::vector<std::string> names;
  for (const auto& call : ItemsOfType(requests[3], "function_call")) {
    names.push_back(call.value("name", ""));
  }
  CHECK(names == std::vector<std::string>{"update_plan", "update_plan"});
  CHECK_THAT(OutputFor(requests[3].InputItems(), "plan"), Catch::Equals("Plan updated"));
}

// request_user_input in `codex exec`: what Codex 0.169 answers
// (tests/compat/codex-0.169-request-user-input.json), feature off and on;
// the calls resume.
TEST_CASE("request_user_input in exec: Codex's outputs with the feature off and on; resumes") {
  const std::string ask =
      R"~({"function_call": "request_user_input", "call_id": "CALL", "arguments": {"questions": [)~"
      R"~({"id": "db", "header": "Database", "question": "Which database?", "options": [)~"
      R"~({"label": "SQLite (Recommended)", "description": "One file."},)~"
      R"~({"label": "PostgreSQL", "description": "A server."}]}]}})~";
  auto call = [&](const std::string& id) {
    std::string c = ask;
    c.replace(c.find("CALL"), 4, id);
    return c;
  };
  auto env = MakeEnv(R"~({"responses": [{"output": [)~" + call("off") + R"~(]}, "first",
    {"output": [)~" + call("on") +
                     R"~(]},
    {"output": [{"function_call": "request_user_input", "call_id": "bad",
                 "arguments": {"questions": [{"id": "a", "header": "h", "question": "q?"}]}}]},
    "second", "third"]})~");
  REQUIRE(Run(*env, {"exec", "ask me"}).exit_code == 0);
  CHECK(ModelOutput(*env, "off") == "request_user_input is unavailable in Default mode");
  // The feature on: nobody to ask in exec, Codex's empty answer; bad arguments one line.
  auto on = Run(
      *env, {"exec", "--enable", "default_mode_request_user_input", "resume", "--last", "again"});
  REQUIRE(on.exit_code == 0);
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 5);
  CHECK(OutputFor(requests[3].InputItems(), "on") == R"~({"answers":{}})~");
  CHECK(OutputFor(requests[4].InputItems(), "bad") ==
        "request_user_input requires non-empty options for every question");
  // The description follows the feature; the tool's place does not.
  auto tool = [](const RecordedRequest& r) {
    for (const auto& t : r.body["tools"]) {
      if (t.value("name", "") == "request_user_input") return t;
    }
    return Json();
  };
  CHECK_THAT(tool(requests[0]).value("description", ""), Catch::EndsWith("only in Plan mode."));
  CHECK_THAT(tool(requests[2]).value("description", ""),
             Catch::EndsWith("only in Default or Plan mode."));
  // Resumed: the calls and their outputs go back as they were.
  REQUIRE(Run(*env, {"exec", "resume", "--last", "go on"}).exit_code == 0);
  requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 6);
  CHECK(InputExtends(requests[4], requests[5]));
  CHECK(OutputFor(requests[5].InputItems(), "off") ==
        "request_user_input is unavailable in Default mode");
  CHECK(OutputFor(requests[5].InputItems(), "on") == R"~({"answers":{}})~");
}

// ---------------------------------------------------------------------------
// 6. Project docs and the environment context.

TEST_CASE("context: AGENTS.md and one environment_context; resume appends changed settings") {
  auto env = MakeEnv(R"(["first", "second", "third"])");
  fs::create_directories(env->workdir() / ".git");
  std::ofstream(env->workdir() / "AGENTS.md") << "PROJECT-RULE: use tabs.\n";
  std::ofstream(env->codex_home() / "AGENTS.md") << "HOME-RULE: be brief.\n";

  auto first = Run(*env, {"exec", "hello"});
  REQUIRE(first.exit_code == 0);
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 1);
  auto env_items = [](const RecordedRequest& r) {
    std::vector<std::string> texts;
    for (const auto& item : ItemsOfType(r, "message")) {
      const std::string text = ItemText(item);
      if (text.rfind("<environment_context>", 0) == 0) texts.push_back(text);
    }
    return texts;
  };
  const std::string input = requests[0].InputItems().dump();
  CHECK_THAT(input, Catch::Contains("PROJECT-RULE: use tabs."));
  CHECK_THAT(input, Catch::Contains("HOME-RULE: be brief."));
  CHECK(input.find("HOME-RULE") < input.find("PROJECT-RULE"));
  auto envs = env_items(requests[0]);
  REQUIRE(envs.size() == 1);
  CHECK_THAT(envs[0], Catch::Contains("<sandbox_mode>read-only</sandbox_mode>"));
  CHECK_THAT(envs[0], Catch::Contains("<cwd>" + fs::canonical(env->workdir()).string()));

  auto second = Run(*env, {"exec", "resume", "--last", "-s", "workspace-write", "next"});
  REQUIRE(second.exit_code == 0);
  requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 2);
  CHECK(InputExtends(requests[0], requests[1]));
  const Json items = requests[1].InputItems();
  REQUIRE(items.size() >= 4);
  const size_t n = items.size();
  // ... first's items, "first", then permissions + environment, then the prompt.
  CHECK(ItemText(items[n - 4]) == "first");
  CHECK(items[n - 3].value("role", "") == "developer");
  CHECK_THAT(ItemText(items[n - 3]), Catch::Contains("workspace-write"));
  CHECK_THAT(ItemText(items[n - 2]),
             Catch::StartsWith("<environment_context>") &&
                 Catch::Contains("<sandbox_mode>workspace-write</sandbox_mode>"));
  CHECK(ItemText(items[n - 1]) == "next");
  envs = env_items(requests[1]);
  REQUIRE(envs.size() == 2);
  CHECK_THAT(envs[0], Catch::Contains("<sandbox_mode>read-only</sandbox_mode>"));

  // Same settings again: nothing new is appended.
  auto third = Run(*env, {"exec", "resume", "--last", "-s", "workspace-write", "again"});
  REQUIRE(third.exit_code == 0);
  requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 3);
  CHECK(InputExtends(requests[1], requests[2]));
  CHECK(env_items(requests[2]).size() == 2);
  CHECK(requests[2].InputItems().size() == n + 2);  // "second" and "again"
}

// ---------------------------------------------------------------------------
// 7. The goal tools, call for call against what the real Codex 0.169 answered
// (tests/compat/codex-0.169-goals-capture.json).

namespace {

Json GoalCapture() {
  std::ifstream in(GOALS_CODEX_CAPTURE);
  REQUIRE(in.good());
  return Json::parse(in);
}

// A goal output with what cannot match made fixed: the thread id, the times,
// and the tokens used (this capture's usage was the server's automatic one,
// a quarter of each request's bytes, and Codex's requests are not ours), so
// remainingTokens is the budget. The accounting itself is compared in
// section 8, with scripted usage. Everything else (keys, order, statuses, nulls) stays; an error
// line is returned as it is.
std::string NormalizedGoalOutput(const std::string& text) {
  Json j = Json::parse(text, nullptr, false);
  if (!j.is_object() || !j.contains("goal")) return text;
  if (j["goal"].is_object()) {
    Json& g = j["goal"];
    g["threadId"] = "T";
    g["createdAt"] = 0;
    g["updatedAt"] = 0;
    g["tokensUsed"] = 0;
    if (g.contains("tokenBudget")) j["remainingTokens"] = g["tokenBudget"];
  }
  return j.dump();
}

// Script entries making the model send `calls` (each {"name","arguments"}, the
// arguments as the raw text Codex got), one per response, then `answer`.
std::string GoalScriptEntries(const Json& calls, const std::string& answer) {
  std::string out;
  for (const auto& c : calls) {
    Json entry = {{"output", Json::array({Json{{"function_call", c["name"]},
                                               {"arguments", c["arguments"]}}})}};
    out += entry.dump() + ",\n";
  }
  return out + Json(answer).dump();
}

// The outputs of the function calls in `request`'s input, in order, from the `skip`th on.
std::vector<std::string> CallOutputs(const RecordedRequest& request, size_t skip = 0) {
  std::vector<std::string> out;
  for (const auto& item : ItemsOfType(request, "function_call_output")) {
    out.push_back(item.value("output", ""));
  }
  out.erase(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(std::min(skip, out.size())));
  return out;
}

void CheckSameAsCodex(const std::vector<std::string>& ours, const Json& theirs) {
  REQUIRE(ours.size() == theirs.size());
  for (size_t i = 0; i < ours.size(); ++i) {
    INFO("call " << i << ": " << theirs[i]["name"] << " " << theirs[i]["arguments"]);
    CHECK(NormalizedGoalOutput(ours[i]) ==
          NormalizedGoalOutput(theirs[i]["output"].get<std::string>()));
  }
}

}  // namespace

TEST_CASE("goals: Codex's tools and answers; exec resume has the goal, a fork its own copy") {
  const Json capture = GoalCapture();
  auto env = MakeEnv(
      "[" + GoalScriptEntries(capture["b"], "turn one done") + ",\n" +
      GoalScriptEntries(capture["b_resumed"], "resumed done") + ",\n" +
      GoalScriptEntries(Json::parse(R"([{"name":"get_goal","arguments":"{}"},
          {"name":"update_goal","arguments":"{\"status\":\"complete\"}"}])"),
                        "forked done") +
      ",\n" +
      GoalScriptEntries(Json::parse(R"([{"name":"get_goal","arguments":"{}"}])"), "parent again") +
      "]");
  auto first = RunOk(*env, {"exec", "set goals"});
  const std::string id = SessionIdFromBanner(first.err);
  REQUIRE_FALSE(id.empty());
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == capture["b"].size() + 1);
  // Offered in every request, where Codex 0.169 offers them (after view_image).
  std::vector<std::string> names;
  for (const auto& t : requests[0].body["tools"]) names.push_back(t.value("name", ""));
  const auto at = std::find(names.begin(), names.end(), "get_goal");
  REQUIRE(at != names.end());
  CHECK(*(at - 1) == "multi_agent_v1");
  CHECK(std::vector<std::string>(at, at + 3) ==
        std::vector<std::string>{"get_goal", "create_goal", "update_goal"});
  for (const auto& t : capture["tools"]) {
    for (const auto& mine : requests[0].body["tools"]) {
      if (mine.value("name", "") != t["name"]) continue;
      Json params = mine["parameters"];
      for (auto& [key, p] : params["properties"].items()) {
        p["description"] = "<Codex prose, not copied>";
      }
      CHECK(params == t["parameters"]);
    }
  }
  CheckSameAsCodex(CallOutputs(requests.back()), capture["b"]);
  // The goal's threadId is the session id.
  CHECK(Json::parse(CallOutputs(requests.back()).front())["goal"]["threadId"] == id);

  // A resumed session (a new process) has its goal back.
  RunOk(*env, {"exec", "resume", "--last", "continue"});
  requests = env->server().requests_to("/responses");
  CheckSameAsCodex(CallOutputs(requests.back(), capture["b"].size()), capture["b_resumed"]);

  // A fork starts with the goal and changes only its own.
  auto fork = RunOk(*env, {"exec", "fork", id, "in the fork"});
  requests = env->server().requests_to("/responses");
  const size_t before = capture["b"].size() + capture["b_resumed"].size();
  auto forked = CallOutputs(requests.back(), before);
  REQUIRE(forked.size() == 2);
  const std::string fork_id = SessionIdFromBanner(fork.err);
  REQUIRE_FALSE(fork_id.empty());
  CHECK(fork_id != id);
  CHECK(Json::parse(forked[0])["goal"]["objective"] == "Second");
  CHECK(Json::parse(forked[0])["goal"]["status"] == "active");
  CHECK(Json::parse(forked[0])["goal"]["threadId"] == fork_id);
  CHECK(Json::parse(forked[1])["goal"]["status"] == "complete");
  RunOk(*env, {"exec", "resume", id, "parent again"});
  requests = env->server().requests_to("/responses");
  auto parent = CallOutputs(requests.back(), before);
  REQUIRE(parent.size() == 1);
  CHECK(Json::parse(parent[0])["goal"]["status"] == "active");
  CHECK(Json::parse(parent[0])["goal"]["threadId"] == id);
}

TEST_CASE("goals: refusals and serde messages read as Codex 0.169's, call for call") {
  const Json capture = GoalCapture();
  {
    auto env = MakeEnv("[" + GoalScriptEntries(capture["c"], "done") + "]");
    RunOk(*env, {"exec", "goals c"});
    CheckSameAsCodex(CallOutputs(env->server().requests_to("/responses").back()), capture["c"]);
  }
  // Session a: Codex's fourth call found the goal budget_limited by its token
  // accounting; each request here spends 6000 tokens, so ours does too.
  Json spend = Json::array();
  for (const auto& c : capture["a"]) {
    spend.push_back({{"output", Json::array({Json{{"function_call", c["name"]},
                                                  {"arguments", c["arguments"]}}})},
                     {"usage", {{"input_tokens", 6000}, {"output_tokens", 0}}}});
  }
  spend.push_back("done");
  auto env = MakeEnv(spend.dump());
  RunOk(*env, {"exec", "goals a"});
  auto ours = CallOutputs(env->server().requests_to("/responses").back());
  CheckSameAsCodex(ours, capture["a"]);
  CHECK(Json::parse(ours[3])["goal"]["status"] == "budgetLimited");
  CHECK(Json::parse(ours[3])["goal"]["tokensUsed"] == 6000);  // the second create's request
}

// ---------------------------------------------------------------------------
// 8. Goal budget accounting against the real Codex 0.169 with scripted usage
// (tests/compat/codex-0.169-goal-budget-capture.json).

namespace {

Json GoalBudgetCapture() {
  std::ifstream in(GOAL_BUDGET_CODEX_CAPTURE);
  REQUIRE(in.good());
  return Json::parse(in);
}

// The user messages of `request` that carry goal context, as (kind, text):
// kind "wrap_up" for the budget-limit one, "continue" for the reminder.
struct GoalContext {
  size_t call_outputs_before = 0;
  std::string text;
};
std::vector<GoalContext> GoalContextMessages(const RecordedRequest& request) {
  std::vector<GoalContext> out;
  size_t outputs = 0;
  for (const auto& item : request.InputItems()) {
    if (item.value("type", "") == "function_call_output") ++outputs;
    if (item.value("role", "") != "user" || !item.contains("content")) continue;
    std::string text;
    for (const auto& part : item["content"]) text += part.value("text", "");
    if (text.rfind("<codex_internal_context source=\"goal\">", 0) == 0) {
      out.push_back({outputs, text});
    }
  }
  return out;
}

bool IsWrapUp(const GoalContext& m) { return m.text.find("budget_limited") != std::string::npos; }

int64_t Figure(const std::string& text, const std::string& label) {
  const size_t at = text.find(label);
  REQUIRE(at != std::string::npos);
  return std::stoll(text.substr(at + label.size()));
}

// A goal output with only what cannot match made fixed: the thread id, the
// times, and the completion report's prose (ours is our own words; whether
// there is one is compared).
Json GoalFigures(const std::string& text) {
  Json j = Json::parse(text, nullptr, false);
  if (j.is_object() && j["goal"].is_object()) {
    j["goal"]["threadId"] = "T";
    j["goal"]["createdAt"] = 0;
    j["goal"]["updatedAt"] = 0;
  }
  if (j.is_object() && j.contains("completionBudgetReport") &&
      j["completionBudgetReport"].is_string()) {
    j["completionBudgetReport"] = "<report>";
  }
  return j;
}

// Per request, the wrap-up messages sit where Codex's did (after as many call
// outputs), with its figures, the objective quoted; no other goal context.
void CheckGoalContextAsCodex(const std::vector<RecordedRequest>& requests, const Json& theirs) {
  REQUIRE(requests.size() == theirs.size());
  for (size_t r = 0; r < requests.size(); ++r) {
    INFO("request " << r);
    std::vector<GoalContext> wrap_ups;
    for (auto& m : GoalContextMessages(requests[r])) {
      if (IsWrapUp(m)) wrap_ups.push_back(m);
    }
    const Json& expected = theirs[r]["budget_limit_messages"];
    REQUIRE(wrap_ups.size() == expected.size());
    for (size_t k = 0; k < wrap_ups.size(); ++k) {
      CHECK(wrap_ups[k].call_outputs_before == expected[k]["after_call_outputs"]);
      CHECK(Figure(wrap_ups[k].text, "Tokens used: ") == expected[k]["tokens_used"]);
      CHECK(Figure(wrap_ups[k].text, "Token budget: ") == expected[k]["token_budget"]);
      CHECK(wrap_ups[k].text.find("<objective>\n") != std::string::npos);
    }
    CHECK(GoalContextMessages(requests[r]).size() == wrap_ups.size());
  }
}

}  // namespace

TEST_CASE("goals: budget accounting, the wrap-up message and resume as Codex 0.169's") {
  const Json capture = GoalBudgetCapture()["budget"];
  auto env = MakeEnv(capture["script"].dump());
  RunOk(*env, {"exec", "set a goal"});
  RunOk(*env, {"exec", "resume", "--last", "continue"});
  RunOk(*env, {"exec", "resume", "--last", "again"});
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == capture["requests"].size());

  // Every goal call's answer, tokens included, is Codex's: 850 a request
  // (1000 in - 200 cached + 50 out), the creating request not counted.
  const auto ours = CallOutputs(requests.back());
  REQUIRE(ours.size() == capture["calls"].size());
  for (size_t i = 0; i < ours.size(); ++i) {
    INFO("call " << i << ": " << ours[i]);
    if (i == 3) {
      // Codex raced here (its tools run while the stream is open) and read
      // 850; two requests (1700) had been spent and are counted here.
      CHECK(Json::parse(ours[i])["goal"]["tokensUsed"] == 1700);
      CHECK(Json::parse(ours[i])["remainingTokens"] == 300);
      continue;
    }
    CHECK(GoalFigures(ours[i]) == GoalFigures(capture["calls"][i]["output"].get<std::string>()));
  }

  // The wrap-up: in the same requests, after the same call, with the same
  // figures; once in the first process (not again in later requests of
  // that turn), once more in the resumed one; kept in the stored history.
  // A budget-limited goal gets no continuation reminder on resume.
  CheckGoalContextAsCodex(requests, capture["requests"]);
}

TEST_CASE("goals: a pause leaves a budget-limited goal budget-limited, as Codex 0.169 answers") {
  const Json capture = GoalBudgetCapture()["limited"];
  auto env = MakeEnv(capture["script"].dump());
  RunOk(*env, {"exec", "tiny goal"});
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == capture["requests"].size());
  const auto ours = CallOutputs(requests.back());
  REQUIRE(ours.size() == capture["calls"].size());
  for (size_t i = 0; i < ours.size(); ++i) {
    INFO("call " << i << ": " << ours[i]);
    CHECK(GoalFigures(ours[i]) == GoalFigures(capture["calls"][i]["output"].get<std::string>()));
  }
  // Paused while over budget: still budgetLimited, and nothing more counted.
  CHECK(Json::parse(ours[3])["goal"]["status"] == "budgetLimited");
  CHECK(Json::parse(ours[4])["goal"]["tokensUsed"] == 350);
  CheckGoalContextAsCodex(requests, capture["requests"]);
}

TEST_CASE("goals: tokensUsed is the exact sum; a pause stops it; resume recalls an active goal") {
  // Each request's usage is different, so any request counted twice, or one
  // that should not count, shows in the sums.
  auto spend = [](Json entry, int64_t in, int64_t cached, int64_t out) {
    entry["usage"] = {{"input_tokens", in}, {"cached_tokens", cached}, {"output_tokens", out}};
    return entry;
  };
  auto call = [](const std::string& name, const std::string& args) {
    return Json{{"output", Json::array({Json{{"function_call", name}, {"arguments", args}}})}};
  };
  Json script = Json::array({
      spend(call("create_goal", R"({"objective":"Port <all> & test"})"), 90'000, 0, 9),  // 0
      spend(call("get_goal", "{}"), 1'000, 300, 40),                                     // 740
      spend(call("get_goal", "{}"), 2'000, 0, 5),                                        // 2005
      spend(Json{{"message", "turn one"}}, 400, 100, 7),                                 // 307
      // resumed: reminded of the goal before the prompt
      spend(call("get_goal", "{}"), 800, 800, 1),                      // 1
      spend(call("update_goal", R"({"status":"paused"})"), 30, 0, 3),  // 33, counted
      spend(call("get_goal", "{}"), 5'000, 0, 500),                    // paused: not counted
      spend(Json{{"message", "paused"}}, 6'000, 0, 600),
      // resumed again: paused, no reminder
      spend(call("get_goal", "{}"), 7'000, 0, 700),
      spend(Json{{"message", "still paused"}}, 8'000, 0, 800),
  });
  auto env = MakeEnv(script.dump());
  RunOk(*env, {"exec", "set a goal"});
  RunOk(*env, {"exec", "resume", "--last", "continue"});
  RunOk(*env, {"exec", "resume", "--last", "again"});
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == script.size());
  const auto outputs = CallOutputs(requests.back());
  REQUIRE(outputs.size() == 7);
  std::vector<int64_t> used;
  for (const auto& o : outputs) {
    const Json j = Json::parse(o);
    used.push_back(j["goal"]["tokensUsed"].get<int64_t>());
    CHECK(j["remainingTokens"].is_null());  // no budget: never limited
    CHECK(j["goal"]["status"] != "budgetLimited");
  }
  CHECK(used == std::vector<int64_t>{0, 0, 740, 740 + 2005 + 307, 3052 + 1 + 33, 3086, 3086});
  CHECK(Json::parse(outputs[4])["goal"]["status"] == "paused");

  // The reminder: once, in the first resumed run, just before its prompt,
  // the objective quoted as data; none while paused.
  for (size_t r = 0; r < requests.size(); ++r) {
    INFO("request " << r);
    const auto context = GoalContextMessages(requests[r]);
    CHECK(context.size() == (r >= 4 ? 1u : 0u));
    for (const auto& m : context) {
      CHECK_FALSE(IsWrapUp(m));
      CHECK(m.call_outputs_before == 3);
      CHECK(m.text.find("<objective>\nPort &lt;all&gt; &amp; test\n</objective>") !=
            std::string::npos);
      CHECK(Figure(m.text, "Tokens used: ") == 3052);
    }
  }
  const auto items = requests[4].InputItems();
  REQUIRE(items.size() >= 2);
  CHECK(items[items.size() - 2].dump().find("codex_internal_context") != std::string::npos);
  CHECK(items.back().dump().find("continue") != std::string::npos);
}

}  // namespace codex::testing
