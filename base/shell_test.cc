#include "base/shell.h"

#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

using namespace codex;

namespace {

// What `sh -c 'printf %s WORD'` prints: the shell's reading of the quoted word.
std::string ShellReadsBack(const std::string& quoted) {
  const std::string command = "printf %s " + quoted;
  const std::string outer = "sh -c " + ShellQuote(command);
  FILE* p = ::popen(outer.c_str(), "r");
  REQUIRE(p != nullptr);
  std::string out;
  char buf[256];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  CHECK(::pclose(p) == 0);
  return out;
}

}  // namespace

TEST_CASE("ShellQuote leaves plain words alone and quotes the rest so sh reads them back") {
  CHECK(ShellQuote("ls") == "ls");
  CHECK(ShellQuote("/usr/bin/x-y_z.1:2,3@4%5+6") == "/usr/bin/x-y_z.1:2,3@4%5+6");
  CHECK(ShellQuote("") == "''");
  CHECK(ShellQuote("it's") == "'it'\\''s'");
  CHECK(ShellQuote("a=b") == "'a=b'");
  for (const std::string word : {"it's", "a b", "$HOME", "`id`", "\"q\"", "x;y", "''", "*", "~",
                                 "a\nb", "\\", "-n", "/tmp/it's here/", "é€😀"}) {
    INFO(word);
    CHECK(ShellReadsBack(ShellQuote(word)) == word);
  }
}

TEST_CASE("ShellJoin: '=' is quoted only in the first word") {
  CHECK(ShellJoin({"git", "-c", "core.pager=cat", "log"}) == "git -c core.pager=cat log");
  CHECK(ShellJoin({"A=b", "x"}) == "'A=b' x");
  CHECK(ShellJoin({"bash", "-lc", "echo it's"}) == "bash -lc 'echo it'\\''s'");
  CHECK(ShellJoin({}) == "");
}

TEST_CASE("ShellScriptOf: Codex's rule for `bash -lc SCRIPT`") {
  struct Row {
    std::vector<std::string> argv;
    std::optional<std::string> script;
  };
  const Row rows[] = {
      {{"bash", "-lc", "ls"}, "ls"},
      {{"bash", "-c", "ls"}, "ls"},
      {{"sh", "-c", "ls"}, "ls"},
      {{"zsh", "-lc", "ls"}, "ls"},
      {{"/bin/bash", "-lc", "ls"}, "ls"},
      {{"/usr/local/bin/zsh", "-c", ""}, ""},
      {{"bash", "-cl", "ls"}, std::nullopt},  // not Codex's spelling
      {{"dash", "-c", "ls"}, std::nullopt},
      {{"fish", "-c", "ls"}, std::nullopt},
      {{"bash", "-lc"}, std::nullopt},
      {{"bash", "-lc", "ls", "extra"}, std::nullopt},
      {{"bash", "-x", "ls"}, std::nullopt},
      {{"bash", "--", "ls"}, std::nullopt},
      {{"mybash", "-c", "ls"}, std::nullopt},
      {{"bash/", "-c", "ls"}, std::nullopt},
      {{}, std::nullopt},
  };
  for (const Row& row : rows) {
    INFO(ShellJoin(row.argv));
    const auto got = ShellScriptOf(row.argv);
    REQUIRE(got.has_value() == row.script.has_value());
    if (got) CHECK(*got == *row.script);
  }
}
