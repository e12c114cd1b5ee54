#include "core/apply_patch_match.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "core/apply_patch_text.h"

namespace codex::core {
namespace patch_internal {
namespace {

// The line transformation of each matching pass, loosest last.
std::string ForPass(int pass, std::string_view s) {
  switch (pass) {
    case 0:
      return std::string(s);
    case 1:
      return std::string(TrimEnd(s));
    case 2:
      return std::string(Trim(s));
    default:
      return FoldPunctuation(Trim(s));
  }
}

// The first index >= start where `pattern` occurs in `lines` (only the last
// possible index when `eof`), trying each pass over the whole range before the
// next, looser one.
std::optional<size_t> SeekSequence(const std::vector<std::string>& lines,
                                   const std::vector<std::string>& pattern, size_t start,
                                   bool eof) {
  if (pattern.empty()) return start;
  if (pattern.size() > lines.size()) return std::nullopt;
  const size_t last = lines.size() - pattern.size();
  const size_t from = eof ? last : start;
  if (from > last) return std::nullopt;
  for (int pass = 0; pass < 4; ++pass) {
    std::vector<std::string> hay;
    hay.reserve(lines.size());
    for (const std::string& l : lines) hay.push_back(ForPass(pass, l));
    std::vector<std::string> needle;
    needle.reserve(pattern.size());
    for (const std::string& p : pattern) needle.push_back(ForPass(pass, p));
    for (size_t at = from; at <= last; ++at) {
      if (std::equal(needle.begin(), needle.end(), hay.begin() + static_cast<ptrdiff_t>(at))) {
        return at;
      }
    }
  }
  return std::nullopt;
}

struct Replacement {
  size_t start = 0;
  size_t old_len = 0;
  std::vector<PatchChunkLine> ops;  // patch order; context/remove consume old lines
};

// The chunk's old and new sides without their last line when it is empty
// (a trailing blank line standing for the file's final newline).
void DropTrailingBlank(std::vector<PatchChunkLine>* ops) {
  using Kind = PatchChunkLine::Kind;
  for (size_t k = ops->size(); k-- > 0;) {
    Kind kind = (*ops)[k].kind;
    if (kind == Kind::kAdd) continue;
    if (kind == Kind::kContext) {
      (*ops)[k].kind = Kind::kAdd;  // still on the new side
    } else {
      ops->erase(ops->begin() + static_cast<ptrdiff_t>(k));
    }
    break;
  }
  for (size_t k = ops->size(); k-- > 0;) {
    Kind kind = (*ops)[k].kind;
    if (kind == Kind::kRemove) continue;
    if (!(*ops)[k].text.empty()) break;
    if (kind == Kind::kContext) {
      (*ops)[k].kind = Kind::kRemove;  // still on the old side
    } else {
      ops->erase(ops->begin() + static_cast<ptrdiff_t>(k));
    }
    break;
  }
}

}  // namespace

std::vector<FileLine> SplitFileLines(std::string_view s) {
  std::vector<FileLine> lines;
  while (!s.empty()) {
    size_t nl = s.find('\n');
    if (nl == std::string_view::npos) {
      lines.push_back({std::string(s), ""});
      break;
    }
    std::string_view text = s.substr(0, nl);
    if (text.ends_with('\r')) {
      lines.push_back({std::string(text.substr(0, text.size() - 1)), "\r\n"});
    } else {
      lines.push_back({std::string(text), "\n"});
    }
    s.remove_prefix(nl + 1);
  }
  return lines;
}

std::vector<std::string> OldOf(const std::vector<PatchChunkLine>& ops) {
  std::vector<std::string> out;
  for (const PatchChunkLine& l : ops) {
    if (l.kind != PatchChunkLine::Kind::kAdd) out.push_back(l.text);
  }
  return out;
}

// Long (~90 lines) on purpose: locating every chunk and then splicing them in
// file order share the line table, the file's line ending and the
// replacements; split, the halves would pass all of it back and forth.
Result<Edit> ComputeEdit(std::string_view original, const std::vector<UpdateChunk>& chunks,
                         std::string_view display_path) {
  const std::vector<FileLine> lines = SplitFileLines(original);
  std::vector<std::string> texts;
  texts.reserve(lines.size());
  for (const FileLine& l : lines) texts.push_back(l.text);
  std::string file_eol = "\n";
  for (const FileLine& l : lines) {
    if (!l.eol.empty()) {
      file_eol = l.eol;
      break;
    }
  }

  std::vector<Replacement> replacements;
  size_t line_index = 0;
  for (const UpdateChunk& chunk : chunks) {
    for (const std::string& context : chunk.contexts) {
      std::optional<size_t> at = SeekSequence(texts, {context}, line_index, false);
      if (!at) {
        return FailedPreconditionError("Failed to find context '" + context + "' in " +
                                       std::string(display_path));
      }
      line_index = *at + 1;
    }
    Replacement r;
    r.ops = chunk.lines;
    std::vector<std::string> old_lines = OldOf(r.ops);
    if (old_lines.empty()) {
      // A pure addition goes at the end of the file (before a trailing blank line).
      r.start = !texts.empty() && texts.back().empty() ? texts.size() - 1 : texts.size();
      replacements.push_back(std::move(r));
      continue;
    }
    std::optional<size_t> at = SeekSequence(texts, old_lines, line_index, chunk.end_of_file);
    if (!at && old_lines.back().empty()) {
      DropTrailingBlank(&r.ops);
      old_lines = OldOf(r.ops);
      at = SeekSequence(texts, old_lines, line_index, chunk.end_of_file);
    }
    if (!at) {
      // The reference wording: the unmatched lines follow, one per line.
      std::string msg = "Failed to find expected lines in " + std::string(display_path) + ":";
      for (const std::string& l : chunk.OldLines()) msg += "\n" + l;
      return FailedPreconditionError(std::move(msg));
    }
    r.start = *at;
    r.old_len = old_lines.size();
    line_index = *at + old_lines.size();
    replacements.push_back(std::move(r));
  }
  std::stable_sort(replacements.begin(), replacements.end(),
                   [](const Replacement& a, const Replacement& b) { return a.start < b.start; });

  std::vector<FileLine> result;
  Edit edit;
  size_t pos = 0;
  auto keep = [&](size_t k) {
    result.push_back(lines[k]);
    edit.script.push_back({' ', lines[k].text});
  };
  for (const Replacement& r : replacements) {
    if (r.start < pos) {
      return FailedPreconditionError("Chunks of the patch for " + std::string(display_path) +
                                     " overlap; merge them into one chunk");
    }
    for (; pos < r.start; ++pos) keep(pos);
    for (const PatchChunkLine& op : r.ops) {
      switch (op.kind) {
        case PatchChunkLine::Kind::kContext:
          keep(pos++);  // the file's own text and ending, even when matched loosely
          break;
        case PatchChunkLine::Kind::kRemove:
          edit.script.push_back({'-', lines[pos++].text});
          break;
        case PatchChunkLine::Kind::kAdd:
          result.push_back({op.text, file_eol});
          edit.script.push_back({'+', op.text});
          break;
      }
    }
  }
  for (; pos < lines.size(); ++pos) keep(pos);
  for (FileLine& l : result) {
    edit.new_text += l.text;
    edit.new_text += l.eol.empty() ? file_eol : l.eol;
  }
  return edit;
}

}  // namespace patch_internal

Result<std::string> ApplyChunksToText(std::string_view original,
                                      const std::vector<UpdateChunk>& chunks,
                                      std::string_view display_path) {
  ASSIGN_OR_RETURN(patch_internal::Edit edit,
                   patch_internal::ComputeEdit(original, chunks, display_path));
  return std::move(edit.new_text);
}

}  // namespace codex::core
