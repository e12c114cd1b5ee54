// ParsePatch: the `*** Begin Patch` text to a ParsedPatch (pure, no I/O),
// with the reference CLI's error wording.
#include <utility>

#include "core/apply_patch.h"
#include "core/apply_patch_match.h"
#include "core/apply_patch_text.h"

namespace codex::core {
namespace {

using patch_internal::SplitPatchLines;
using patch_internal::Trim;
using patch_internal::TrimEnd;
using patch_internal::TrimStart;

constexpr std::string_view kBeginPatch = "*** Begin Patch";
constexpr std::string_view kEndPatch = "*** End Patch";
constexpr std::string_view kAddFile = "*** Add File: ";
constexpr std::string_view kDeleteFile = "*** Delete File: ";
constexpr std::string_view kUpdateFile = "*** Update File: ";
constexpr std::string_view kMoveTo = "*** Move to: ";
constexpr std::string_view kEndOfFile = "*** End of File";

Status PatchError(std::string_view why) {
  return InvalidArgumentError("Invalid patch: " + std::string(why));
}

Status HunkError(size_t line_number, std::string_view why) {
  return InvalidArgumentError("Invalid patch hunk on line " + std::to_string(line_number) + ": " +
                              std::string(why));
}

Status CheckBoundaries(const std::vector<std::string_view>& lines) {
  if (lines.empty() || Trim(lines.front()) != kBeginPatch) {
    return PatchError("The first line of the patch must be '*** Begin Patch'");
  }
  if (Trim(lines.back()) != kEndPatch) {
    return PatchError("The last line of the patch must be '*** End Patch'");
  }
  return OkStatus();
}

bool IsHeredocOpener(std::string_view line) {
  return line == "<<EOF" || line == "<<'EOF'" || line == "<<\"EOF\"";
}

bool IsHunkHeader(std::string_view trimmed) {
  return trimmed.starts_with(kAddFile) || trimmed.starts_with(kDeleteFile) ||
         trimmed.starts_with(kUpdateFile);
}

// Parses one chunk starting at lines[*i] (before `end`), advancing *i.
Result<UpdateChunk> ParseChunk(const std::vector<std::string_view>& lines, size_t* i, size_t end,
                               bool allow_missing_header) {
  UpdateChunk chunk;
  const size_t first = *i;
  bool had_header = false;
  while (*i < end) {
    std::string_view line = lines[*i];
    if (TrimEnd(line) == "@@") {
      had_header = true;
    } else if (line.starts_with("@@ ")) {
      chunk.contexts.emplace_back(line.substr(3));
      had_header = true;
    } else {
      break;
    }
    ++*i;
  }
  if (!had_header && !allow_missing_header) {
    return HunkError(first + 1, "Expected update hunk to start with a @@ context marker, got: '" +
                                    std::string(lines[first]) + "'");
  }
  size_t parsed = 0;
  while (*i < end) {
    std::string_view line = lines[*i];
    if (TrimEnd(line) == kEndOfFile) {
      if (parsed == 0) break;
      chunk.end_of_file = true;
      ++*i;
      break;
    }
    if (IsHunkHeader(TrimStart(line))) break;
    PatchChunkLine chunk_line;
    if (line.empty()) {
      // A blank line is an empty context line.
      chunk_line.kind = PatchChunkLine::Kind::kContext;
    } else if (line[0] == ' ' || line[0] == '+' || line[0] == '-') {
      chunk_line.kind = line[0] == ' '   ? PatchChunkLine::Kind::kContext
                        : line[0] == '+' ? PatchChunkLine::Kind::kAdd
                                         : PatchChunkLine::Kind::kRemove;
      chunk_line.text = std::string(line.substr(1));
    } else if (parsed == 0) {
      return HunkError(*i + 1, "Unexpected line found in update hunk: '" + std::string(line) +
                                   "'. Every line should start with ' ' (context line), '+' "
                                   "(added line), or '-' (removed line)");
    } else {
      break;  // the next chunk (or something the caller reports)
    }
    chunk.lines.push_back(std::move(chunk_line));
    ++parsed;
    ++*i;
  }
  if (parsed == 0) return HunkError(*i + 1, "Update hunk does not contain any lines");
  return chunk;
}

}  // namespace

std::vector<std::string> UpdateChunk::OldLines() const { return patch_internal::OldOf(lines); }

std::vector<std::string> UpdateChunk::NewLines() const {
  std::vector<std::string> out;
  for (const PatchChunkLine& l : lines) {
    if (l.kind != PatchChunkLine::Kind::kRemove) out.push_back(l.text);
  }
  return out;
}

Result<ParsedPatch> ParsePatch(std::string_view patch_text) {
  std::vector<std::string_view> lines = SplitPatchLines(Trim(patch_text));
  if (Status strict = CheckBoundaries(lines); !strict.ok()) {
    // Lenient: a patch wrapped in a heredoc, as models sometimes send it.
    if (lines.size() < 4 || !IsHeredocOpener(lines.front()) || !lines.back().ends_with("EOF")) {
      return strict;
    }
    lines = std::vector<std::string_view>(lines.begin() + 1, lines.end() - 1);
    RETURN_IF_ERROR(CheckBoundaries(lines));
  }
  ParsedPatch patch;
  const size_t end = lines.size() - 1;
  size_t i = 1;
  while (i < end) {
    std::string_view header = Trim(lines[i]);
    PatchHunk hunk;
    hunk.line_number = static_cast<int>(i + 1);
    if (header.starts_with(kAddFile)) {
      hunk.kind = PatchHunkKind::kAdd;
      hunk.path = std::string(header.substr(kAddFile.size()));
      ++i;
      while (i < end && lines[i].starts_with('+')) {
        hunk.contents += lines[i].substr(1);
        hunk.contents += '\n';
        ++i;
      }
    } else if (header.starts_with(kDeleteFile)) {
      hunk.kind = PatchHunkKind::kDelete;
      hunk.path = std::string(header.substr(kDeleteFile.size()));
      ++i;
    } else if (header.starts_with(kUpdateFile)) {
      hunk.kind = PatchHunkKind::kUpdate;
      hunk.path = std::string(header.substr(kUpdateFile.size()));
      ++i;
      if (i < end && Trim(lines[i]).starts_with(kMoveTo)) {
        hunk.move_path = std::string(Trim(lines[i]).substr(kMoveTo.size()));
        ++i;
      }
      while (i < end) {
        if (Trim(lines[i]).empty()) {
          ++i;  // blank lines between chunks
          continue;
        }
        if (lines[i].starts_with("***")) break;
        ASSIGN_OR_RETURN(UpdateChunk chunk, ParseChunk(lines, &i, end, hunk.chunks.empty()));
        hunk.chunks.push_back(std::move(chunk));
      }
      if (hunk.chunks.empty()) {
        return HunkError(static_cast<size_t>(hunk.line_number),
                         "Update file hunk for path '" + hunk.path + "' is empty");
      }
    } else {
      return HunkError(i + 1, "'" + std::string(header) +
                                  "' is not a valid hunk header. Valid hunk headers: '*** Add "
                                  "File: {path}', '*** Delete File: {path}', '*** Update File: "
                                  "{path}'");
    }
    patch.hunks.push_back(std::move(hunk));
  }
  return patch;
}

}  // namespace codex::core
