#include "core/apply_patch_diff.h"

#include <algorithm>
#include <utility>

namespace codex::core::patch_internal {
namespace {

constexpr int kDiffContext = 3;

std::string RangeText(size_t start, size_t count) {
  // GNU/git convention: an empty range names the line before it; ",1" is implied.
  if (count == 1) return std::to_string(start + 1);
  return std::to_string(count == 0 ? start : start + 1) + "," + std::to_string(count);
}

}  // namespace

std::string UnifiedDiff(const std::vector<DiffOp>& script) {
  const size_t n = script.size();
  std::vector<size_t> old_before(n + 1, 0), new_before(n + 1, 0);
  for (size_t k = 0; k < n; ++k) {
    old_before[k + 1] = old_before[k] + (script[k].op != '+' ? 1 : 0);
    new_before[k + 1] = new_before[k] + (script[k].op != '-' ? 1 : 0);
  }
  std::string out;
  size_t k = 0;
  while (k < n) {
    while (k < n && script[k].op == ' ') ++k;
    if (k == n) break;
    size_t begin = k >= kDiffContext ? k - kDiffContext : 0;
    size_t last_change = k;
    size_t scan = k + 1;
    while (scan < n) {
      if (script[scan].op != ' ') {
        last_change = scan;
      } else if (scan - last_change > 2 * kDiffContext) {
        break;
      }
      ++scan;
    }
    size_t end = std::min(n, last_change + 1 + kDiffContext);
    size_t old_count = old_before[end] - old_before[begin];
    size_t new_count = new_before[end] - new_before[begin];
    out += "@@ -" + RangeText(old_before[begin], old_count) + " +" +
           RangeText(new_before[begin], new_count) + " @@\n";
    for (size_t j = begin; j < end; ++j) {
      out += script[j].op;
      out += script[j].text;
      out += '\n';
    }
    k = end;
  }
  return out;
}

std::vector<DiffOp> WholeFileScript(std::string_view text, char op) {
  std::vector<DiffOp> script;
  for (FileLine& l : SplitFileLines(text)) script.push_back({op, std::move(l.text)});
  return script;
}

}  // namespace codex::core::patch_internal
