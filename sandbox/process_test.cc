#include "sandbox/process.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "sandbox/host_path.h"
#include "testing/files.h"
#include "testing/temp_dir.h"

using codex::StatusCode;
using namespace codex::sandbox;
namespace fs = std::filesystem;

namespace {

using codex::testing::TempDir;

SpawnOptions Sh(const std::string& script) {
  SpawnOptions options;
  options.argv = {"/bin/sh", "-c", script};
  return options;
}

using codex::testing::ReadFile;

// Waits (bounded) until `path` holds a line, then returns the pid in it.
pid_t WaitForPidFile(const fs::path& path) {
  for (int i = 0; i < 500; ++i) {
    std::string text = ReadFile(path);
    if (!text.empty() && text.back() == '\n') return static_cast<pid_t>(std::stol(text));
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  FAIL("no pid written to " << path);
  return -1;
}

// A process is gone when it no longer exists or is a zombie awaiting its reaper.
bool IsGone(pid_t pid) {
  for (int i = 0; i < 200; ++i) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    if (!stat) return true;
    std::string line;
    std::getline(stat, line);
    size_t paren = line.rfind(')');
    if (paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] == 'Z') {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

}  // namespace

TEST_CASE("RunProcess captures stdout, stderr and the exit code") {
  auto r = RunProcess(Sh("printf out; printf err >&2; exit 3"));
  REQUIRE(r.ok());
  CHECK(r->exit_code == 3);
  CHECK(r->signal == 0);
  CHECK_FALSE(r->timed_out);
  CHECK(r->stdout_text == "out");
  CHECK(r->stderr_text == "err");
  CHECK(r->output.size() == 6);
  CHECK(r->output.find("out") != std::string::npos);
  CHECK(r->output.find("err") != std::string::npos);
}

TEST_CASE("RunProcess interleaves stdout and stderr in arrival order") {
  auto r = RunProcess(Sh("echo a; sleep 0.2; echo b >&2; sleep 0.2; echo c"));
  REQUIRE(r.ok());
  CHECK(r->output == "a\nb\nc\n");
  CHECK(r->stdout_text == "a\nc\n");
  CHECK(r->stderr_text == "b\n");
}

TEST_CASE("RunProcess hands output to on_output as it arrives, all of it, in order") {
  // The first line is seen while the command still runs (it waits for a
  // file the callback creates), and every byte arrives even past the cap.
  TempDir dir;
  const std::string flag = (dir.path() / "seen").string();
  SpawnOptions options = Sh("echo first; while [ ! -e '" + flag +
                            "' ]; do sleep 0.05; done; head -c 300000 /dev/zero | tr '\\0' x; "
                            "echo; echo last >&2");
  options.output_cap_bytes = 1000;
  options.timeout_ms = 60'000;
  std::string streamed;
  options.on_output = [&](std::string_view chunk) {
    streamed.append(chunk);
    if (streamed.find("first\n") != std::string::npos) std::ofstream(flag).put('1');
  };
  auto r = RunProcess(options);
  REQUIRE(r.ok());
  CHECK(r->exit_code == 0);
  CHECK(streamed == "first\n" + std::string(300000, 'x') + "\nlast\n");
  // The capture is the same head + tail as without the callback.
  CHECK(r->output.size() == 1000);
  CHECK(r->output.substr(0, 6) == "first\n");
  CHECK(r->output_dropped == static_cast<int64_t>(streamed.size()) - 1000);
}

TEST_CASE("a cancelled RunProcess has handed out what the command printed before") {
  SpawnOptions options = Sh("echo before-cancel; sleep 60");
  std::string streamed;
  options.on_output = [&](std::string_view chunk) { streamed.append(chunk); };
  options.should_cancel = [&] { return streamed.find("before-cancel") != std::string::npos; };
  auto r = RunProcess(options);
  REQUIRE(!r.ok());
  CHECK(r.status().code() == StatusCode::kCancelled);
  CHECK(streamed == "before-cancel\n");
}

TEST_CASE("RunProcess runs argv without a shell") {
  SpawnOptions options;
  options.argv = {"echo", "$HOME", "a b", "*"};
  auto r = RunProcess(options);
  REQUIRE(r.ok());
  CHECK(r->stdout_text == "$HOME a b *\n");
}

TEST_CASE("RunProcess gives the child /dev/null as stdin") {
  SpawnOptions options;
  options.argv = {"cat"};
  options.timeout_ms = 5000;
  auto r = RunProcess(options);
  REQUIRE(r.ok());
  CHECK_FALSE(r->timed_out);
  CHECK(r->exit_code == 0);
  CHECK(r->output.empty());
}

TEST_CASE("RunProcess runs in the requested working directory") {
  TempDir dir;
  SpawnOptions options;
  options.argv = {"pwd", "-P"};
  options.cwd = dir.path().string();
  auto r = RunProcess(options);
  REQUIRE(r.ok());
  CHECK(r->stdout_text == fs::canonical(dir.path()).string() + "\n");
}

TEST_CASE("RunProcess refuses what it cannot start, in one line naming it") {
  TempDir dir;
  const fs::path not_executable = dir.path() / "data.txt";
  std::ofstream(not_executable) << "hello\n";
  struct Row {
    std::string what;
    std::vector<std::string> argv;
    std::string cwd;
    StatusCode code;
    std::string message;      // the whole message; "" = not asserted
    std::string message_has;  // a part of it; "" = not asserted
  };
  const std::vector<Row> rows = {
      {"a missing working directory",
       {"true"},
       "/nonexistent/codex-dir",
       StatusCode::kInvalidArgument,
       "",
       "/nonexistent/codex-dir"},
      {"a program not in PATH",
       {"codex-no-such-program-xyz", "arg"},
       "",
       StatusCode::kNotFound,
       "cannot run 'codex-no-such-program-xyz': command not found in PATH",
       ""},
      {"a missing program by path",
       {"/nonexistent/prog"},
       "",
       StatusCode::kNotFound,
       "",
       "'/nonexistent/prog'"},
      {"a file that is not executable",
       {not_executable.string()},
       "",
       StatusCode::kPermissionDenied,
       "",
       not_executable.string()},
      {"an empty argv", {}, "", StatusCode::kInvalidArgument, "", ""},
  };
  for (const Row& row : rows) {
    INFO(row.what);
    SpawnOptions options;
    options.argv = row.argv;
    options.cwd = row.cwd;
    auto r = RunProcess(options);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == row.code);
    if (!row.message.empty()) CHECK(r.status().message() == row.message);
    if (!row.message_has.empty()) {
      CHECK(r.status().message().find(row.message_has) != std::string::npos);
    }
    CHECK_FALSE(r.status().message().empty());
    CHECK(r.status().message().find('\n') == std::string::npos);
  }
}

TEST_CASE("RunProcess looks the program up in the overridden PATH") {
  TempDir dir;
  fs::path tool = dir.path() / "codex-test-tool";
  std::ofstream(tool) << "#!/bin/sh\necho tool-ran \"$@\"\n";
  fs::permissions(tool, fs::perms::owner_all);
  SpawnOptions options;
  options.argv = {"codex-test-tool", "x"};
  options.env.overrides["PATH"] = dir.path().string() + ":/usr/bin:/bin";
  auto r = RunProcess(options);
  REQUIRE(r.ok());
  CHECK(r->stdout_text == "tool-ran x\n");
}

TEST_CASE("RunProcess applies the environment policy") {
  ::setenv("CODEX_TEST_API_KEY", "sk-secret", 1);
  ::setenv("CODEX_TEST_PLAIN", "visible", 1);
  auto options = Sh("echo ${CODEX_TEST_API_KEY-unset} $CODEX_TEST_PLAIN $EXTRA");
  options.env.overrides["EXTRA"] = "added";
  auto r = RunProcess(options);
  REQUIRE(r.ok());
  CHECK(r->stdout_text == "unset visible added\n");

  options.env.secrets = SecretFilter::kKeep;
  auto kept = RunProcess(options);
  REQUIRE(kept.ok());
  CHECK(kept->stdout_text == "sk-secret visible added\n");
  ::unsetenv("CODEX_TEST_API_KEY");
  ::unsetenv("CODEX_TEST_PLAIN");
}

TEST_CASE("RunProcess reports death by signal as 128+N") {
  auto r = RunProcess(Sh("kill -KILL $$"));
  REQUIRE(r.ok());
  CHECK(r->signal == SIGKILL);
  CHECK(r->exit_code == 128 + SIGKILL);
  CHECK_FALSE(r->timed_out);
}

TEST_CASE("RunProcess starts the command with default signal dispositions") {
  ::signal(SIGTERM, SIG_IGN);
  auto r = RunProcess(Sh("kill -TERM $$; echo survived"));
  ::signal(SIGTERM, SIG_DFL);
  REQUIRE(r.ok());
  CHECK(r->signal == SIGTERM);
  CHECK(r->exit_code == 128 + SIGTERM);
  CHECK(r->stdout_text.empty());
}

TEST_CASE("A timeout kills the whole process group and exits 124") {
  TempDir dir;
  fs::path pid_file = dir.path() / "pid";
  auto options = Sh("sleep 60 & echo $! > '" + pid_file.string() + "'; echo started; wait");
  options.timeout_ms = 300;
  auto r = RunProcess(options);
  REQUIRE(r.ok());
  CHECK(r->timed_out);
  CHECK(r->exit_code == kTimeoutExitCode);
  CHECK(r->signal == SIGTERM);
  CHECK(r->stdout_text == "started\n");
  CHECK(IsGone(WaitForPidFile(pid_file)));
}

TEST_CASE("A timeout escalates to SIGKILL when SIGTERM is ignored") {
  auto options = Sh("trap '' TERM; echo ready; while :; do sleep 0.05; done");
  options.timeout_ms = 200;
  options.kill_grace_ms = 300;
  auto r = RunProcess(options);
  REQUIRE(r.ok());
  CHECK(r->timed_out);
  CHECK(r->exit_code == kTimeoutExitCode);
  CHECK(r->signal == SIGKILL);
  CHECK(r->stdout_text == "ready\n");
}

TEST_CASE("Output beyond the cap is counted as dropped while draining continues") {
  auto r = RunProcess(Sh("head -c 3000000 /dev/zero; echo done >&2"));
  REQUIRE(r.ok());
  CHECK(r->exit_code == 0);
  CHECK(r->stdout_text.size() == kDefaultOutputCapBytes);
  CHECK(r->stdout_dropped == 3000000 - static_cast<int64_t>(kDefaultOutputCapBytes));
  CHECK(r->stderr_text == "done\n");
  CHECK(r->output.size() == kDefaultOutputCapBytes);
  CHECK(r->output_dropped == 3000000 + 5 - static_cast<int64_t>(kDefaultOutputCapBytes));
  // The kept text ends with what was written last, not inside the first MiB.
  CHECK(r->output.ends_with("done\n"));
  CHECK(r->output_gap_offset == kDefaultOutputCapBytes / 2);

  auto small = Sh("printf 0123456789");
  small.output_cap_bytes = 4;
  auto s = RunProcess(small);
  REQUIRE(s.ok());
  CHECK(s->stdout_text == "0189");  // head "01", tail "89"
  CHECK(s->stdout_dropped == 6);
  CHECK(s->output_gap_offset == 2);

  // Far more output than the cap, in lines: the last line is kept and the
  // lines left out are counted.
  auto lines = RunProcess(Sh("seq 1 500000; echo ERROR-LINE"));
  REQUIRE(lines.ok());
  CHECK(lines->output.ends_with("499999\n500000\nERROR-LINE\n"));
  CHECK(lines->output.starts_with("1\n2\n"));
  CHECK(lines->output_dropped_lines > 0);
}

// Runs `options` and cancels it once the command has written a pid to
// `pid_file`; returns what RunProcess returned.
namespace {
codex::Result<ProcessResult> RunCancelledOnPidFile(SpawnOptions options, const fs::path& pid_file) {
  std::atomic<bool> cancel{false};
  options.timeout_ms = 60'000;
  options.should_cancel = [&] { return cancel.load(); };
  std::thread canceller([&] {
    WaitForPidFile(pid_file);
    cancel = true;
  });
  auto r = RunProcess(options);
  canceller.join();
  return r;
}
}  // namespace

TEST_CASE("Cancellation kills the group and returns promptly") {
  TempDir dir;
  fs::path pid_file = dir.path() / "pid";
  auto r =
      RunCancelledOnPidFile(Sh("sleep 60 & echo $! > '" + pid_file.string() + "'; wait"), pid_file);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::kCancelled);
  CHECK(IsGone(WaitForPidFile(pid_file)));
}

TEST_CASE("A cancel sends SIGTERM first: the command's EXIT trap runs (a lock it holds is freed)") {
  // A login script killed mid-way with SIGKILL leaves its lock file behind
  // (pyenv's rehash lock stalled every later login shell for a minute).
  TempDir dir;
  const fs::path lock = dir.path() / "lock";
  const fs::path pid_file = dir.path() / "pid";
  SpawnOptions options;  // bash: dash runs no EXIT trap on a signal
  options.argv = {"/bin/bash", "-c",
                  "echo > '" + lock.string() + "'; trap \"rm -f '" + lock.string() +
                      "'\" EXIT; sleep 60 & echo $! > '" + pid_file.string() + "'; wait"};
  auto r = RunCancelledOnPidFile(options, pid_file);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::kCancelled);
  CHECK_FALSE(fs::exists(lock));
  CHECK(IsGone(WaitForPidFile(pid_file)));

  // One that ignores SIGTERM is still killed, and the cancel still returns.
  const fs::path pid2 = dir.path() / "pid2";
  auto r2 = RunCancelledOnPidFile(
      Sh("trap '' TERM; echo $$ > '" + pid2.string() + "'; while :; do sleep 0.05; done"), pid2);
  REQUIRE_FALSE(r2.ok());
  CHECK(r2.status().code() == StatusCode::kCancelled);
  CHECK(IsGone(WaitForPidFile(pid2)));
}

TEST_CASE("A background child holding the pipes does not keep the run alive") {
  TempDir dir;
  fs::path pid_file = dir.path() / "pid";
  auto options = Sh("sleep 60 & echo $! > '" + pid_file.string() + "'; echo started");
  options.timeout_ms = 60'000;
  auto r = RunProcess(options);
  REQUIRE(r.ok());
  CHECK_FALSE(r->timed_out);
  CHECK(r->exit_code == 0);
  CHECK(r->stdout_text == "started\n");
  CHECK(IsGone(WaitForPidFile(pid_file)));
}

TEST_CASE("Destroying a ChildProcess kills its group") {
  TempDir dir;
  fs::path pid_file = dir.path() / "pid";
  pid_t grandchild = -1;
  {
    auto child = ChildProcess::Spawn(Sh("sleep 60 & echo $! > '" + pid_file.string() + "'; wait"));
    REQUIRE(child.ok());
    grandchild = WaitForPidFile(pid_file);
    CHECK_FALSE(child->HasExited());
  }
  CHECK(IsGone(grandchild));
}

TEST_CASE("ExecCandidates follows execvp's PATH rules") {
  CHECK(ExecCandidates("./x", "/a:/b") == std::vector<std::string>{"./x"});
  CHECK(ExecCandidates("/bin/ls", "/a") == std::vector<std::string>{"/bin/ls"});
  CHECK(ExecCandidates("ls", "/a:/b") == std::vector<std::string>{"/a/ls", "/b/ls"});
  CHECK(ExecCandidates("ls", "/a::/b:") ==
        std::vector<std::string>{"/a/ls", "./ls", "/b/ls", "./ls"});
}

TEST_CASE("Host programs are found in PATH entries no sandboxed command can write") {
  CHECK(HostSearchPath("/a::b:.:/c:", {}) == "/a:/c");
  CHECK(HostSearchPath(".:bin:", {}).empty());
  CHECK(HostSearchPath(nullptr, {}) == "/usr/bin:/bin");
  // A program planted in a relative entry (the working directory, a
  // workspace's bin/), or in an absolute entry inside a writable root (a
  // virtualenv's bin, even one not made yet), is never chosen, even ahead of
  // the real one; a directory or a file without x is skipped too.
  TempDir dir("codex-host-path-");
  const auto cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir.path());
  for (const char* d : {"rel", "abs", "dir/prog", "noexec", "ws/.venv/bin"}) {
    std::filesystem::create_directories(d);
  }
  for (const char* f : {"prog", "rel/prog", "abs/prog", "noexec/prog", "ws/.venv/bin/prog"}) {
    std::ofstream(f) << "#!/bin/sh\n";
  }
  for (const char* f : {"prog", "rel/prog", "abs/prog", "ws/.venv/bin/prog"}) ::chmod(f, 0755);
  const std::string root = std::filesystem::canonical(dir.path()).string();
  const std::string abs = root + "/abs";
  const std::string venv = root + "/ws/.venv/bin";
  const std::string path = ".::rel:" + venv + ":" + root + "/dir:" + root + "/noexec:" + abs;
  const std::vector<std::string> ws = {root + "/ws"};
  CHECK(FindHostProgram("prog", path.c_str(), ws) == abs + "/prog");
  CHECK(FindHostProgram("prog", path.c_str(), {}) == venv + "/prog");
  CHECK(FindHostProgram("prog", ".:rel", {}) == "");
  CHECK(FindHostProgram("abs/prog", path.c_str(), {}) == "");
  // Through a symlink into the root, and an entry not made yet.
  std::filesystem::create_directory_symlink(root + "/ws/.venv", root + "/link");
  const std::string later = root + "/ws/later/bin";
  CHECK(HostSearchPath((root + "/link/bin:" + later + ":" + abs).c_str(), ws) == abs);
  std::filesystem::current_path(cwd);
}

TEST_CASE("ModelWritableRoots: the policy's roots, or every root it could have when refused") {
  TempDir dir("codex-host-roots-");
  const std::string ws = std::filesystem::canonical(dir.path()).string();
  WritableRootsSpec spec;
  spec.workspace = ws;
  spec.exclude_slash_tmp = true;
  const auto roots = ModelWritableRoots(spec);
  CHECK(std::find(roots.begin(), roots.end(), ws) != roots.end());
  // A .git the model pointed at /proc: the policy refuses to be computed;
  // the lookups still skip the workspace and /tmp (excluded or not).
  std::filesystem::create_directory_symlink("/proc", dir.path() / ".git");
  REQUIRE_FALSE(WorkspacePolicy::Compute(spec).ok());
  const auto refused = ModelWritableRoots(spec);
  CHECK(std::find(refused.begin(), refused.end(), ws) != refused.end());
  CHECK(std::find(refused.begin(), refused.end(), "/tmp") != refused.end());
}
