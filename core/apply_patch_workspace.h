// The filesystem side of apply_patch: the working directory and writable
// roots, path resolution that refuses anything outside the roots (after `..`
// and every symlink), symlink-free opens, and a dry-run overlay so previews
// see earlier hunks' effects without writing. Thread-compatible. Internal to
// core/ (apply_patch.cc).
#pragma once

#include <sys/types.h>

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "core/apply_patch.h"

namespace codex::core::patch_internal {

struct Workspace {
  std::string cwd;                                   // canonical
  std::vector<std::string> roots;                    // canonical
  const sandbox::WorkspacePolicy* policy = nullptr;  // protected paths, when set
  bool dry_run = false;
  // Dry run: what earlier hunks wrote (content) or deleted (nullopt), by real path.
  std::map<std::string, std::optional<std::string>> overlay;

  std::string Shown(std::string_view rel) const;

  std::string RootsText() const;

  // The real path `rel` designates: `..` and every symlink resolved (the last
  // component too unless `follow_final` is false); missing components are
  // taken as plain names. Refuses absolute paths and anything that lands
  // outside the writable roots.
  Result<std::string> Resolve(std::string_view rel, bool follow_final) const;

  // Opens `real` (a path Resolve returned, so inside a root and free of
  // symlinks) without following any symlink on the way: a symlink swapped in
  // after Resolve fails the open (ELOOP/EXDEV) instead of redirecting it out of
  // the root. Uses openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS); where that
  // is unavailable (old kernel, seccomp) only the last component is guarded.
  // Returns the fd, or -1 with errno set.
  int OpenNoSymlinks(const std::string& real, int flags, mode_t mode) const;

  // 0 and the text, or an errno.
  int Read(const std::string& real, std::string* out) const;

  // Creates the missing directories above `real`, each one inside its
  // (symlink-free) parent. 0 or an errno.
  int MakeParents(const std::string& real) const;

  Status Write(const std::string& real, std::string_view rel, const std::string& content,
               std::optional<mode_t> mode);

  // 0 or an errno. Never removes directories.
  int Remove(const std::string& real);
};

// The workspace of `opts`: cwd (canonical, must be a directory) and the
// canonical writable roots (cwd alone when none are given).
Result<Workspace> OpenWorkspace(const ApplyPatchOptions& opts);

}  // namespace codex::core::patch_internal
