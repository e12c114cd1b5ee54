#include "core/shell_snapshot.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/sandboxed_runner.h"
#include "testing/files.h"
#include "testing/scoped_env.h"
#include "testing/temp_dir.h"

namespace codex::core {
namespace {

using testing::ReadFile;
using testing::ScopedEnv;
using testing::TempDir;
using testing::WriteFile;

// A home whose ~/.profile exports a variable, defines a function and an
// alias, changes directory, and counts its runs in ~/counter.
void WriteProfile(const std::filesystem::path& home, const std::string& extra = "") {
  WriteFile(home / ".profile",
            "echo profile-ran >> \"$HOME/counter\"\n"
            "echo noise from the profile\n"
            "export SNAP_VAR='two words'\"\n\"'and a newline'\n"
            "snap_fn() { echo \"fn:$1\"; }\n"
            "alias snap_alias='echo aliased'\n"
            "unset SNAP_GONE\n"
            "cd /\n" +
                extra);
}

int Runs(const std::filesystem::path& home) {
  const std::string text = ReadFile(home / "counter");
  return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

// A $HOME whose profile counts its runs (Runs) and then waits for
// `release`, a file only the test creates: a capture of it cannot end
// before the test lets it.
void WriteBlockingProfile(const std::filesystem::path& home) {
  std::filesystem::create_directories(home);
  WriteFile(home / ".profile",
            "echo run >> \"$HOME/counter\"\n"
            "for i in $(seq 1000); do [ -e \"$HOME/release\" ] && break; sleep 0.01; done\n"
            "snap_fn() { echo \"fn:$1\"; }\n");
}

CommandSpec Unconfined(std::vector<std::string> argv, const std::string& cwd) {
  CommandSpec spec;
  spec.argv = std::move(argv);
  spec.cwd = cwd;
  spec.sandbox.mode = SandboxMode::kDangerFullAccess;
  return spec;
}

constexpr const char* kNonce = "codex-snapshot-test";

// What the real capture (a login bash in `home`) prints on stdout.
std::string CaptureOutput(const TempDir& home) {
  SandboxedRunner runner;
  auto result =
      runner.Run(Unconfined(ShellSnapshotCaptureArgv("/bin/bash", kNonce), home.path().string()),
                 CancelToken());
  REQUIRE(result.ok());
  INFO(result->output);
  REQUIRE(result->exit_code == 0);
  return result->stdout_text;
}

}  // namespace

TEST_CASE("IsLoginBashScript: only [.../bash, -lc, SCRIPT]") {
  CHECK(IsLoginBashScript({"bash", "-lc", "ls"}));
  CHECK(IsLoginBashScript({"/usr/bin/bash", "-lc", ""}));
  CHECK_FALSE(IsLoginBashScript({"bash", "-c", "ls"}));
  CHECK_FALSE(IsLoginBashScript({"zsh", "-lc", "ls"}));
  CHECK_FALSE(IsLoginBashScript({"sh", "-lc", "ls"}));
  CHECK_FALSE(IsLoginBashScript({"/opt/mybash", "-lc", "ls"}));
  CHECK_FALSE(IsLoginBashScript({"bash", "-lc", "ls", "extra"}));
  CHECK_FALSE(IsLoginBashScript({"bash", "-cl", "ls"}));
  CHECK_FALSE(IsLoginBashScript({"ls", "-lc"}));
}

TEST_CASE("ApplyShellSnapshot: -lc becomes -c, the script is untouched, BASH_ENV names the file") {
  CommandSpec spec;
  spec.argv = {"/bin/bash", "-lc", "echo 'it''s' && cd /tmp"};
  spec.env_overrides["KEEP"] = "1";
  ApplyShellSnapshot("/home/u/.codex/shell_snapshots/1.2.ab.sh", spec);
  CHECK(spec.argv == std::vector<std::string>{"/bin/bash", "-c", "echo 'it''s' && cd /tmp"});
  CHECK(spec.env_overrides.at("BASH_ENV") == "/home/u/.codex/shell_snapshots/1.2.ab.sh");
  CHECK(spec.env_overrides.at("KEEP") == "1");
}

TEST_CASE("RenderShellSnapshot from a real login bash: what the profile left, nothing else") {
  TempDir home;
  WriteProfile(home.path(), "export PATH=\"$HOME/bin:$PATH\"\n");
  ScopedEnv set_home("HOME", home.path().string());
  ScopedEnv gone("SNAP_GONE", "was here");
  ScopedEnv unchanged("SNAP_UNCHANGED", "same");
  auto text = RenderShellSnapshot(CaptureOutput(home), kNonce);
  REQUIRE(text.ok());
  INFO(*text);
  // What the profile did.
  CHECK_THAT(*text, Catch::Contains("export SNAP_VAR=$'two words\\nand a newline'\n"));
  CHECK_THAT(*text, Catch::Contains("snap_fn ()"));
  CHECK_THAT(*text, Catch::Contains("alias snap_alias='echo aliased'"));
  CHECK_THAT(*text, Catch::Contains("unset SNAP_GONE\n"));
  CHECK_THAT(*text, Catch::Contains("export PATH=" + home.path().string() + "/bin:"));
  // Never: cwd, nesting, `_`, what the profile left alone, read-only options,
  // nor anything the profile printed.
  for (const char* absent : {"PWD=", "OLDPWD", "SHLVL", "export _=", "SNAP_UNCHANGED",
                             "login_shell", "restricted_shell", "noise from the profile"}) {
    CHECK(text->find(absent) == std::string::npos);
  }
  CHECK(text->rfind("# Shell snapshot", 0) == 0);
  CHECK_THAT(*text, Catch::Contains("\nunset BASH_ENV\n"));

  // Sourced through BASH_ENV by a non-login bash -c in another directory:
  // the state is there, the profile does not run, cwd is the command's own,
  // and BASH_ENV is gone for what the command starts.
  WriteFile(home.path() / "snap.sh", *text);
  TempDir work;
  CommandSpec run = Unconfined(
      {"/bin/bash", "-lc",
       "printf '%s|' \"$SNAP_VAR\" \"$(snap_fn x)\" \"$PWD\" "
       "\"${BASH_ENV-unset}\" \"${SNAP_GONE-unset}\"; shopt -q login_shell || echo not-login"},
      work.path().string());
  ApplyShellSnapshot((home.path() / "snap.sh").string(), run);
  auto ran = SandboxedRunner().Run(run, CancelToken());
  REQUIRE(ran.ok());
  INFO(ran->output);
  CHECK(ran->stdout_text ==
        "two words\nand a newline|fn:x|" + work.path().string() + "|unset|unset|not-login\n");
  CHECK(ran->stderr_text.empty());
  CHECK(Runs(home.path()) == 1);  // the capture's run only
}

TEST_CASE("RenderShellSnapshot: login files that empty IFS, set -u and export a bare name") {
  // Each is legal in a user's dotfiles; none may cost a variable or the
  // capture: the names are listed one word each whatever IFS is, and a name
  // exported without a value (no variable a command inherits) is skipped,
  // not expanded under nounset. And an environment entry whose name no
  // variable can have (bash imports none) is never unset by the snapshot:
  // `unset SNAP-ODD` would print an error in every command.
  TempDir home;
  WriteFile(home.path() / ".profile",
            "export SNAP_IFS='a b'\nexport SNAP_BARE\nlower_snap=1; export lower_snap\n"
            "IFS=\nset -u\n");
  ScopedEnv set_home("HOME", home.path().string());
  ScopedEnv inherited("SNAP_INHERITED", "x y");
  ScopedEnv odd("SNAP-ODD", "1");
  auto text = RenderShellSnapshot(CaptureOutput(home), kNonce);
  REQUIRE(text.ok());
  INFO(*text);
  CHECK_THAT(*text, Catch::Contains("export SNAP_IFS=a\\ b\n"));
  CHECK_THAT(*text, Catch::Contains("export lower_snap=1\n"));
  CHECK_THAT(*text, Catch::Contains("set -o nounset\n"));
  // Inherited and left alone: not frozen, and not taken for removed either.
  CHECK(text->find("SNAP_INHERITED") == std::string::npos);
  CHECK(text->find("SNAP_BARE") == std::string::npos);
  CHECK(text->find("SNAP-ODD") == std::string::npos);
}

TEST_CASE("RenderShellSnapshot refuses a capture the login files cut short") {
  const std::string nonce = "n0";
  CHECK_FALSE(RenderShellSnapshot("", nonce).ok());
  const std::string partial =
      "n0 env-before\nx A=1\nn0 env-after\nx A=2\nn0 shopt\nn0 set\n"
      "n0 functions\nn0 aliases\n";
  CHECK_FALSE(RenderShellSnapshot(partial, nonce).ok());
  auto whole = RenderShellSnapshot(partial + "n0 end\n", nonce);
  REQUIRE(whole.ok());
  CHECK_THAT(*whole, Catch::Contains("export A=2\n"));
  // A marker with another nonce is text, not a section.
  auto forged = RenderShellSnapshot(partial + "n1 end\n", nonce);
  CHECK_FALSE(forged.ok());
  // Read-only variables are never set (bash refuses them).
  auto ro = RenderShellSnapshot(
      "n0 env-before\nn0 env-after\nrx RO=1\nx OK=1\nn0 shopt\nn0 set\nset -o errexit\n"
      "set +o xtrace\nn0 functions\nn0 aliases\nn0 end\n",
      nonce);
  REQUIRE(ro.ok());
  CHECK(ro->find("RO=") == std::string::npos);
  CHECK_THAT(*ro, Catch::Contains("export OK=1\n"));
  // Options that were on, last (errexit cannot stop the lines above).
  CHECK_THAT(*ro, Catch::EndsWith("set -o errexit\n"));
  CHECK(ro->find("xtrace") == std::string::npos);
}

TEST_CASE("RenderShellSnapshot: the shell options a profile changed hold in the command") {
  // A profile that turns options on and off, among them a compatNN level
  // (setting one clears the others) and, through the capture's text, an
  // option this bash does not know: the others must still take effect.
  TempDir home;
  WriteProfile(home.path(),
               "shopt -s extglob globstar nullglob compat42\n"
               "shopt -u sourcepath checkwinsize\n");
  ScopedEnv set_home("HOME", home.path().string());
  const std::string nonce = kNonce;
  std::string captured = CaptureOutput(home);
  const std::string shopt_mark = nonce + " shopt\n";
  const size_t at = captured.find(shopt_mark);
  REQUIRE(at != std::string::npos);
  captured.insert(at + shopt_mark.size(),
                  "shopt -s no_such_option_here\nshopt -u another_unknown\n"
                  "shopt -s bad;name\n");
  auto text = RenderShellSnapshot(captured, nonce);
  REQUIRE(text.ok());
  INFO(*text);
  CHECK(text->find("bad;name") == std::string::npos);
  // Two shopt lines at most, however many options bash has.
  size_t lines = 0;
  for (size_t p = text->find("\nshopt "); p != std::string::npos;
       p = text->find("\nshopt ", p + 1)) {
    ++lines;
  }
  CHECK(lines <= 2);

  WriteFile(home.path() / "snap.sh", *text);
  TempDir work;
  CommandSpec run = Unconfined({"/bin/bash", "-lc",
                                "shopt -p extglob globstar nullglob compat42 compat41 sourcepath "
                                "checkwinsize expand_aliases"},
                               work.path().string());
  ApplyShellSnapshot((home.path() / "snap.sh").string(), run);
  auto ran = SandboxedRunner().Run(run, CancelToken());
  REQUIRE(ran.ok());
  INFO(ran->output);
  CHECK(ran->stdout_text ==
        "shopt -s extglob\nshopt -s globstar\nshopt -s nullglob\nshopt -s compat42\n"
        "shopt -u compat41\nshopt -u sourcepath\nshopt -u checkwinsize\n"
        "shopt -u expand_aliases\n");
  CHECK(ran->stderr_text.empty());
}

// Waits (10 s at most) until the capture StartCapture began has ended:
// true when the snapshot is ready, false when it failed or did not end.
bool CaptureEnded(const ShellSnapshot& snapshot) {
  for (int i = 0; i < 1000; ++i) {
    if (snapshot.ready()) return true;
    if (!snapshot.status().ok()) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// A temporary HOME (root/home) with WriteProfile's profile, set as HOME.
struct ProfiledHome {
  ProfiledHome() : home(root.path() / "home") {
    std::filesystem::create_directories(home);
    WriteProfile(home);
    set_home.emplace("HOME", home.string());
  }
  TempDir root;
  std::filesystem::path home;
  std::optional<ScopedEnv> set_home;
};

TEST_CASE("ShellSnapshot: once the file holds the snapshot, it is ready for every command") {
  // What a command sees must not lag what is on disk: one that came once the
  // file was written, before the capture's thread had said so, ran the login
  // files again as the capture's first command does (seen under load as a
  // second run of the profile). Watched closely over many captures.
  ProfiledHome h;
  TempDir& root = h.root;
  SandboxedRunner runner;
  int lagged = 0;
  for (int i = 0; i < 60; ++i) {
    ShellSnapshot::Options options;
    options.dir = (root.path() / ("snapshots-" + std::to_string(i))).string();
    options.sandbox.mode = SandboxMode::kDangerFullAccess;
    ShellSnapshot snapshot(options, runner);
    REQUIRE_FALSE(snapshot.path().empty());
    snapshot.StartCapture("/bin/bash");
    struct stat st {};
    bool written = false;
    for (int spin = 0; spin < 20'000'000 && !written; ++spin) {
      written = ::stat(snapshot.path().c_str(), &st) == 0 && st.st_size > 0;
      if (!written && !snapshot.status().ok()) break;
    }
    REQUIRE(written);
    if (!snapshot.ready()) ++lagged;
    REQUIRE(CaptureEnded(snapshot));
  }
  CHECK(lagged == 0);
}

TEST_CASE("ShellSnapshot: captured once, used by every login bash, removed at the end") {
  ProfiledHome h;
  TempDir& root = h.root;
  const std::filesystem::path& home = h.home;
  SandboxedRunner runner;
  const std::string dir = (root.path() / "shell_snapshots").string();
  std::string path;
  {
    ShellSnapshot::Options options;
    options.dir = dir;
    options.sandbox.mode = SandboxMode::kDangerFullAccess;
    ShellSnapshot snapshot(options, runner);
    path = snapshot.path();
    REQUIRE_FALSE(path.empty());
    struct stat st;
    REQUIRE(::stat(dir.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0700);
    CHECK(std::filesystem::exists(path));  // reserved before the capture
    // SHLVL as a plain bash would have it (the snapshot does not freeze it).
    auto plain = runner.Run(Unconfined({"bash", "-c", "echo $SHLVL"}, ""), CancelToken());
    REQUIRE(plain.ok());
    // The first login command starts the capture (none was started) and
    // runs as it is; those after it start from the snapshot.
    CommandSpec first = Unconfined({"bash", "-lc", "snap_fn first"}, root.path().string());
    snapshot.Prepare(first, CancelToken());
    CHECK(first.argv[1] == "-lc");
    CHECK(first.env_overrides.count("BASH_ENV") == 0);
    REQUIRE(CaptureEnded(snapshot));
    for (int i = 0; i < 3; ++i) {
      CommandSpec spec =
          Unconfined({"bash", "-lc", "snap_fn $SHLVL; export LEAK=1; cd /"}, root.path().string());
      snapshot.Prepare(spec, CancelToken());
      CHECK(spec.argv[1] == "-c");
      auto ran = runner.Run(spec, CancelToken());
      REQUIRE(ran.ok());
      CHECK(ran->stdout_text == "fn:" + plain->stdout_text);
    }
    CHECK(snapshot.status().ok());
    CHECK(Runs(home) == 1);
    struct stat file;
    REQUIRE(::stat(path.c_str(), &file) == 0);
    CHECK((file.st_mode & 0777) == 0600);
    // Not a login bash: left alone.
    CommandSpec other = Unconfined({"zsh", "-lc", "true"}, "");
    snapshot.Prepare(other, CancelToken());
    CHECK(other.argv[1] == "-lc");
    CHECK(other.env_overrides.count("BASH_ENV") == 0);

    // Changed behind codex's back: never sourced again.
    WriteFile(path, "echo planted\n");
    CommandSpec after = Unconfined({"bash", "-lc", "true"}, "");
    snapshot.Prepare(after, CancelToken());
    CHECK(after.argv[1] == "-lc");
    CHECK(after.env_overrides.count("BASH_ENV") == 0);
    CHECK_FALSE(snapshot.status().ok());
  }
  CHECK_FALSE(std::filesystem::exists(path));
}

TEST_CASE(
    "ShellSnapshot: during the capture the first login command runs as it is, the others wait for "
    "it; a cancel stops the wait") {
  // The capture's profile waits for a file that only the test creates, and
  // counts its runs: the login files run once for the session, not once
  // more for each command that came during the capture.
  TempDir root;
  const std::filesystem::path home = root.path() / "home";
  WriteBlockingProfile(home);
  ScopedEnv set_home("HOME", home.string());
  SandboxedRunner runner;
  ShellSnapshot::Options options;
  options.dir = (root.path() / "shell_snapshots").string();
  options.sandbox.mode = SandboxMode::kDangerFullAccess;
  ShellSnapshot snapshot(options, runner);
  snapshot.StartCapture("bash");

  // The session's first login command is not delayed (as in Codex 0.169).
  CommandSpec first = Unconfined({"bash", "-lc", "snap_fn first"}, "");
  snapshot.Prepare(first, CancelToken());
  CHECK(first.argv[1] == "-lc");
  CHECK(first.env_overrides.count("BASH_ENV") == 0);
  CHECK_FALSE(snapshot.ready());

  // Esc while waiting: Prepare returns without the snapshot, the capture
  // goes on.
  CancelToken esc;
  CommandSpec interrupted = Unconfined({"bash", "-lc", "snap_fn esc"}, "");
  std::thread esc_waiter([&] { snapshot.Prepare(interrupted, esc); });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // (waiting by now, or not yet)
  esc.Cancel();
  esc_waiter.join();
  CHECK(interrupted.argv[1] == "-lc");
  CHECK_FALSE(snapshot.ready());

  // Three calls of one response arrive during the capture: each waits.
  std::vector<CommandSpec> specs;
  for (int i = 0; i < 3; ++i) specs.push_back(Unconfined({"bash", "-lc", "snap_fn during"}, ""));
  std::atomic<int> returned{0};
  std::vector<std::thread> calls;
  for (CommandSpec& spec : specs) {
    calls.emplace_back([&snapshot, &spec, &returned] {
      snapshot.Prepare(spec, CancelToken());
      ++returned;
    });
  }
  // None returns before the capture can end (it waits for `release`).
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  CHECK(returned == 0);
  CHECK_FALSE(snapshot.ready());
  WriteFile(home / "release", "");
  for (std::thread& t : calls) t.join();
  CHECK(snapshot.ready());
  for (CommandSpec& spec : specs) {
    CHECK(spec.argv[1] == "-c");
    auto ran = runner.Run(spec, CancelToken());
    REQUIRE(ran.ok());
    CHECK(ran->stdout_text == "fn:during\n");
  }
  CHECK(Runs(home) == 1);
}

TEST_CASE(
    "ShellSnapshot: the login command that starts the capture runs as it is; the next waits for "
    "it") {
  TempDir root;
  const std::filesystem::path home = root.path() / "home";
  WriteBlockingProfile(home);
  ScopedEnv set_home("HOME", home.string());
  ScopedEnv set_shell("SHELL", "/bin/bash");
  SandboxedRunner runner;
  ShellSnapshot::Options options;
  options.dir = (root.path() / "shell_snapshots").string();
  options.sandbox.mode = SandboxMode::kDangerFullAccess;
  ShellSnapshot snapshot(options, runner);
  CommandSpec first = Unconfined({"bash", "-lc", "snap_fn first"}, "");
  snapshot.Prepare(first, CancelToken());  // starts the capture
  CHECK(first.argv[1] == "-lc");
  CommandSpec second = Unconfined({"bash", "-lc", "snap_fn second"}, "");
  std::atomic<bool> returned{false};
  std::thread waiter([&] {
    snapshot.Prepare(second, CancelToken());
    returned = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  CHECK_FALSE(returned);  // the capture cannot end before `release`
  WriteFile(home / "release", "");
  waiter.join();
  CHECK(second.argv[1] == "-c");
  CHECK(Runs(home) == 1);
}

TEST_CASE("ShellSnapshot: a profile that fails or hangs leaves plain -lc") {
  TempDir root;
  const std::filesystem::path home = root.path() / "home";
  std::filesystem::create_directories(home);
  ScopedEnv set_home("HOME", home.string());
  SandboxedRunner runner;
  for (const std::string& profile : {std::string("exit 3\n"), std::string("sleep 30\n")}) {
    WriteFile(home / ".profile", profile);
    ShellSnapshot::Options options;
    options.dir = (root.path() / "shell_snapshots").string();
    options.sandbox.mode = SandboxMode::kDangerFullAccess;
    options.timeout_ms = 500;
    ShellSnapshot snapshot(options, runner);
    snapshot.StartCapture("bash");
    CHECK_FALSE(CaptureEnded(snapshot));
    CommandSpec spec = Unconfined({"bash", "-lc", "echo hi"}, "");
    snapshot.Prepare(spec, CancelToken());
    INFO(profile);
    CHECK(spec.argv[1] == "-lc");
    CHECK(spec.env_overrides.count("BASH_ENV") == 0);
    CHECK_FALSE(snapshot.status().ok());
  }
}

TEST_CASE("RemoveStaleShellSnapshots: gone processes' files, old foreign ones") {
  TempDir dir;
  const auto p = [&](const std::string& name) { return dir.path() / name; };
  // A process that has exited: its pid no longer runs (or runs another).
  pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  int status = 0;
  ::waitpid(child, &status, 0);
  const std::string dead = std::to_string(child) + ".12345.ab.sh";
  WriteFile(p(dead), "x");
  WriteFile(p(dead + ".tmp"), "x");
  ShellSnapshot::Options options;
  options.dir = dir.path().string();
  options.sandbox.mode = SandboxMode::kDangerFullAccess;
  SandboxedRunner runner;
  // Codex's own names: kept while young, removed after 7 days.
  WriteFile(p("0199aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee.123.sh"), "x");
  WriteFile(p("old-foreign.sh"), "x");
  const auto old = std::filesystem::file_time_type::clock::now() - std::chrono::hours(24 * 8);
  std::filesystem::last_write_time(p("old-foreign.sh"), old);
  ShellSnapshot snapshot(options, runner);  // cleans at construction
  CHECK_FALSE(std::filesystem::exists(p(dead)));
  CHECK_FALSE(std::filesystem::exists(p(dead + ".tmp")));
  CHECK(std::filesystem::exists(snapshot.path()));
  CHECK(std::filesystem::exists(p("0199aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee.123.sh")));
  CHECK_FALSE(std::filesystem::exists(p("old-foreign.sh")));
  // A second codex process's cleanup keeps a live one's file.
  RemoveStaleShellSnapshots(dir.path().string());
  CHECK(std::filesystem::exists(snapshot.path()));
}

}  // namespace codex::core
