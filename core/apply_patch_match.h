// Locating an Update hunk's chunks in a file and computing the edit: fuzzy
// matching in passes (exact, trailing whitespace ignored, both ends ignored,
// punctuation folded), line endings kept per line. Pure functions; thread-safe.
// Internal to core/ (apply_patch*.cc); the public entry is ApplyChunksToText.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "core/apply_patch.h"

namespace codex::core::patch_internal {

// A file line and its own ending ("\r\n", "\n", or "" for a last line without one).
struct FileLine {
  std::string text;
  std::string eol;
};

std::vector<FileLine> SplitFileLines(std::string_view s);

// One line of an edit script: ' ' kept, '-' removed, '+' added.
struct DiffOp {
  char op;
  std::string text;
};

// The old side of a chunk: its context and removed lines.
std::vector<std::string> OldOf(const std::vector<PatchChunkLine>& ops);

struct Edit {
  std::string new_text;
  std::vector<DiffOp> script;  // over the whole file
};

// `chunks` applied to `original`; errors as ApplyChunksToText documents.
Result<Edit> ComputeEdit(std::string_view original, const std::vector<UpdateChunk>& chunks,
                         std::string_view display_path);

}  // namespace codex::core::patch_internal
