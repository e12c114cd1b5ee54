// The tool calls of one response run together, as Codex 0.169 runs them: the
// real `codex` against the scripted Responses server. Calls of the
// parallel-capable tools (exec_command here) run at the same time — two
// commands that each wait for the other's file meet, which one after the other
// they could not — while the outputs go back in call order; a call of another
// tool (apply_patch) waits for the running ones and runs alone; approvals are
// asked one at a time, in call order, and a "no" to one leaves the other
// running, a "stop" cancels the one in flight; Ctrl-C kills every running
// call; each call stays inside the sandbox. Under on-failure, the "run it
// again without the sandbox?" questions of calls failing together come one
// at a time and each answer holds for its own call only; a stop there
// cancels the others and nothing more is asked; a rerun approved for the
// session covers the same command beside it, as it would a later call. codex
// SIGKILLed while calls of a group run leaves none of their processes behind
// and a session that resumes with every call answered.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "sandbox/landlock.h"
#include "testing/files.h"
#include "testing/processes.h"
#include "testing/skip.h"
#include "testing/temp_dir.h"
#include "tests/e2e_checks.h"
#include "tests/e2e_support.h"

namespace codex::testing {
namespace {

using e2e::Db;
using e2e::JsonLines;
using e2e::MakeEnv;
using e2e::ModelOutput;
using e2e::Run;
namespace fs = std::filesystem;

// A shell script that creates `mine`, waits up to ~10 s for `theirs` and
// says whether it came ("<name> met <theirs>" or "<name> alone").
std::string Meet(const std::string& name, const std::string& mine, const std::string& theirs) {
  return "touch " + mine + "; i=0; while [ ! -e " + theirs +
         " ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done; if [ -e " + theirs +
         " ]; then echo " + name + " met " + theirs + "; else echo " + name + " alone; fi";
}

// An exec_command call item of the script.
std::string ExecCall(const std::string& call_id, const std::string& cmd) {
  return R"({"function_call": "exec_command", "call_id": ")" + call_id +
         R"(", "arguments": {"cmd": )" + Json(cmd).dump() +
         R"(, "login": false, "yield_time_ms": 30000}})";
}

// The text after "Output:\n" of a unified exec reply.
std::string OutputPart(const std::string& text) {
  size_t at = text.find("\nOutput:\n");
  return at == std::string::npos ? "" : text.substr(at + 9);
}

// The call ids of the outputs in `request`'s input, in order.
std::vector<std::string> OutputOrder(const RecordedRequest& request) {
  std::vector<std::string> ids;
  for (const auto& item : request.InputItems()) {
    if (e2e::IsOutputType(item.value("type", ""))) ids.push_back(item.value("call_id", ""));
  }
  return ids;
}

bool Alive(pid_t pid) { return !codex::testing::ProcessEnded(pid); }

pid_t PidFrom(const fs::path& file) {
  std::string text = ReadFile(file);
  return text.empty() ? -1 : static_cast<pid_t>(std::stol(text));
}

// Waits (up to `patience`) until every file exists.
bool WaitForFiles(const std::vector<fs::path>& files,
                  std::chrono::seconds patience = std::chrono::seconds(60)) {
  const auto until = std::chrono::steady_clock::now() + patience;
  while (std::chrono::steady_clock::now() < until) {
    bool all = true;
    for (const auto& f : files) all = all && fs::exists(f) && fs::file_size(f) > 0;
    if (all) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// `codex` at the line prompt (no terminal) with stdin a FIFO the test writes
// as it goes, as a user answers what has happened so far.
class AnsweringUser {
 public:
  explicit AnsweringUser(CodexTestEnv& env) {
    const fs::path fifo = env.root() / "answers";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    ProcessOptions command = env.CodexCommand({});
    std::vector<std::string> argv = {"bash", "-c", "exec \"$@\" < \"$FIFO\"", "bash"};
    argv.insert(argv.end(), command.argv.begin(), command.argv.end());
    command.argv = argv;
    command.env["FIFO"] = fifo.string();
    auto child = ChildProcess::Spawn(command);
    REQUIRE(child.ok());
    child_ = std::move(*child);
    // Read-write: opening never waits for the reader, whatever became of it.
    answers_ = ::open(fifo.c_str(), O_RDWR);
    REQUIRE(answers_ >= 0);
  }
  ~AnsweringUser() {
    if (answers_ >= 0) ::close(answers_);
  }
  void Say(const std::string& text) {
    REQUIRE(::write(answers_, text.data(), text.size()) == static_cast<ssize_t>(text.size()));
  }
  // Closes stdin (EOF once read) and waits for codex to end.
  ProcessResult Finish() {
    ::close(answers_);
    answers_ = -1;
    auto run = child_->Wait(std::chrono::seconds(60));
    REQUIRE(run.ok());
    return *run;
  }

 private:
  std::unique_ptr<ChildProcess> child_;
  int answers_ = -1;
};

// Whether Landlock confines the sandbox here (else the part is skipped).
bool HaveLandlock() {
  if (sandbox::landlock::AbiVersion() >= 1) return true;
  SkipPart("Landlock is not available on this kernel: no sandbox to fail in");
  return false;
}

// The config of an interactive run that asks before rerunning outside the
// sandbox what failed in it.
const char kOnFailure[] =
    "approval_policy = \"on-failure\"\n"
    "sandbox_mode = \"workspace-write\"\n";

// The command of the n-th "Allow this command?" question in `err` (its
// "  $ " line), or "" when there is none.
std::string AskedCommand(const std::string& err, size_t n) {
  size_t at = err.find("Allow this command?");
  for (size_t i = 0; i < n && at != std::string::npos; ++i) {
    at = err.find("Allow this command?", at + 1);
  }
  if (at == std::string::npos) return "";
  const size_t line = err.find("\n  $ ", at);
  if (line == std::string::npos) return "";
  return err.substr(line + 5, err.find('\n', line + 1) - line - 5);
}

}  // namespace

TEST_CASE("parallel calls: two exec_command calls of one response run together") {
  // Call A also ends last (it lingers once it met B): its output still comes
  // first in the next request, where the model put the call, as Codex sends it.
  const std::string script = R"({"responses": [
    {"output": [)" + ExecCall("call_a", Meet("A", "a.flag", "b.flag") + "; sleep 0.3") +
                             ", " + ExecCall("call_b", Meet("B", "b.flag", "a.flag")) +
                             R"(]},
    "both done", "resumed"]})";
  auto env = MakeEnv(script, "");
  auto run = Run(*env, {"exec", "--json", "-s", "danger-full-access", "meet"});
  INFO("stderr: " << run.err);
  REQUIRE(run.exit_code == 0);
  const auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 2);
  CHECK(OutputPart(ModelOutput(*env, "call_a")) == "A met b.flag\n");
  CHECK(OutputPart(ModelOutput(*env, "call_b")) == "B met a.flag\n");
  CHECK(OutputOrder(requests[1]) == std::vector<std::string>{"call_a", "call_b"});
  const auto lines = JsonLines(run.out);
  REQUIRE_FALSE(lines.empty());
  e2e::CheckWireRules(requests[1], lines[0].value("thread_id", ""));

  // --json: both started before either completed (neither can end before the
  // other has started), each completed once.
  std::vector<std::string> events;
  for (const auto& e : lines) {
    if (!e.contains("item") || e["item"].value("type", "") != "command_execution") continue;
    events.push_back(e.value("type", ""));
  }
  REQUIRE(events.size() == 4);
  CHECK(events[0] == "item.started");
  CHECK(events[1] == "item.started");
  CHECK(events[2] == "item.completed");
  CHECK(events[3] == "item.completed");

  // The stored transcript is what was sent: resuming resends the same prefix.
  auto resumed = Run(*env, {"exec", "resume", "--last", "-s", "danger-full-access", "again"});
  INFO("resume stderr: " << resumed.err);
  CHECK(resumed.exit_code == 0);
  CHECK(resumed.out == "resumed\n");
  const auto after = env->server().requests_to("/responses");
  REQUIRE(after.size() == 3);
  CHECK(e2e::InputExtends(requests[1], after[2]));
}

TEST_CASE("parallel calls: a call of another tool waits for the running ones and runs alone") {
  // first waits (up to 2 s) for the file the patch adds: under the exclusive
  // rule the patch is applied only once `first` ended, so it never sees it;
  // `after` starts once the patch is in, so it always does.
  const std::string patch = "*** Begin Patch\n*** Add File: patched.txt\n+patched\n*** End Patch\n";
  const std::string script =
      R"({"responses": [
    {"output": [)" +
      ExecCall("first",
               "i=0; while [ ! -e patched.txt ] && [ $i -lt 20 ]; do sleep 0.1; i=$((i+1)); "
               "done; [ -e patched.txt ] && echo saw-patch || echo no-patch-yet") +
      R"(, {"custom_tool_call": "apply_patch", "call_id": "patch", "input": )" +
      Json(patch).dump() + "}, " + ExecCall("after", "cat patched.txt") + R"(, )" +
      R"({"function_call": "update_plan", "call_id": "plan", "arguments":
         {"plan": [{"step": "meet", "status": "completed"}]}})" +
      ", " + ExecCall("last", "echo last") + R"(]},
    "done"]})";
  auto env = MakeEnv(script, "");
  auto run = Run(*env, {"exec", "--json", "-s", "danger-full-access", "patch it"});
  INFO("stderr: " << run.err);
  REQUIRE(run.exit_code == 0);
  CHECK(OutputPart(ModelOutput(*env, "first")) == "no-patch-yet\n");
  CHECK(OutputPart(ModelOutput(*env, "after")) == "patched\n");
  const auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 2);
  CHECK(OutputOrder(requests[1]) ==
        std::vector<std::string>{"first", "patch", "after", "plan", "last"});
  // The plan is updated alone: after `after` completed, before `last` started.
  std::vector<std::string> events;
  for (const auto& e : JsonLines(run.out)) {
    const std::string type = e.contains("item") ? e["item"].value("type", "") : "";
    if (type == "todo_list" || type == "command_execution") {
      events.push_back(e.value("type", "") + " " + type + " " +
                       e["item"].value("command", std::string()));
    }
  }
  std::string joined;
  for (const auto& e : events) joined += e + "\n";
  INFO(joined);
  const size_t after_done = joined.find("item.completed command_execution /bin/bash -c 'cat");
  const size_t plan = joined.find("todo_list");
  const size_t last_started =
      joined.find("item.started command_execution /bin/bash -c 'echo last'");
  REQUIRE(after_done != std::string::npos);
  REQUIRE(plan != std::string::npos);
  REQUIRE(last_started != std::string::npos);
  CHECK(after_done < plan);
  CHECK(plan < last_started);
}

TEST_CASE("parallel calls: approvals are asked one at a time; a no leaves the other to run") {
  const std::string script = R"({"responses": [
    {"output": [)" + ExecCall("one", "touch one.txt") +
                             ", " + ExecCall("two", "touch two.txt") + R"(]},
    "one of two"]})";
  auto env = MakeEnv(script,
                     "approval_policy = \"untrusted\"\n"
                     "sandbox_mode = \"danger-full-access\"\n");
  // The line prompt (no terminal): "n" to the first question, "y" to the second.
  auto run = env->RunCodex({}, "make both\nn\ny\n");
  REQUIRE(run.ok());
  INFO(run->err);
  CHECK(run->exit_code == 0);
  CHECK(run->out == "one of two\n");
  const std::string& err = run->err;
  CHECK(Count(err, "Allow this command?") == 2);
  // One question, its answer, then the next: in call order, never mixed.
  const size_t first_q = err.find("Allow this command?");
  const size_t first_cmd = err.find("touch one.txt");
  const size_t first_answer = err.find("command denied");
  const size_t second_q = err.find("Allow this command?", first_q + 1);
  const size_t second_cmd = err.find("touch two.txt");
  const size_t second_answer = err.find("command approved");
  CHECK(first_q < first_cmd);
  CHECK(first_cmd < first_answer);
  CHECK(first_answer < second_q);
  CHECK(second_q < second_cmd);
  CHECK(second_cmd < second_answer);
  CHECK_FALSE(fs::exists(env->workdir() / "one.txt"));
  CHECK(fs::exists(env->workdir() / "two.txt"));
  CHECK(ModelOutput(*env, "one") == "exec command rejected by user");
  CHECK_THAT(ModelOutput(*env, "two"), Catch::Contains("Process exited with code 0"));
}

TEST_CASE("parallel calls: a stop answers every call and cancels the one in flight") {
  // `slow` is approved and runs (its pid in a file); the user stops the turn
  // at the question about `next`: slow is killed, next never runs, both are
  // answered, and the next turn's request carries that.
  const std::string script = R"({"responses": [
    {"output": [)" + ExecCall("slow", "echo $$ > slow.pid; exec sleep 60") +
                             ", " + ExecCall("next", "touch next.txt") + R"(]},
    "what now?"]})";
  auto env = MakeEnv(script,
                     "approval_policy = \"untrusted\"\n"
                     "sandbox_mode = \"danger-full-access\"\n");
  // The user answers as a user would: "y", then "s" once `slow` runs.
  AnsweringUser user(*env);
  user.Say("go\ny\n");
  REQUIRE(WaitForFiles({env->workdir() / "slow.pid"}));
  user.Say("s\nand now\n");
  const ProcessResult run = user.Finish();
  INFO(run.err);
  CHECK_FALSE(run.timed_out);
  const pid_t slow = PidFrom(env->workdir() / "slow.pid");
  REQUIRE(slow > 0);
  CHECK_FALSE(Alive(slow));
  CHECK_FALSE(fs::exists(env->workdir() / "next.txt"));
  CHECK_THAT(run.err, Catch::Contains("turn stopped"));
  const auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 2);
  CHECK(OutputOrder(requests[1]) == std::vector<std::string>{"slow", "next"});
  CHECK(ModelOutput(*env, "slow") == "aborted by the user");
  // The call the user stopped at gets the stop's own words, as today.
  CHECK(ModelOutput(*env, "next") ==
        "exec_command: the user denied running this command and stopped the turn");
}

TEST_CASE("parallel calls: Ctrl-C kills every running call") {
  const std::string script = R"({"responses": [
    {"output": [)" + ExecCall("c1", "echo $$ > one.pid; exec sleep 60") +
                             ", " + ExecCall("c2", "echo $$ > two.pid; exec sleep 60") + R"(]},
    "never asked"]})";
  auto env = MakeEnv(script, "");
  auto child =
      ChildProcess::Spawn(env->CodexCommand({"exec", "-s", "danger-full-access", "sleep twice"}));
  REQUIRE(child.ok());
  // Both run at once: one after the other, the second would start only once
  // the first's exec_command call returned (its 30 s yield).
  REQUIRE(WaitForFiles({env->workdir() / "one.pid", env->workdir() / "two.pid"},
                       std::chrono::seconds(20)));
  const pid_t one = PidFrom(env->workdir() / "one.pid");
  const pid_t two = PidFrom(env->workdir() / "two.pid");
  REQUIRE(Alive(one));
  REQUIRE(Alive(two));
  REQUIRE((*child)->Signal(SIGINT).ok());
  auto done = (*child)->Wait(std::chrono::seconds(60));
  REQUIRE(done.ok());
  INFO("stderr: " << done->err);
  CHECK_FALSE(done->timed_out);
  CHECK(done->exit_code == 130);
  CHECK_FALSE(Alive(one));
  CHECK_FALSE(Alive(two));
}

TEST_CASE("parallel calls: codex killed while calls run together leaves a session that resumes") {
  // The worst moment: the first call of the group has ended (its output
  // committed), the two others still run. SIGKILL: none of their processes
  // outlives codex, and the session resumes with every call answered, the
  // finished one's output as it was.
  TempDir mark("codex-parallel-killed-");
  // The sandbox has its own pid namespace: the sleeps are found by a name
  // no other test's process has.
  const std::string sleeper = mark.path().filename().string();
  auto sleeps = [&](const std::string& pid_file) {
    return "echo $$ > " + pid_file + "; exec -a " + sleeper + " sleep 60";
  };
  const std::string script = R"({"responses": [
    {"output": [)" + ExecCall("c1", "echo first done > one.done; echo first done") +
                             ", " + ExecCall("c2", sleeps("two.pid")) + ", " +
                             ExecCall("c3", sleeps("three.pid")) + R"(]},
    "after the crash"]})";
  auto env = MakeEnv(script, "");
  auto child =
      ChildProcess::Spawn(env->CodexCommand({"exec", "-s", "workspace-write", "three at once"}));
  REQUIRE(child.ok());
  REQUIRE(WaitForFiles(
      {env->workdir() / "one.done", env->workdir() / "two.pid", env->workdir() / "three.pid"},
      std::chrono::seconds(20)));
  bool both = false;
  for (int i = 0; i < 500 && !both; ++i) {
    both = ProcessesMentioning(sleeper).size() == 2;
    if (!both) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  REQUIRE(both);
  // c1's output is committed (as each output is, once those before it are).
  bool committed = false;
  for (int i = 0; i < 500 && !committed; ++i) {
    Db db(env->codex_home() / "sessions.db");
    committed = db.ok() && !db.Query(
                                  "SELECT id FROM items WHERE kind = 'function_call_output'"
                                  " AND call_id = 'c1'")
                                .empty();
    if (!committed) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  REQUIRE(committed);
  REQUIRE((*child)->Signal(SIGKILL).ok());
  auto killed = (*child)->Wait(std::chrono::seconds(30));
  REQUIRE(killed.ok());
  const std::string session = e2e::SessionIdFromBanner(killed->err);
  REQUIRE_FALSE(session.empty());
  bool gone = false;
  for (int i = 0; i < 500 && !gone; ++i) {
    gone = ProcessesMentioning(sleeper).empty();
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  CHECK(gone);

  auto resumed = Run(*env, {"exec", "resume", session, "go on"});
  INFO("stderr: " << resumed.err);
  REQUIRE(resumed.exit_code == 0);
  CHECK(resumed.out == "after the crash\n");
  const auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 2);
  // Every call has its output (the scripted server refuses a request that
  // leaves one open), in call order; the finished call's is its own.
  CHECK(e2e::PairingProblem(requests[1].InputItems()) == "");
  CHECK(OutputOrder(requests[1]) == std::vector<std::string>{"c1", "c2", "c3"});
  CHECK(OutputPart(ModelOutput(*env, "c1")) == "first done\n");
}

TEST_CASE("parallel calls: each of two concurrent calls stays inside the sandbox") {
  if (sandbox::landlock::AbiVersion() < 1) {
    WARN("skipped: Landlock is not available on this kernel");
    return;
  }
  TempDir outside("codex-parallel-outside-", NonTempBase());
  auto escape = [&](const std::string& name) {
    return "; (echo x > " + (outside.path() / name).string() + ") 2>/dev/null && echo " + name +
           " escaped || echo " + name + " confined";
  };
  const std::string script = R"({"responses": [
    {"output": [)" + ExecCall("a", Meet("A", "a.flag", "b.flag") + escape("a")) +
                             ", " + ExecCall("b", Meet("B", "b.flag", "a.flag") + escape("b")) +
                             R"(]},
    "done"]})";
  auto env = MakeEnv(script, "");
  auto run = Run(*env, {"exec", "-s", "workspace-write", "write around"});
  INFO("stderr: " << run.err);
  REQUIRE(run.exit_code == 0);
  CHECK(OutputPart(ModelOutput(*env, "a")) == "A met b.flag\na confined\n");
  CHECK(OutputPart(ModelOutput(*env, "b")) == "B met a.flag\nb confined\n");
  CHECK(fs::exists(env->workdir() / "a.flag"));
  CHECK(fs::exists(env->workdir() / "b.flag"));
  CHECK(fs::is_empty(outside.path()));
  // The human progress keeps each output under its own command: a command
  // completed after another one started is named again above its output.
  for (const auto& [said, command] :
       {std::pair<std::string, std::string>{"A met", "touch a.flag"}, {"B met", "touch b.flag"}}) {
    const size_t at = run.err.find(said);
    REQUIRE(at != std::string::npos);
    const size_t header = run.err.rfind("exec $ ", at);
    REQUIRE(header != std::string::npos);
    CHECK(run.err.substr(header, run.err.find('\n', header) - header).find(command) !=
          std::string::npos);
  }
}

TEST_CASE("parallel calls: two on-failure reruns are asked one at a time; a yes and a no hold") {
  if (!HaveLandlock()) return;
  // Both commands meet, then write outside the workspace (not a writable
  // root): both fail in the sandbox, each leaving a mark as it fails, and
  // want their "run it again without the sandbox?" question. The user
  // answers only once both have failed: the two questions are wanted at once.
  TempDir outside("codex-parallel-outside-", NonTempBase());
  const std::string write_a =
      "; echo A > " + (outside.path() / "a").string() + " || { echo x > a.failed; exit 1; }";
  const std::string write_b =
      "; echo B > " + (outside.path() / "b").string() + " || { echo x > b.failed; exit 1; }";
  const std::string script = R"({"responses": [
    {"output": [)" + ExecCall("a", Meet("A", "a.flag", "b.flag") + write_a) +
                             ", " + ExecCall("b", Meet("B", "b.flag", "a.flag") + write_b) +
                             R"(]},
    "one of two"]})";
  auto env = MakeEnv(script, kOnFailure);
  // The line prompt: "y" to the first question, "n" to the second, given
  // once both calls failed and the second had time to come to its question.
  AnsweringUser user(*env);
  user.Say("write both\n");
  REQUIRE(WaitForFiles({env->workdir() / "a.failed", env->workdir() / "b.failed"}));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  user.Say("y\nn\n");
  const ProcessResult run = user.Finish();
  INFO(run.err);
  CHECK_FALSE(run.timed_out);
  CHECK(run.exit_code == 0);
  CHECK(run.out == "one of two\n");
  const std::string& err = run.err;
  REQUIRE(Count(err, "Allow this command?") == 2);
  // One question, its answer, then the next: never two at once. Whichever
  // call failed first is asked first, each question naming its own command,
  // outside the sandbox, with what the sandbox said to it.
  const size_t first_q = err.find("Allow this command?");
  const size_t first_answer = err.find("command approved");
  const size_t second_q = err.find("Allow this command?", first_q + 1);
  const size_t second_answer = err.find("command denied");
  REQUIRE(first_answer != std::string::npos);
  REQUIRE(second_answer != std::string::npos);
  CHECK(first_q < first_answer);
  CHECK(first_answer < second_q);
  CHECK(second_q < second_answer);
  const std::string first = AskedCommand(err, 0);
  const bool a_first = first.find(write_a) != std::string::npos;
  INFO("asked first: " << first);
  CHECK(first.find(a_first ? write_a : write_b) != std::string::npos);
  CHECK(AskedCommand(err, 1).find(a_first ? write_b : write_a) != std::string::npos);
  for (const std::string& question : {err.substr(first_q, first_answer - first_q),
                                      err.substr(second_q, second_answer - second_q)}) {
    CHECK_THAT(question, Catch::Contains("outside the sandbox"));
    CHECK_THAT(question, Catch::Contains("Read-only file system"));
  }

  // The approved one ran again outside the sandbox, the declined one did
  // not; the model gets each run as the one-call path gives it, in call order.
  const std::string yes = a_first ? "a" : "b";
  const std::string no = a_first ? "b" : "a";
  CHECK(ReadFile(outside.path() / yes) == (a_first ? "A\n" : "B\n"));
  CHECK_FALSE(fs::exists(outside.path() / no));
  const std::string approved = ModelOutput(*env, yes);
  CHECK_THAT(approved, Catch::Contains("Process exited with code 0"));
  CHECK(OutputPart(approved) == (a_first ? "A met b.flag\n" : "B met a.flag\n"));
  const std::string declined = ModelOutput(*env, no);
  CHECK_THAT(declined, Catch::Contains("Process exited with code 1"));
  CHECK_THAT(OutputPart(declined),
             Catch::StartsWith(a_first ? "B met a.flag\n" : "A met b.flag\n"));
  CHECK_THAT(OutputPart(declined), Catch::Contains("Read-only file system"));
  const auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 2);
  CHECK(OutputOrder(requests[1]) == std::vector<std::string>{"a", "b"});
}

TEST_CASE("parallel calls: a stop at a rerun question cancels the others and asks nothing more") {
  if (!HaveLandlock()) return;
  // `a` fails in the sandbox once `b` runs and asks to rerun; `b` runs on (a
  // sleep; it would then write outside); `c` fails in the sandbox beside `a`
  // and waits for its own question (or is asked first, when it failed
  // first). The user stops the turn at the first question: b and its child
  // are killed, the other failure is never asked, nothing is written
  // outside, every call is answered.
  TempDir outside("codex-parallel-outside-", NonTempBase());
  auto out = [&](const std::string& name) { return (outside.path() / name).string(); };
  // The sandbox has its own pid namespace: b and its child are found by
  // what their command lines hold (the path outside, the sleeper's name).
  const std::string sleeper = outside.path().filename().string() + "-sleeper";
  auto wait_for = [](const std::string& file) {
    return "i=0; while [ ! -e " + file + " ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done; ";
  };
  const std::string script =
      R"({"responses": [
    {"output": [)" +
      ExecCall("a", wait_for("b.running") + "echo x > a.asking; echo A > " + out("a")) + ", " +
      ExecCall("b", "(exec -a " + sleeper + " sleep 60) & echo x > b.running; wait; echo B > " +
                        out("b")) +
      ", " + ExecCall("c", wait_for("a.asking") + "echo x > c.failing; echo C > " + out("c")) +
      R"(]},
    "what now?"]})";
  auto env = MakeEnv(script, kOnFailure);
  AnsweringUser user(*env);
  user.Say("go\n");
  const fs::path work = env->workdir();
  REQUIRE(WaitForFiles({work / "b.running", work / "a.asking", work / "c.failing"}));
  // b's shell and its sleep (or the subshell about to become it) run.
  REQUIRE(ProcessesMentioning(sleeper).size() == 2);
  REQUIRE_FALSE(ProcessesMentioning(out("b")).empty());
  // c's sandboxed run is ending: let it come to its question (it must not be
  // asked whether or not it got there before the stop).
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  user.Say("s\nand now\n");
  const ProcessResult run = user.Finish();
  INFO(run.err);
  CHECK_FALSE(run.timed_out);
  CHECK(run.exit_code == 0);
  CHECK(Count(run.err, "Allow this command?") == 1);
  // Which of the two failures is asked first is the order they failed in
  // (a writes a.asking just before it fails, c fails at once after it).
  const std::string asked_command = AskedCommand(run.err, 0);
  const bool a_asked = asked_command.find("echo A > ") != std::string::npos;
  const std::string asked = a_asked ? "a" : "c";
  const std::string other = a_asked ? "c" : "a";
  CHECK((a_asked || asked_command.find("echo C > ") != std::string::npos));
  CHECK_THAT(run.err, Catch::Contains("turn stopped"));
  CHECK_THAT(run.err, !Catch::Contains("is not an answer"));
  CHECK(ProcessesMentioning(sleeper).empty());
  CHECK(ProcessesMentioning(outside.path().string()).empty());
  CHECK(fs::is_empty(outside.path()));
  const auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 2);
  CHECK(OutputOrder(requests[1]) == std::vector<std::string>{"a", "b", "c"});
  // The asked call gets its sandboxed run, as one call stopped at this
  // question does; the other failure is never asked, and b is cancelled.
  CHECK_THAT(ModelOutput(*env, asked), Catch::Contains("Process exited with code 1"));
  CHECK_THAT(ModelOutput(*env, asked), Catch::Contains("Read-only file system"));
  CHECK(ModelOutput(*env, "b") == "aborted by the user");
  CHECK(ModelOutput(*env, other) == "aborted by the user");
}

TEST_CASE("parallel calls: a rerun approved for the session covers its twin beside it, no more") {
  if (!HaveLandlock()) return;
  // `one` and `two` are the same command (same argv): each marks itself,
  // waits for the other, then appends to a log outside the workspace; both
  // fail in the sandbox before either is asked. The user answers "always"
  // to the first question: the twin reruns outside without a question, as a
  // call after it would have run outside at its gate. `other`, a different
  // command, fails once both reran: it is asked, and its "no" holds.
  TempDir outside("codex-parallel-outside-", NonTempBase());
  const std::string log = (outside.path() / "log").string();
  const std::string twin =
      "touch m.$$; i=0; while [ $(ls m.* | wc -l) -lt 2 ] && [ $i -lt 100 ]; do sleep 0.1; "
      "i=$((i+1)); done; echo ran >> " +
      log;
  const std::string other = "i=0; while [ \"$(cat " + log +
                            " 2>/dev/null | wc -l)\" -lt 2 ] && [ $i -lt 200 ]; do sleep 0.05; "
                            "i=$((i+1)); done; echo other >> " +
                            log;
  const std::string script = R"({"responses": [
    {"output": [)" + ExecCall("one", twin) +
                             ", " + ExecCall("two", twin) + ", " + ExecCall("other", other) +
                             R"(]},
    "done"]})";
  auto env = MakeEnv(script, kOnFailure);
  auto run = env->RunCodex({}, "log it\na\nn\n");
  REQUIRE(run.ok());
  INFO(run->err);
  CHECK(run->exit_code == 0);
  CHECK(run->out == "done\n");
  CHECK(Count(run->err, "Allow this command?") == 2);
  CHECK(AskedCommand(run->err, 0).find("echo ran >> ") != std::string::npos);
  CHECK(AskedCommand(run->err, 1).find("echo other >> ") != std::string::npos);
  CHECK(Count(run->err, "command approved for the session") == 1);
  CHECK_THAT(run->err, Catch::Contains("command denied"));
  CHECK(ReadFile(log) == "ran\nran\n");
  CHECK_THAT(ModelOutput(*env, "one"), Catch::Contains("Process exited with code 0"));
  CHECK_THAT(ModelOutput(*env, "two"), Catch::Contains("Process exited with code 0"));
  CHECK_THAT(ModelOutput(*env, "other"), Catch::Contains("Process exited with code 1"));
  CHECK_THAT(ModelOutput(*env, "other"), Catch::Contains("Read-only file system"));
  const auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 2);
  CHECK(OutputOrder(requests[1]) == std::vector<std::string>{"one", "two", "other"});
}

}  // namespace codex::testing
