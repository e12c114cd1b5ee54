// WorkspaceUndo: what `/undo` reverts. Each turn that changes files in the
// session's directory records the files it touched, before and after, keyed
// by session and turn; `/undo` restores the newest recorded turn's files to
// their state before it (a file the turn created is removed, one it deleted
// comes back, one it changed gets its old bytes and mode), and once more
// walks back one turn further.
//
// Which files: under the session's directory (cwd), regular files of at most
// UndoLimits::max_file_bytes; in a git work tree the files `git ls-files --cached
// --others --exclude-standard` names (ignored files are not snapshotted, nor
// anything in .git), elsewhere every file below cwd but `.git` directories
// and a top-level `.codex`, at most UndoLimits::max_files files and
// max_total_bytes in all. Symlinks and larger files are not snapshotted: a turn
// that changes one records it as `skipped`, and /undo leaves it and names
// it. You cannot know in advance what a shell command edits, so BeginTurn
// records every file's state (cheaply: only files whose stat changed since
// the previous capture are read again) and EndTurn compares.
//
// Where the snapshots live:
//   * git work tree: as git objects of the repository (`hash-object -w
//     --no-filters`: the bytes as they are, no filter or conversion), and per
//     turn a commit `refs/codex/undo/<session>/<turn>` whose tree holds the
//     touched files after the turn and whose parent's tree holds them before
//     (the message lists skipped files). The user's index, branches, HEAD and
//     stash are never touched: trees are built in a private index file under
//     `state_dir`. Every git command goes through core/host_git.h (reads in
//     the read-only sandbox; writes through HostGit::RunWriting), so no
//     program the repository's config names ever runs.
//   * elsewhere: copies of the files' contents under `state_dir`
//     (`blobs/<sha256>`) and a JSON record per turn
//     (`sessions/<session>/<turn>.json`).
// Either way a record outlives the process: a resumed session can undo its
// earlier turns.
//
// Restoring writes through apply_patch's symlink-free opens (a path whose
// directories were swapped for symlinks is refused, never followed), within
// cwd, and never into the protected paths of the workspace policy. A file
// whose current state is not what the turn left (the user or a later,
// not-undone turn changed it) is a conflict: Undo refuses unless told to
// overwrite, and Plan names the conflicts first so a caller can ask.
//
// Not thread-safe; one thread owns it. Holds no resources between calls
// besides the last capture (the stat cache).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"

namespace codex::core {

// What is snapshotted at most (see above). The defaults are the product's;
// tests pass smaller ones.
struct UndoLimits {
  int64_t max_file_bytes = 1'000'000;  // larger files are skipped (git reads up to 1 MiB)
  int max_files = 20'000;              // a plain directory with more is refused
  int64_t max_total_bytes = 256ll << 20;
};

// What a turn did to a file (what /undo reverts).
enum class UndoChange { kCreated, kDeleted, kModified };
// "created", "deleted", "modified".
std::string_view UndoChangeName(UndoChange change);

struct UndoFile {
  std::string path;  // relative to the session's directory
  UndoChange change = UndoChange::kModified;
};

// The newest turn /undo would revert, and what it would do.
struct UndoPlan {
  std::string turn_id;
  std::vector<UndoFile> files;         // path order
  std::vector<std::string> conflicts;  // changed since that turn: overwriting loses that
  std::vector<std::string> skipped;    // changed by the turn but not snapshotted
  int turns = 0;                       // recorded turns, this one included
};

struct UndoResult {
  std::string turn_id;
  std::vector<UndoFile> restored;        // path order
  std::vector<std::string> overwritten;  // conflicts that were overwritten
  std::vector<std::string> skipped;      // left as they are (see UndoPlan)
  int turns_left = 0;                    // recorded turns still to undo
};

enum class UndoConflicts { kRefuse, kOverwrite };

namespace undo_internal {
class Backend;
struct Capture;
}  // namespace undo_internal

class WorkspaceUndo {
 public:
  // `workspace`: the session's directory (must exist). `state_dir`: codex's
  // own directory for undo data ($CODEX_HOME/undo; created 0700 on first
  // use), outside the workspace. Git is used when `workspace` is inside a
  // git work tree and git runs; otherwise the directory copy.
  static Result<std::unique_ptr<WorkspaceUndo>> Open(const std::string& workspace,
                                                     const std::string& state_dir,
                                                     std::string session_id,
                                                     UndoLimits limits = {});
  ~WorkspaceUndo();

  // "git" or "copy": where snapshots go.
  std::string_view kind() const;
  const std::string& session_id() const { return session_id_; }
  const std::string& workspace() const { return root_; }

  // Records the state of the workspace's files before a turn.
  // kResourceExhausted when the workspace is over the limits (a plain
  // directory of more than max_files files, more than max_total_bytes in
  // all; a git work tree listing more files than git's output holds).
  Status BeginTurn();
  // After the turn: records the files that changed since BeginTurn under
  // `turn_id` ("" = a fresh time-ordered id). The files recorded, none when
  // nothing changed (or BeginTurn did not succeed).
  Result<std::vector<UndoFile>> EndTurn(const std::string& turn_id);

  // What Undo would do now; nullopt when no recorded turn is left.
  Result<std::optional<UndoPlan>> Plan();
  // Restores the files of the newest recorded turn (the one Plan showed:
  // `turn_id`, kFailedPrecondition when it is no longer the newest) and
  // drops its record. With kRefuse a conflict found now refuses the whole
  // undo (kFailedPrecondition naming the files; nothing is written).
  Result<UndoResult> Undo(const std::string& turn_id, UndoConflicts conflicts);

 private:
  WorkspaceUndo(std::string root, std::string session_id, UndoLimits limits,
                std::unique_ptr<undo_internal::Backend> backend);

  std::string root_;
  UndoLimits limits_;
  std::string session_id_;
  std::unique_ptr<undo_internal::Backend> backend_;
  std::unique_ptr<undo_internal::Capture> before_;  // set by BeginTurn
  std::unique_ptr<undo_internal::Capture> last_;    // the newest capture (stat cache)
};

// The message the model gets after an undo (a developer message's text):
// which turn's changes were reverted and each file restored.
std::string UndoMessageText(const UndoResult& result);

}  // namespace codex::core
