// MarkdownRenderer: assistant Markdown rendered for a terminal, fed as the
// text streams in.
//
// Feed() returns the rendering of every line completed so far (a line is
// rendered once its "\n" arrives, so a heading or list marker is never drawn
// half-known); Finish() renders the last unterminated line and resets.
// Block elements: ATX headings, fenced code blocks (``` or ~~~, indented
// four spaces, not wrapped), bullet and numbered lists (nested by indent,
// hanging-indent wrapping), block quotes, horizontal rules; paragraphs are
// word-wrapped to `width` columns (0 = no wrapping). Inline: **bold**,
// __bold__, *italic*, _italic_ (at word boundaries only), `code`,
// [text](url) and backslash escapes. With colour disabled the structure is
// the same (bullets, indentation, wrapping), the markers that carry meaning
// without colour (# of headings, backticks of code) are kept and no escape
// code is written. Not thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "cli/interactive/style.h"

namespace codex::cli {

class MarkdownRenderer {
 public:
  MarkdownRenderer(const Style& style, int width) : style_(style), width_(width) {}

  std::string Feed(std::string_view delta);
  std::string Finish();

 private:
  std::string RenderLine(std::string_view line);

  Style style_;
  int width_;
  std::string partial_;
  bool in_code_ = false;
  std::string fence_;  // the fence that opened the code block
};

// Renders a whole Markdown text.
std::string RenderMarkdown(std::string_view text, const Style& style, int width);

// Renders the inline markup of one line of text.
std::string RenderInline(std::string_view text, const Style& style);

}  // namespace codex::cli
