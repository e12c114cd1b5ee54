// WorkspaceUndo on real directories and real git repositories: what a turn
// did is recorded and reverted file by file, a file changed since is a
// conflict, the user's git state is untouched, and nothing a repository's
// config names runs.
#include "core/undo.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>

#include "testing/files.h"
#include "testing/git_repo.h"
#include "testing/temp_dir.h"

namespace fs = std::filesystem;
using namespace codex::core;
using codex::testing::Git;
using codex::testing::GitMissing;
using codex::testing::ReadFile;
using codex::testing::TempDir;
using codex::testing::UserGitState;
using codex::testing::WriteFile;

namespace {

constexpr char kSession[] = "0193aaaa-bbbb-7ccc-8ddd-eeeeffff0000";

std::unique_ptr<WorkspaceUndo> OpenUndo(const fs::path& ws, const fs::path& state,
                                        const std::string& session = kSession,
                                        UndoLimits limits = {}) {
  auto undo = WorkspaceUndo::Open(ws.string(), state.string(), session, limits);
  INFO(undo.status().message());
  REQUIRE(undo.ok());
  return std::move(*undo);
}

void Ok(const codex::Status& s) {
  INFO(s.message());
  REQUIRE(s.ok());
}

std::map<std::string, UndoChange> AsMap(const std::vector<UndoFile>& files) {
  std::map<std::string, UndoChange> m;
  for (const auto& f : files) m[f.path] = f.change;
  return m;
}

bool Executable(const fs::path& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && (st.st_mode & 0100) != 0;
}

// Two turns on `ws` and their undo, the same on either backend.
void TwoTurnsAndUndo(const fs::path& ws, const fs::path& state) {
  const std::string binary("\x00\x01\xff\xfe binary\n\x00", 13);
  WriteFile(ws / "keep.txt", "keep\n");
  WriteFile(ws / "edit.txt", "old\n");
  WriteFile(ws / "gone.txt", "deleted by turn 1\n");
  WriteFile(ws / "data.bin", binary);
  WriteFile(ws / "tool.sh", "#!/bin/sh\necho old\n");
  fs::permissions(ws / "tool.sh", fs::perms::owner_all);

  auto undo = OpenUndo(ws, state);
  // Turn 1: modify, delete, create in a new directory, binary rewrite, chmod.
  Ok(undo->BeginTurn());
  WriteFile(ws / "edit.txt", "new\n");
  fs::remove(ws / "gone.txt");
  WriteFile(ws / "sub/dir/made.txt", "created\n");
  WriteFile(ws / "data.bin", std::string("\xff\x00 changed", 10));
  fs::permissions(ws / "tool.sh", fs::perms::owner_read | fs::perms::owner_write);
  auto t1 = undo->EndTurn("0193aaaa-0000-7000-8000-000000000001");
  Ok(t1.status());
  CHECK(AsMap(*t1) == std::map<std::string, UndoChange>{{"data.bin", UndoChange::kModified},
                                                        {"edit.txt", UndoChange::kModified},
                                                        {"gone.txt", UndoChange::kDeleted},
                                                        {"sub/dir/made.txt", UndoChange::kCreated},
                                                        {"tool.sh", UndoChange::kModified}});
  // Turn 2 changes edit.txt again; a turn that changes nothing records nothing.
  Ok(undo->BeginTurn());
  WriteFile(ws / "edit.txt", "newer\n");
  WriteFile(ws / "second.txt", "turn 2\n");
  auto t2 = undo->EndTurn("0193aaaa-0000-7000-8000-000000000002");
  Ok(t2.status());
  CHECK(t2->size() == 2);
  Ok(undo->BeginTurn());
  auto t3 = undo->EndTurn("0193aaaa-0000-7000-8000-000000000003");
  Ok(t3.status());
  CHECK(t3->empty());

  // A new object (a resumed session) sees both turns: the newest first.
  undo = OpenUndo(ws, state);
  auto plan = undo->Plan();
  Ok(plan.status());
  REQUIRE(plan->has_value());
  CHECK((*plan)->turn_id == "0193aaaa-0000-7000-8000-000000000002");
  CHECK((*plan)->turns == 2);
  CHECK((*plan)->conflicts.empty());
  auto r2 = undo->Undo((*plan)->turn_id, UndoConflicts::kRefuse);
  Ok(r2.status());
  CHECK(r2->turns_left == 1);
  CHECK(ReadFile(ws / "edit.txt") == "new\n");
  CHECK(!fs::exists(ws / "second.txt"));
  CHECK(ReadFile(ws / "sub/dir/made.txt") == "created\n");  // turn 1's, still there

  // /undo again walks back turn 1.
  plan = undo->Plan();
  Ok(plan.status());
  REQUIRE(plan->has_value());
  CHECK((*plan)->turn_id == "0193aaaa-0000-7000-8000-000000000001");
  auto r1 = undo->Undo((*plan)->turn_id, UndoConflicts::kRefuse);
  Ok(r1.status());
  CHECK(r1->turns_left == 0);
  CHECK(r1->restored.size() == 5);
  CHECK(ReadFile(ws / "edit.txt") == "old\n");
  CHECK(ReadFile(ws / "gone.txt") == "deleted by turn 1\n");
  CHECK(!fs::exists(ws / "sub/dir/made.txt"));
  CHECK(!fs::exists(ws / "sub"));  // the directories it left empty went too
  CHECK(ReadFile(ws / "data.bin") == binary);
  CHECK(Executable(ws / "tool.sh"));
  CHECK(ReadFile(ws / "keep.txt") == "keep\n");
  const std::string message = UndoMessageText(*r1);
  CHECK(message.find("- gone.txt (that turn deleted it; it is back)") != std::string::npos);
  CHECK(message.find("- sub/dir/made.txt (that turn created it; it is removed)") !=
        std::string::npos);

  plan = undo->Plan();
  Ok(plan.status());
  CHECK(!plan->has_value());
}

}  // namespace

TEST_CASE("a plain directory: two turns recorded, undone newest first, across a reopen") {
  TempDir ws("undo-ws-");
  TempDir state("undo-state-");
  auto undo = OpenUndo(ws.path(), state.path());
  CHECK(undo->kind() == "copy");
  undo.reset();
  TwoTurnsAndUndo(ws.path(), state.path());
  // The copies live in the state directory, never in the workspace.
  CHECK(fs::exists(state.path() / "copy/blobs"));
  for (const auto& e : fs::recursive_directory_iterator(ws.path())) {
    CHECK(e.path().filename().string().find(".tmp-") == std::string::npos);
  }
}

TEST_CASE("a git work tree: objects and a private ref; index, branches, stash untouched") {
  if (GitMissing()) return;
  TempDir ws("undo-git-");
  TempDir state("undo-state-");
  Git(ws.path(), "init -q");
  WriteFile(ws.path() / "tracked.txt", "v1\n");
  WriteFile(ws.path() / ".gitignore", "ignored/\n");
  Git(ws.path(), "add -A");
  Git(ws.path(), "commit -q -m one");
  WriteFile(ws.path() / "tracked.txt", "stashed\n");
  Git(ws.path(), "stash -q");
  WriteFile(ws.path() / "staged.txt", "staged\n");
  Git(ws.path(), "add staged.txt");
  Git(ws.path(), "branch side");
  const auto git_before = UserGitState(ws.path());

  auto undo = OpenUndo(ws.path(), state.path());
  CHECK(undo->kind() == "git");
  // An ignored file is not snapshotted: a turn that only writes one records nothing.
  Ok(undo->BeginTurn());
  WriteFile(ws.path() / "ignored/build.o", "object\n");
  auto ignored = undo->EndTurn("");
  Ok(ignored.status());
  CHECK(ignored->empty());

  CHECK(Git(ws.path(), "for-each-ref '--format=%(refname)' refs/codex/").empty());
  undo.reset();
  // The status lines differ by the files the turns write; compare after undo.
  TwoTurnsAndUndo(ws.path(), state.path());
  fs::remove_all(ws.path() / "keep.txt");
  fs::remove_all(ws.path() / "edit.txt");
  fs::remove_all(ws.path() / "gone.txt");
  fs::remove_all(ws.path() / "data.bin");
  fs::remove_all(ws.path() / "tool.sh");
  CHECK(UserGitState(ws.path()) == git_before);
  CHECK(Git(ws.path(), "for-each-ref '--format=%(refname)' refs/codex/").empty());
  CHECK(Git(ws.path(), "stash list").find("stash@{0}") != std::string::npos);
}

TEST_CASE("a git work tree keeps a recorded turn as a commit under refs/codex/undo") {
  if (GitMissing()) return;
  TempDir ws("undo-git-");
  TempDir state("undo-state-");
  Git(ws.path(), "init -q");
  WriteFile(ws.path() / "a.txt", "a\n");
  auto undo = OpenUndo(ws.path(), state.path());
  Ok(undo->BeginTurn());
  WriteFile(ws.path() / "a.txt", "b\n");
  Ok(undo->EndTurn("0193aaaa-0000-7000-8000-00000000000a").status());
  const std::string ref =
      std::string("refs/codex/undo/") + kSession + "/0193aaaa-0000-7000-8000-00000000000a";
  CHECK(Git(ws.path(), "cat-file -p " + ref + ":a.txt") == "b\n");
  CHECK(Git(ws.path(), "cat-file -p " + ref + "^1:a.txt") == "a\n");
  // Another session's records are its own.
  auto other = OpenUndo(ws.path(), state.path(), "0193aaaa-bbbb-7ccc-8ddd-000000000001");
  auto plan = other->Plan();
  Ok(plan.status());
  CHECK(!plan->has_value());
}

TEST_CASE("a file changed since the turn is a conflict: refused, or overwritten when asked") {
  for (bool git : {false, true}) {
    if (git && GitMissing()) continue;
    INFO((git ? "git" : "plain"));
    TempDir ws("undo-conflict-");
    TempDir state("undo-state-");
    if (git) Git(ws.path(), "init -q");
    WriteFile(ws.path() / "a.txt", "before\n");
    WriteFile(ws.path() / "b.txt", "before b\n");
    auto undo = OpenUndo(ws.path(), state.path());
    Ok(undo->BeginTurn());
    WriteFile(ws.path() / "a.txt", "turn\n");
    WriteFile(ws.path() / "b.txt", "turn b\n");
    WriteFile(ws.path() / "c.txt", "created\n");
    Ok(undo->EndTurn("").status());
    // The user edits a.txt and removes c.txt afterwards.
    WriteFile(ws.path() / "a.txt", "the user's edit\n");
    fs::remove(ws.path() / "c.txt");
    auto plan = undo->Plan();
    Ok(plan.status());
    REQUIRE(plan->has_value());
    CHECK((*plan)->conflicts == std::vector<std::string>{"a.txt", "c.txt"});
    auto refused = undo->Undo((*plan)->turn_id, UndoConflicts::kRefuse);
    REQUIRE(!refused.ok());
    CHECK(refused.status().message().find("a.txt, c.txt") != std::string::npos);
    CHECK(ReadFile(ws.path() / "a.txt") == "the user's edit\n");  // nothing written
    CHECK(ReadFile(ws.path() / "b.txt") == "turn b\n");
    auto done = undo->Undo((*plan)->turn_id, UndoConflicts::kOverwrite);
    Ok(done.status());
    CHECK(done->overwritten == std::vector<std::string>{"a.txt", "c.txt"});
    CHECK(ReadFile(ws.path() / "a.txt") == "before\n");
    CHECK(ReadFile(ws.path() / "b.txt") == "before b\n");
    CHECK(!fs::exists(ws.path() / "c.txt"));
    CHECK(UndoMessageText(*done).find("overwritten too: a.txt, c.txt") != std::string::npos);
  }
}

TEST_CASE("symlinks and files over the size limit are named, not restored") {
  TempDir ws("undo-skip-");
  TempDir state("undo-state-");
  WriteFile(ws.path() / "big.bin",
            std::string(static_cast<size_t>(UndoLimits{}.max_file_bytes) + 1, 'x'));
  auto undo = OpenUndo(ws.path(), state.path());
  Ok(undo->BeginTurn());
  WriteFile(ws.path() / "big.bin", "small now\n");
  fs::create_symlink("big.bin", ws.path() / "link");
  WriteFile(ws.path() / "small.txt", "new\n");
  auto files = undo->EndTurn("");
  Ok(files.status());
  CHECK(AsMap(*files) == std::map<std::string, UndoChange>{{"small.txt", UndoChange::kCreated}});
  auto plan = undo->Plan();
  Ok(plan.status());
  REQUIRE(plan->has_value());
  CHECK((*plan)->skipped == std::vector<std::string>{"big.bin", "link"});
  auto done = undo->Undo((*plan)->turn_id, UndoConflicts::kRefuse);
  Ok(done.status());
  CHECK(ReadFile(ws.path() / "big.bin") == "small now\n");  // left as it is
  CHECK(fs::is_symlink(ws.path() / "link"));
  CHECK(!fs::exists(ws.path() / "small.txt"));
  CHECK(UndoMessageText(*done).find("Not restored") != std::string::npos);
}

TEST_CASE("a directory swapped for a symlink after the turn is not written through") {
  TempDir ws("undo-swap-");
  TempDir outside("undo-outside-");
  TempDir state("undo-state-");
  WriteFile(ws.path() / "src/a.txt", "before\n");
  WriteFile(ws.path() / "first.txt", "before\n");
  auto undo = OpenUndo(ws.path(), state.path());
  Ok(undo->BeginTurn());
  WriteFile(ws.path() / "first.txt", "turn\n");
  fs::remove_all(ws.path() / "src");
  fs::create_directory_symlink(outside.path(), ws.path() / "src");
  auto files = undo->EndTurn("");
  Ok(files.status());
  CHECK(AsMap(*files) == std::map<std::string, UndoChange>{{"first.txt", UndoChange::kModified},
                                                           {"src/a.txt", UndoChange::kDeleted}});
  auto plan = undo->Plan();
  Ok(plan.status());
  REQUIRE(plan->has_value());
  auto done = undo->Undo((*plan)->turn_id, UndoConflicts::kOverwrite);
  CHECK(!done.ok());
  CHECK(!fs::exists(outside.path() / "a.txt"));
  CHECK(ReadFile(ws.path() / "first.txt") == "turn\n");  // checked first, nothing written
}

TEST_CASE("planted fsmonitor, hooks and filters never run while snapshotting and undoing") {
  if (GitMissing()) return;
  TempDir ws("undo-planted-");
  TempDir state("undo-state-");
  TempDir marks("undo-marks-");
  Git(ws.path(), "init -q");
  const std::string mark = (marks.path() / "ran").string();
  const std::string script = "#!/bin/sh\necho \"$0 $*\" >> '" + mark + "'\ncat\n";
  WriteFile(ws.path() / "evil.sh", script);
  fs::permissions(ws.path() / "evil.sh", fs::perms::owner_all);
  const std::string evil = (ws.path() / "evil.sh").string();
  Git(ws.path(), "config core.fsmonitor '" + evil + "'");
  Git(ws.path(), "config filter.evil.clean '" + evil + " clean'");
  Git(ws.path(), "config filter.evil.smudge '" + evil + " smudge'");
  Git(ws.path(), "config filter.evil.process '" + evil + " process'");
  Git(ws.path(), "config filter.evil.required true");
  Git(ws.path(), "config core.hooksPath '" + (ws.path() / "hooks").string() + "'");
  for (const char* hook : {"reference-transaction", "post-index-change", "post-commit",
                           "pre-commit", "post-checkout"}) {
    WriteFile(ws.path() / "hooks" / hook, script);
    fs::permissions(ws.path() / "hooks" / hook, fs::perms::owner_all);
    WriteFile(ws.path() / ".git/hooks" / hook, script);
    fs::permissions(ws.path() / ".git/hooks" / hook, fs::perms::owner_all);
  }
  WriteFile(ws.path() / ".gitattributes", "* filter=evil\n");
  WriteFile(ws.path() / "a.txt", "before\n");
  fs::remove(mark);
  auto undo = OpenUndo(ws.path(), state.path());
  Ok(undo->BeginTurn());
  WriteFile(ws.path() / "a.txt", "after\n");
  WriteFile(ws.path() / "b.txt", "created\n");
  // Planted during the turn, after codex listed the config, as a command could.
  Git(ws.path(), "config filter.late.clean '" + evil + " late-clean'");
  Git(ws.path(), "config filter.late.process '" + evil + " late-process'");
  Git(ws.path(), "config core.fsmonitor '" + evil + " late-fsmonitor'");
  WriteFile(ws.path() / ".gitattributes", "* filter=late\n");
  Ok(undo->EndTurn("").status());
  auto plan = undo->Plan();
  Ok(plan.status());
  REQUIRE(plan->has_value());
  Ok(undo->Undo((*plan)->turn_id, UndoConflicts::kRefuse).status());
  CHECK(ReadFile(ws.path() / "a.txt") == "before\n");
  CHECK(!fs::exists(ws.path() / "b.txt"));
  CHECK(ReadFile(ws.path() / ".gitattributes") == "* filter=evil\n");  // the turn's edit undone
  INFO(ReadFile(mark));
  CHECK(!fs::exists(mark));
  // The plants are live: git without codex's overrides runs them (the clean
  // filter for hash-object, the reference-transaction hook for update-ref).
  const std::string at = "git -C '" + ws.path().string() + "' ";
  const std::string plain = "(" + at + "hash-object a.txt; " + at + "update-ref refs/probe \"$(" +
                            at + "write-tree)\") >/dev/null 2>&1";
  (void)std::system(plain.c_str());
  const std::string ran = ReadFile(mark);
  INFO(ran);
  CHECK(ran.find("evil.sh process") != std::string::npos);
  CHECK(ran.find("hooks/reference-transaction") != std::string::npos);
}

TEST_CASE("a plain directory over the limits is refused with one line") {
  TempDir ws("undo-many-");
  TempDir state("undo-state-");
  UndoLimits limits;
  limits.max_files = 40;
  for (int i = 0; i <= limits.max_files; ++i) {
    WriteFile(ws.path() / ("d" + std::to_string(i / 10)) / std::to_string(i), "");
  }
  auto undo = OpenUndo(ws.path(), state.path(), kSession, limits);
  codex::Status s = undo->BeginTurn();
  CHECK(s.code() == codex::StatusCode::kResourceExhausted);
  CHECK(s.message().find("more than 40 files") != std::string::npos);
  // Without a snapshot, the turn's end records nothing.
  auto files = undo->EndTurn("");
  Ok(files.status());
  CHECK(files->empty());
}

TEST_CASE("a plain directory over the total size limit is refused") {
  TempDir ws("undo-bytes-");
  TempDir state("undo-state-");
  UndoLimits limits;
  limits.max_total_bytes = 1 << 20;
  for (int i = 0; i < 3; ++i) WriteFile(ws.path() / std::to_string(i), std::string(400'000, 'x'));
  auto undo = OpenUndo(ws.path(), state.path(), kSession, limits);
  codex::Status s = undo->BeginTurn();
  CHECK(s.code() == codex::StatusCode::kResourceExhausted);
  CHECK(s.message().find("more than 1 MiB") != std::string::npos);
}

TEST_CASE("a tampered record cannot make /undo write outside the workspace or into .git") {
  for (const std::string target : {"../escape.txt", ".git/hooks/post-checkout", ".codex/x"}) {
    INFO(target);
    TempDir root("undo-tamper-");
    const fs::path ws = root.path() / "ws";
    const fs::path state = root.path() / "state";
    fs::create_directories(ws);
    WriteFile(ws / "x.txt", "#!/bin/sh\necho planted\n");
    auto undo = OpenUndo(ws, state);
    Ok(undo->BeginTurn());
    fs::remove(ws / "x.txt");
    Ok(undo->EndTurn("0193aaaa-0000-7000-8000-0000000000ff").status());
    // Whoever can write the state directory rewrites the record's path.
    const fs::path record =
        state / "copy/sessions" / kSession / "0193aaaa-0000-7000-8000-0000000000ff.json";
    std::string text = ReadFile(record);
    const size_t at = text.find("\"x.txt\"");
    REQUIRE(at != std::string::npos);
    text.replace(at, 7, "\"" + target + "\"");
    WriteFile(record, text);
    auto plan = undo->Plan();
    Ok(plan.status());
    REQUIRE(plan->has_value());
    auto done = undo->Undo((*plan)->turn_id, UndoConflicts::kOverwrite);
    REQUIRE(!done.ok());
    INFO(done.status().message());
    CHECK(done.status().message().find("Refusing") != std::string::npos);
    CHECK(!fs::exists(root.path() / "escape.txt"));
    CHECK(!fs::exists(ws / ".git"));
    CHECK(!fs::exists(ws / ".codex"));
  }
}
