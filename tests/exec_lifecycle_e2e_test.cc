// The lifecycle of unified exec sessions and of the sandbox server, attacked
// as an adversarial model would (it writes every exec_command and the
// commands do what it wants): nothing it started outlives codex, whether the
// turn ends, codex exits or codex is killed with SIGKILL, whatever the
// commands do to escape (setsid, nohup, double fork, ignored SIGTERM/SIGHUP,
// a process group of their own, a terminal held, their keeper in the
// sandbox server killed or stopped); the sandbox server killed from outside
// mid-command gives the model a clear error, and the next call a new server.
// Processes are found by scanning /proc (testing/processes.h); every wait is
// a bounded wait on a condition.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "sandbox/landlock.h"
#include "sandbox/launcher.h"
#include "testing/eventually.h"
#include "testing/files.h"
#include "testing/processes.h"
#include "testing/skip.h"
#include "testing/temp_dir.h"
#include "tests/e2e_checks.h"
#include "tests/e2e_support.h"
#include "tests/pty_support.h"

namespace codex::testing {
namespace {

using e2e::MakeEnv;
using e2e::ModelOutput;

bool HaveLandlock() {
  if (sandbox::landlock::AbiVersion() >= 1) return true;
  SkipPart("Landlock is not available on this kernel");
  return false;
}

// The ways the sandbox can be built here: with namespaces (when bubblewrap
// can make them), without (CODEX_SANDBOX_BWRAP names no program), and none.
struct Layers {
  std::string name;
  std::vector<std::string> args;           // codex exec flags
  std::map<std::string, std::string> env;  // added to codex's environment
};
std::vector<Layers> AvailableLayers() {
  std::vector<Layers> out;
  if (sandbox::ProbeBwrap().usable) {
    out.push_back({"namespaces", {"-s", "read-only"}, {}});
  } else {
    SkipPart("bubblewrap cannot create namespaces here (" + sandbox::ProbeBwrap().reason +
             "); the namespace case is left out");
  }
  out.push_back({"landlock only", {"-s", "read-only"}, {{"CODEX_SANDBOX_BWRAP", "/nonexistent"}}});
  out.push_back({"danger-full-access", {"-s", "danger-full-access"}, {}});
  return out;
}

// Live processes whose command line holds `marker`.
size_t Alive(const std::string& marker) { return ProcessesMentioning(marker).size(); }

// An exec_command call (bash -c, not a login shell) that yields at once.
std::string ExecCall(const std::string& call_id, const std::string& cmd, bool tty = false,
                     int64_t yield_ms = 250) {
  Json args = {{"cmd", cmd},
               {"shell", "/bin/bash"},
               {"login", false},
               {"tty", tty},
               {"yield_time_ms", yield_ms}};
  return Json({{"output", Json::array({{{"function_call", "exec_command"},
                                        {"call_id", call_id},
                                        {"arguments", args}}})}})
      .dump();
}

// The model's escapes, each process named `<marker>-…` by `exec -a`.
std::vector<std::string> EscapeCalls(const std::string& m) {
  return {
      // Detached every way a daemon detaches, ignoring the signals that end
      // a session; the leader ignores them too.
      ExecCall("daemons",
               "trap '' TERM HUP INT; "
               "(setsid bash -c 'trap \"\" TERM HUP; exec -a " +
                   m +
                   "-setsid sleep 1000' &); "
                   "(nohup bash -c 'exec -a " +
                   m +
                   "-nohup sleep 1000' >/dev/null 2>&1 &); "
                   "bash -c '(exec -a " +
                   m +
                   "-double sleep 1000) & disown'; "
                   "set -m; (exec -a " +
                   m +
                   "-pgrp sleep 1000) & "
                   "exec -a " +
                   m + "-lead sleep 1000"),
      // Holds the terminal it was given.
      ExecCall("pty", "trap '' HUP; exec -a " + m + "-pty sleep 1000", true),
      // Kills its keeper in the sandbox server (its parent).
      ExecCall("orphan",
               "(exec -a " + m + "-orphan sleep 1000) & kill -9 $PPID; exec -a " + m +
                   "-orphan-lead sleep 1000",
               false, 10'000),
      // Stops its keeper (after it reported the start).
      ExecCall("stopped", "sleep 0.5; kill -STOP $PPID; exec -a " + m + "-stopped sleep 1000"),
  };
}

// The escapes that stay running are (the orphan's are ended at once; a
// terminal needs namespaces: Landlock alone grants no new pseudo-terminal).
bool EscapesRunning(const std::string& m, bool pty) {
  for (const char* suffix : {"-setsid", "-nohup", "-double", "-pgrp", "-lead", "-stopped"}) {
    if (Alive(m + suffix) == 0) return false;
  }
  return !pty || Alive(m + "-pty") == 1;
}

// True once no process has `env`'s CODEX_HOME in its command line or
// environment: codex, bubblewrap, the sandbox server, the commands.
bool NothingOf(const CodexTestEnv& env) {
  return ProcessesMentioning("CODEX_HOME=" + env.codex_home().string(),
                             Mentioned::kInCommandLineOrEnvironment)
      .empty();
}

std::string LifeScript(const std::vector<std::string>& calls, const std::string& last) {
  std::string s = R"({"responses": [)";
  for (const auto& c : calls) s += c + ",";
  return s + last + "]}";
}

}  // namespace

TEST_CASE("exec lifecycle: nothing the model started outlives codex exec, ended or SIGKILLed") {
  if (!HaveLandlock()) return;
  for (const Layers& layers : AvailableLayers()) {
    for (const bool sigkill : {false, true}) {
      const std::string m = "codex-life-" + std::to_string(::getpid()) + "-" +
                            std::to_string(layers.name.size()) + (sigkill ? "k" : "e");
      INFO(layers.name << (sigkill ? ", codex killed with SIGKILL" : ", codex exits"));
      const std::string never = "/nonexistent-codex-life-" + m;
      auto env = MakeEnv(LifeScript(EscapeCalls(m), sigkill ? R"({"wait_for_file": ")" + never +
                                                                  R"(", "message": "never"})"
                                                            : R"("done")"),
                         "");
      std::vector<std::string> args = {"exec"};
      args.insert(args.end(), layers.args.begin(), layers.args.end());
      args.push_back("escape");
      ProcessOptions command = env->CodexCommand(args);
      for (const auto& [k, v] : layers.env) command.env[k] = v;
      if (!sigkill) {
        // Ended: the turn ends and codex exits, on its own, in bounded time
        // (found: a stopped keeper held codex's exit for ever).
        command.timeout = std::chrono::seconds(90);
        ProcessResult run = e2e::RunChecked(command);
        CHECK(run.exit_code == 0);
      } else {
        auto codex = ChildProcess::Spawn(command);
        REQUIRE(codex.ok());
        // Every escape is running, and codex waits for the model.
        REQUIRE(Eventually([&] { return EscapesRunning(m, layers.env.empty()); },
                           std::chrono::seconds(60)));
        REQUIRE(Eventually([&] { return env->server().requests_to("/responses").size() == 5; },
                           std::chrono::seconds(60)));
        REQUIRE((*codex)->Signal(SIGKILL).ok());
        auto killed = (*codex)->Wait(std::chrono::seconds(60));
        REQUIRE(killed.ok());
        CHECK(killed->term_signal == SIGKILL);
      }
      // The keeper's killer learns its command ended without an exit
      // status, never "exited with code 0".
      const std::string orphan = ModelOutput(*env, "orphan");
      INFO("orphan: " << orphan);
      CHECK_THAT(orphan, Catch::StartsWith("exec_command failed: ") && Catch::Contains("keeper"));
      CHECK_THAT(ModelOutput(*env, "daemons"), Catch::Contains("Process running with session ID"));
      // Nothing the model started is left (found: the keeper's killer's
      // processes, with the whole sandbox server, outlived codex).
      CHECK(Eventually([&] { return Alive(m) == 0; }));
      for (const auto& p : ProcessesMentioning(m)) {
        UNSCOPED_INFO("left: pid " << p.pid << " " << p.command_line);
      }
      // Nor codex's own helpers: bubblewrap and the sandbox server carry
      // its CODEX_HOME in their environment (readable here as root or as
      // their user; an unreadable environ proves nothing either way).
      CHECK(Eventually([&] { return NothingOf(*env); }));
    }
  }
}

namespace {

// The sandbox server of `codex` (the innermost process whose command line
// names it, among codex's descendants), or -1.
pid_t SandboxServerOf(pid_t codex) {
  const auto all = Processes();
  auto descends = [&](pid_t pid) {
    for (int depth = 0; depth < 64 && pid > 1; ++depth) {
      if (pid == codex) return true;
      pid_t parent = -1;
      for (const auto& p : all) {
        if (p.pid == pid) parent = p.parent;
      }
      pid = parent;
    }
    return false;
  };
  for (const auto& p : all) {
    if (p.command_line.find("__codex-sandbox-server") == std::string::npos) continue;
    if (p.command_line.find("bwrap") != std::string::npos) continue;
    if (descends(p.pid)) return p.pid;
  }
  return -1;
}

}  // namespace

TEST_CASE("exec lifecycle: the sandbox server killed mid-command is an error; the next gets one") {
  if (!HaveLandlock()) return;
  for (const Layers& layers : AvailableLayers()) {
    INFO(layers.name);
    const std::string m =
        "codex-srvkill-" + std::to_string(::getpid()) + "-" + std::to_string(layers.name.size());
    TempDir gate_dir("codex-srvkill-");
    const std::string gate = (gate_dir.path() / "second-server-killed").string();
    Json wait = {{"cmd", "exec -a " + m + "-victim sleep 1000"},
                 {"shell", "/bin/bash"},
                 {"login", false},
                 {"yield_time_ms", 30000}};
    const std::string script =
        R"({"responses": [{"output": [{"function_call": "exec_command", "call_id": "victim",
        "arguments": )" +
        wait.dump() + R"(}]},)" + ExecCall("after", "echo after-" + m) + ", " +
        ExecCall("idle", "exec -a " + m + "-idle sleep 1000") + R"(, {"wait_for_file": )" +
        Json(gate).dump() +
        R"(, "output": [{"function_call": "write_stdin", "call_id": "poll", "arguments":
        {"session_id": 1000, "chars": "", "yield_time_ms": 2000}}]}, "done"]})";
    auto env = MakeEnv(script, "");
    std::vector<std::string> args = {"exec"};
    args.insert(args.end(), layers.args.begin(), layers.args.end());
    args.push_back("run it");
    ProcessOptions command = env->CodexCommand(args);
    for (const auto& [k, v] : layers.env) command.env[k] = v;
    auto codex = ChildProcess::Spawn(command);
    REQUIRE(codex.ok());
    REQUIRE(Eventually([&] { return Alive(m + "-victim") == 1; }, std::chrono::seconds(60)));
    const pid_t server = SandboxServerOf((*codex)->pid());
    REQUIRE(server > 0);
    REQUIRE(::kill(server, SIGKILL) == 0);
    // The next call got a new server; it is killed too, while its command
    // waits between calls for the model's next poll.
    REQUIRE(Eventually(
        [&] {
          (void)(*codex)->ReadStdoutLine(std::chrono::milliseconds(20));
          // (and its call returned: the model was asked what next)
          return Alive(m + "-idle") == 1 && env->server().requests_to("/responses").size() >= 4;
        },
        std::chrono::seconds(60)));
    const pid_t second = SandboxServerOf((*codex)->pid());
    REQUIRE(second > 0);
    CHECK(second != server);
    REQUIRE(::kill(second, SIGKILL) == 0);
    WriteFile(gate, "");
    auto run = (*codex)->Wait(std::chrono::seconds(90));
    REQUIRE(run.ok());
    INFO("stderr: " << run->err);
    REQUIRE_FALSE(run->timed_out);
    CHECK(run->exit_code == 0);
    // The call ends (well before its 30 s yield would matter) with the reason.
    const std::string victim = ModelOutput(*env, "victim");
    INFO("victim: " << victim);
    CHECK_THAT(victim, Catch::StartsWith("exec_command failed: the sandbox server stopped") &&
                           Catch::Contains("the next command starts a new one"));
    const std::string after = ModelOutput(*env, "after");
    CHECK_THAT(after,
               Catch::Contains("Process exited with code 0") && Catch::Contains("after-" + m));
    CHECK_THAT(ModelOutput(*env, "idle"), Catch::Contains("Process running with session ID 1000"));
    // The poll of a session whose server died between calls says so.
    const std::string poll = ModelOutput(*env, "poll");
    INFO("poll: " << poll);
    CHECK_THAT(poll, Catch::StartsWith("write_stdin failed: the sandbox server stopped"));
    CHECK(Eventually([&] { return Alive(m) == 0; }));
  }
}

}  // namespace codex::testing

namespace codex::testing {
namespace {

// codex's peak resident memory (VmHWM, kB), 0 when unreadable.
long PeakKb(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::atol(line.c_str() + 6);
  }
  return 0;
}

}  // namespace

TEST_CASE("exec lifecycle: floods, binary junk and a 10 MB line keep codex's memory bounded") {
  // The model's commands print what they like, as fast as they can: `yes`
  // left running and polled, 30 MB of random bytes on a terminal, one line of
  // 10 MB without a newline until its end. codex keeps a bounded head and
  // tail per call; the model gets Codex's header, the head and the real end.
  if (!HaveLandlock()) return;
  TempDir gate_dir("codex-flood-");
  const std::string gate = (gate_dir.path() / "measured").string();
  Json poll = {{"session_id", 1000}, {"chars", ""}, {"yield_time_ms", 2000}};
  const std::string script =
      R"({"responses": [)" + ExecCall("yes", "yes", false, 2000) +
      R"(, {"output": [{"function_call": "write_stdin", "call_id": "poll", "arguments": )" +
      poll.dump() + "}]}, " +
      ExecCall("junk", "head -c 30000000 /dev/urandom; echo; echo JUNK-END", true, 30000) + ", " +
      ExecCall("line", "head -c 10000000 /dev/zero | tr '\\0' a; echo LINE-END", false, 30000) +
      R"(, {"wait_for_file": )" + Json(gate).dump() + R"(, "message": "done"}]})";
  auto env = MakeEnv(script, "");
  auto codex = ChildProcess::Spawn(env->CodexCommand({"exec", "flood"}));
  REQUIRE(codex.ok());
  // (Reading its output meanwhile, so that codex never waits on a full pipe.)
  REQUIRE(Eventually(
      [&] {
        (void)(*codex)->ReadStdoutLine(std::chrono::milliseconds(20));
        return env->server().requests_to("/responses").size() == 5;
      },
      std::chrono::seconds(120)));
  const long peak_kb = PeakKb((*codex)->pid());
  WriteFile(gate, "");
  auto run = (*codex)->Wait(std::chrono::seconds(120));
  REQUIRE(run.ok());
  INFO("stderr (tail): " << run->err.substr(run->err.size() > 2000 ? run->err.size() - 2000 : 0));
  CHECK(run->exit_code == 0);
  // What the user reads of it: each line cut (found: `codex exec` printed the
  // 10 MB line's first megabyte as one line on stderr).
  size_t longest = 0;
  for (size_t at = 0; at < run->err.size();) {
    size_t nl = run->err.find('\n', at);
    if (nl == std::string::npos) nl = run->err.size();
    longest = std::max(longest, nl - at);
    at = nl + 1;
  }
  CHECK(longest < 1100);
  CHECK_THAT(run->err, Catch::Contains("LINE-END"));
  // 40 MB went through; a generous bound, far below it (about 30 MB here).
  INFO("VmHWM " << peak_kb << " kB");
  CHECK(peak_kb > 0);
#if defined(__SANITIZE_ADDRESS__)
  // The sanitizer build's codex keeps freed memory in ASan's quarantine
  // (256 MB by default) and maps its shadow: the bound is the normal build's.
  WARN("ASan build: codex's peak " << peak_kb / 1024 << " MiB, not checked against 96 MiB");
#else
  CHECK(peak_kb < 96 * 1024);
#endif
  for (const char* id : {"yes", "poll", "junk", "line"}) {
    const std::string out = ModelOutput(*env, id);
    INFO(id << ": " << out.substr(0, 300));
    CHECK(std::regex_search(out, std::regex("^Chunk ID: [0-9a-f]{6}\nWall time: [0-9.]+ seconds\n"
                                            "Process (running with session ID 1000|exited with "
                                            "code 0)\nOriginal token count: [0-9]+\nOutput:\n")));
    // 10000 tokens (40 KB) at most, head and tail, and a marker between
    // (invalid UTF-8 grows into U+FFFD on the wire, up to three times).
    CHECK(out.size() < 128 * 1024);
    CHECK_THAT(out, Catch::Contains("omitted"));
  }
  CHECK_THAT(ModelOutput(*env, "poll"), Catch::Contains("y\ny\n"));
  CHECK_THAT(ModelOutput(*env, "junk"), Catch::EndsWith("JUNK-END\r\n"));
  CHECK_THAT(ModelOutput(*env, "line"), Catch::EndsWith("LINE-END\n"));
  // The original count is the whole output's, not what was kept.
  std::smatch tokens;
  const std::string line = ModelOutput(*env, "line");
  REQUIRE(std::regex_search(line, tokens, std::regex("Original token count: ([0-9]+)")));
  CHECK(std::stol(tokens[1]) >= 2'500'000);
}

}  // namespace codex::testing

namespace codex::testing {
namespace {

std::string WriteCall(const std::string& call_id, int64_t session, const std::string& chars,
                      int64_t yield_ms = 500) {
  Json args = {{"session_id", session}, {"chars", chars}, {"yield_time_ms", yield_ms}};
  return Json({{"output", Json::array({{{"function_call", "write_stdin"},
                                        {"call_id", call_id},
                                        {"arguments", args}}})}})
      .dump();
}

}  // namespace

TEST_CASE("exec lifecycle: write_stdin to no session, an ended one, another codex's, or no tty") {
  if (!HaveLandlock()) return;
  const std::string m = "codex-stdin-" + std::to_string(::getpid());
  const std::string huge(1 << 18, 'h');  // far more than a terminal or pipe holds
  const std::string script = LifeScript(
      {// 1000: no terminal; `cat` ends at once (stdin is /dev/null), so
       // the first session is the sleeper.
       ExecCall("cat", "cat; echo cat-ended", false, 5000),
       ExecCall("pipes", "exec -a " + m + "-pipes sleep 1000"),
       WriteCall("nochars", 1000, "hello\n"), WriteCall("poll", 1000, ""),
       WriteCall("never", 4242, "x"),
       // 1001: a terminal, not canonical (a line holds 4 KB): 256 KB it reads.
       ExecCall("tty",
                "stty -echo -icanon; head -c " + std::to_string(huge.size() + 1) + " | wc -c",
                true),
       WriteCall("huge", 1001, huge, 1000), WriteCall("eof", 1001, "\n", 3000),
       // 1001 ended with the last call: unknown from then on.
       WriteCall("ended", 1001, "x"),
       ExecCall("ctrlc", "trap 'echo got-int; exit 3' INT; exec -a " + m + "-int sleep 1000 & wait",
                true),
       WriteCall("sigint", 1002, "\x03", 3000)},
      R"("first run done", {"output": [)" +
          Json::parse(WriteCall("other", 1000, "x"))["output"][0].dump() +
          R"(]}, "second run done")");
  auto env = MakeEnv(script, "");
  auto first = e2e::Run(*env, {"exec", "-s", "read-only", "talk"});
  INFO("stderr: " << first.err.substr(0, 4000));
  CHECK(first.exit_code == 0);
  CHECK_THAT(ModelOutput(*env, "cat"),
             Catch::Contains("Process exited with code 0") && Catch::EndsWith("cat-ended\n"));
  CHECK_THAT(ModelOutput(*env, "pipes"), Catch::Contains("Process running with session ID 1000"));
  // Codex 0.169's words, each.
  CHECK(ModelOutput(*env, "nochars") ==
        "write_stdin failed: stdin is closed for this session; rerun exec_command with tty=true "
        "to keep stdin open");
  CHECK_THAT(ModelOutput(*env, "poll"), Catch::Contains("Process running with session ID 1000"));
  CHECK(ModelOutput(*env, "never") == "write_stdin failed: Unknown process id 4242");
  CHECK_THAT(ModelOutput(*env, "huge"), Catch::Contains("Process running with session ID 1001"));
  // Every byte reached the program (and the newline).
  const std::string eof = ModelOutput(*env, "eof");
  INFO("eof: " << eof);
  CHECK_THAT(eof, Catch::Contains("Process exited with code 0") &&
                      Catch::Contains(std::to_string(huge.size() + 1)));
  CHECK(ModelOutput(*env, "ended") == "write_stdin failed: Unknown process id 1001");
  const std::string sigint = ModelOutput(*env, "sigint");
  INFO("sigint: " << sigint);
  CHECK_THAT(sigint, Catch::Contains("got-int") && Catch::Contains("Process exited with code 3"));
  CHECK(Eventually([&] { return Alive(m) == 0; }));

  // Another codex process (this session resumed): its IDs mean nothing here.
  auto second = e2e::Run(*env, {"exec", "resume", "--last", "again"});
  CHECK(second.exit_code == 0);
  CHECK(ModelOutput(*env, "other") == "write_stdin failed: Unknown process id 1000");
}

}  // namespace codex::testing

namespace codex::testing {

TEST_CASE("exec lifecycle: exec --json stays exact JSON; a process left running is not completed") {
  // The output carries OSC 52 (clipboard), a title, clear screen and cursor
  // moves: on stderr they are shown inert, in --json they are exact (escaped
  // JSON), and nothing but JSON reaches stdout. A process its call left
  // running gets item.started and no item.completed, as in Codex 0.169
  // (found: item.completed with exit_code 0, "completed", for a running one).
  if (!HaveLandlock()) return;
  const std::string m = "codex-json-" + std::to_string(::getpid());
  const std::string escapes =
      "printf '\\033]52;c;cHduZWQ=\\007\\033]0;TITLE\\007\\033[2J\\033[H"
      "\\033[5Amoved\\n'";
  const std::string script =
      LifeScript({ExecCall("ended", escapes, false, 5000),
                  ExecCall("running", escapes + "; exec -a " + m + " sleep 1000", true)},
                 R"("done", )" + ExecCall("ended", escapes, false, 5000) + R"(, "done")");
  auto env = MakeEnv(script, "");
  auto json = e2e::Run(*env, {"exec", "--json", "escapes"});
  INFO("stdout: " << json.out);
  CHECK(json.exit_code == 0);
  std::vector<Json> events;
  for (size_t at = 0; at < json.out.size();) {
    size_t nl = json.out.find('\n', at);
    if (nl == std::string::npos) nl = json.out.size();
    Json e = Json::parse(json.out.substr(at, nl - at), nullptr, false);
    CHECK_FALSE(e.is_discarded());
    events.push_back(e);
    at = nl + 1;
  }
  std::vector<Json> started, completed;
  for (const Json& e : events) {
    if (!e.is_object() || !e.contains("item") ||
        e["item"].value("type", "") != "command_execution") {
      continue;
    }
    (e.value("type", "") == "item.started" ? started : completed).push_back(e["item"]);
  }
  REQUIRE(started.size() == 2);
  REQUIRE(completed.size() == 1);
  CHECK(completed[0]["id"] == started[0]["id"]);
  CHECK(completed[0]["exit_code"] == 0);
  CHECK(completed[0]["aggregated_output"] ==
        "\x1b]52;c;cHduZWQ=\x07\x1b]0;TITLE\x07\x1b[2J\x1b[H\x1b[5Amoved\n");
  CHECK(json.out.find('\x1b') == std::string::npos);  // escaped, never raw
  CHECK(Eventually([&] { return Alive(m) == 0; }));

  // The same on stderr's progress: every escape shown, none live.
  auto text = e2e::Run(*env, {"exec", "escapes"});
  CHECK(text.err.find('\x1b') == std::string::npos);
  CHECK(text.err.find('\x07') == std::string::npos);
  CHECK_THAT(text.err, Catch::Contains("^[]52;c;cHduZWQ=^G^[]0;TITLE^G^[[2J^[[H^[[5Amoved"));
}

}  // namespace codex::testing

namespace codex::testing {

TEST_CASE("exec lifecycle: interactive, sessions outlive the turn, not codex killed with SIGKILL") {
  // As in Codex 0.169, a process the model left running stays across turns
  // (a later turn polls it); codex killed with SIGKILL leaves none of them.
  if (!HaveLandlock()) return;
  const Layers layers = AvailableLayers().front();
  INFO(layers.name);
  const std::string m = "codex-tui-" + std::to_string(::getpid());
  std::vector<std::string> calls = EscapeCalls(m);
  calls.push_back(R"("first turn done")");
  calls.push_back(WriteCall("later", 1000, "", 300));
  const std::string script = LifeScript(calls, R"("second turn done")");
  auto env = MakeEnv(script, "");
  std::vector<std::string> args = layers.args;
  ProcessOptions command = env->CodexCommand(args);
  for (const auto& [k, v] : layers.env) command.env[k] = v;
  auto p = PtyProcess::Spawn(command);
  REQUIRE(p.ok());
  const auto wait = std::chrono::seconds(60);
  REQUIRE((*p)->WaitForText("›", wait).ok());
  REQUIRE((*p)->Write("escape\r").ok());
  REQUIRE((*p)->WaitForText("first turn done", wait).ok());
  REQUIRE(Eventually([&] { return EscapesRunning(m, layers.env.empty()); }, wait));
  REQUIRE((*p)->Write("poll it\r").ok());
  REQUIRE((*p)->WaitForText("second turn done", wait).ok());
  CHECK_THAT(ModelOutput(*env, "later"), Catch::Contains("Process running with session ID 1000"));
  CHECK(EscapesRunning(m, layers.env.empty()));
  REQUIRE(::kill((*p)->pid(), SIGKILL) == 0);
  (void)(*p)->WaitExit(wait);
  CHECK(Eventually([&] { return Alive(m) == 0; }));
  CHECK(Eventually([&] { return NothingOf(*env); }));
  for (const auto& left : ProcessesMentioning(m)) {
    UNSCOPED_INFO("left: pid " << left.pid << " " << left.command_line);
  }
}

}  // namespace codex::testing
