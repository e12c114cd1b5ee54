#include "sandbox/safe_command.h"

#include <catch2/catch.hpp>

#include "base/shell.h"
#include "sandbox/shell_lexer.h"

using namespace codex::sandbox;
using codex::ShellJoin;
using codex::ShellQuote;
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

TEST_CASE("Shell scripts are safe when every command is") {
  CHECK(SafeScript("ls"));
  CHECK(SafeScript("ls && cat a | head -50"));
  CHECK(SafeScript("cd src; ls -la || echo 'no src'"));
  CHECK(SafeScript("grep -rn 'TODO' . | wc -l"));
  CHECK(SafeScript("sed -n '1,40p' main.cc"));
  CHECK(SafeScript("find . -name '*.cc' | sort | uniq -c"));
  CHECK(IsKnownSafeCommand({"sh", "-c", "ls && pwd"}));
  CHECK(IsKnownSafeCommand({"/bin/bash", "-c", "ls"}));
  CHECK(IsKnownSafeCommand({"zsh", "-lc", "ls"}));

  CHECK_FALSE(SafeScript("ls && rm -rf x"));
  CHECK_FALSE(SafeScript("ls; git commit -am x"));
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

// Every bypass found in review (issue 10) and more: each row is a command and
// whether it may run without asking. A row marked false runs a program of
// the model's choosing, writes a file, changes the machine, or redirects a
// later command; a row marked true must keep working.
struct ClassifierRow {
  Argv argv;
  bool safe;
};

TEST_CASE("Classifier table: option spellings that run programs or write files") {
  const std::vector<ClassifierRow> rows = {
      // The review's bypasses: GNU long-option abbreviations.
      {{"sort", "--compress-prog=./x", "a"}, false},
      {{"sort", "--out=f", "a"}, false},
      {{"date", "--se=2030-01-01"}, false},
      {{"bash", "-lc", "printf -v PATH bin; cat f"}, false},
      // sort: every spelling of -o / --output / --compress-program / -T.
      {{"sort", "--o", "f", "a"}, false},
      {{"sort", "--ou=f", "a"}, false},
      {{"sort", "--output", "f", "a"}, false},
      {{"sort", "--compress-program", "./x", "a"}, false},
      {{"sort", "--comp=./x", "a"}, false},
      {{"sort", "--temporary-dir=/x", "a"}, false},
      {{"sort", "-T", "/x", "a"}, false},
      {{"sort", "-ofile", "a"}, false},
      {{"sort", "-ruo", "f", "a"}, false},
      {{"sort", "a", "-o", "f"}, false},  // GNU permutes: options after operands count
      {{"/usr/bin/sort", "--out=f", "a"}, false},
      {{"sort", "-r", "-k", "2", "a"}, true},
      {{"sort", "--reverse", "--numeric-sort", "a"}, true},
      {{"sort", "--", "-o"}, true},  // after "--" it is a file name
      // date: only the printing forms.
      {{"date", "-s", "2030-01-01"}, false},
      {{"date", "-us", "2030-01-01"}, false},
      {{"date", "--set", "2030-01-01"}, false},
      {{"date", "--set=2030-01-01"}, false},
      {{"date", "--s=2030-01-01"}, false},
      {{"date", "010100002030"}, false},  // MMDDhhmmYYYY operand sets the clock
      {{"date", "-u", "010100002030"}, false},
      {{"date", "--frobnicate"}, false},  // unknown options are not assumed harmless
      {{"date", "-x"}, false},
      {{"date", "+%s"}, true},
      {{"date", "-u", "+%Y-%m-%d"}, true},
      {{"date", "-d", "yesterday", "+%F"}, true},
      {{"date", "--date=@0", "--utc"}, true},
      {{"date", "--da", "tomorrow"}, true},  // abbreviation of --date
      {{"date", "-Iseconds"}, true},
      {{"date", "--iso-8601=ns"}, true},
      {{"date", "-R"}, true},
      {{"date", "-d", "-s"}, true},  // "-s" is -d's value here, not an option
      // printf: the builtin's -v assigns a variable.
      {{"printf", "-v", "PATH", "bin"}, false},
      {{"printf", "-vPATH", "bin"}, false},
      {{"printf", "--", "x"}, false},
      {{"printf"}, false},
      {{"printf", "%s\\n", "hello"}, true},
      // find: primaries that execute, delete or write.
      {{"find", ".", "-execdir", "sh", "-c", "x", ";"}, false},
      {{"find", ".", "-okdir", "rm", "{}", ";"}, false},
      {{"find", ".", "-name", "x", "-delete"}, false},
      {{"find", ".", "-fprintf", "out", "%p"}, false},
      {{"find", ".", "-fls", "out"}, false},
      {{"find", ".", "-type", "f", "-name", "*.h"}, true},
      // rg: preprocessors and decompressors run programs.
      {{"rg", "--pre", "./x", "foo"}, false},
      {{"rg", "--pr=./x", "foo"}, false},
      {{"rg", "--pre-glob=*", "--pre=./x", "foo"}, false},
      {{"rg", "--search-z", "foo"}, false},
      {{"rg", "-uz", "foo"}, false},
      {{"rg", "--hostname-bin", "./x", "foo"}, false},
      {{"rg", "--hostname=./x", "foo"}, false},
      {{"rg", "-n", "--hidden", "foo", "src"}, true},
      // file / tree / uniq write files.
      {{"file", "--comp", "-m", "magic"}, false},
      {{"file", "-bC"}, false},
      {{"file", "-b", "a.bin"}, true},
      {{"tree", "-ao", "out"}, false},
      {{"tree", "--output=out"}, false},
      {{"tree", "-a", "-L", "2"}, true},
      {{"uniq", "-c", "in", "out"}, false},
      {{"uniq", "-c", "in"}, true},
      // git: a repository's own config runs programs (core.fsmonitor,
      // diff.external, textconv) from plain status/diff, so it always asks.
      {{"git", "status"}, false},
      {{"git", "diff"}, false},
      {{"git", "log", "--oneline"}, false},
      {{"git", "-c", "core.pager=./x", "log"}, false},
      {{"git", "diff", "--output=f"}, false},
      {{"git", "diff", "--ext-diff"}, false},
      {{"git", "--exec-path=.", "status"}, false},
      {{"git", "-C", "/", "status"}, false},
      // Programs that run other programs, or assign environment.
      {{"xargs", "-0", "cat"}, false},
      {{"env", "PATH=.", "cat", "f"}, false},
      {{"env"}, false},
      {{"nice", "cat", "f"}, false},
      {{"timeout", "5", "cat", "f"}, false},
      {{"command", "cat", "f"}, false},
      {{"exec", "cat", "f"}, false},
      {{"sudo", "cat", "f"}, false},
      {{"cd", "-P", "x"}, false},
      {{"cd", "a", "b"}, false},
      {{"cd", "src"}, true},
      // Scripts: nothing may assign a variable or hide a program.
      {{"bash", "-lc", "printf -v PATH %s bin && cat f"}, false},
      {{"bash", "-lc", "PATH=bin cat f"}, false},
      {{"bash", "-lc", "export PATH=bin; cat f"}, false},
      {{"bash", "-lc", "declare PATH=bin; cat f"}, false},
      {{"bash", "-lc", "read PATH < x; cat f"}, false},
      {{"bash", "-lc", "hash -p ./x cat; cat f"}, false},
      {{"bash", "-lc", "alias cat=./x; cat f"}, false},
      {{"bash", "-lc", "cat() { ./x; }; cat f"}, false},
      {{"bash", "-lc", "source ./x; ls"}, false},
      {{"bash", "-lc", ". ./x; ls"}, false},
      {{"bash", "-lc", "ls; sort --out=f a"}, false},
      {{"bash", "-lc", "cat a | date --set=2030-01-01"}, false},
      {{"sh", "-c", "find . -exec ./x {} +"}, false},
      {{"bash", "-lc", "./bin/cat f"}, false},
      {{"bash", "-lc", "bin/cat f"}, false},
      {{"bash", "-lc", "sort {-o,f} a"}, false},     // brace expansion makes an option
      {{"bash", "-lc", "sort --out\\=f a"}, false},  // quote removal first
      {{"bash", "-lc", "sort '--ou'tput=f a"}, false},
      {{"zsh", "-lc", "sort =sort"}, true},        // zsh's =cmd is only a path
      {{"bash", "-lc", "cd bin && cat f"}, true},  // safe only with a trusted PATH (below)
      {{"bash", "-lc", "date +%s && printf '%s\\n' ok"}, true},
  };
  for (const ClassifierRow& row : rows) {
    INFO("argv: " << ShellJoin(row.argv));
    CHECK(IsKnownSafeCommand(row.argv) == row.safe);
  }
  CHECK(rows.size() >= 4 + 30);
}

TEST_CASE("A relative or empty PATH entry makes no command known-safe") {
  const Argv cat = {"cat", "f"};
  const Argv script = {"bash", "-lc", "cd bin && cat f"};
  for (const char* path : {"/usr/local/bin:/usr/bin:/bin", "/usr/bin"}) {
    INFO(path);
    CHECK(IsTrustedSearchPath(path));
    CHECK(IsKnownSafeCommand(cat, path));
    CHECK(IsKnownSafeCommand(script, path));
  }
  for (const char* path : {"", ".", "bin", "/usr/bin:", ":/usr/bin", "/usr/bin::/bin",
                           "/usr/bin:./bin", "/usr/bin:bin"}) {
    INFO("PATH=" << path);
    CHECK_FALSE(IsTrustedSearchPath(path));
    CHECK_FALSE(IsKnownSafeCommand(cat, path));
    CHECK_FALSE(IsKnownSafeCommand(script, path));
  }
  CHECK_FALSE(IsKnownSafeCommand({"rm", "x"}, "/usr/bin"));
}
