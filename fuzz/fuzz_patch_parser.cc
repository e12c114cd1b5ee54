// libFuzzer target: core::ParsePatch (and the pure applier) over arbitrary bytes.
//
// Checks, beyond the sanitizers:
//  - a rejected patch carries an "Invalid patch" message;
//  - an accepted patch has no empty Update hunk or chunk, and re-serialised in
//    canonical form (CRLF line endings, so a text ending in '\r' survives the
//    line splitting) it parses back to the same structure;
//  - a one-chunk Update without @@ context applied to exactly its old lines
//    gives exactly its new lines;
//  - the input as a `bash -lc` script: when MatchShellApplyPatch finds an
//    apply_patch heredoc, its patch parses.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/apply_patch.h"

namespace {

using codex::core::ParsedPatch;
using codex::core::PatchChunkLine;
using codex::core::PatchHunk;
using codex::core::PatchHunkKind;
using codex::core::UpdateChunk;

std::string Serialise(const ParsedPatch& patch) {
  std::string out = "*** Begin Patch\r\n";
  auto line = [&](std::string_view text) {
    out += text;
    out += "\r\n";
  };
  for (const PatchHunk& hunk : patch.hunks) {
    switch (hunk.kind) {
      case PatchHunkKind::kAdd: {
        line("*** Add File: " + hunk.path);
        std::string_view rest = hunk.contents;
        while (!rest.empty()) {
          size_t nl = rest.find('\n');
          line("+" + std::string(rest.substr(0, nl)));
          rest.remove_prefix(nl + 1);
        }
        break;
      }
      case PatchHunkKind::kDelete:
        line("*** Delete File: " + hunk.path);
        break;
      case PatchHunkKind::kUpdate:
        line("*** Update File: " + hunk.path);
        if (!hunk.move_path.empty()) line("*** Move to: " + hunk.move_path);
        for (const UpdateChunk& chunk : hunk.chunks) {
          if (chunk.contexts.empty()) line("@@");
          for (const std::string& context : chunk.contexts) line("@@ " + context);
          for (const PatchChunkLine& l : chunk.lines) {
            char marker = l.kind == PatchChunkLine::Kind::kContext  ? ' '
                          : l.kind == PatchChunkLine::Kind::kRemove ? '-'
                                                                    : '+';
            line(std::string(1, marker) + l.text);
          }
          if (chunk.end_of_file) line("*** End of File");
        }
        break;
    }
  }
  out += "*** End Patch";
  return out;
}

bool SameChunk(const UpdateChunk& a, const UpdateChunk& b) {
  if (a.contexts != b.contexts || a.end_of_file != b.end_of_file ||
      a.lines.size() != b.lines.size()) {
    return false;
  }
  for (size_t i = 0; i < a.lines.size(); ++i) {
    if (a.lines[i].kind != b.lines[i].kind || a.lines[i].text != b.lines[i].text) return false;
  }
  return true;
}

bool SamePatch(const ParsedPatch& a, const ParsedPatch& b) {
  if (a.hunks.size() != b.hunks.size()) return false;
  for (size_t i = 0; i < a.hunks.size(); ++i) {
    const PatchHunk& x = a.hunks[i];
    const PatchHunk& y = b.hunks[i];
    if (x.kind != y.kind || x.path != y.path || x.contents != y.contents ||
        x.move_path != y.move_path || x.chunks.size() != y.chunks.size()) {
      return false;
    }
    for (size_t c = 0; c < x.chunks.size(); ++c) {
      if (!SameChunk(x.chunks[c], y.chunks[c])) return false;
    }
  }
  return true;
}

std::string JoinLines(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) out += l + "\n";
  return out;
}

bool HasLineBreak(const std::vector<std::string>& lines) {
  for (const std::string& l : lines) {
    if (l.find_first_of("\r\n") != std::string::npos) return true;
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);

  auto shell = codex::core::MatchShellApplyPatch({"bash", "-lc", input});
  if (shell.ok() && shell->has_value() && !codex::core::ParsePatch((*shell)->patch).ok()) {
    __builtin_trap();
  }
  if (!shell.ok() && shell.status().message().empty()) __builtin_trap();

  auto parsed = codex::core::ParsePatch(input);
  if (!parsed.ok()) {
    if (!parsed.status().message().starts_with("Invalid patch")) __builtin_trap();
    return 0;
  }
  for (const PatchHunk& hunk : parsed->hunks) {
    if (hunk.kind != PatchHunkKind::kUpdate) continue;
    if (hunk.chunks.empty()) __builtin_trap();
    for (const UpdateChunk& chunk : hunk.chunks) {
      if (chunk.lines.empty()) __builtin_trap();
    }
  }

  auto again = codex::core::ParsePatch(Serialise(*parsed));
  if (!again.ok() || !SamePatch(*parsed, *again)) __builtin_trap();

  for (const PatchHunk& hunk : parsed->hunks) {
    if (hunk.kind != PatchHunkKind::kUpdate || hunk.chunks.size() != 1) continue;
    const UpdateChunk& chunk = hunk.chunks[0];
    const std::vector<std::string> old_lines = chunk.OldLines();
    const std::vector<std::string> new_lines = chunk.NewLines();
    if (!chunk.contexts.empty() || old_lines.empty() || HasLineBreak(old_lines) ||
        HasLineBreak(new_lines)) {
      continue;
    }
    auto applied = codex::core::ApplyChunksToText(JoinLines(old_lines), hunk.chunks, hunk.path);
    if (!applied.ok() || *applied != JoinLines(new_lines)) __builtin_trap();
  }
  return 0;
}
