// Assistant Markdown rendered for a terminal, parsed by md4c (CommonMark
// plus the GitHub extensions: tables, strikethrough, task lists, autolinks).
//
// Block elements: headings, paragraphs (word-wrapped to `width` columns,
// 0 = no wrapping; a source line break stays a line break, so a streamed
// paragraph never re-flows lines already shown), bullet and numbered lists
// nested to any depth with hanging-indent wrapping, task lists (☐ / ☑),
// block quotes ("│ "), fenced and indented code blocks (indented four
// spaces, never wrapped, tabs as four spaces), horizontal rules and tables
// (columns sized to their content, shrunk and wrapped to fit `width`, the
// header row separated by a rule). Inline: strong, emphasis, code,
// strikethrough, links (the URL follows the text when it differs) and
// entities. With colour disabled the structure is the same and the markers
// that carry meaning without colour (# of headings, backticks of code) are
// kept; no escape code is written.
//
// MarkdownRenderer renders a message as it streams in: Feed() returns only
// lines that later text cannot change (complete source lines, and the
// wrapped lines of a long partial line whose inline markup is balanced); a
// table is held back until it ends, since a later row can widen a column.
// Finish() returns the rest and resets. Not thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "cli/interactive/style.h"

namespace codex::cli {

class MarkdownRenderer {
 public:
  MarkdownRenderer(const Style& style, int width) : style_(style), width_(width) {}

  // The newly stable lines, each ending in "\n" ("" when none).
  std::string Feed(std::string_view delta);
  // Every line not yet returned; the renderer is then empty again.
  std::string Finish();
  // The window's width changed: the lines already returned stay as they are,
  // the blocks from the next block boundary on are laid out at `width` (a
  // block half returned keeps the width it started at).
  void SetWidth(int width) { next_width_ = width; }

 private:
  // The lines of render(source_[0, stable)) not returned yet.
  std::string Emit(const std::vector<std::string>& lines, size_t stable);
  // Starts laying out at next_width_ when every line of the text before the
  // last block boundary has been returned and none after it; the lines to
  // print for the switch ("" or a blank separator line).
  std::string SwitchWidth();

  Style style_;
  int width_;
  int next_width_ = -1;  // a width to switch to at a block boundary; -1 = none
  std::string source_;
  size_t emitted_ = 0;  // lines already returned
};

// The rendering of a whole Markdown text as lines (no "\n" inside). When
// `open_table` is given it is set to the index of the first line of the
// last top-level block when that block is a table, else to -1.
std::vector<std::string> RenderMarkdownLines(std::string_view text, const Style& style, int width,
                                             long* open_table = nullptr);

// The same joined, each line ending in "\n".
std::string RenderMarkdown(std::string_view text, const Style& style, int width);

}  // namespace codex::cli
