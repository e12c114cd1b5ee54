// The per-session sandbox server (sandbox_server.h), attacked as a command
// inside it and as the session outside would: its channel is out of the
// commands' reach, one session's commands cannot touch another's, its death
// is reported and does not hang a call, live processes (pipes and a
// terminal) keep their state across writes. Real bubblewrap, Landlock and
// seccomp; cases needing namespaces say so and return when bwrap cannot run.
#include "sandbox/sandbox_server.h"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "sandbox/confinement.h"
#include "sandbox/landlock.h"
#include "sandbox/launcher.h"
#include "testing/eventually.h"
#include "testing/processes.h"
#include "testing/skip.h"
#include "testing/temp_dir.h"

using codex::StatusCode;
using namespace codex::sandbox;

namespace {

bool HaveBwrap() {
  if (ProbeBwrap().usable) return true;
  WARN("skipped: bubblewrap cannot create namespaces here (" << ProbeBwrap().reason << ")");
  return false;
}

bool HaveLandlock() {
  if (landlock::AbiVersion() >= 1) return true;
  WARN("skipped: Landlock is not available on this kernel");
  return false;
}

std::shared_ptr<SandboxServer> StartServer(Mode mode) {
  SandboxSpec spec;
  spec.mode = mode;
  auto c = Confinement::Prepare(spec);
  REQUIRE(c.ok());
  auto server = SandboxServer::Start(**c);
  if (!server.ok()) FAIL(server.status().message());
  return *server;
}

ProcessResult Sh(SandboxServer& server, const std::string& script) {
  SpawnOptions options;
  options.argv = {"/bin/sh", "-c", script};
  options.timeout_ms = 20'000;
  auto r = server.Run(options);
  if (!r.ok()) FAIL(r.status().message());
  return std::move(r).value();
}

// Reads from `fd` until `needle` shows up or 10 s pass.
std::string ReadUntil(int fd, const std::string& needle) {
  std::string got;
  const auto start = std::chrono::steady_clock::now();
  while (got.find(needle) == std::string::npos &&
         std::chrono::steady_clock::now() - start < std::chrono::seconds(10)) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    char buf[4096];
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n > 0) got.append(buf, static_cast<size_t>(n));
    if (n == 0) break;
  }
  return got;
}

}  // namespace

TEST_CASE("A command holds no descriptor of the server's channel") {
  if (!HaveLandlock()) return;
  auto server = StartServer(Mode::kReadOnly);
  // Only stdin, stdout, stderr (and ls's own directory handle).
  auto fds = Sh(*server, "for f in /proc/self/fd/*; do readlink $f; done");
  CHECK(fds.stdout_text.find("socket:") == std::string::npos);
  auto count = Sh(*server, "ls /proc/self/fd | wc -l");
  CHECK(std::stoi(count.stdout_text) <= 4);
}

TEST_CASE("Commands cannot reach, kill or trace the server from inside") {
  if (!HaveBwrap()) return;
  auto server = StartServer(Mode::kReadOnly);
  // PID 1 of the namespace is the server: not dumpable, so its descriptors
  // (the channel) cannot be listed or opened.
  auto listing = Sh(*server, "ls /proc/1/fd 2>&1; cat /proc/1/environ 2>&1");
  CHECK(listing.stdout_text.find("Permission denied") != std::string::npos);
  CHECK(listing.stdout_text.find("socket") == std::string::npos);
  // Signals to PID 1 without a handler are dropped by the kernel.
  Sh(*server, "kill -9 1; kill -TERM 1; kill -USR2 1");
  CHECK(server->Alive());
  CHECK(Sh(*server, "echo still-here").stdout_text == "still-here\n");
}

TEST_CASE("Two sessions' servers cannot see or signal each other's commands") {
  if (!HaveBwrap()) return;
  auto a = StartServer(Mode::kReadOnly);
  auto b = StartServer(Mode::kReadOnly);
  SpawnOptions sleeper;
  sleeper.argv = {"sh", "-c", "sleep 60; echo codex-other-session-sleeper"};
  auto live = b->Spawn(sleeper, RemoteSpawnOptions{});
  REQUIRE(live.ok());
  auto seen =
      Sh(*a, "grep -l codex-other-session-sleepe[r] /proc/[0-9]*/cmdline 2>/dev/null | wc -l");
  CHECK(std::stoi(seen.stdout_text) == 0);
  auto own =
      Sh(*b, "grep -l codex-other-session-sleepe[r] /proc/[0-9]*/cmdline 2>/dev/null | wc -l");
  CHECK(std::stoi(own.stdout_text) >= 1);
  // Its pid in B's namespace means nothing (or something else) in A's.
  Sh(*a, "kill -9 " + std::to_string((*live)->pid()) + " 2>/dev/null");
  CHECK_FALSE((*live)->HasExited());
}

TEST_CASE("The server's death is reported, fails the running call, and is seen next time") {
  if (!HaveLandlock()) return;
  auto server = StartServer(Mode::kReadOnly);
  std::thread killer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    ::kill(server->server_pid(), SIGKILL);
  });
  SpawnOptions options;
  options.argv = {"sleep", "30"};
  options.timeout_ms = 20'000;
  auto r = server->Run(options);
  killer.join();
  // Ended by the server's death (not by its 20 s timeout, which returns a result).
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::kUnavailable);
  CHECK_THAT(r.status().message(), Catch::Contains("sandbox server stopped") &&
                                       Catch::Contains("the next command starts a new one"));
  CHECK(r.status().message().find('\n') == std::string::npos);
  CHECK_FALSE(server->Alive());
  auto next = server->Run(options);
  REQUIRE_FALSE(next.ok());
  CHECK(next.status().code() == StatusCode::kUnavailable);
}

TEST_CASE("Start errors read as RunProcess's") {
  if (!HaveLandlock()) return;
  auto server = StartServer(Mode::kReadOnly);
  SpawnOptions options;
  options.argv = {"codex-no-such-command-xyz"};
  auto r = server->Run(options);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::kNotFound);
  CHECK(r.status().message() ==
        "cannot run 'codex-no-such-command-xyz': command not found in PATH");
  options.argv = {"true"};
  options.cwd = "/nonexistent-codex-dir";
  auto cwd = server->Run(options);
  REQUIRE_FALSE(cwd.ok());
  CHECK(cwd.status().code() == StatusCode::kInvalidArgument);
  CHECK(server->Alive());
}

TEST_CASE("A live process on pipes keeps its state across writes") {
  if (!HaveLandlock()) return;
  for (Mode mode : {Mode::kReadOnly, Mode::kFullAccess}) {
    auto server = StartServer(mode);
    SpawnOptions options;
    options.argv = {"sh", "-c", "n=0; while read line; do n=$((n+1)); echo \"$n:$line\"; done"};
    RemoteSpawnOptions remote;
    remote.stdin_pipe = true;
    auto p = server->Spawn(options, remote);
    REQUIRE(p.ok());
    for (int i = 1; i <= 3; ++i) {
      const std::string line = "line" + std::to_string(i) + "\n";
      REQUIRE(::write((*p)->input_fd(), line.data(), line.size()) ==
              static_cast<ssize_t>(line.size()));
      CHECK_THAT(ReadUntil((*p)->stdout_fd(), std::to_string(i) + ":line"),
                 Catch::Contains(std::to_string(i) + ":line" + std::to_string(i)));
    }
    (*p)->CloseInput();
    auto status = (*p)->Reap();
    REQUIRE(status.ok());
    CHECK(WIFEXITED(*status));
  }
}

TEST_CASE("A terminal session: the command sees a tty, input echoes, Ctrl-C reaches it") {
  if (!HaveLandlock()) return;
  auto server = StartServer(Mode::kReadOnly);
  SpawnOptions options;
  options.argv = {"sh", "-c", "tty >/dev/null && echo is-a-tty; trap 'echo got-int' INT; cat"};
  RemoteSpawnOptions remote;
  remote.stdio = RemoteStdio::kPty;
  auto p = server->Spawn(options, remote);
  if (!p.ok()) FAIL(p.status().message());
  const std::string first = ReadUntil((*p)->pty_fd(), "is-a-tty");
  if (first.empty()) {
    (*p)->KillAll();
    auto st = (*p)->Reap();
    INFO("status " << (st.ok() ? *st : -1));
    FAIL("no output");
  }
  CHECK_THAT(first, Catch::Contains("is-a-tty"));
  REQUIRE(::write((*p)->input_fd(), "hello\n", 6) == 6);
  CHECK_THAT(ReadUntil((*p)->pty_fd(), "hello\r\nhello"), Catch::Contains("hello\r\nhello"));
  REQUIRE(::write((*p)->input_fd(), "\x03", 1) == 1);  // Ctrl-C through the line discipline
  CHECK_THAT(ReadUntil((*p)->pty_fd(), "got-int"), Catch::Contains("got-int"));
  (*p)->KillAll();
  auto status = (*p)->Reap();
  REQUIRE(status.ok());
}

namespace {

// The processes of the host whose command line holds `marker`.
size_t Mentioning(const std::string& marker) {
  return codex::testing::ProcessesMentioning(marker).size();
}

}  // namespace

TEST_CASE("A command that kills or stops its keeper leaves nothing behind, server running or not") {
  // The keeper is the command's parent and shares its Landlock domain, so a
  // command can SIGKILL or SIGSTOP it. Found: what it ran was reparented to
  // the server, which never ended it, not even at the session's end (it
  // waited for it for ever and kept the whole sandbox alive after codex).
  if (!HaveLandlock()) return;
  std::vector<bool> layer_sets = {false};
  if (ProbeBwrap().usable) {
    layer_sets.push_back(true);
  } else {
    codex::testing::SkipPart("bubblewrap cannot create namespaces here (" + ProbeBwrap().reason +
                             "); the namespace case is left out");
  }
  for (const bool namespaces : layer_sets) {
    INFO((namespaces ? "namespaces" : "without namespaces"));
    if (!namespaces) TEST_SetBwrapOverride(std::string());
    const std::string marker =
        "codex-keeper-" + std::to_string(::getpid()) + (namespaces ? "-ns" : "-ll");
    {
      auto server = StartServer(Mode::kReadOnly);
      // SIGKILL: a detached, signal-ignoring daemon, a background child and
      // the leader itself (named by `exec -a`, so the host can find them).
      SpawnOptions killer;
      killer.argv = {"/bin/bash", "-c",
                     "trap '' TERM HUP; (setsid bash -c 'trap \"\" TERM HUP; exec -a kill-" +
                         marker + "-a sleep 1000' &); (exec -a kill-" + marker +
                         "-b sleep 1001) & kill -9 $PPID; exec -a kill-" + marker +
                         "-c sleep 1002"};
      // (The keeper may die before or after it reported the start: Spawn
      // or Reap says so.)
      auto live = server->Spawn(killer, RemoteSpawnOptions{});
      codex::Status ended = live.status();
      if (live.ok()) {
        ended = (*live)->Reap().status();
        CHECK((*live)->lost());
      }
      // No exit status: said as such, never "exited with code 0".
      REQUIRE_FALSE(ended.ok());
      CHECK_THAT(ended.message(), Catch::Contains("keeper") && Catch::Contains("ended with it"));
      CHECK(ended.message().find('\n') == std::string::npos);
      // The server ends what the killed keeper left, while it keeps serving.
      CHECK(codex::testing::Eventually([&] { return Mentioning("kill-" + marker) == 0; }));
      CHECK(server->Alive());
      CHECK(Sh(*server, "echo still-serving").stdout_text == "still-serving\n");

      // SIGSTOP, once and then again after every SIGCONT: a keeper that
      // cannot act still ends its command when asked (found: the call, and
      // codex's exit, waited for ever).
      for (const std::string& stop :
           {std::string("kill -STOP $PPID; exec -a stop-") + marker + " sleep 1003",
            "k=$PPID; (exec -a stop-" + marker +
                "-loop bash -c \"while :; do kill -STOP $k; done\") & exec -a stop-" + marker +
                " sleep 1003"}) {
        SpawnOptions stopper;
        stopper.argv = {"/bin/bash", "-c", stop};
        auto stopped = server->Spawn(stopper, RemoteSpawnOptions{});
        REQUIRE(stopped.ok());
        REQUIRE(codex::testing::Eventually([&] {
          for (const auto& p : codex::testing::ProcessesMentioning("stop-" + marker)) {
            if (p.command_line.find("sleep") == 0 || p.command_line.find("stop-") == 0) {
              return true;
            }
          }
          return false;
        }));
        (*stopped)->KillAll();
        (void)(*stopped)->Reap();  // returns: an exit status, or the keeper's loss
        CHECK(codex::testing::Eventually([&] { return Mentioning("stop-" + marker) == 0; }));
        CHECK(server->Alive());
      }

      // And once more, left running when the session ends.
      SpawnOptions last = killer;
      last.argv[2] = "(exec -a end-" + marker + " sleep 1004) & kill -9 $PPID; exec -a end-" +
                     marker + "-b sleep 1005";
      auto left = server->Spawn(last, RemoteSpawnOptions{});
      if (left.ok()) {
        REQUIRE(codex::testing::Eventually([&] { return (*left)->HasExited(); }));
        left->reset();
      }
      server.reset();  // the session's end
    }
    CHECK(codex::testing::Eventually([&] { return Mentioning("end-" + marker) == 0; }));
    if (!namespaces) TEST_SetBwrapOverride(std::nullopt);
  }
}
