// End-to-end tests of what the model's shell tool may run without asking,
// what it sees of long outputs, what environment it gets and what reaches the
// user's terminal, through the real `codex` binary and the scripted server:
//   * classifier bypasses (issue 10): under `-a untrusted -s
//     danger-full-access` none of them runs; exec declines and tells the model;
//   * the head + true tail of a long output (seq 1 500000; ~100 MB) with the
//     omitted byte count;
//   * [shell_environment_policy]: codex's own secrets stay out, `set`,
//     `include_only`, `inherit = "core"`, and a bad value is a config error;
//   * control sequences in tool output are neutralised on the terminal.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "base/shell.h"
#include "sandbox/shell_lexer.h"
#include "testing/files.h"
#include "testing/skip.h"
#include "testing/temp_dir.h"
#include "tests/e2e_checks.h"
#include "tests/e2e_support.h"

namespace codex::testing {
namespace {

namespace fs = std::filesystem;
using e2e::MakeEnv;
using e2e::OutputFor;
using e2e::ShellOutput;
using e2e::ShellResult;

ProcessResult Run(CodexTestEnv& env, std::vector<std::string> args,
                  std::map<std::string, std::string> extra_env = {}) {
  ProcessOptions p = env.CodexCommand(std::move(args));
  for (auto& [k, v] : extra_env) p.env[k] = v;
  p.timeout = std::chrono::milliseconds(300'000);
  return e2e::RunChecked(p);
}

// The number in the "[... N bytes" marker, or -1.
int64_t OmittedBytes(const std::string& output) {
  const size_t at = output.find("[... ");
  if (at == std::string::npos) return -1;
  return std::stoll(output.substr(at + 5));
}

// ---------------------------------------------------------------------------
// Classifier bypasses.

TEST_CASE("untrusted + danger-full-access: no classifier bypass runs without approval") {
  // Each command would leave `marker-<id>` in the workdir (or change the
  // machine) if it ran; a planted ./bin/cat and ./x stand ready.
  // A bash of no system directory (one a cloned repository or the model
  // could have written), leaving its marker in the working directory.
  TempDir planted("codex-planted-shell-");
  std::ofstream(planted.path() / "bash") << "#!/bin/sh\ntouch marker-planted-bash\n";
  fs::permissions(planted.path() / "bash", fs::perms::owner_all);
  struct Bypass {
    std::string id;
    std::vector<std::string> argv;
  };
  const std::vector<Bypass> bypasses = {
      {"sort-compress", {"sort", "-S", "1K", "--compress-prog=./x", "big.txt"}},
      {"sort-out", {"sort", "--out=marker-sort-out", "big.txt"}},
      {"sort-bundle", {"sort", "-uomarker-sort-bundle", "big.txt"}},
      {"date-set", {"date", "--se=not-a-date"}},
      {"date-operand", {"date", "not-a-date-either"}},
      {"printf-path", {"bash", "-lc", "printf -v PATH %s bin; cat big.txt"}},
      {"find-exec", {"find", ".", "-maxdepth", "0", "-exec", "./x", "find-exec", ";"}},
      {"find-fprint", {"find", ".", "-maxdepth", "0", "-fprint", "marker-find-fprint"}},
      {"rg-pre", {"rg", "--pr=./x", "anything", "big.txt"}},
      {"xargs", {"bash", "-lc", "echo xargs | xargs ./x"}},
      {"env", {"env", "./x", "env"}},
      {"git", {"git", "-c", "alias.t=!./x git", "t"}},
      {"tree-out", {"tree", "-o", "marker-tree-out"}},
      {"uniq-out", {"uniq", "big.txt", "marker-uniq-out"}},
      // A shell wrapper whose shell is a program of the workspace (a cloned
      // repository's `bin/bash`) or of any other directory rather than the
      // system's: it runs that program.
      {"shell-path", {"./bin/bash", "-lc", "cat big.txt"}},
      {"shell-abspath", {(planted.path() / "bash").string(), "-c", "cat big.txt"}},
  };
  // Both doors of the model: the one-shot `shell` (argv) and unified exec's
  // `exec_command` (the same command as a shell string).
  for (const bool exec_command : {false, true}) {
    INFO((exec_command ? "exec_command" : "shell"));
    auto call = [&](const std::vector<std::string>& argv, const std::string& id) {
      Json c = {{"call_id", id}};
      if (exec_command) {
        c["function_call"] = "exec_command";
        c["arguments"] = {{"cmd", ShellJoin(argv)}, {"login", false}};
      } else {
        c["shell"] = argv;
      }
      return Json{{"output", Json::array({c})}}.dump();
    };
    std::string script = R"({"responses": [)";
    for (const Bypass& b : bypasses) script += call(b.argv, b.id) + ",";
    script += call({"cat", "big.txt"}, "control") + R"(, "done"]})";
    auto env = MakeEnv(script);
    const fs::path dir = env->workdir();
    std::ofstream(dir / "big.txt") << "b\na\nc\n";
    // ./x, ./bin/cat and ./bin/bash record that they ran.
    for (const fs::path& prog : {dir / "x", dir / "bin" / "cat", dir / "bin" / "bash"}) {
      fs::create_directories(prog.parent_path());
      std::ofstream(prog) << "#!/bin/sh\ntouch \"" << dir.string() << "/marker-${1:-cat}\"\n";
      fs::permissions(prog, fs::perms::owner_all);
    }

    auto run = Run(*env, {"exec", "-a", "untrusted", "-s", "danger-full-access", "try"});
    CHECK(run.exit_code == 0);
    for (const Bypass& b : bypasses) {
      INFO("bypass " << b.id);
      if (exec_command) {
        CHECK_THAT(e2e::ModelOutput(*env, b.id), Catch::Contains("needs the user's approval"));
      } else {
        const ShellOutput out = ShellResult(*env, b.id);
        CHECK(out.exit_code != 0);
        CHECK_THAT(out.output, Catch::Contains("needs the user's approval"));
      }
    }
    for (const auto& entry : fs::directory_iterator(dir)) {
      INFO("left behind: " << entry.path());
      CHECK(entry.path().filename().string().rfind("marker", 0) != 0);
    }
    // A known-safe command still runs without asking.
    if (exec_command) {
      const std::string control = e2e::ModelOutput(*env, "control");
      CHECK_THAT(control, Catch::Contains("Process exited with code 0") &&
                              Catch::EndsWith("Output:\nb\na\nc\n"));
    } else {
      const ShellOutput control = ShellResult(*env, "control");
      CHECK(control.exit_code == 0);
      CHECK(control.output == "b\na\nc\n");
    }
  }
}

TEST_CASE("untrusted: a relative PATH entry makes even cat ask") {
  auto env = MakeEnv(R"({"responses": [
    {"output": [{"shell": ["cat", "f.txt"], "call_id": "cat"}]}, "done"]})");
  const fs::path dir = env->workdir();
  std::ofstream(dir / "f.txt") << "content\n";
  fs::create_directories(dir / "bin");
  std::ofstream(dir / "bin" / "cat") << "#!/bin/sh\ntouch \"" << dir.string() << "/planted-ran\"\n";
  fs::permissions(dir / "bin" / "cat", fs::perms::owner_all);
  const std::string path = std::string("bin:") + (std::getenv("PATH") ? std::getenv("PATH") : "");
  auto run =
      Run(*env, {"exec", "-a", "untrusted", "-s", "danger-full-access", "cat"}, {{"PATH", path}});
  CHECK(run.exit_code == 0);
  CHECK_THAT(ShellResult(*env, "cat").output, Catch::Contains("needs the user's approval"));
  CHECK_FALSE(fs::exists(dir / "planted-ran"));
}

// ---------------------------------------------------------------------------
// Long output: the true tail.

TEST_CASE("output: the model sees the last line of a long output and the omitted count") {
  auto env = MakeEnv(R"({"responses": [
    {"output": [{"shell": ["bash", "-lc", "seq 1 500000; echo ERROR-LINE"], "call_id": "seq",
                 "timeout_ms": 120000}]},
    {"output": [{"shell": ["bash", "-lc",
                           "head -c 100000000 /dev/zero | tr '\\0' x; echo; echo LAST-LINE"],
                 "call_id": "big", "timeout_ms": 240000}]},
    "done"]})");
  auto run = Run(*env, {"exec", "-s", "danger-full-access", "go"});
  CHECK(run.exit_code == 0);

  const ShellOutput seq = ShellResult(*env, "seq");
  CHECK(seq.exit_code == 0);
  CHECK(seq.output.starts_with("1\n2\n3\n"));
  CHECK(seq.output.ends_with("499999\n500000\nERROR-LINE\n"));
  CHECK_THAT(seq.output, Catch::Contains(" lines) omitted ...]"));
  // seq 1 500000 prints 3388895 bytes; with ERROR-LINE, 3388906. What is
  // shown plus what is counted is all of it.
  const size_t marker = seq.output.find("[... ");
  const size_t marker_end = seq.output.find("...]\n", marker) + 5;
  CHECK(static_cast<int64_t>(marker + (seq.output.size() - marker_end)) +
            OmittedBytes(seq.output) ==
        3388906);

  const ShellOutput big = ShellResult(*env, "big");
  CHECK(big.exit_code == 0);
  CHECK(big.output.ends_with("\nLAST-LINE\n"));
  const int64_t omitted = OmittedBytes(big.output);
  CHECK(omitted > 100'000'000 - 20'000);
  CHECK(omitted <= 100'000'011);
  CHECK(big.output.size() < 12'000);
}

TEST_CASE("output: --json aggregated_output shows where bytes were left out, and the end") {
  auto env = MakeEnv(R"({"responses": [
    {"output": [{"shell": ["bash", "-lc", "seq 1 500000; echo ERROR-LINE"], "call_id": "seq",
                 "timeout_ms": 120000}]},
    "done"]})");
  auto run = Run(*env, {"exec", "--json", "-s", "danger-full-access", "go"});
  CHECK(run.exit_code == 0);
  std::string aggregated;
  for (const Json& e : e2e::JsonLines(run.out)) {
    if (e.is_object() && e.value("type", "") == "item.completed" &&
        e["item"].value("type", "") == "command_execution") {
      aggregated = e["item"].value("aggregated_output", "");
    }
  }
  CHECK(aggregated.starts_with("1\n2\n"));
  CHECK(aggregated.ends_with("500000\nERROR-LINE\n"));
  CHECK_THAT(aggregated, Catch::Contains(" omitted ...]"));
  CHECK(aggregated.size() <= (1u << 20) + 100);
}

// ---------------------------------------------------------------------------
// [shell_environment_policy].

TEST_CASE("shell_environment_policy: secrets stay out, set and include_only apply") {
  const std::string script = R"({"responses": [
    {"output": [{"shell": ["env"], "call_id": "env"}]}, "done"]})";
  const std::map<std::string, std::string> secrets = {{"FOO_TOKEN", "tok-123"},
                                                      {"MY_API_KEY", "key-456"},
                                                      {"Db_Secret", "sec-789"},
                                                      {"PGPASSWORD", "pgpw-246"},
                                                      {"PLAIN_VAR", "plain"}};
  {
    auto env = MakeEnv(script);
    auto run = Run(*env, {"exec", "-s", "danger-full-access", "env"}, secrets);
    CHECK(run.exit_code == 0);
    const std::string out = ShellResult(*env, "env").output;
    CHECK(out.find("tok-123") == std::string::npos);
    CHECK(out.find("key-456") == std::string::npos);
    CHECK(out.find("sec-789") == std::string::npos);
    CHECK(out.find("pgpw-246") == std::string::npos);
    CHECK_THAT(out, Catch::Contains("PLAIN_VAR=plain"));
  }
  {
    // A team's store URL in CODEX_SESSION_STORE may hold the database
    // password: the model's commands never see it (-c keeps this run on
    // SQLite; the variable is still in codex's environment).
    auto env = MakeEnv(script);
    auto with_store = secrets;
    with_store["CODEX_SESSION_STORE"] = "postgresql://u:store-pw-135@127.0.0.1:1/db";
    auto run = Run(*env,
                   {"exec", "-c",
                    "session_store=\"sqlite:" + (env->codex_home() / "sessions.db").string() + "\"",
                    "-s", "danger-full-access", "env"},
                   with_store);
    CHECK(run.exit_code == 0);
    const std::string out = ShellResult(*env, "env").output;
    CHECK(out.find("store-pw-135") == std::string::npos);
    CHECK(out.find("CODEX_SESSION_STORE") == std::string::npos);
    CHECK_THAT(out, Catch::Contains("PLAIN_VAR=plain"));
  }
  {
    auto env = MakeEnv(script, R"(
[shell_environment_policy]
exclude = ["plain_*"]
set = { FROM_SET = "set-value", ANOTHER_TOKEN = "explicit" }
)");
    auto run = Run(*env, {"exec", "-s", "danger-full-access", "env"}, secrets);
    CHECK(run.exit_code == 0);
    const std::string out = ShellResult(*env, "env").output;
    CHECK(out.find("PLAIN_VAR") == std::string::npos);
    CHECK(out.find("tok-123") == std::string::npos);
    CHECK_THAT(out, Catch::Contains("FROM_SET=set-value"));
    CHECK_THAT(out, Catch::Contains("ANOTHER_TOKEN=explicit"));  // set wins over the excludes
    CHECK_THAT(out, Catch::Contains("PATH="));
  }
  {
    auto env = MakeEnv(script, R"(
[shell_environment_policy]
include_only = ["PATH", "from_*"]
set = { FROM_SET = "kept", OTHER_SET = "dropped-by-include-only" }
)");
    auto run = Run(*env, {"exec", "-s", "danger-full-access", "env"}, secrets);
    CHECK(run.exit_code == 0);
    const std::string out = ShellResult(*env, "env").output;
    std::vector<std::string> names;
    std::istringstream lines(out);
    for (std::string line; std::getline(lines, line);)
      names.push_back(line.substr(0, line.find('=')));
    INFO(out);
    for (const std::string& name : names) {
      CHECK((name == "PATH" || name == "FROM_SET" || name == "CODEX_SANDBOX_NETWORK_DISABLED" ||
             name == "PWD" || name == "SHLVL" || name == "_"));  // the last three: a shell's own
    }
    CHECK_THAT(out, Catch::Contains("FROM_SET=kept"));
    CHECK(out.find("dropped-by-include-only") == std::string::npos);
  }
  {
    auto env = MakeEnv(script, "[shell_environment_policy]\ninherit = \"core\"\n");
    auto run = Run(*env, {"exec", "-s", "danger-full-access", "env"}, secrets);
    CHECK(run.exit_code == 0);
    const std::string out = ShellResult(*env, "env").output;
    CHECK(out.find("PLAIN_VAR") == std::string::npos);
    CHECK_THAT(out, Catch::Contains("PATH="));
    CHECK_THAT(out, Catch::Contains("HOME="));
  }
}

TEST_CASE("codex sandbox: config.toml's shell_environment_policy and -c overrides apply") {
  const std::map<std::string, std::string> vars = {
      {"FOO_TOKEN", "tok-123"}, {"PLAIN_VAR", "plain"}, {"OTHER_VAR", "other"}};
  auto env = MakeEnv(R"(["never reached"])", R"(
[shell_environment_policy]
exclude = ["plain_*"]
set = { FROM_SET = "set-value", FOO_TOKEN = "from-config" }
)");
  {
    auto run = Run(*env, {"sandbox", "-s", "danger-full-access", "--", "env"}, vars);
    CHECK(run.exit_code == 0);
    CHECK(run.out.find("tok-123") == std::string::npos);  // codex's own value stays out
    CHECK_THAT(run.out, Catch::Contains("FOO_TOKEN=from-config"));
    CHECK_THAT(run.out, Catch::Contains("FROM_SET=set-value"));
    CHECK(run.out.find("PLAIN_VAR") == std::string::npos);
    CHECK_THAT(run.out, Catch::Contains("OTHER_VAR=other"));
  }
  {
    // -c overrides the file, as for exec; the sandboxed mode too.
    auto run =
        Run(*env, {"-c", "shell_environment_policy.exclude=[\"other_*\"]", "sandbox", "--", "env"},
            vars);
    CHECK(run.exit_code == 0);
    CHECK(run.out.find("OTHER_VAR") == std::string::npos);
    CHECK_THAT(run.out, Catch::Contains("PLAIN_VAR=plain"));
    CHECK(run.out.find("tok-123") == std::string::npos);
  }
  {
    // A bad policy is a config error, and nothing runs.
    auto run = Run(*env, {"-c", "shell_environment_policy.inherit=\"all-of-it\"", "sandbox", "--",
                          "sh", "-c", "echo ran"});
    CHECK(run.exit_code != 0);
    CHECK_THAT(run.err, Catch::StartsWith("error: ") &&
                            Catch::Contains("'shell_environment_policy.inherit' must be one of"));
    CHECK(run.out.find("ran") == std::string::npos);
  }
}

TEST_CASE("codex sandbox: [sandbox_workspace_write] writable_roots are writable") {
  auto env = MakeEnv(R"(["never reached"])");
  const fs::path extra = env->root() / "extra";
  fs::create_directories(extra);
  REQUIRE(env->WriteConfig("[sandbox_workspace_write]\nwritable_roots = [" +
                           Json(extra.string()).dump() + "]\n")
              .ok());
  const std::string target = (extra / "made").string();
  auto run = Run(*env, {"sandbox", "--", "sh", "-c", "echo x > '" + target + "'"});
  if (run.exit_code != 0 && run.err.find("cannot enforce") != std::string::npos) {
    codex::testing::SkipPart("no sandbox here: " + run.err);
    return;
  }
  CHECK(run.exit_code == 0);
  CHECK(fs::exists(target));
  // In read-only the configured roots do not apply.
  const std::string denied = (extra / "denied").string();
  auto ro =
      Run(*env, {"sandbox", "-s", "read-only", "--", "sh", "-c", "echo x > '" + denied + "'"});
  CHECK(ro.exit_code != 0);
  CHECK_FALSE(fs::exists(denied));
}

TEST_CASE("shell_environment_policy: a bad value is a config error naming the key") {
  const std::string script = R"(["never reached"])";
  struct Bad {
    std::string config;
    std::string expect;
  };
  for (const Bad& bad : std::vector<Bad>{
           {"inherit = \"everything\"", "'shell_environment_policy.inherit' must be one of"},
           {"inherit = 1", "'shell_environment_policy.inherit' must be one of"},
           {"ignore_default_excludes = \"yes\"",
            "'shell_environment_policy.ignore_default_excludes' must be true or false"},
           {"exclude = \"*KEY*\"", "'shell_environment_policy.exclude' must be an array"},
           {"include_only = [1]", "'shell_environment_policy.include_only' must be an array"},
           {"set = [\"A=1\"]", "'shell_environment_policy.set' must be a table"},
           {"set = { A = 1 }", "'shell_environment_policy.set.A' must be a string"},
           {"inclde_only = [\"PATH\"]", "unknown key 'shell_environment_policy.inclde_only'"},
       }) {
    INFO(bad.config);
    auto env = MakeEnv(script, "[shell_environment_policy]\n" + bad.config + "\n");
    auto run = Run(*env, {"exec", "hi"});
    CHECK(run.exit_code != 0);
    CHECK_THAT(run.err, Catch::StartsWith("error: ") && Catch::Contains(bad.expect));
    CHECK(env->server().requests_to("/responses").empty());
  }
}

// ---------------------------------------------------------------------------
// The terminal.

TEST_CASE("terminal: control sequences in tool output and commands are neutralised") {
  auto env = MakeEnv(R"({"responses": [
    {"output": [{"shell": ["printf", "\u001b]0;pwned\u0007\u001b[2J\u001b[Hvisible\r\u009b31m"],
                 "call_id": "esc"}]},
    "final \u001b[31mred\u001b[0m answer"]})");
  auto run = Run(*env, {"exec", "-s", "danger-full-access", "go"});
  CHECK(run.exit_code == 0);
  // The model gets the bytes as they were.
  CHECK_THAT(ShellResult(*env, "esc").output, Catch::Contains("\x1b]0;pwned"));
  // The terminal (stderr progress) gets none of them.
  CHECK(run.err.find('\x1b') == std::string::npos);
  CHECK(run.err.find('\x07') == std::string::npos);
  CHECK(run.err.find('\r') == std::string::npos);
  CHECK(run.err.find("\xc2\x9b") == std::string::npos);
  CHECK_THAT(run.err, Catch::Contains("^[]0;pwned^G^[[2J^[[Hvisible^M<U+009B>31m"));
}

}  // namespace
}  // namespace codex::testing

namespace codex::testing {
namespace {

void GitIn(const fs::path& cwd, std::vector<std::string> args) {
  ProcessOptions p;
  p.argv = {"git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"};
  p.argv.insert(p.argv.end(), args.begin(), args.end());
  p.cwd = cwd;
  auto r = RunProcess(p);
  REQUIRE(r.ok());
  REQUIRE(r->exit_code == 0);
}

std::string AddFile(const std::string& path) {
  return "*** Begin Patch\n*** Add File: " + path + "\n+x\n*** End Patch\n";
}

}  // namespace

// Issue 23: apply_patch asks the same workspace policy as the sandbox. Each
// row is a protected path (existing or not) a patch tries to write from a
// workspace under /tmp (itself a writable root, where the old check missed).
TEST_CASE("apply_patch: every protected path of the workspace policy is refused") {
  TempDir scratch("codex-patch-policy-", "/tmp");
  const fs::path base = scratch.path();
  const fs::path plain = base / "plain";
  fs::create_directories(plain);
  const fs::path main = base / "main";
  fs::create_directories(main);
  GitIn(main, {"init", "-q", "."});
  std::ofstream(main / "a.txt") << "a\n";
  GitIn(main, {"add", "a.txt"});
  GitIn(main, {"commit", "-q", "-m", "a"});
  const fs::path wt = base / "wt";
  GitIn(main, {"worktree", "add", "-q", wt.string()});
  fs::create_directories(main / "sub");
  // A submodule's .git file (as `git submodule add` leaves it).
  fs::create_directories(main / ".git" / "modules" / "mod");
  fs::create_directories(main / "mod");
  std::ofstream(main / ".gitmodules") << "[submodule \"mod\"]\n\tpath = mod\n\turl = x\n";
  std::ofstream(main / "mod" / ".git") << "gitdir: ../.git/modules/mod\n";

  struct Row {
    const char* name;
    fs::path cwd;
    std::string path;  // relative to cwd
    fs::path host;     // must not exist afterwards (or keep its content)
  };
  const std::vector<Row> rows = {
      {".codex/config.toml where no .codex exists", plain, ".codex/config.toml",
       plain / ".codex" / "config.toml"},
      {".git/hooks/pre-commit where no .git exists", plain, ".git/hooks/pre-commit",
       plain / ".git" / "hooks" / "pre-commit"},
      {".git/config of a repository", main, ".git/config.new", main / ".git" / "config.new"},
      {"the main repository's hooks from a linked worktree", wt, "../main/.git/hooks/pre-commit",
       main / ".git" / "hooks" / "pre-commit"},
      {"the worktree's own gitdir", wt, "../main/.git/worktrees/wt/config",
       main / ".git" / "worktrees" / "wt" / "config"},
      {"../.git from repo/sub", main / "sub", "../.git/hooks/post-checkout",
       main / ".git" / "hooks" / "post-checkout"},
      {".git at the top of /tmp", plain, "../../.git/config", fs::path("/tmp/.git/config")},
  };
  for (const Row& row : rows) {
    INFO(row.name);
    auto env = MakeEnv(R"({"responses": [
      {"output": [{"custom_tool_call": "apply_patch", "input": )" +
                       Json(AddFile(row.path)).dump() + R"(, "call_id": "patch"}]},
      "done"]})");
    ProcessOptions p = env->CodexCommand({"exec", "-s", "workspace-write", "patch"});
    p.cwd = row.cwd;
    auto run = e2e::RunChecked(p);
    CHECK(run.exit_code == 0);
    const std::string out = e2e::ModelOutput(*env, "patch");
    CHECK_THAT(out, Catch::Contains("Refusing to touch"));
    CHECK_FALSE(fs::exists(row.host));
  }
  // A file of the submodule's .git replaced by an update is refused too.
  auto env = MakeEnv(R"({"responses": [
    {"output": [{"custom_tool_call": "apply_patch", "input": )" +
                     Json("*** Begin Patch\n*** Update File: mod/.git\n@@\n-gitdir: "
                          "../.git/modules/mod\n+gitdir: /tmp/evil\n*** End Patch\n")
                         .dump() +
                     R"(, "call_id": "sub"}]},
    {"output": [{"custom_tool_call": "apply_patch", "input": )" +
                     Json("*** Begin Patch\n*** Delete File: mod/.git\n*** End Patch\n").dump() +
                     R"(, "call_id": "sub-rm"}]},
    "done"]})");
  ProcessOptions p = env->CodexCommand({"exec", "-s", "workspace-write", "patch"});
  p.cwd = main;
  e2e::RunChecked(p);
  CHECK_THAT(e2e::ModelOutput(*env, "sub"), Catch::Contains("Refusing to touch"));
  CHECK_THAT(e2e::ModelOutput(*env, "sub-rm"), Catch::Contains("Refusing to touch"));
  CHECK(ReadFile(main / "mod" / ".git") == "gitdir: ../.git/modules/mod\n");
  // An ordinary file beside them is still written.
  auto ok = MakeEnv(R"({"responses": [
    {"output": [{"custom_tool_call": "apply_patch", "input": )" +
                    Json(AddFile("src/new.txt")).dump() + R"(, "call_id": "ok"}]},
    "done"]})");
  ProcessOptions q = ok->CodexCommand({"exec", "-s", "workspace-write", "patch"});
  q.cwd = plain;
  e2e::RunChecked(q);
  CHECK(fs::exists(plain / "src" / "new.txt"));
}

TEST_CASE("sandbox_workspace_write: exclude_slash_tmp and exclude_tmpdir_env_var are honoured") {
  auto env = MakeEnv(R"(["never reached"])");
  // $TMPDIR outside the workspace; the workspace itself outside /tmp's top.
  const fs::path tmpdir = env->root() / "tmpdir";
  fs::create_directories(tmpdir);
  const std::string at_tmp = "/tmp/codex-exclude-" + std::to_string(::getpid());
  const std::string at_tmpdir = (tmpdir / "made").string();
  const std::map<std::string, std::string> with_tmpdir = {{"TMPDIR", tmpdir.string()}};
  auto write_both = [&] {
    fs::remove(at_tmp);
    fs::remove(at_tmpdir);
    return Run(
        *env,
        {"sandbox", "--", "sh", "-c", "echo x > " + at_tmp + "; echo x > " + at_tmpdir + "; true"},
        with_tmpdir);
  };
  auto first = write_both();
  if (first.err.find("cannot enforce") != std::string::npos) {
    WARN("no sandbox here: " << first.err);
    return;
  }
  // Codex's default: both are writable roots.
  CHECK(fs::exists(at_tmp));
  CHECK(fs::exists(at_tmpdir));

  REQUIRE(env->WriteConfig("[sandbox_workspace_write]\nexclude_slash_tmp = true\n").ok());
  write_both();
  CHECK_FALSE(fs::exists(at_tmp));
  CHECK(fs::exists(at_tmpdir));
  auto explain = Run(*env, {"sandbox", "--explain"}, with_tmpdir);
  CHECK(explain.out.find("writable:     /tmp\n") == std::string::npos);

  REQUIRE(env->WriteConfig("[sandbox_workspace_write]\nexclude_slash_tmp = true\n"
                           "exclude_tmpdir_env_var = true\n")
              .ok());
  write_both();
  CHECK_FALSE(fs::exists(at_tmp));
  CHECK_FALSE(fs::exists(at_tmpdir));
  // --strict-config accepts them (they are read), and -c too.
  auto strict = Run(*env, {"--strict-config", "sandbox", "--", "true"}, with_tmpdir);
  CHECK(strict.exit_code == 0);
  fs::remove(at_tmp);
}

TEST_CASE(
    "sandbox_workspace_write: a key codex does not read is warned; --strict-config refuses it") {
  auto env = MakeEnv(R"(["never reached"])");
  REQUIRE(env->WriteConfig("[sandbox_workspace_write]\nallow_everything = true\n").ok());
  auto warned = Run(*env, {"sandbox", "-s", "read-only", "--", "true"});
  CHECK_THAT(warned.err, Catch::Contains("sandbox_workspace_write.allow_everything"));
  auto strict = Run(*env, {"--strict-config", "sandbox", "-s", "read-only", "--", "true"});
  CHECK(strict.exit_code != 0);
  CHECK_THAT(strict.err, Catch::Contains("sandbox_workspace_write.allow_everything"));
}

}  // namespace codex::testing
