// The workspace policy's answers, without running anything: which roots,
// which protected paths (existing or not), which refusals, and what
// WhyNotWritable says for each kind of path. The sandbox and apply_patch
// doors are tested end to end in sandbox/confinement_test.cc,
// tests/escape_e2e_test.cc and tests/tool_safety_e2e_test.cc.
#include "sandbox/workspace_policy.h"

#include <stdlib.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <optional>
#include <string>

#include "testing/files.h"
#include "testing/temp_dir.h"

using namespace codex::sandbox;
using codex::StatusCode;
using codex::testing::WriteFile;
namespace fs = std::filesystem;

namespace {

const ProtectedPath* Find(const WorkspacePolicy& p, const fs::path& path) {
  for (const ProtectedPath& pp : p.protected_paths()) {
    if (pp.path == path.string()) return &pp;
  }
  return nullptr;
}

bool HasRoot(const WorkspacePolicy& p, const std::string& path) {
  const auto roots = p.root_paths();
  return std::find(roots.begin(), roots.end(), path) != roots.end();
}

// Sets TMPDIR for the scope.
struct TmpDirEnv {
  explicit TmpDirEnv(const std::string& value) {
    if (const char* old = std::getenv("TMPDIR")) old_ = old;
    ::setenv("TMPDIR", value.c_str(), 1);
  }
  ~TmpDirEnv() {
    if (old_) {
      ::setenv("TMPDIR", old_->c_str(), 1);
    } else {
      ::unsetenv("TMPDIR");
    }
  }
  std::optional<std::string> old_;
};

}  // namespace

TEST_CASE("Roots: the workspace, /tmp and $TMPDIR unless excluded, the extra roots") {
  codex::testing::TempDir dir("codex-policy-unit-", "/tmp");
  const fs::path ws = dir.path() / "ws";
  const fs::path tmpdir = dir.path() / "tmpdir";
  const fs::path extra = dir.path() / "extra";
  for (const auto& d : {ws, tmpdir, extra}) fs::create_directories(d);
  TmpDirEnv env(tmpdir.string());
  WritableRootsSpec spec;
  spec.workspace = ws.string();
  spec.extra = {"../extra"};  // relative to the workspace
  auto all = WorkspacePolicy::Compute(spec);
  REQUIRE(all.ok());
  CHECK(HasRoot(*all, ws.string()));
  CHECK(HasRoot(*all, "/tmp"));
  CHECK(HasRoot(*all, tmpdir.string()));
  CHECK(HasRoot(*all, extra.string()));
  for (const WritableRoot& r : all->writable_roots()) {
    INFO(r.path);
    CHECK((r.kind == RootKind::kTemp) == (r.path == "/tmp" || r.path == tmpdir.string()));
  }
  spec.exclude_slash_tmp = true;
  auto no_tmp = WorkspacePolicy::Compute(spec);
  REQUIRE(no_tmp.ok());
  CHECK_FALSE(HasRoot(*no_tmp, "/tmp"));
  CHECK(HasRoot(*no_tmp, tmpdir.string()));
  spec.exclude_tmpdir_env_var = true;
  auto neither = WorkspacePolicy::Compute(spec);
  REQUIRE(neither.ok());
  CHECK_FALSE(HasRoot(*neither, tmpdir.string()));
  CHECK_THAT(neither->WhyNotWritable((tmpdir / "f").string()),
             Catch::Contains("outside the writable roots"));

  spec.workspace = (dir.path() / "missing").string();
  auto missing = WorkspacePolicy::Compute(spec);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == StatusCode::kInvalidArgument);
}

TEST_CASE("Protected paths exist or not; WhyNotWritable names the one that covers a path") {
  codex::testing::TempDir dir("codex-policy-unit-", "/tmp");
  const fs::path repo = dir.path() / "repo";
  const fs::path sub = repo / "sub";
  fs::create_directories(repo / ".git" / "hooks");
  fs::create_directories(sub);
  WritableRootsSpec spec;
  spec.workspace = sub.string();
  spec.extra = {dir.path().string()};  // as /tmp covers a workspace under it
  spec.exclude_slash_tmp = true;
  spec.exclude_tmpdir_env_var = true;
  fs::create_directories(dir.path() / "state");
  spec.private_paths = {(dir.path() / "state").string()};
  auto p = WorkspacePolicy::Compute(spec);
  REQUIRE(p.ok());
  // At the top of the workspace, absent.
  for (const char* name : {".git", ".codex"}) {
    const ProtectedPath* pp = Find(*p, sub / name);
    REQUIRE(pp != nullptr);
    CHECK_FALSE(pp->exists);
    CHECK(pp->in_root);
  }
  // The repository above, existing; the directory above that, absent.
  REQUIRE(Find(*p, repo / ".git") != nullptr);
  CHECK(Find(*p, repo / ".git")->exists);
  REQUIRE(Find(*p, dir.path() / ".git") != nullptr);
  CHECK_FALSE(Find(*p, dir.path() / ".git")->temp_top);

  CHECK(p->WhyNotWritable((sub / "src" / "a.c").string()).empty());
  CHECK_THAT(p->WhyNotWritable((sub / ".git" / "config").string()),
             Catch::Contains((sub / ".git").string()) && Catch::Contains("read-only"));
  CHECK_THAT(p->WhyNotWritable((repo / ".git" / "hooks" / "pre-commit").string()),
             Catch::Contains((repo / ".git").string()));
  CHECK_THAT(p->WhyNotWritable((sub / ".codex" / "config.toml").string()),
             Catch::Contains(".codex"));
  CHECK_THAT(p->WhyNotWritable((dir.path() / "state" / "sessions.db").string()),
             Catch::Contains("codex's own state"));
  CHECK_THAT(p->WhyNotWritable("/etc/passwd"), Catch::Contains("outside the writable roots"));
  // A sibling whose name starts like a protected one is not covered.
  CHECK(p->WhyNotWritable((sub / ".gitignore").string()).empty());
  CHECK(p->WhyNotWritable((sub / ".codex-notes").string()).empty());
}

TEST_CASE("Read-only paths (the shell snapshots): protected inside a root, skipped when absent") {
  codex::testing::TempDir dir("codex-policy-unit-", "/tmp");
  const fs::path work = dir.path() / "work";
  const fs::path snapshots = dir.path() / "home" / ".codex" / "shell_snapshots";
  fs::create_directories(work);
  fs::create_directories(snapshots);
  WritableRootsSpec spec;
  spec.workspace = work.string();
  spec.extra = {dir.path().string()};  // as /tmp covers a $CODEX_HOME under it
  spec.exclude_slash_tmp = true;
  spec.exclude_tmpdir_env_var = true;
  spec.read_only_paths = {snapshots.string(), (dir.path() / "absent").string()};
  auto p = WorkspacePolicy::Compute(spec);
  REQUIRE(p.ok());
  const ProtectedPath* pp = Find(*p, snapshots);
  REQUIRE(pp != nullptr);
  CHECK(pp->exists);
  CHECK(pp->in_root);
  CHECK_FALSE(pp->temp_top);
  CHECK(Find(*p, dir.path() / "absent") == nullptr);
  CHECK_THAT(p->WhyNotWritable((snapshots / "1.2.ab.sh").string()), Catch::Contains("read-only"));
  CHECK(p->WhyNotWritable((dir.path() / "home" / ".codex" / "other").string()).empty());

  // Covered by /tmp alone: still protected, marked for the Landlock-only
  // fallback as /tmp's own top-level .git is.
  spec.extra.clear();
  spec.exclude_slash_tmp = false;
  auto in_tmp = WorkspacePolicy::Compute(spec);
  REQUIRE(in_tmp.ok());
  pp = Find(*in_tmp, snapshots);
  REQUIRE(pp != nullptr);
  CHECK(pp->in_root);
  CHECK(pp->temp_top);
  CHECK_THAT(in_tmp->WhyNotWritable((snapshots / "x.sh").string()), Catch::Contains("read-only"));
}

TEST_CASE("A worktree's gitdir and common dir, a submodule's .git file") {
  codex::testing::TempDir dir("codex-policy-unit-", "/tmp");
  const fs::path main = dir.path() / "main";
  const fs::path wt = dir.path() / "wt";
  const fs::path gitdir = main / ".git" / "worktrees" / "wt";
  fs::create_directories(gitdir);
  fs::create_directories(wt);
  WriteFile(wt / ".git", "gitdir: " + gitdir.string() + "\n");
  WriteFile(gitdir / "commondir", "../..\n");
  fs::create_directories(wt / "mod");
  fs::create_directories(main / ".git" / "modules" / "mod");
  WriteFile(wt / ".gitmodules", "[submodule \"mod\"]\n\tpath = mod\n");
  WriteFile(wt / "mod" / ".git", "gitdir: ../../main/.git/modules/mod\n");
  WritableRootsSpec spec;
  spec.workspace = wt.string();
  spec.extra = {dir.path().string()};
  spec.exclude_slash_tmp = true;
  spec.exclude_tmpdir_env_var = true;
  auto p = WorkspacePolicy::Compute(spec);
  REQUIRE(p.ok());
  for (const fs::path& want : {wt / ".git", gitdir, main / ".git", wt / "mod" / ".git",
                               main / ".git" / "modules" / "mod"}) {
    INFO(want);
    REQUIRE(Find(*p, want) != nullptr);
    CHECK(Find(*p, want)->exists);
  }
}

TEST_CASE("Refusals: a protected path through a writable symlink, a gitdir in /proc") {
  codex::testing::TempDir dir("codex-policy-unit-", "/tmp");
  const fs::path ws = dir.path() / "ws";
  fs::create_directories(ws);
  WritableRootsSpec spec;
  spec.workspace = ws.string();
  spec.exclude_slash_tmp = true;
  spec.exclude_tmpdir_env_var = true;
  fs::create_directory_symlink("/proc", ws / ".git");
  auto link = WorkspacePolicy::Compute(spec);
  REQUIRE_FALSE(link.ok());
  CHECK(link.status().code() == StatusCode::kFailedPrecondition);
  CHECK_THAT(link.status().message(),
             Catch::StartsWith("cannot enforce sandbox read-only path " + (ws / ".git").string() +
                               " because it crosses writable symlink"));
  fs::remove(ws / ".git");
  WriteFile(ws / ".git", "gitdir: /proc/self\n");
  auto proc = WorkspacePolicy::Compute(spec);
  REQUIRE_FALSE(proc.ok());
  CHECK_THAT(proc.status().message(), Catch::Contains("points into /proc"));
  // A symlink elsewhere in the workspace is nobody's business.
  fs::remove(ws / ".git");
  fs::create_directory_symlink("/proc", ws / "proc-link");
  CHECK(WorkspacePolicy::Compute(spec).ok());
}
