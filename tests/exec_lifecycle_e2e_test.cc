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

#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

#include "sandbox/landlock.h"
#include "sandbox/launcher.h"
#include "testing/eventually.h"
#include "testing/processes.h"
#include "testing/skip.h"
#include "tests/e2e_checks.h"
#include "tests/e2e_support.h"

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
    Json wait = {{"cmd", "exec -a " + m + "-victim sleep 1000"},
                 {"shell", "/bin/bash"},
                 {"login", false},
                 {"yield_time_ms", 30000}};
    const std::string script =
        R"({"responses": [{"output": [{"function_call": "exec_command", "call_id": "victim",
        "arguments": )" +
        wait.dump() + R"(}]},)" + ExecCall("after", "echo after-" + m) + R"(, "done"]})";
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
    CHECK(Eventually([&] { return Alive(m) == 0; }));
  }
}

}  // namespace codex::testing
