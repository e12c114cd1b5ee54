// ApplyPatch / PreviewPatch: a parsed patch run hunk by hunk against the
// workspace. The parser (apply_patch_parser.cc), the matcher
// (apply_patch_match.cc), the diff (apply_patch_diff.cc), the filesystem
// (apply_patch_workspace.cc) and the shell form (apply_patch_shell.cc) live in
// files of their own.
#include "core/apply_patch.h"

#include <sys/stat.h>

#include <optional>
#include <utility>

#include "core/apply_patch_diff.h"
#include "core/apply_patch_match.h"
#include "core/apply_patch_text.h"
#include "core/apply_patch_workspace.h"

namespace codex::core {
namespace {

using patch_internal::ComputeEdit;
using patch_internal::Edit;
using patch_internal::OpenWorkspace;
using patch_internal::OsError;
using patch_internal::UnifiedDiff;
using patch_internal::WholeFileScript;
using patch_internal::Workspace;

Result<ApplyPatchOutcome> RunPatch(const ParsedPatch& patch, const ApplyPatchOptions& opts,
                                   bool dry_run) {
  if (patch.hunks.empty()) return InvalidArgumentError("No files were modified.");
  ASSIGN_OR_RETURN(Workspace ws, OpenWorkspace(opts));
  ws.dry_run = dry_run;

  // Safety first: refuse the whole patch before writing anything.
  for (const PatchHunk& hunk : patch.hunks) {
    RETURN_IF_ERROR(ws.Resolve(hunk.path, hunk.kind != PatchHunkKind::kDelete).status());
    if (!hunk.move_path.empty()) RETURN_IF_ERROR(ws.Resolve(hunk.move_path, true).status());
  }

  ApplyPatchOutcome outcome;
  for (const PatchHunk& hunk : patch.hunks) {
    FileChange change;
    change.path = hunk.path;
    switch (hunk.kind) {
      case PatchHunkKind::kAdd: {
        ASSIGN_OR_RETURN(std::string real, ws.Resolve(hunk.path, true));
        RETURN_IF_ERROR(ws.Write(real, hunk.path, hunk.contents, std::nullopt));
        change.kind = FileChangeKind::kAdd;
        change.new_content = hunk.contents;
        change.unified_diff = UnifiedDiff(WholeFileScript(hunk.contents, '+'));
        outcome.added.push_back(hunk.path);
        break;
      }
      case PatchHunkKind::kDelete: {
        ASSIGN_OR_RETURN(std::string real, ws.Resolve(hunk.path, false));
        std::string old_text;
        struct stat st;
        bool regular = ::lstat(real.c_str(), &st) == 0 && S_ISREG(st.st_mode);
        if ((regular || ws.overlay.contains(real)) && ws.Read(real, &old_text) != 0) {
          old_text.clear();
        }
        if (ws.Remove(real) != 0) {
          return FailedPreconditionError("Failed to delete file " + ws.Shown(hunk.path));
        }
        change.kind = FileChangeKind::kDelete;
        change.unified_diff = UnifiedDiff(WholeFileScript(old_text, '-'));
        outcome.deleted.push_back(hunk.path);
        break;
      }
      case PatchHunkKind::kUpdate: {
        ASSIGN_OR_RETURN(std::string real, ws.Resolve(hunk.path, true));
        std::string old_text;
        if (int err = ws.Read(real, &old_text)) {
          return FailedPreconditionError("Failed to read file to update " + ws.Shown(hunk.path) +
                                         ": " + OsError(err));
        }
        ASSIGN_OR_RETURN(Edit edit, ComputeEdit(old_text, hunk.chunks, ws.Shown(hunk.path)));
        change.kind = FileChangeKind::kUpdate;
        change.unified_diff = UnifiedDiff(edit.script);
        change.new_content = edit.new_text;
        if (hunk.move_path.empty()) {
          RETURN_IF_ERROR(ws.Write(real, hunk.path, edit.new_text, std::nullopt));
          outcome.modified.push_back(hunk.path);
        } else {
          ASSIGN_OR_RETURN(std::string dest, ws.Resolve(hunk.move_path, true));
          std::optional<mode_t> mode;
          struct stat st;
          if (::stat(real.c_str(), &st) == 0) mode = st.st_mode & 07777;
          RETURN_IF_ERROR(ws.Write(dest, hunk.move_path, edit.new_text, mode));
          if (dest != real) {
            if (int err = ws.Remove(real)) {
              return FailedPreconditionError("Failed to remove original " + ws.Shown(hunk.path) +
                                             ": " + OsError(err));
            }
          }
          change.move_path = hunk.move_path;
          outcome.modified.push_back(hunk.move_path);
        }
        break;
      }
    }
    outcome.changes.push_back(std::move(change));
  }
  return outcome;
}

}  // namespace

std::string_view FileChangeKindName(FileChangeKind kind) {
  switch (kind) {
    case FileChangeKind::kAdd:
      return "add";
    case FileChangeKind::kDelete:
      return "delete";
    case FileChangeKind::kUpdate:
      return "update";
  }
  return "update";
}

std::string ApplyPatchOutcome::Summary() const {
  std::string out = "Success. Updated the following files:\n";
  for (const std::string& p : added) out += "A " + p + "\n";
  for (const std::string& p : modified) out += "M " + p + "\n";
  for (const std::string& p : deleted) out += "D " + p + "\n";
  return out;
}

Result<ApplyPatchOutcome> ApplyPatch(std::string_view patch_text, const ApplyPatchOptions& opts) {
  ASSIGN_OR_RETURN(ParsedPatch patch, ParsePatch(patch_text));
  return ApplyParsedPatch(patch, opts);
}

Result<ApplyPatchOutcome> ApplyParsedPatch(const ParsedPatch& patch,
                                           const ApplyPatchOptions& opts) {
  return RunPatch(patch, opts, /*dry_run=*/false);
}

Result<ApplyPatchOutcome> PreviewPatch(const ParsedPatch& patch, const ApplyPatchOptions& opts) {
  return RunPatch(patch, opts, /*dry_run=*/true);
}

}  // namespace codex::core
