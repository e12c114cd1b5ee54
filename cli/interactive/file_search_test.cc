#include "cli/interactive/file_search.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "cli/interactive/command_text.h"
#include "cli/interactive/slash_commands.h"
#include "testing/temp_dir.h"

namespace codex::cli {
namespace {

namespace fs = std::filesystem;

using codex::testing::TempDir;

void Touch(const fs::path& p) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << "x\n";
}

TEST_CASE("fuzzy find prefers the file name, runs and short paths") {
  std::vector<std::string> paths = {"src/main.cc", "docs/maintenance.md", "src/util/m_a_i_n.h",
                                    "README.md", "cli/interactive/markdown.cc"};
  auto found = FuzzyFind(paths, "main", 10);
  REQUIRE(found.size() == 3);
  CHECK(found[0] == "src/main.cc");
  CHECK(FuzzyFind(paths, "mdcc", 10) == std::vector<std::string>{"cli/interactive/markdown.cc"});
  CHECK(FuzzyFind(paths, "README", 10) == std::vector<std::string>{"README.md"});
  CHECK(FuzzyFind(paths, "readme", 10) == std::vector<std::string>{"README.md"});  // any case
  CHECK(FuzzyFind(paths, "zzz", 10).empty());
  CHECK(FuzzyFind(paths, "", 2).size() == 2);
}

TEST_CASE("workspace files: git's list in a repository (ignored files left out), else a walk") {
  TempDir dir;
  Touch(dir.path() / "a.txt");
  Touch(dir.path() / "sub" / "b.txt");
  Touch(dir.path() / "node_modules" / "dep.js");
  Touch(dir.path() / ".hidden" / "c.txt");
  CHECK(ListWorkspaceFiles(dir.path().string()) == std::vector<std::string>{"a.txt", "sub/b.txt"});

  std::string git = "git -C '" + dir.path().string() + "' ";
  REQUIRE(std::system((git + "init -q").c_str()) == 0);
  std::ofstream(dir.path() / ".gitignore") << "ignored/\n*.log\n";
  Touch(dir.path() / "ignored" / "x.txt");
  Touch(dir.path() / "run.log");
  auto files = ListWorkspaceFiles(dir.path().string());
  CHECK(std::find(files.begin(), files.end(), "sub/b.txt") != files.end());
  CHECK(std::find(files.begin(), files.end(), "node_modules/dep.js") !=
        files.end());  // not ignored
  CHECK(std::find(files.begin(), files.end(), "ignored/x.txt") == files.end());
  CHECK(std::find(files.begin(), files.end(), "run.log") == files.end());
}

TEST_CASE("slash popup matches: prefix first, then substring") {
  auto m = MatchSlashCommands("s");
  REQUIRE(m.size() >= 2);
  CHECK(m[0]->name == "/status");
  CHECK(m[1]->name == "/sessions");
  bool has_resume = false;  // "resume" contains an s too, after the prefix matches
  for (const auto* c : m) has_resume |= c->name == "/resume";
  CHECK(has_resume);
  CHECK(MatchSlashCommands("").size() == SlashCommands().size());
  CHECK(MatchSlashCommands("zzz").empty());
}

TEST_CASE("commands are shown as typed, not wrapped in a shell") {
  CHECK(ShownCommand({"bash", "-lc", "ls -la | head"}) == "ls -la | head");
  CHECK(ShownCommand({"/bin/sh", "-c", "echo 'hi'"}) == "echo 'hi'");
  CHECK(ShownCommand({"ls", "-la", "my dir"}) == "ls -la 'my dir'");
  CHECK(ShownCommand({"bash", "-lc", "a", "b"}) == "bash -lc a b");
  CHECK(ShownCommandLine("bash -lc 'echo it'\\''s'") == "echo it's");
  CHECK(ShownCommandLine("bash -c 'touch one.txt && echo made-one'") ==
        "touch one.txt && echo made-one");
  CHECK(ShownCommandLine("python3 -c 'print(1)'") == "python3 -c 'print(1)'");
}

}  // namespace
}  // namespace codex::cli
