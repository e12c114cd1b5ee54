// Tests of core/project_context: AGENTS.md discovery (real files in temporary
// directories), the initial context items and the updates appended on resume.
#include "core/project_context.h"

#include <stdlib.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/transcript.h"
#include "testing/files.h"
#include "testing/temp_dir.h"

namespace codex::core {
namespace {

namespace fs = std::filesystem;

using codex::testing::TempDir;

using codex::testing::WriteFile;

Config MakeConfig(const fs::path& cwd, const fs::path& home) {
  Config config;
  config.cwd = cwd.string();
  config.codex_home = home.string();
  return config;
}

// True when some ancestor of `dir` (itself included) holds a .git entry.
bool InsideGitRepository(const fs::path& dir) {
  for (fs::path p = dir;; p = p.parent_path()) {
    // (An empty .git directory is the sandbox's placeholder, no repository.)
    if (fs::exists(p / ".git") && !(fs::is_directory(p / ".git") && fs::is_empty(p / ".git"))) {
      return true;
    }
    if (p == p.root_path() || p.empty()) return false;
  }
}

// True when `s` is well-formed UTF-8.
bool IsValidUtf8(const std::string& s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (size_t k = 1; k < n; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    }
    i += n;
  }
  return true;
}

// Positions of `needles` in `haystack`, npos when absent.
std::vector<size_t> Positions(const std::string& haystack,
                              const std::vector<std::string>& needles) {
  std::vector<size_t> out;
  for (const auto& n : needles) out.push_back(haystack.find(n));
  return out;
}

}  // namespace

TEST_CASE("AGENTS.md from the git root down to cwd, in order, and none above the root") {
  TempDir tmp;
  const fs::path repo = tmp.path() / "repo";
  const fs::path cwd = repo / "a" / "b";
  fs::create_directories(cwd);
  fs::create_directories(repo / ".git");
  WriteFile(repo / ".git" / "HEAD", "ref: refs/heads/main\n");  // a repository, not an empty .git
  fs::create_directories(tmp.path() / "home");
  WriteFile(tmp.path() / "AGENTS.md", "ABOVE-THE-ROOT\n");
  WriteFile(repo / "AGENTS.md", "ROOT-DOC\n");
  WriteFile(repo / "a" / "AGENTS.md", "MIDDLE-DOC\n");
  WriteFile(cwd / "AGENTS.md", "LEAF-DOC\n");

  const std::string docs = LoadProjectDocs(MakeConfig(cwd, tmp.path() / "home"));
  auto pos = Positions(docs, {"ROOT-DOC", "MIDDLE-DOC", "LEAF-DOC"});
  REQUIRE(pos[0] != std::string::npos);
  REQUIRE(pos[1] != std::string::npos);
  REQUIRE(pos[2] != std::string::npos);
  CHECK(pos[0] < pos[1]);
  CHECK(pos[1] < pos[2]);
  CHECK(docs.find("ABOVE-THE-ROOT") == std::string::npos);

  SECTION("a directory without AGENTS.md in the chain is skipped") {
    fs::remove(repo / "a" / "AGENTS.md");
    const std::string two = LoadProjectDocs(MakeConfig(cwd, tmp.path() / "home"));
    CHECK(two.find("MIDDLE-DOC") == std::string::npos);
    CHECK(two.find("ROOT-DOC") < two.find("LEAF-DOC"));
  }
  SECTION(".git as a file (a worktree or submodule) also marks the root") {
    fs::remove_all(repo / ".git");
    WriteFile(repo / "a" / ".git", "gitdir: /elsewhere\n");
    const std::string sub = LoadProjectDocs(MakeConfig(cwd, tmp.path() / "home"));
    CHECK(sub.find("ROOT-DOC") == std::string::npos);
    CHECK(sub.find("MIDDLE-DOC") < sub.find("LEAF-DOC"));
  }
}

TEST_CASE("$CODEX_HOME/AGENTS.md comes first") {
  TempDir tmp;
  const fs::path repo = tmp.path() / "repo";
  fs::create_directories(repo / ".git");
  WriteFile(repo / ".git" / "HEAD", "ref: refs/heads/main\n");  // a repository, not an empty .git
  WriteFile(repo / "AGENTS.md", "PROJECT-DOC\n");
  WriteFile(tmp.path() / "home" / "AGENTS.md", "HOME-DOC\n");
  const std::string docs = LoadProjectDocs(MakeConfig(repo, tmp.path() / "home"));
  REQUIRE(docs.find("HOME-DOC") != std::string::npos);
  REQUIRE(docs.find("PROJECT-DOC") != std::string::npos);
  CHECK(docs.find("HOME-DOC") < docs.find("PROJECT-DOC"));
}

TEST_CASE("without a git repository only cwd's AGENTS.md is read") {
  TempDir tmp;
  if (InsideGitRepository(tmp.path())) {
    WARN("the temporary directory " << tmp.path() << " is inside a git repository; skipped");
    return;
  }
  const fs::path cwd = tmp.path() / "plain" / "sub";
  fs::create_directories(cwd);
  fs::create_directories(tmp.path() / "home");
  WriteFile(tmp.path() / "plain" / "AGENTS.md", "PARENT-DOC\n");
  WriteFile(cwd / "AGENTS.md", "CWD-DOC\n");
  const std::string docs = LoadProjectDocs(MakeConfig(cwd, tmp.path() / "home"));
  CHECK(docs.find("CWD-DOC") != std::string::npos);
  CHECK(docs.find("PARENT-DOC") == std::string::npos);

  fs::remove(cwd / "AGENTS.md");
  CHECK(LoadProjectDocs(MakeConfig(cwd, tmp.path() / "home")).empty());
}

TEST_CASE("project docs are capped at 32 KiB") {
  TempDir tmp;
  const fs::path repo = tmp.path() / "repo";
  const fs::path cwd = repo / "sub";
  fs::create_directories(cwd);
  fs::create_directories(repo / ".git");
  WriteFile(repo / ".git" / "HEAD", "ref: refs/heads/main\n");  // a repository, not an empty .git
  fs::create_directories(tmp.path() / "home");

  SECTION("one big file: its head is kept, then a marker, and later files are dropped") {
    std::string big = "BIG-START\n";
    while (big.size() < 40 * 1024) big += "a line of project documentation\n";
    WriteFile(repo / "AGENTS.md", big);
    WriteFile(cwd / "AGENTS.md", "LATER-DOC\n");
    const std::string docs = LoadProjectDocs(MakeConfig(cwd, tmp.path() / "home"));
    const std::string marker = "[AGENTS.md truncated at 32 KiB]";
    CHECK(docs.find("BIG-START") != std::string::npos);
    CHECK(docs.find("LATER-DOC") == std::string::npos);
    REQUIRE(docs.size() > marker.size());
    CHECK(docs.compare(docs.size() - marker.size(), marker.size(), marker) == 0);
    CHECK(docs.size() <= kProjectDocMaxBytes + marker.size() + 1);
  }
  SECTION("small files together under the cap are kept whole") {
    std::string part(10 * 1024, 'x');
    WriteFile(repo / "AGENTS.md", "A" + part + "\n");
    WriteFile(cwd / "AGENTS.md", "B" + part + "\n");
    const std::string docs = LoadProjectDocs(MakeConfig(cwd, tmp.path() / "home"));
    CHECK(docs.find("A" + part) != std::string::npos);
    CHECK(docs.find("B" + part) != std::string::npos);
    CHECK(docs.find("truncated") == std::string::npos);
  }
  SECTION("the cut never splits a UTF-8 character") {
    // Prefixes of one and two bytes put the cut on either half of a character.
    for (std::string text : {"x", "xy"}) {
      while (text.size() < 40 * 1024) text += "\xC3\xA9";  // é
      WriteFile(cwd / "AGENTS.md", text);
      const std::string docs = LoadProjectDocs(MakeConfig(cwd, tmp.path() / "home"));
      CHECK(docs.find("truncated") != std::string::npos);
      CHECK(IsValidUtf8(docs));
    }
  }
}

TEST_CASE("the initial context: permissions, then docs, then one environment_context") {
  TempDir tmp;
  const fs::path repo = tmp.path() / "repo";
  fs::create_directories(repo / ".git");
  WriteFile(repo / ".git" / "HEAD", "ref: refs/heads/main\n");  // a repository, not an empty .git
  fs::create_directories(tmp.path() / "home");
  Config config = MakeConfig(repo, tmp.path() / "home");
  config.sandbox_mode = SandboxMode::kWorkspaceWrite;
  config.approval_policy = ApprovalPolicy::kOnRequest;
  config.writable_roots = {"/extra/root"};

  SECTION("without docs: two items") {
    auto items = InitialContext(config);
    REQUIRE(items.size() == 2);
    CHECK(items[0].role == "developer");
    CHECK(items[1].role == "user");
    CHECK(MessageText(items[1]) == EnvironmentContextText(config));
    for (const auto& item : items) CHECK(IsContextItem(item));
  }
  SECTION("with docs: the AGENTS.md text between them") {
    WriteFile(repo / "AGENTS.md", "Always run the tests.\n");
    auto items = InitialContext(config);
    REQUIRE(items.size() == 3);
    CHECK(MessageText(items[0]) == PermissionsText(config));
    CHECK(items[1].role == "user");
    CHECK_THAT(MessageText(items[1]), Catch::Contains("Always run the tests."));
    CHECK(MessageText(items[2]) == EnvironmentContextText(config));
    for (const auto& item : items) CHECK(IsContextItem(item));
    int env_items = 0;
    for (const auto& item : items) {
      if (MessageText(item).rfind("<environment_context>", 0) == 0) ++env_items;
    }
    CHECK(env_items == 1);
  }
  CHECK_FALSE(IsContextItem(UserMessage("please fix the bug")));
  CHECK_FALSE(IsContextItem(AssistantMessage("<environment_context>")));

  const std::string env = EnvironmentContextText(config);
  CHECK_THAT(env, Catch::Contains("<cwd>" + repo.string() + "</cwd>"));
  CHECK_THAT(env, Catch::Contains("<sandbox_mode>workspace-write</sandbox_mode>"));
  CHECK_THAT(env, Catch::Contains("<approval_policy>on-request</approval_policy>"));
  CHECK_THAT(env, Catch::Contains("<root>/extra/root</root>"));
  CHECK_THAT(env, Catch::Contains("<network_access>restricted</network_access>"));
  config.sandbox_mode = SandboxMode::kDangerFullAccess;
  CHECK_THAT(EnvironmentContextText(config),
             Catch::Contains("<network_access>enabled</network_access>"));
}

TEST_CASE("ContextUpdates: nothing when unchanged, new items when settings change") {
  TempDir tmp;
  fs::create_directories(tmp.path() / "home");
  fs::create_directories(tmp.path() / "other");
  Config config = MakeConfig(tmp.path(), tmp.path() / "home");
  std::vector<Item> transcript = InitialContext(config);
  transcript.push_back(UserMessage("hello"));
  transcript.push_back(AssistantMessage("hi"));

  CHECK(ContextUpdates(config, transcript).empty());

  SECTION("a new sandbox mode: permissions and environment, describing the new mode") {
    Config changed = config;
    changed.sandbox_mode = SandboxMode::kWorkspaceWrite;
    auto updates = ContextUpdates(changed, transcript);
    REQUIRE(updates.size() == 2);
    CHECK(updates[0].role == "developer");
    CHECK(MessageText(updates[0]) == PermissionsText(changed));
    CHECK(MessageText(updates[1]) == EnvironmentContextText(changed));
    CHECK_THAT(MessageText(updates[1]),
               Catch::Contains("<sandbox_mode>workspace-write</sandbox_mode>"));
    // Once appended, the newest items match: nothing more to add.
    for (auto& u : updates) transcript.push_back(u);
    CHECK(ContextUpdates(changed, transcript).empty());
    // Going back to the original settings adds items again.
    CHECK(ContextUpdates(config, transcript).size() == 2);
  }
  SECTION("a new cwd only: just the environment") {
    Config moved = config;
    moved.cwd = (tmp.path() / "other").string();
    auto updates = ContextUpdates(moved, transcript);
    REQUIRE(updates.size() == 1);
    CHECK(updates[0].role == "user");
    CHECK_THAT(MessageText(updates[0]), Catch::Contains("<cwd>" + moved.cwd + "</cwd>"));
  }
  SECTION("a new approval policy: permissions and environment") {
    Config changed = config;
    changed.approval_policy = ApprovalPolicy::kUntrusted;
    auto updates = ContextUpdates(changed, transcript);
    REQUIRE(updates.size() == 2);
    CHECK_THAT(MessageText(updates[0]), Catch::Contains("untrusted"));
  }
  SECTION("a transcript without context (e.g. imported) gets both") {
    std::vector<Item> bare = {UserMessage("hello")};
    CHECK(ContextUpdates(config, bare).size() == 2);
  }
}

// Issue 23: the sandbox keeps an absent .git absent with an empty directory
// (its mount point); started in repo/sub, that must not hide the repository.
TEST_CASE("An empty .git directory (the sandbox's placeholder) is no repository root") {
  TempDir tmp;
  const fs::path repo = tmp.path() / "repo";
  const fs::path sub = repo / "sub";
  fs::create_directories(sub / ".git");  // empty
  fs::create_directories(repo / ".git");
  WriteFile(repo / ".git" / "HEAD", "ref: refs/heads/main\n");
  fs::create_directories(tmp.path() / "home");
  WriteFile(repo / "AGENTS.md", "ROOT-DOC\n");
  WriteFile(sub / "AGENTS.md", "SUB-DOC\n");
  const std::string docs = LoadProjectDocs(MakeConfig(sub, tmp.path() / "home"));
  CHECK(docs.find("ROOT-DOC") != std::string::npos);
  CHECK(docs.find("SUB-DOC") != std::string::npos);
}

}  // namespace codex::core
