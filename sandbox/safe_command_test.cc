#include "sandbox/safe_command.h"

#include <catch2/catch.hpp>

using namespace codex::sandbox;
using Argv = std::vector<std::string>;

namespace {

bool Safe(const Argv& argv) { return IsKnownSafeCommand(argv); }
bool SafeScript(const std::string& script) { return IsKnownSafeCommand({"bash", "-lc", script}); }

}  // namespace

TEST_CASE("Plain read-only commands are safe") {
  CHECK(Safe({"ls"}));
  CHECK(Safe({"ls", "-la", "src"}));
  CHECK(Safe({"cat", "README.md"}));
  CHECK(Safe({"head", "-n", "20", "a.txt"}));
  CHECK(Safe({"tail", "-5", "a.txt"}));
  CHECK(Safe({"wc", "-l", "a.txt"}));
  CHECK(Safe({"grep", "-rn", "TODO", "."}));
  CHECK(Safe({"echo", "hi"}));
  CHECK(Safe({"pwd"}));
  CHECK(Safe({"true"}));
  CHECK(Safe({"which", "git"}));
  CHECK(Safe({"file", "a.bin"}));
  CHECK(Safe({"stat", "a"}));
  CHECK(Safe({"du", "-sh", "."}));
  CHECK(Safe({"df", "-h"}));
  CHECK(Safe({"tree", "-L", "2"}));
  CHECK(Safe({"nl", "a.txt"}));
  CHECK(Safe({"cut", "-d:", "-f1", "/etc/passwd"}));
  CHECK(Safe({"tr", "a-z", "A-Z"}));
  CHECK(Safe({"/bin/ls"}));
  CHECK(Safe({"/usr/bin/cat", "x"}));
  // Without a shell, '*' and '>' are just characters.
  CHECK(Safe({"ls", "*.py"}));
  CHECK(Safe({"echo", ">", "file"}));
}

TEST_CASE("Unknown, relocated or writing programs are not safe") {
  CHECK_FALSE(Safe({}));
  CHECK_FALSE(Safe({""}));
  CHECK_FALSE(Safe({"rm", "-rf", "x"}));
  CHECK_FALSE(Safe({"touch", "x"}));
  CHECK_FALSE(Safe({"python3", "-c", "print(1)"}));
  CHECK_FALSE(Safe({"xargs", "ls"}));
  CHECK_FALSE(Safe({"env", "ls"}));
  CHECK_FALSE(Safe({"awk", "{print}"}));
  CHECK_FALSE(Safe({"tee", "out"}));
  CHECK_FALSE(Safe({"./ls"}));
  CHECK_FALSE(Safe({"/tmp/evil/cat", "x"}));
  CHECK_FALSE(Safe({"/usr/local/evil/ls"}));
  CHECK_FALSE(Safe({"PAGER=evil", "git", "log"}));
}

TEST_CASE("Options that write or execute make a listed command unsafe") {
  CHECK(Safe({"find", ".", "-name", "*.cc"}));
  for (const char* bad : {"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fls", "-fprint",
                          "-fprint0", "-fprintf"}) {
    CHECK_FALSE(Safe({"find", ".", bad, "x", ";"}));
  }
  CHECK(Safe({"rg", "-n", "foo"}));
  CHECK_FALSE(Safe({"rg", "--pre", "sh", "foo"}));
  CHECK_FALSE(Safe({"rg", "--pre=sh", "foo"}));
  CHECK_FALSE(Safe({"rg", "--pre-glob", "*", "foo"}));
  CHECK_FALSE(Safe({"rg", "-z", "foo"}));
  CHECK_FALSE(Safe({"rg", "-iz", "foo"}));
  CHECK_FALSE(Safe({"rg", "--search-zip", "foo"}));
  CHECK_FALSE(Safe({"rg", "--hostname-bin=evil", "foo"}));
  CHECK(Safe({"sort", "-u", "a"}));
  CHECK_FALSE(Safe({"sort", "-o", "out", "a"}));
  CHECK_FALSE(Safe({"sort", "-uo", "out", "a"}));
  CHECK_FALSE(Safe({"sort", "--output=out", "a"}));
  CHECK_FALSE(Safe({"sort", "--compress-program=sh", "a"}));
  CHECK(Safe({"uniq", "-c", "a"}));
  CHECK(Safe({"uniq", "-f", "1", "a"}));
  CHECK_FALSE(Safe({"uniq", "a", "b"}));
  CHECK_FALSE(Safe({"uniq", "--", "a", "b"}));
  CHECK(Safe({"date"}));
  CHECK_FALSE(Safe({"date", "-s", "2020-01-01"}));
  CHECK_FALSE(Safe({"date", "--set=2020-01-01"}));
  CHECK_FALSE(Safe({"file", "-C", "-m", "magic"}));
  CHECK_FALSE(Safe({"tree", "-o", "out"}));
  CHECK_FALSE(Safe({"tree", "-R"}));
}

TEST_CASE("sed is safe only for printing line ranges") {
  CHECK(Safe({"sed", "-n", "10p", "a.txt"}));
  CHECK(Safe({"sed", "-n", "1,200p", "a.txt"}));
  CHECK(Safe({"sed", "-n", "5p"}));
  CHECK_FALSE(Safe({"sed", "-n", "1,200p", "-i", "a.txt"}));
  CHECK_FALSE(Safe({"sed", "s/a/b/", "a.txt"}));
  CHECK_FALSE(Safe({"sed", "-i", "s/a/b/", "a.txt"}));
  CHECK_FALSE(Safe({"sed", "-n", "1p;w out", "a.txt"}));
  CHECK_FALSE(Safe({"sed", "-n", "1e", "a.txt"}));
  CHECK_FALSE(Safe({"sed", "-n"}));
  for (const char* bad : {"p", "1,p", ",5p", "1,2,3p", "1p ", "1P", "1,5", "a,5p", "1;5p"}) {
    CHECK_FALSE(Safe({"sed", "-n", bad, "a.txt"}));
  }
}

TEST_CASE("git is safe for inspecting subcommands only") {
  CHECK(Safe({"git", "status"}));
  CHECK(Safe({"git", "log", "--oneline", "-5"}));
  CHECK(Safe({"git", "diff", "HEAD~1"}));
  CHECK(Safe({"git", "show", "HEAD"}));
  CHECK(Safe({"git", "branch"}));
  CHECK(Safe({"git", "branch", "-a", "-vv"}));
  CHECK(Safe({"git", "branch", "--list", "feat*"}));
  CHECK(Safe({"git", "branch", "--contains", "HEAD"}));
  CHECK(Safe({"git", "branch", "--show-current"}));
  CHECK_FALSE(Safe({"git", "branch", "new-branch"}));
  CHECK_FALSE(Safe({"git", "branch", "-d", "old"}));
  CHECK_FALSE(Safe({"git", "branch", "-D", "old"}));
  CHECK_FALSE(Safe({"git", "branch", "-m", "a", "b"}));
  CHECK_FALSE(Safe({"git"}));
  CHECK_FALSE(Safe({"git", "commit", "-m", "x"}));
  CHECK_FALSE(Safe({"git", "push"}));
  CHECK_FALSE(Safe({"git", "checkout", "."}));
  CHECK_FALSE(Safe({"git", "-c", "core.pager=evil", "log"}));
  CHECK_FALSE(Safe({"git", "--git-dir=/x", "status"}));
  CHECK_FALSE(Safe({"git", "diff", "--output=/tmp/x"}));
  CHECK_FALSE(Safe({"git", "log", "-p", "--ext-diff"}));
  CHECK_FALSE(Safe({"git", "show", "--textconv", "HEAD"}));
}

TEST_CASE("Shell scripts are safe when every command is") {
  CHECK(SafeScript("ls"));
  CHECK(SafeScript("git status && git diff | head -50"));
  CHECK(SafeScript("cd src; ls -la || echo 'no src'"));
  CHECK(SafeScript("grep -rn 'TODO' . | wc -l"));
  CHECK(SafeScript("sed -n '1,40p' main.cc"));
  CHECK(SafeScript("find . -name '*.cc' | sort | uniq -c"));
  CHECK(IsKnownSafeCommand({"sh", "-c", "ls && pwd"}));
  CHECK(IsKnownSafeCommand({"/bin/bash", "-c", "ls"}));
  CHECK(IsKnownSafeCommand({"zsh", "-lc", "ls"}));

  CHECK_FALSE(SafeScript("ls && rm -rf x"));
  CHECK_FALSE(SafeScript("git status; git commit -am x"));
  CHECK_FALSE(SafeScript("cat a | tee b"));
  CHECK_FALSE(SafeScript("echo hi > out"));
  CHECK_FALSE(SafeScript("ls $(rm -rf x)"));
  CHECK_FALSE(SafeScript("echo `rm x`"));
  CHECK_FALSE(SafeScript("ls & rm x"));
  CHECK_FALSE(SafeScript("(rm x)"));
  CHECK_FALSE(SafeScript("ls *"));
  CHECK_FALSE(SafeScript("$CMD"));
  CHECK_FALSE(SafeScript("FOO=bar ls"));
  CHECK_FALSE(SafeScript("find . -delete"));
  CHECK_FALSE(SafeScript("bash -c ls"));
  CHECK_FALSE(SafeScript("if true; then ls; fi"));
  CHECK_FALSE(SafeScript(""));
  CHECK_FALSE(SafeScript("ls &&"));
}

TEST_CASE("Only the plain shell wrapper forms are unwrapped") {
  CHECK_FALSE(IsKnownSafeCommand({"bash", "-lc", "ls", "extra"}));
  CHECK_FALSE(IsKnownSafeCommand({"bash", "-x", "ls"}));
  CHECK_FALSE(IsKnownSafeCommand({"bash", "-lc"}));
  CHECK_FALSE(IsKnownSafeCommand({"bash", "script.sh"}));
  CHECK_FALSE(IsKnownSafeCommand({"python", "-c", "ls"}));
  CHECK_FALSE(IsKnownSafeCommand({"/tmp/bash", "-c", "ls"}));
}
