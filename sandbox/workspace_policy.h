// WorkspacePolicy: which paths a sandboxed session may write. The one home of
// that rule: the sandbox (confinement.h), apply_patch (core/apply_patch.h),
// the interactive `!cmd` (through the sandbox) and every other writer on the
// host ask this, never a copy of it.
//
// Inputs (WritableRootsSpec): the session's workspace (its cwd), the extra
// roots ([sandbox_workspace_write] writable_roots, --add-dir), whether /tmp
// and $TMPDIR are roots (Codex's default for workspace-write; the config keys
// exclude_slash_tmp and exclude_tmpdir_env_var turn them off) and private
// paths (codex's own state, e.g. the --ephemeral store) that no command may
// touch even when a root covers them.
//
// Output:
//   * writable_roots(): canonical, deduplicated, parents before children.
//   * protected_paths(): kept read-only inside the roots, WHETHER OR NOT THEY
//     EXIST YET (a command must not `git init` a workspace and plant
//     core.fsmonitor for the host's next `git`):
//       - `.git` and `.codex` at the top of each writable root;
//       - for a `.git` file (worktree, submodule): the gitdir it names and
//         that gitdir's common dir (config and hooks live there);
//       - the `.git` of every directory above a writable root (the repository
//         that contains the workspace: started in repo/sub, `../.git/hooks`
//         is protected; absent ones too where a root covers them);
//       - the `.git` file of each submodule listed in the repository's
//         `.gitmodules`;
//       - codex's read-only paths (WritableRootsSpec::read_only_paths) that
//         exist.
//   * private_paths(): neither readable (with namespaces) nor writable.
// Compute() refuses (kFailedPrecondition, one line) a protected path that
// crosses a symlink a command could have written (`.git -> /proc`,
// `.codex -> /tmp/x`, `gitdir:` through such a link), and a `.git` file whose
// gitdir is not a directory or lies in /proc, /sys or /dev, as Codex does
// ("cannot enforce sandbox read-only path … because it crosses writable
// symlink"): binding such a target would bring the host's /proc (or whatever
// the command chose) into the sandbox.
//
// The policy is a snapshot of the filesystem when Compute() ran; each door
// computes it from the same inputs right before it acts (a few lstat calls).
// Thread-compatible; immutable after Compute().
#pragma once

#include <string>
#include <vector>

#include "base/status.h"

namespace codex::sandbox {

struct WritableRootsSpec {
  // The session's workspace; "" = none (then only `extra` and temp roots).
  std::string workspace;
  // More roots: [sandbox_workspace_write] writable_roots, --add-dir. Relative
  // paths are taken against `workspace`.
  std::vector<std::string> extra;
  // /tmp and $TMPDIR are writable roots unless excluded (Codex's keys).
  bool exclude_slash_tmp = false;
  bool exclude_tmpdir_env_var = false;
  // Paths codex keeps for itself; they must exist to be masked.
  std::vector<std::string> private_paths;
  // Codex's own files that commands read but never write (the shell
  // snapshots, core/shell_snapshot.h): protected like `.git` wherever a root
  // covers them. They must exist to be protected (an absent one is skipped).
  // One that only a temp root covers is `temp_top` (kept writable by the
  // Landlock-only fallback, as /tmp's top-level .git; see ProtectedPath).
  std::vector<std::string> read_only_paths;
};

enum class RootKind {
  kWorkspace,  // the workspace or an extra root
  kTemp,       // /tmp or $TMPDIR
};

struct WritableRoot {
  std::string path;  // canonical
  RootKind kind = RootKind::kWorkspace;
};

struct ProtectedPath {
  std::string path;  // absolute; its parent is canonical
  bool exists = false;
  // Whether `path` lies inside a writable root (else / is read-only anyway).
  bool in_root = false;
  // Whether it is a top-level `.git`/`.codex` of a temp root that nothing
  // else requires (the Landlock-only fallback leaves those to keep /tmp
  // usable; see docs/threat-model.md).
  bool temp_top = false;
};

class WorkspacePolicy {
 public:
  // Errors: kInvalidArgument (a root is missing or not a directory; the
  // workspace must exist, a missing temp root is skipped), kFailedPrecondition
  // (a protected path crosses a writable symlink, or a gitdir is bogus).
  static Result<WorkspacePolicy> Compute(const WritableRootsSpec& spec);

  const std::vector<WritableRoot>& writable_roots() const { return roots_; }
  const std::vector<ProtectedPath>& protected_paths() const { return protected_; }
  const std::vector<std::string>& private_paths() const { return private_; }
  // Just the root paths.
  std::vector<std::string> root_paths() const;

  // For a real path (symlinks resolved, as apply_patch resolves them): "" when
  // a command may write it, else one line saying why not (outside the roots,
  // or the protected or private path that covers it).
  std::string WhyNotWritable(const std::string& real_path) const;

 private:
  std::vector<WritableRoot> roots_;
  std::vector<ProtectedPath> protected_;
  std::vector<std::string> private_;
};

// Whether `path` is `dir` or lies beneath it (both absolute, normalised).
bool PathWithin(const std::string& path, const std::string& dir);

// The pseudo filesystem (/proc, /sys, /dev) a real path lies in, "" when
// none. Read on the host by codex, such a path is codex's own process
// (/proc/self/environ holds its API key) or a device: a .git file pointing
// there is refused, and a project doc (AGENTS.md) linked there is no doc.
std::string PseudoFilesystemOf(const std::string& real_path);

// `dir`/`name` (no doubled slash under "/"), the parent of an absolute
// normalised path ("/" for "/" and its entries), and whether `path` is a
// directory (symlinks followed): the path helpers of the policy, which the
// sandbox uses too.
std::string JoinPath(const std::string& dir, const std::string& name);
std::string ParentDir(const std::string& path);
bool IsDirectory(const std::string& path);

}  // namespace codex::sandbox
