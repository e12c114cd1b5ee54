// OutputView: a running command's output as the interactive screen shows it.
// While the command runs, the last few lines, updating as output arrives
// (LiveRows); once it ends or is interrupted, a head + tail excerpt kept in
// the transcript (Excerpt). Fed the output in chunks as the runner reads it
// (CommandSpec::on_output); a lone "\r" (a progress bar redrawing its line)
// starts the current line over. Memory is bounded whatever the output's
// length: a few lines, each cut to kMaxLineBytes. Not thread-safe.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

namespace codex::cli {

class OutputView {
 public:
  static constexpr size_t kLiveLines = 5;  // rows of the live view
  static constexpr size_t kHeadLines = 2;  // the excerpt: first lines ...
  static constexpr size_t kTailLines = 3;  // ... and last lines
  static constexpr size_t kMaxLineBytes = 1024;

  void Clear() { *this = OutputView(); }
  void Feed(std::string_view chunk);
  bool empty() const { return complete_ == 0 && partial_.empty(); }
  // Lines seen so far, the unfinished last one included.
  int64_t lines() const { return complete_ + (partial_.empty() ? 0 : 1); }

  // The last kLiveLines lines, neutralised (terminal_text.h), tabs expanded,
  // each cut to fit `width` columns after `indent` (the first row gets
  // `first_indent`), each ending in "\n"; "" when nothing arrived yet. A
  // non-empty `title` (whose output this is, when several commands run) is a
  // row of its own before them, after "  ⋯ ", cut the same way.
  std::string LiveRows(int width, std::string_view first_indent, std::string_view indent,
                       std::string_view title = {}) const;
  // Every line when there are at most kHeadLines + kTailLines, else the
  // first kHeadLines, "… +N lines", the last kTailLines; neutralised, each
  // after `indent` (the first after `first_indent`) and ending in "\n".
  std::string Excerpt(std::string_view first_indent, std::string_view indent) const;

 private:
  void EndLine();
  // The last `n` lines (the unfinished one included), oldest first.
  std::vector<std::string> Last(size_t n) const;

  std::vector<std::string> head_;  // the first kHeadLines complete lines
  std::deque<std::string> tail_;   // the last kLiveLines complete lines
  std::string partial_;            // the line being written
  bool pending_cr_ = false;        // a "\r" whose meaning the next byte decides
  int64_t complete_ = 0;           // complete lines seen
};

}  // namespace codex::cli
