// Shell snapshot end to end (core/shell_snapshot.h): the real `codex exec`
// against the scripted server, with a HOME whose ~/.profile exports a
// variable, defines a function and an alias, changes directory and counts its
// runs. In one session the profile runs once (the capture), every login
// command sees its state, none sees what an earlier call changed, the model
// and `--json` still see `bash -lc`, a sandboxed command cannot change the
// snapshot, and the file is gone when codex ends. With the feature off the
// profile runs at every call; a profile that fails or hangs at the capture
// leaves plain `-lc` with nothing shown to the user.
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "sandbox/landlock.h"
#include "sandbox/launcher.h"
#include "testing/files.h"
#include "testing/processes.h"
#include "testing/temp_dir.h"
#include "tests/e2e_checks.h"
#include "tests/e2e_support.h"

namespace codex::testing {
namespace {

using e2e::CompletedItems;
using e2e::MakeEnv;
using e2e::ModelOutput;
using e2e::RunChecked;

bool HaveLandlock() {
  if (sandbox::landlock::AbiVersion() >= 1) return true;
  WARN("skipped: Landlock is not available on this kernel");
  return false;
}

constexpr const char* kProfile =
    "echo ran >> \"$HOME/counter\"\n"
    "export SNAP_VAR='from the profile'\n"
    "snap_fn() { echo \"snap_fn:$1\"; }\n"
    "alias snap_alias='echo aliased'\n"
    "cd /\n";

std::filesystem::path MakeHome(CodexTestEnv& env, const std::string& profile) {
  const std::filesystem::path home = env.root() / "home";
  std::filesystem::create_directories(home);
  WriteFile(home / ".profile", profile);
  return home;
}

int ProfileRuns(const std::filesystem::path& home) {
  if (!std::filesystem::exists(home / "counter")) return 0;
  const std::string text = ReadFile(home / "counter");
  return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

// `codex exec --json --sandbox workspace-write ARGS... PROMPT` with HOME and SHELL set.
ProcessResult RunExec(CodexTestEnv& env, const std::filesystem::path& home,
                      std::vector<std::string> extra) {
  std::vector<std::string> args = {"exec", "--json", "--sandbox", "workspace-write",
                                   "--skip-git-repo-check"};
  args.insert(args.end(), extra.begin(), extra.end());
  args.push_back("go");
  ProcessOptions p = env.CodexCommand(args);
  p.env["HOME"] = home.string();
  p.env["SHELL"] = "/bin/bash";
  p.unset_env.push_back("RUST_LOG");
  p.unset_env.push_back("BASH_ENV");
  return RunChecked(p);
}

std::string Output(CodexTestEnv& env, const std::string& call_id) {
  const std::string text = ModelOutput(env, call_id);
  const size_t at = text.find("\nOutput:\n");
  return at == std::string::npos ? "<no output in: " + text + ">" : text.substr(at + 9);
}

std::string Call(const std::string& id, const std::string& cmd) {
  return R"({"output": [{"function_call": "exec_command", "call_id": ")" + id +
         R"(", "arguments": {"cmd": )" + Json(cmd).dump() + "}}]}";
}

// `call` (a Call) answered only once the session's snapshot is written (a
// login command that comes before would wait for the capture). The script names the snapshots
// through a link in `home` (LinkSnapshots), made once the environment, and
// with it CODEX_HOME, exists.
std::string AfterCapture(const std::filesystem::path& home, const std::string& call) {
  return call.substr(0, call.size() - 1) +
         ", \"wait_for_file\": " + Json((home / "snapshots" / "*.sh").string()).dump() + "}";
}

void LinkSnapshots(CodexTestEnv& env, const std::filesystem::path& home) {
  std::filesystem::create_directory_symlink(env.codex_home() / "shell_snapshots",
                                            home / "snapshots");
}

std::vector<std::filesystem::path> Snapshots(const std::filesystem::path& codex_home) {
  std::vector<std::filesystem::path> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(codex_home / "shell_snapshots", ec)) {
    out.push_back(e.path());
  }
  return out;
}

}  // namespace

TEST_CASE("shell snapshot: captured at session start, once, in the server its commands use") {
  if (!HaveLandlock()) return;
  // The model's first answer comes only once the snapshot is written: the
  // capture started with the session, beside the first request, not at the
  // first command (which would never come). The profile notes its PID
  // namespace (the sandbox server's).
  TempDir home_dir("codex-snapshot-home-");
  const std::filesystem::path home = home_dir.path();
  WriteFile(home / ".profile",
            std::string(kProfile) + "readlink /proc/self/ns/pid > \"$HOME/capture_ns\"\n");
  auto env =
      MakeEnv("{\"responses\": [" +
                  AfterCapture(home, Call("n1", "readlink /proc/self/ns/pid; snap_fn one")) + "," +
                  Call("n2", "readlink /proc/self/ns/pid; snap_fn two") + ", \"done\"]}",
              "");
  LinkSnapshots(*env, home);
  ProcessResult run = RunExec(*env, home, {});
  INFO("stderr: " << run.err);
  REQUIRE(run.exit_code == 0);
  const std::string n1 = Output(*env, "n1");
  const std::string n2 = Output(*env, "n2");
  INFO("n1: " << n1 << "\nn2: " << n2);
  CHECK_THAT(n1, Catch::EndsWith("\nsnap_fn:one\n"));
  CHECK_THAT(n2, Catch::EndsWith("\nsnap_fn:two\n"));
  CHECK(ProfileRuns(home) == 1);
  if (sandbox::ProbeBwrap().usable) {
    // One bubblewrap start a session: the capture and both commands ran in
    // the one server's PID namespace.
    const std::string ns = ReadFile(home / "capture_ns");
    CHECK(n1 == ns + "snap_fn:one\n");
    CHECK(n2 == ns + "snap_fn:two\n");
  } else {
    WARN("no namespaces here (" + sandbox::ProbeBwrap().reason +
         "): not checking that the capture and the commands share one server");
  }
  CHECK(Snapshots(env->codex_home()).empty());
}

TEST_CASE(
    "shell snapshot: during the capture the first login command runs as it is, the others wait "
    "for it") {
  if (!HaveLandlock()) return;
  // The capture's run of the profile (the first) marks that it runs, then
  // takes a second (a slow dotfile). The first response, two calls, is
  // answered only once the mark exists, so both come while the capture
  // runs: one runs as the plain login shell it is (the session's first
  // login command is not delayed, as in Codex 0.169), the other waits for
  // the capture and starts from the snapshot (Codex 0.169 runs both as
  // login shells: the profile runs three times).
  TempDir home_dir("codex-snapshot-home-");
  const std::filesystem::path home = home_dir.path();
  WriteFile(home / ".profile", std::string("if [ ! -e \"$HOME/first\" ]; then : > \"$HOME/first\"; "
                                           ": > \"$HOME/capturing\"; sleep 1; fi\n") +
                                   kProfile);
  const std::string login = "shopt -q login_shell && echo login || echo not-login";
  const auto call = [](const std::string& id, const std::string& cmd) {
    return R"({"function_call": "exec_command", "call_id": ")" + id +
           R"(", "arguments": {"cmd": )" + Json(cmd).dump() + "}}";
  };
  const std::string during = R"({"output": [)" + call("a", login + "; snap_fn a") + "," +
                             call("b", login + "; snap_fn b") + R"(], "wait_for_file": )" +
                             Json((home / "capturing").string()).dump() + "}";
  auto env = MakeEnv(
      "{\"responses\": [" + during + "," + Call("c", login + "; snap_fn c") + ", \"done\"]}", "");
  LinkSnapshots(*env, home);
  ProcessResult run = RunExec(*env, home, {});
  INFO("stderr: " << run.err);
  REQUIRE(run.exit_code == 0);
  const std::string a = Output(*env, "a");
  const std::string b = Output(*env, "b");
  INFO("a: " << a << "b: " << b);
  CHECK(((a == "login\nsnap_fn:a\n" && b == "not-login\nsnap_fn:b\n") ||
         (a == "not-login\nsnap_fn:a\n" && b == "login\nsnap_fn:b\n")));
  CHECK(Output(*env, "c") == "not-login\nsnap_fn:c\n");
  CHECK(ProfileRuns(home) == 2);  // the capture's and the first command's
  CHECK(Snapshots(env->codex_home()).empty());
}

TEST_CASE("shell snapshot: a session that runs no command leaves nothing behind") {
  if (!HaveLandlock()) return;
  // The capture's profile hangs (as a slow or broken dotfile does); the model
  // answers once it hangs, with a message and no call. Codex ends without
  // waiting for the capture's 10 s timeout (which, under RUST_LOG=debug, it
  // would report) and leaves no login shell, sleep, bubblewrap or sandbox
  // server behind, nor a snapshot file. The profile is ended as a timeout
  // ends a command, SIGTERM first: its EXIT trap removes the lock it holds
  // (pyenv's rehash lock, left by a SIGKILL, stalled every later login shell).
  // (Not read-only: the profile could not leave its mark in $HOME.)
  for (const char* sandbox_mode : {"workspace-write", "danger-full-access"}) {
    TempDir home_dir("codex-snapshot-home-");
    const std::filesystem::path home = home_dir.path();
    const std::string token = home.filename().string();
    WriteFile(home / ".profile",
              "echo ran >> \"$HOME/counter\"\necho held > \"$HOME/profile.lock\"\n"
              "trap 'rm -f \"$HOME/profile.lock\"' EXIT\nsleep 3600\n");
    auto env = MakeEnv(R"({"responses": [{"message": "nothing to run", "wait_for_file": )" +
                           Json((home / "counter").string()).dump() + "}]}",
                       "");
    ProcessOptions p = env->CodexCommand(
        {"exec", "--json", "--sandbox", sandbox_mode, "--skip-git-repo-check", "hello"});
    p.env["HOME"] = home.string();
    p.env["SHELL"] = "/bin/bash";
    p.env["RUST_LOG"] = "debug";
    p.unset_env.push_back("BASH_ENV");
    ProcessResult run = RunChecked(p);
    INFO(sandbox_mode << "\nstderr: " << run.err);
    REQUIRE(run.exit_code == 0);
    CHECK_THAT(run.out, Catch::Contains("nothing to run"));
    CHECK(ProfileRuns(home) == 1);  // the capture was under way when the session ended
    CHECK(run.err.find("took longer") == std::string::npos);
    CHECK(run.err.find("using plain login shells") == std::string::npos);
    CHECK(ProcessesMentioning(token, Mentioned::kInCommandLineOrEnvironment)
              .empty());  // the sleep has HOME, hence the token
    CHECK(Snapshots(env->codex_home()).empty());
    CHECK_FALSE(std::filesystem::exists(home / "profile.lock"));
  }
}

TEST_CASE("shell snapshot: the profile runs once a session; no call leaks into the next") {
  if (!HaveLandlock()) return;
  TempDir home_dir("codex-snapshot-home-");
  const std::filesystem::path home = home_dir.path();
  WriteFile(home / ".profile", kProfile);
  const std::string script =
      "{\"responses\": [" +
      AfterCapture(home, Call("c1",
                              "ps -o args= -p $$; echo \"var=$SNAP_VAR\"; snap_fn one; alias "
                              "snap_alias; export LEAKED=1; cd /usr; echo \"pwd=$PWD\"")) +
      "," + Call("c2", "echo \"leaked=${LEAKED-no}\"; echo \"pwd=$PWD\"; snap_fn two") + "," +
      Call("c3",
           "for f in \"$CODEX_HOME\"/shell_snapshots/*.sh; do echo 'echo planted' >> \"$f\" && "
           "echo wrote; rm -f \"$f\" && echo removed; done; echo tried") +
      "," + Call("c4", "snap_fn four; echo \"var=$SNAP_VAR\"; bash -c 'echo nested=$BASH_ENV'") +
      ", \"done\"]}";
  auto env = MakeEnv(script, "");
  LinkSnapshots(*env, home);
  const std::string workdir = std::filesystem::canonical(env->workdir()).string();
  ProcessResult run = RunExec(*env, home, {});
  INFO("stderr: " << run.err);
  REQUIRE(run.exit_code == 0);

  const std::string c1 = Output(*env, "c1");
  INFO("c1: " << c1);
  // Spawned as a non-login bash -c (the rewrite at spawn time) ...
  CHECK_THAT(c1, Catch::StartsWith("/bin/bash -c ps -o args="));
  // ... that has the profile's variable, function and alias (defined; as
  // under `bash -lc`, a non-interactive shell does not expand it).
  CHECK_THAT(c1, Catch::Contains("var=from the profile\nsnap_fn:one\nalias "
                                 "snap_alias='echo aliased'\npwd=/usr\n"));
  const std::string c2 = Output(*env, "c2");
  INFO("c2: " << c2);
  // Neither the export nor the cd of c1, nor the profile's own `cd /`.
  CHECK(c2 == "leaked=no\npwd=" + workdir + "\nsnap_fn:two\n");

  // A sandboxed command can neither change nor remove the snapshot (with
  // namespaces: $CODEX_HOME lies under /tmp here, a writable root) ...
  const std::string c3 = Output(*env, "c3");
  INFO("c3: " << c3);
  const bool namespaces = sandbox::ProbeBwrap().usable;
  if (namespaces) {
    CHECK(c3.find("wrote") == std::string::npos);
    CHECK(c3.find("removed") == std::string::npos);
    // stdout and stderr are two pipes: "tried" may come before the errors.
    CHECK_THAT(c3, Catch::Contains("Read-only file system") && Catch::Contains("tried\n"));
  } else {
    WARN("no namespaces here (" + sandbox::ProbeBwrap().reason +
         "): Landlock alone leaves a snapshot under /tmp writable; checking that a changed one "
         "is not sourced");
  }
  // ... so the next call starts from it untouched (or, changed, from plain
  // -lc, never from what was planted); nested shells do not source it again.
  const std::string c4 = Output(*env, "c4");
  INFO("c4: " << c4);
  CHECK(c4 == "snap_fn:four\nvar=from the profile\nnested=\n");
  // One capture, four commands: the profile ran once (twice when the changed
  // snapshot was dropped for plain -lc).
  CHECK(ProfileRuns(home) == (namespaces ? 1 : 2));

  // The model's calls and --json show `bash -lc SCRIPT` as sent.
  const auto commands = CompletedItems(run.out, "command_execution");
  REQUIRE(commands.size() == 4);
  for (const auto& item : commands) {
    CHECK_THAT(item.value("command", ""), Catch::StartsWith("/bin/bash -lc "));
  }
  // Nothing said about it; the file is gone with the session.
  CHECK(run.err.find("snapshot") == std::string::npos);
  CHECK(Snapshots(env->codex_home()).empty());
}

TEST_CASE("shell snapshot: off (config or --disable), the profile runs at every call") {
  if (!HaveLandlock()) return;
  const std::string script = "{\"responses\": [" + Call("a", "ps -o args= -p $$; snap_fn a") + "," +
                             Call("b", "snap_fn b") + "," + Call("c", "snap_fn c") +
                             ", \"done\"], \"default\": \"done\"}";
  for (const std::vector<std::string>& off :
       {std::vector<std::string>{"-c", "features.shell_snapshot=false"},
        std::vector<std::string>{"--disable", "shell_snapshot"}}) {
    auto env = MakeEnv(script, "");
    const auto home = MakeHome(*env, kProfile);
    ProcessResult run = RunExec(*env, home, off);
    INFO("stderr: " << run.err);
    REQUIRE(run.exit_code == 0);
    CHECK(ProfileRuns(home) == 3);
    CHECK_THAT(Output(*env, "a"), Catch::StartsWith("/bin/bash -lc ps -o args="));
    CHECK_THAT(Output(*env, "c"), Catch::Contains("snap_fn:c\n"));
    CHECK_FALSE(std::filesystem::exists(env->codex_home() / "shell_snapshots"));
  }
}

TEST_CASE("shell snapshot: the one-shot shell tool's [bash, -lc, SCRIPT] starts from it too") {
  if (!HaveLandlock()) return;
  TempDir home_dir("codex-snapshot-home-");
  const std::filesystem::path home = home_dir.path();
  WriteFile(home / ".profile", kProfile);
  const std::string script = R"({"responses": [
    {"output": [{"shell": ["bash", "-lc", "snap_fn s1; export X=1"], "call_id": "s1"}],
     "wait_for_file": )" + Json((home / "snapshots" / "*.sh").string()).dump() +
                             R"(},
    {"output": [{"shell": ["bash", "-lc", "snap_fn s2; echo x=${X-none}"], "call_id": "s2"}]},
    {"output": [{"shell": ["bash", "-c", "echo plain; type snap_fn >/dev/null 2>&1 || echo no-fn"],
                 "call_id": "s3"}]},
    "done"]})";
  auto env = MakeEnv(script, "");
  LinkSnapshots(*env, home);
  ProcessResult run = RunExec(*env, home, {"-c", "features.unified_exec=false"});
  INFO("stderr: " << run.err);
  REQUIRE(run.exit_code == 0);
  CHECK(e2e::ShellResult(*env, "s1").output == "snap_fn:s1\n");
  CHECK(e2e::ShellResult(*env, "s2").output == "snap_fn:s2\nx=none\n");
  // Not a login shell: not rewritten, no snapshot.
  CHECK(e2e::ShellResult(*env, "s3").output == "plain\nno-fn\n");
  CHECK(ProfileRuns(home) == 1);
}

TEST_CASE(
    "shell snapshot: a login command's bash from no system directory never makes the capture") {
  if (!HaveLandlock()) return;
  // With a SHELL that is not bash no capture starts with the session; it
  // started at the first `X/bash -lc` command, with that command's X/bash. A
  // `bash` of a cloned repository (or one the model wrote) could then print
  // what it liked as the login shell's functions: codex copied them into the
  // snapshot, which every later `bash -lc` of the session sources, those the
  // user approves to run outside the sandbox included. The fake runs the real
  // bash and slips a line into the functions section.
  TempDir home_dir("codex-snapshot-home-");
  const std::filesystem::path home = home_dir.path();
  WriteFile(home / ".profile", kProfile);
  TempDir planted("codex-planted-bash-");
  const std::filesystem::path fake = planted.path() / "bash";
  WriteFile(fake,
            "#!/bin/sh\n"
            "case \"$*\" in *codex-shell-snapshot*)\n"
            "  /bin/bash \"$@\" | sed 's/^\\(codex-snapshot-[0-9a-f]* functions\\)$/\\1\\n"
            "touch \"$HOME\\/payload-ran\"/'; exit 0;;\n"
            "esac\n"
            "exec /bin/bash \"$@\"\n");
  std::filesystem::permissions(fake, std::filesystem::perms::owner_all);
  const std::string script = R"({"responses": [
    {"output": [{"shell": [)" +
                             Json(fake.string()).dump() +
                             R"(, "-lc", "echo first"], "call_id": "f1"}]},
    {"output": [{"shell": ["bash", "-lc", "snap_fn f2"], "call_id": "f2"}],
     "wait_for_file": )" + Json((home / "snapshots" / "*.sh").string()).dump() +
                             R"(},
    "done"]})";
  auto env = MakeEnv(script, "");
  LinkSnapshots(*env, home);
  std::vector<std::string> args = {"exec",
                                   "--json",
                                   "--sandbox",
                                   "workspace-write",
                                   "--skip-git-repo-check",
                                   "-c",
                                   "features.unified_exec=false",
                                   "go"};
  ProcessOptions p = env->CodexCommand(args);
  p.env["HOME"] = home.string();
  p.env["SHELL"] = "/bin/sh";
  p.unset_env.push_back("RUST_LOG");
  p.unset_env.push_back("BASH_ENV");
  ProcessResult run = RunChecked(p);
  INFO("stderr: " << run.err);
  REQUIRE(run.exit_code == 0);
  CHECK(e2e::ShellResult(*env, "f1").output == "first\n");
  // The later login command starts from a snapshot of the user's own login
  // files (the real bash's), and nothing the fake printed ran.
  CHECK(e2e::ShellResult(*env, "f2").output == "snap_fn:f2\n");
  CHECK_FALSE(std::filesystem::exists(home / "payload-ran"));
}

TEST_CASE("shell snapshot: a profile that fails or hangs at the capture leaves plain -lc") {
  if (!HaveLandlock()) return;
  // The capture's run of the profile (the one in $HOME; commands run in the
  // workspace) exits 3, or hangs past the 10 s timeout (cancelled when the
  // session ends first); the commands' runs behave.
  for (const char* first : {"exit 3", "sleep 60"}) {
    const std::string profile =
        std::string("if [ \"$PWD\" = \"$HOME\" ]; then ") + first + "; fi\n" + kProfile;
    const std::string script = "{\"responses\": [" +
                               Call("a", "ps -o args= -p $$; snap_fn a; echo \"var=$SNAP_VAR\"") +
                               "," + Call("b", "snap_fn b") + ", \"done\"]}";
    auto env = MakeEnv(script, "");
    const auto home = MakeHome(*env, profile);
    ProcessResult run = RunExec(*env, home, {});
    INFO(first << "\nstderr: " << run.err);
    REQUIRE(run.exit_code == 0);
    // Both commands ran as login shells, each with the profile.
    CHECK(Output(*env, "a") ==
          "/bin/bash -lc ps -o args= -p $$; snap_fn a; echo \"var=$SNAP_VAR\"\n"
          "snap_fn:a\nvar=from the profile\n");
    CHECK(Output(*env, "b") == "snap_fn:b\n");
    CHECK(ProfileRuns(home) == 2);
    CHECK(run.err.find("snapshot") == std::string::npos);
    CHECK(Snapshots(env->codex_home()).empty());
  }
}

}  // namespace codex::testing
