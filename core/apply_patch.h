// apply_patch: the `*** Begin Patch` file-editing format used by the model.
//
// Three layers, each usable alone:
//   1. ParsePatch: text -> ParsedPatch (pure, no I/O).
//   2. ApplyChunksToText: an Update hunk's chunks applied to a file's text
//      (pure). Chunks are located with fuzzy matching in passes: exact, then
//      ignoring trailing whitespace, then ignoring leading and trailing
//      whitespace, then with Unicode punctuation (dashes, quotes, special
//      spaces) folded to ASCII. Line endings of untouched and context lines are
//      kept; new lines take the file's first line ending (LF when none), and
//      the result always ends with a line ending.
//   3. ApplyPatch / PreviewPatch: hunks run against the filesystem in order,
//      relative to ApplyPatchOptions::cwd. There is no rollback: when hunk N
//      fails, hunks before it stay applied (this matches the reference
//      implementation and its conformance scenarios).
//
// Workspace safety (checked for every hunk before anything is written):
// paths must be relative; after resolving `..` and every symlink on the way
// (including a final component that is a symlink), the target must lie inside
// one of the writable roots (ApplyPatchOptions::writable_roots, or the cwd
// alone when that list is empty), and with a workspace policy outside every
// path it protects (`.git`, `.codex`, gitdirs, existing or not). Writes go to the resolved path.
// Deleting a symlink removes the link, never its target.
//
// Error messages are one line (apply errors may carry the unmatched lines after
// a colon) and match the reference CLI byte for byte, e.g.
// "Invalid patch hunk on line 2: Update file hunk for path 'foo.txt' is empty".
//
// Thread-compatible: no shared state; concurrent patches to the same files race
// like any two writers.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "sandbox/workspace_policy.h"

namespace codex::core {

// One line of an update chunk, in patch order.
struct PatchChunkLine {
  enum class Kind { kContext, kRemove, kAdd };  // ' ', '-', '+'
  Kind kind = Kind::kContext;
  std::string text;  // without the marker and without the line ending
};

// One `@@` section of an Update hunk.
struct UpdateChunk {
  // The texts after "@@ " of the chunk's header lines, in order; each one is
  // searched for after the previous and narrows where the lines may match.
  std::vector<std::string> contexts;
  std::vector<PatchChunkLine> lines;
  bool end_of_file = false;  // "*** End of File": the old lines end the file

  std::vector<std::string> OldLines() const;  // context + removed lines
  std::vector<std::string> NewLines() const;  // context + added lines
};

enum class PatchHunkKind { kAdd, kDelete, kUpdate };

struct PatchHunk {
  PatchHunkKind kind = PatchHunkKind::kAdd;
  std::string path;                 // as written in the patch
  std::string contents;             // kAdd: the file's text ('\n' after every line)
  std::string move_path;            // kUpdate: "*** Move to:" destination, "" = none
  std::vector<UpdateChunk> chunks;  // kUpdate: never empty
  int line_number = 0;              // 1-based line of the header in the patch
};

struct ParsedPatch {
  std::vector<PatchHunk> hunks;  // may be empty ("*** Begin Patch\n*** End Patch")
};

// Parses a patch. The text is trimmed; the first and last lines (compared after
// trimming) must be "*** Begin Patch" and "*** End Patch". A patch wrapped in a
// heredoc (`<<EOF`, `<<'EOF'` or `<<"EOF"` ... `EOF`) is unwrapped. Fails with
// kInvalidArgument: "Invalid patch: <why>" or
// "Invalid patch hunk on line <n>: <why>".
Result<ParsedPatch> ParsePatch(std::string_view patch_text);

// Applies update chunks to `original` (a file's whole text) and returns the new
// text. `display_path` only appears in error messages:
// "Failed to find context '<ctx>' in <path>" or
// "Failed to find expected lines in <path>:\n<old lines>" (kFailedPrecondition).
Result<std::string> ApplyChunksToText(std::string_view original,
                                      const std::vector<UpdateChunk>& chunks,
                                      std::string_view display_path);

struct ApplyPatchOptions {
  // Directory the patch's relative paths resolve against; "" = the process's
  // current directory. Must exist.
  std::string cwd;
  // Absolute directories writes may land in (sandbox workspace-write roots,
  // normally including cwd). Empty = cwd only. Ignored when `policy` is set.
  std::vector<std::string> writable_roots;
  // The session's workspace policy (sandbox/workspace_policy.h): its roots,
  // and the protected and private paths no hunk may touch, exactly as the
  // sandbox keeps them. Not owned; nullptr = `writable_roots` alone
  // (danger-full-access, `codex apply_patch` run by hand).
  const sandbox::WorkspacePolicy* policy = nullptr;
};

enum class FileChangeKind { kAdd, kDelete, kUpdate };
// "add", "delete", "update" (the `file_change` event's `kind`).
std::string_view FileChangeKindName(FileChangeKind kind);

// One file touched by a patch, for the approval prompt, the renderer and
// `file_change` events.
struct FileChange {
  FileChangeKind kind = FileChangeKind::kAdd;
  std::string path;       // as written in the patch, relative to cwd
  std::string move_path;  // kUpdate with "*** Move to:", "" otherwise
  // Unified diff hunks ("@@ -a,b +c,d @@" ...), 3 lines of context, no file
  // header lines. Empty when nothing changed.
  std::string unified_diff;
  std::string new_content;  // kAdd, kUpdate: the file's resulting text
};

struct ApplyPatchOutcome {
  std::vector<FileChange> changes;  // one per hunk, in patch order
  // The summary lists: paths as written in the patch; a move lists its
  // destination under `modified`.
  std::vector<std::string> added;
  std::vector<std::string> modified;
  std::vector<std::string> deleted;

  // "Success. Updated the following files:\nA a\nM m\nD d\n" (all A, then M, then D).
  std::string Summary() const;
};

// Parses and applies `patch_text`. An empty patch fails with
// "No files were modified.". On failure, hunks before the failing one stay
// applied (no rollback); path-safety failures are detected before any write.
Result<ApplyPatchOutcome> ApplyPatch(std::string_view patch_text, const ApplyPatchOptions& opts);
Result<ApplyPatchOutcome> ApplyParsedPatch(const ParsedPatch& patch, const ApplyPatchOptions& opts);

// Computes the outcome ApplyParsedPatch would produce (diffs, new contents,
// the same errors) without writing anything; later hunks see earlier hunks'
// effects. For approval prompts and previews.
Result<ApplyPatchOutcome> PreviewPatch(const ParsedPatch& patch, const ApplyPatchOptions& opts);

// An apply_patch invocation found inside a shell tool call.
struct ShellApplyPatch {
  std::string patch;    // the patch text (not yet parsed)
  std::string workdir;  // the `cd DIR &&` directory, "" when absent (may be relative)
};

// Recognises apply_patch sent through the shell tool:
//   ["apply_patch", PATCH], ["applypatch", PATCH],
//   [SHELL, "-lc"|"-c", "apply_patch <<'EOF'\n...\nEOF"] (SHELL = bash, zsh or sh,
//   any path; delimiter bare, 'quoted' or "quoted"), optionally prefixed with
//   "cd DIR && ".
// Returns nullopt for any other command; kInvalidArgument (the ParsePatch
// message) when it is an apply_patch invocation whose patch does not parse.
Result<std::optional<ShellApplyPatch>> MatchShellApplyPatch(const std::vector<std::string>& argv);

}  // namespace codex::core
