#include "cli/interactive/output_view.h"

#include <algorithm>

#include "cli/interactive/style.h"
#include "cli/terminal_text.h"

namespace codex::cli {

namespace {

// `line` neutralised, with tabs expanded to the next multiple of 8 columns.
std::string Printable(std::string_view line) {
  std::string safe = NeutralizeControls(line);
  std::string out;
  int col = 0;
  size_t pos = 0;
  while (pos < safe.size()) {
    if (safe[pos] == '\t') {
      int n = 8 - col % 8;
      out.append(static_cast<size_t>(n), ' ');
      col += n;
      ++pos;
      continue;
    }
    size_t next = NextGrapheme(safe, pos);
    std::string_view g = std::string_view(safe).substr(pos, next - pos);
    out += g;
    col += DisplayWidth(g);
    pos = next;
  }
  return out;
}

// `line` cut to `width` columns ("…" marks a cut).
std::string FitWithEllipsis(const std::string& line, int width) {
  if (DisplayWidth(line) <= width) return line;
  std::string out;
  int w = 0;
  size_t pos = 0;
  while (pos < line.size()) {
    size_t next = NextGrapheme(line, pos);
    int cw = DisplayWidth(std::string_view(line).substr(pos, next - pos));
    if (w + cw > width - 1) break;
    out.append(line, pos, next - pos);
    w += cw;
    pos = next;
  }
  return out + "…";
}

}  // namespace

void OutputView::Feed(std::string_view chunk) {
  for (char c : chunk) {
    if (pending_cr_) {
      pending_cr_ = false;
      if (c != '\n') partial_.clear();  // "\r" alone: the line starts over
    }
    if (c == '\n') {
      EndLine();
    } else if (c == '\r') {
      pending_cr_ = true;
    } else if (partial_.size() < kMaxLineBytes) {
      partial_ += c;
    }
  }
}

void OutputView::EndLine() {
  if (head_.size() < kHeadLines) head_.push_back(partial_);
  tail_.push_back(std::move(partial_));
  if (tail_.size() > kLiveLines) tail_.pop_front();
  partial_.clear();
  ++complete_;
}

std::vector<std::string> OutputView::Last(size_t n) const {
  std::vector<std::string> all(tail_.begin(), tail_.end());
  if (!partial_.empty()) all.push_back(partial_);
  if (all.size() > n) all.erase(all.begin(), all.end() - static_cast<std::ptrdiff_t>(n));
  return all;
}

std::string OutputView::LiveRows(int width, std::string_view first_indent, std::string_view indent,
                                 std::string_view title) const {
  std::string out;
  if (empty()) return out;
  if (!title.empty()) {
    constexpr std::string_view kTitleLead = "  ⋯ ";
    out += std::string(kTitleLead) +
           FitWithEllipsis(Printable(title), width - DisplayWidth(kTitleLead)) + "\n";
  }
  bool first = true;
  for (const std::string& line : Last(kLiveLines)) {
    std::string_view lead = first ? first_indent : indent;
    out += std::string(lead) + FitWithEllipsis(Printable(line), width - DisplayWidth(lead)) + "\n";
    first = false;
  }
  return out;
}

std::string OutputView::Excerpt(std::string_view first_indent, std::string_view indent) const {
  const int64_t total = lines();
  std::vector<std::string> shown;
  std::string marker;
  if (total <= static_cast<int64_t>(kHeadLines + kTailLines)) {
    shown = Last(kHeadLines + kTailLines);
  } else {
    shown = head_;
    marker =
        "… +" + std::to_string(total - static_cast<int64_t>(kHeadLines + kTailLines)) + " lines";
  }
  std::string out;
  bool first = true;
  auto add = [&](const std::string& text) {
    out += std::string(first ? first_indent : indent) + text + "\n";
    first = false;
  };
  for (const std::string& line : shown) add(Printable(line));
  if (!marker.empty()) {
    add(marker);
    for (const std::string& line : Last(kTailLines)) add(Printable(line));
  }
  return out;
}

}  // namespace codex::cli
