#include "core/sandboxed_runner.h"

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>

#include "core/approval.h"
#include "sandbox/landlock.h"
#include "sandbox/launcher.h"
#include "testing/eventually.h"
#include "testing/files.h"
#include "testing/processes.h"
#include "testing/skip.h"
#include "testing/temp_dir.h"

using namespace codex;
using namespace codex::core;
namespace fs = std::filesystem;

namespace {

CommandSpec Spec(std::vector<std::string> argv) {
  CommandSpec spec;
  spec.argv = std::move(argv);
  spec.sandbox.mode = SandboxMode::kDangerFullAccess;
  return spec;
}

using codex::testing::ProcessEnded;

}  // namespace

TEST_CASE("SandboxedRunner runs a command and maps the result") {
  SandboxedRunner runner;
  CancelToken cancel;
  auto spec = Spec({"sh", "-c", "echo hi; echo oops >&2; exit 7"});
  spec.env_overrides["UNUSED"] = "1";
  auto r = runner.Run(spec, cancel);
  REQUIRE(r.ok());
  CHECK(r->exit_code == 7);
  CHECK(r->stdout_text == "hi\n");
  CHECK(r->stderr_text == "oops\n");
  CHECK(r->output.size() == 8);
  CHECK(r->dropped_bytes == 0);
  CHECK_FALSE(r->timed_out);
}

TEST_CASE("SandboxedRunner honours the working directory and overrides") {
  SandboxedRunner runner;
  CancelToken cancel;
  auto spec = Spec({"sh", "-c", "pwd; echo $GREETING"});
  spec.cwd = "/";
  spec.env_overrides["GREETING"] = "hello";
  auto r = runner.Run(spec, cancel);
  REQUIRE(r.ok());
  CHECK(r->stdout_text == "/\nhello\n");
}

TEST_CASE("SandboxedRunner times out with exit code 124") {
  SandboxedRunner runner;
  CancelToken cancel;
  auto spec = Spec({"sleep", "30"});
  spec.timeout_ms = 200;
  auto r = runner.Run(spec, cancel);
  REQUIRE(r.ok());
  CHECK(r->timed_out);
  CHECK(r->exit_code == 124);
}

TEST_CASE("SandboxedRunner turns spawn failures into Status codes") {
  SandboxedRunner runner;
  CancelToken cancel;
  auto missing = runner.Run(Spec({"codex-definitely-missing-cmd"}), cancel);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == StatusCode::kNotFound);
  CHECK(missing.status().message().find("codex-definitely-missing-cmd") != std::string::npos);

  auto empty = runner.Run(Spec({}), cancel);
  REQUIRE_FALSE(empty.ok());
  CHECK(empty.status().code() == StatusCode::kInvalidArgument);

  auto spec = Spec({"true"});
  spec.cwd = "/nonexistent-codex-dir";
  auto bad_cwd = runner.Run(spec, cancel);
  REQUIRE_FALSE(bad_cwd.ok());
  CHECK(bad_cwd.status().code() == StatusCode::kInvalidArgument);
}

TEST_CASE("SandboxedRunner honours the CancelToken") {
  SandboxedRunner runner;
  CancelToken cancel;
  codex::testing::TempDir dir("codex-runner-cancel-");
  // The command says when it runs (a file appears), then outlives the test.
  auto spec =
      Spec({"sh", "-c", "echo $$ > started.tmp && mv started.tmp started && exec sleep 30"});
  spec.cwd = dir.str();
  spec.timeout_ms = 60'000;
  bool was_running = false;
  std::thread canceller([&] {
    was_running = codex::testing::Eventually([&] { return fs::exists(dir.path() / "started"); });
    cancel.Cancel();
  });
  auto r = runner.Run(spec, cancel);
  canceller.join();
  CHECK(was_running);  // cancelled in flight, not before it started
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::kCancelled);
  // The running command was stopped, not left behind.
  const pid_t pid = static_cast<pid_t>(std::stol(codex::testing::ReadFile(dir.path() / "started")));
  CHECK(codex::testing::Eventually([&] { return ::kill(pid, 0) != 0 && errno == ESRCH; }));

  // Already cancelled: nothing runs.
  auto again = runner.Run(Spec({"true"}), cancel);
  REQUIRE_FALSE(again.ok());
  CHECK(again.status().code() == StatusCode::kCancelled);
}

using codex::testing::NonTempBase;
using codex::testing::TempDir;

TEST_CASE("SandboxedRunner enforces the sandbox modes") {
  SandboxedRunner runner;
  CancelToken cancel;
  // Neither may be under /tmp, which workspace-write may write (and which
  // would then also reach the workspace's .git).
  TempDir outside("codex-runner-test-", NonTempBase());
  TempDir workspace("codex-runner-test-", NonTempBase());
  fs::create_directories(workspace.path() / ".git");
  std::ofstream(workspace.path() / ".git" / "HEAD") << "ref: refs/heads/main\n";
  fs::create_directories(workspace.path() / "src");

  auto run = [&](SandboxMode mode, const std::string& script) {
    CommandSpec spec;
    spec.argv = {"sh", "-c", script};
    spec.cwd = workspace.path().string();
    spec.sandbox.mode = mode;
    return runner.Run(spec, cancel);
  };

  if (codex::sandbox::landlock::AbiVersion() < 1) {
    auto r = run(SandboxMode::kWorkspaceWrite, "true");
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == StatusCode::kFailedPrecondition);
    CHECK(r.status().message().find("danger-full-access") != std::string::npos);
    codex::testing::SkipPart("Landlock is missing: only the refusal was tested");
    return;
  }

  const std::string outside_file = (outside.path() / "f").string();
  auto ro = run(SandboxMode::kReadOnly, "cat .git/HEAD; echo x > src/new");
  REQUIRE(ro.ok());
  CHECK(ro->exit_code != 0);
  CHECK(ro->stdout_text == "ref: refs/heads/main\n");
  CHECK(LooksLikeSandboxDenial(*ro));
  CHECK_FALSE(fs::exists(workspace.path() / "src" / "new"));

  auto ww =
      run(SandboxMode::kWorkspaceWrite,
          "echo x > src/new && echo t > /tmp/codex-runner-test-$$ && rm /tmp/codex-runner-test-$$"
          " && echo $CODEX_SANDBOX_NETWORK_DISABLED");
  REQUIRE(ww.ok());
  CHECK(ww->exit_code == 0);
  CHECK(ww->stdout_text == "1\n");
  CHECK(fs::exists(workspace.path() / "src" / "new"));

  auto git = run(SandboxMode::kWorkspaceWrite, "echo x >> .git/HEAD");
  REQUIRE(git.ok());
  CHECK(git->exit_code != 0);
  auto out = run(SandboxMode::kWorkspaceWrite, "echo x > " + outside_file);
  REQUIRE(out.ok());
  CHECK(out->exit_code != 0);
  CHECK_FALSE(fs::exists(outside_file));

  // An extra writable root opens that directory.
  CommandSpec spec;
  spec.argv = {"sh", "-c", "echo x > " + outside_file};
  spec.cwd = workspace.path().string();
  spec.sandbox.mode = SandboxMode::kWorkspaceWrite;
  spec.sandbox.writable_roots = {outside.path().string()};
  auto extra = runner.Run(spec, cancel);
  REQUIRE(extra.ok());
  CHECK(extra->exit_code == 0);
  CHECK(fs::exists(outside_file));

  spec.sandbox.writable_roots = {(outside.path() / "missing").string()};
  auto missing = runner.Run(spec, cancel);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == StatusCode::kInvalidArgument);

  auto full = run(SandboxMode::kDangerFullAccess, "echo y >> .git/HEAD");
  REQUIRE(full.ok());
  CHECK(full->exit_code == 0);
}

TEST_CASE("SandboxedRunner protects a .git created after its server started") {
  if (sandbox::landlock::AbiVersion() < 1) {
    WARN("skipped: Landlock is not available on this kernel");
    return;
  }
  codex::testing::TempDir dir("codex-runner-git-", "/tmp");
  SandboxedRunner runner;
  CancelToken cancel;
  // The model cannot make the repository itself (an absent .git is
  // protected too); the server starts on a workspace without one.
  auto spec = Spec({"sh", "-c", "mkdir .git"});
  spec.cwd = dir.path().string();
  spec.sandbox.mode = SandboxMode::kWorkspaceWrite;
  spec.sandbox.workspace_root = dir.path().string();
  auto refused = runner.Run(spec, cancel);
  REQUIRE(refused.ok());
  CHECK(refused->exit_code != 0);
  // The user runs `git init` on the host meanwhile.
  std::filesystem::create_directories(dir.path() / ".git");
  codex::testing::WriteFile(dir.path() / ".git" / "config", "[core]\n");
  // The same policy, but the confinement must now hold the repository
  // read-only: the next command runs in a new server, not the one that
  // started without it.
  spec.argv = {"sh", "-c", "echo '[core] hooksPath = /tmp/evil' >> .git/config"};
  auto attack = runner.Run(spec, cancel);
  REQUIRE(attack.ok());
  CHECK(attack->exit_code != 0);
  std::ifstream config(dir.path() / ".git" / "config");
  std::string text((std::istreambuf_iterator<char>(config)), std::istreambuf_iterator<char>());
  CHECK(text == "[core]\n");
}

TEST_CASE("SandboxedRunner reports a dead server once and starts a new one") {
  SandboxedRunner runner;
  CancelToken cancel;
  auto spec = Spec({"sh", "-c", "echo $$"});
  auto first = runner.Run(spec, cancel);
  REQUIRE(first.ok());
  auto server = runner.ServerFor(spec);
  REQUIRE(server.ok());
  const pid_t dead = server->server->server_pid();
  REQUIRE(::kill(dead, SIGKILL) == 0);
  REQUIRE(codex::testing::Eventually([&] { return ProcessEnded(dead); }));
  // The dead server is noticed before the command is sent: a new one runs it.
  auto after = runner.Run(spec, cancel);
  REQUIRE(after.ok());
  CHECK(after->exit_code == 0);
  // Killed while a command runs: that call fails with one line.
  auto again = runner.ServerFor(spec);
  REQUIRE(again.ok());
  CHECK(again->server != server->server);
  // Killed once the command runs (it says so with a file).
  codex::testing::TempDir dir("codex-runner-dead-");
  bool was_running = false;
  std::thread killer([&] {
    was_running = codex::testing::Eventually([&] { return fs::exists(dir.path() / "running"); });
    ::kill(again->server->server_pid(), SIGKILL);
  });
  // (Same cwd as above: the command goes to the server ServerFor named.)
  spec.argv = {"sh", "-c", ": > \"$1\" && exec sleep 20", "sh", (dir.path() / "running").string()};
  spec.timeout_ms = 15'000;
  auto during = runner.Run(spec, cancel);
  killer.join();
  CHECK(was_running);
  REQUIRE_FALSE(during.ok());
  CHECK(during.status().code() == StatusCode::kUnavailable);
  CHECK_THAT(during.status().message(), Catch::StartsWith("the sandbox server stopped") &&
                                            Catch::EndsWith("the next command starts a new one"));
  spec.argv = {"true"};
  auto next = runner.Run(spec, cancel);
  REQUIRE(next.ok());
  CHECK(next->exit_code == 0);
}

TEST_CASE("A live process's output is drained while nobody collects it") {
  SandboxedRunner runner;
  CancelToken cancel;
  // 300 KB is far more than a pipe holds: without a reader the command
  // would block on its write and never end.
  auto spec = Spec({"sh", "-c", "head -c 300000 /dev/zero | tr '\\0' x; echo; echo finished"});
  auto process = runner.Start(spec, /*tty=*/false);
  REQUIRE(process.ok());
  LiveProcess::Chunk chunk;
  for (int i = 0; i < 100 && !chunk.exited; ++i) {
    ::usleep(100'000);
    chunk = (*process)->Collect(0, 1 << 20, cancel, nullptr);
    if (chunk.exited) break;
  }
  REQUIRE(chunk.exited);
  CHECK(chunk.exit_code == 0);
  // Collected with waits of 0 ms: the bytes were read in the background.
  CHECK(chunk.output.size() + static_cast<size_t>(chunk.dropped) <= 300'010);
}

TEST_CASE("Collect gives on_output the output as it arrives, before the command ends") {
  SandboxedRunner runner;
  CancelToken cancel;
  codex::testing::TempDir dir("codex-collect-stream-");
  const std::string go = (dir.path() / "go").string();
  // The command ends only once on_output has seen its first line (the
  // callback creates `go`): a Collect that gave the output only at the end
  // would wait its whole 20 s and return a running process.
  auto spec = Spec({"sh", "-c",
                    "echo one; i=0; while [ ! -e " + go +
                        " ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done; echo two"});
  auto process = runner.Start(spec, /*tty=*/false);
  REQUIRE(process.ok());
  std::string streamed;
  const auto chunk = (*process)->Collect(20'000, 1 << 20, cancel, [&](std::string_view bytes) {
    streamed += bytes;
    if (streamed.find("one\n") != std::string::npos) std::ofstream(go).put('1');
  });
  CHECK(chunk.exited);
  CHECK(chunk.exit_code == 0);
  CHECK(chunk.output == "one\ntwo\n");
  CHECK(streamed == "one\ntwo\n");  // every byte once, in order
}

TEST_CASE("A live process keeps its state across writes and dies with its handle") {
  SandboxedRunner runner;
  CancelToken cancel;
  auto spec = Spec({"sh", "-c", "while read line; do echo got:$line; done"});
  auto process = runner.Start(spec, /*tty=*/true);
  REQUIRE(process.ok());
  REQUIRE((*process)->Write("one\n").ok());
  auto first = (*process)->Collect(2'000, 1 << 20, cancel, nullptr);
  CHECK_FALSE(first.exited);
  REQUIRE((*process)->Write("two\n").ok());
  std::string seen = first.output;
  for (int i = 0; i < 20 && seen.find("got:two") == std::string::npos; ++i) {
    seen += (*process)->Collect(100, 1 << 20, cancel, nullptr).output;
  }
  CHECK_THAT(seen, Catch::Contains("got:one\r\n") && Catch::Contains("got:two\r\n"));
}

TEST_CASE("Without a terminal stdin is closed, as in Codex: cat ends, a write says why") {
  // Found: stdin was a pipe nobody wrote, so `cat`, `read` or a prompt
  // waited out the whole yield and stayed open as a session; Codex 0.169
  // gives them /dev/null and refuses chars without a terminal.
  SandboxedRunner runner;
  CancelToken cancel;
  auto process = runner.Start(Spec({"sh", "-c", "cat; echo cat-ended"}), /*tty=*/false);
  REQUIRE(process.ok());
  const auto chunk = (*process)->Collect(20'000, 1 << 20, cancel, nullptr);
  CHECK(chunk.exited);
  CHECK(chunk.exit_code == 0);
  CHECK(chunk.output == "cat-ended\n");
  auto sleeper = runner.Start(Spec({"sleep", "30"}), /*tty=*/false);
  REQUIRE(sleeper.ok());
  const Status written = (*sleeper)->Write("hello\n");
  CHECK(written.code() == StatusCode::kFailedPrecondition);
  CHECK(written.message() ==
        "stdin is closed for this session; rerun exec_command with tty=true to keep stdin open");
}

namespace {

// This process's children that are sandbox servers (their argv names kServerArg).
std::vector<pid_t> ChildServers() {
  std::vector<pid_t> out;
  for (const auto& process : codex::testing::Processes()) {
    if (process.parent == ::getpid() &&
        process.command_line.find(sandbox::kServerArg) != std::string::npos) {
      out.push_back(process.pid);
    }
  }
  return out;
}

}  // namespace

TEST_CASE("SandboxedRunner::Warm starts the policy's server before any command, once") {
  REQUIRE(ChildServers().empty());
  pid_t warmed = -1;
  {
    SandboxedRunner runner;
    auto spec = Spec({"sh", "-c", "echo warm"});
    runner.Warm(spec);
    runner.Warm(spec);  // once a runner
    // The server comes up with no command asked of it ...
    REQUIRE(codex::testing::Eventually([] { return ChildServers().size() == 1; }));
    warmed = ChildServers().front();
    // ... and the first command of that policy runs in it: no second start.
    CancelToken cancel;
    auto run = runner.Run(spec, cancel);
    REQUIRE(run.ok());
    CHECK(run->output == "warm\n");
    auto server = runner.ServerFor(spec);
    REQUIRE(server.ok());
    CHECK(server->server->pid() == warmed);
    CHECK(ChildServers() == std::vector<pid_t>{warmed});
  }
  // The runner's end ends (and reaps) it.
  CHECK(ChildServers().empty());
  CHECK(ProcessEnded(warmed));
  // A runner destroyed while its server starts waits for it and leaves none.
  {
    SandboxedRunner runner;
    runner.Warm(Spec({"true"}));
  }
  CHECK(ChildServers().empty());
}

TEST_CASE("Concurrent commands share one server, each confined to the turn's policy") {
  // Two tool calls of one response run at once (core/conversation.cc): both
  // go to the one server of their policy at the same time, and each stays
  // inside its sandbox. They meet halfway (each writes its file in the
  // workspace, then waits for the other's), which only two commands that
  // really run together can do; then each tries to write outside.
  if (codex::sandbox::landlock::AbiVersion() < 1) {
    codex::testing::SkipPart("Landlock is missing: concurrent confinement not tested");
    return;
  }
  SandboxedRunner runner;
  CancelToken cancel;
  TempDir outside("codex-runner-test-", NonTempBase());
  TempDir workspace("codex-runner-test-", NonTempBase());
  auto command = [&](const std::string& mine, const std::string& theirs) {
    CommandSpec spec;
    spec.argv = {"sh", "-c",
                 "touch " + mine + "; i=0; while [ ! -e " + theirs +
                     " ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done; "
                     "[ -e " +
                     theirs + " ] && echo met; echo x > " + (outside.path() / mine).string() +
                     " || echo refused"};
    spec.cwd = workspace.path().string();
    spec.sandbox.mode = SandboxMode::kWorkspaceWrite;
    spec.timeout_ms = 30'000;
    return spec;
  };
  Result<CommandResult> a = InternalError("not run");
  std::thread other([&] { a = runner.Run(command("a", "b"), cancel); });
  Result<CommandResult> b = runner.Run(command("b", "a"), cancel);
  other.join();
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(a->stdout_text == "met\nrefused\n");
  CHECK(b->stdout_text == "met\nrefused\n");
  CHECK(fs::exists(workspace.path() / "a"));
  CHECK(fs::exists(workspace.path() / "b"));
  CHECK(fs::is_empty(outside.path()));
}

TEST_CASE("A live process keeps the sandbox of the turn that started it; writes gain nothing") {
  // The user loosens the policy between turns (read-only, then
  // workspace-write): a REPL the model started under read-only keeps
  // read-only, whatever write_stdin types into it, while new commands get
  // the new policy. (A terminal needs namespaces; Landlock alone grants none.)
  if (sandbox::landlock::AbiVersion() < 1 || !sandbox::ProbeBwrap().usable) {
    codex::testing::SkipPart("needs Landlock and bubblewrap's namespaces");
    return;
  }
  codex::testing::TempDir dir("codex-runner-policy-", "/tmp");
  SandboxedRunner runner;
  CancelToken cancel;
  auto spec = Spec({"sh"});
  spec.cwd = dir.path().string();
  spec.sandbox.mode = SandboxMode::kReadOnly;
  spec.sandbox.workspace_root = dir.path().string();
  auto repl = runner.Start(spec, /*tty=*/true);
  REQUIRE(repl.ok());
  // The next turn: workspace-write; a new command may write.
  auto loose = spec;
  loose.sandbox.mode = SandboxMode::kWorkspaceWrite;
  loose.argv = {"sh", "-c", "touch by-new-command"};
  auto ran = runner.Run(loose, cancel);
  REQUIRE(ran.ok());
  CHECK(ran->exit_code == 0);
  CHECK(std::filesystem::exists(dir.path() / "by-new-command"));
  // The REPL of the first turn still cannot.
  REQUIRE((*repl)->Write("touch by-old-repl; echo status-$?\n").ok());
  std::string seen;
  for (int i = 0; i < 100 && seen.find("status-") == std::string::npos; ++i) {
    seen += (*repl)->Collect(100, 1 << 20, cancel, nullptr).output;
  }
  // (the echo of the typed line holds "status-$?"; the answer a digit)
  CHECK(std::regex_search(seen, std::regex("status-[1-9]")));
  CHECK_FALSE(std::filesystem::exists(dir.path() / "by-old-repl"));
}
