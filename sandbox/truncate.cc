#include "sandbox/truncate.h"

#include <algorithm>

#include "base/strings.h"

namespace codex::sandbox {
namespace {

// Length of the head to keep: at most `budget` bytes, ending after a newline
// when there is one, else not splitting a UTF-8 sequence.
size_t HeadLength(std::string_view text, size_t budget) {
  if (budget >= text.size()) return text.size();
  size_t nl = text.rfind('\n', budget == 0 ? 0 : budget - 1);
  if (nl != std::string_view::npos && nl < budget) return nl + 1;
  size_t len = budget;
  while (len > 0 && IsUtf8Continuation(text[len])) --len;
  return len;
}

// Offset where the kept tail starts: at most `budget` bytes before the end,
// starting after a newline when there is one, else at a UTF-8 boundary.
size_t TailStart(std::string_view text, size_t budget, size_t min_start) {
  size_t start = text.size() > budget ? text.size() - budget : 0;
  start = std::max(start, min_start);
  if (start == 0 || start >= text.size()) return start;
  if (text[start - 1] == '\n') return start;
  size_t nl = text.find('\n', start);
  if (nl != std::string_view::npos && nl + 1 < text.size()) return nl + 1;
  while (start < text.size() && IsUtf8Continuation(text[start])) ++start;
  return start;
}

// head, a marker line counting what was left out, tail.
std::string Assemble(std::string_view head, int64_t omitted_bytes, int64_t omitted_lines,
                     std::string_view tail) {
  std::string marker = "[... " + std::to_string(omitted_bytes) + " bytes";
  if (omitted_lines > 0) {
    marker += " (" + std::to_string(omitted_lines) + (omitted_lines == 1 ? " line)" : " lines)");
  }
  marker += " omitted ...]\n";
  std::string out;
  out.reserve(head.size() + marker.size() + tail.size() + 1);
  out.append(head);
  if (!head.empty() && head.back() != '\n') out.push_back('\n');
  out.append(marker);
  out.append(tail);
  return out;
}

}  // namespace

std::string TruncateHeadTail(std::string_view text, size_t max_bytes, int64_t extra_omitted) {
  if (text.size() <= max_bytes && extra_omitted <= 0) return std::string(text);
  size_t head_len = HeadLength(text, max_bytes / 2);
  size_t tail_start = TailStart(text, max_bytes - max_bytes / 2, head_len);
  std::string_view middle = text.substr(head_len, tail_start - head_len);
  return Assemble(text.substr(0, head_len),
                  static_cast<int64_t>(middle.size()) + std::max<int64_t>(extra_omitted, 0),
                  std::count(middle.begin(), middle.end(), '\n'), text.substr(tail_start));
}

std::string TruncateHeadTail(std::string_view text, const OutputGap& gap, size_t max_bytes) {
  if (gap.bytes <= 0 || gap.offset > text.size()) return TruncateHeadTail(text, max_bytes);
  const std::string_view head = text.substr(0, gap.offset);
  const std::string_view tail = text.substr(gap.offset);
  const size_t head_len = HeadLength(head, max_bytes / 2);
  const size_t tail_start = TailStart(tail, max_bytes - max_bytes / 2, 0);
  const std::string_view cut_head = head.substr(head_len);
  const std::string_view cut_tail = tail.substr(0, tail_start);
  const int64_t bytes = static_cast<int64_t>(cut_head.size() + cut_tail.size()) + gap.bytes;
  const int64_t lines = std::count(cut_head.begin(), cut_head.end(), '\n') +
                        std::count(cut_tail.begin(), cut_tail.end(), '\n') +
                        std::max<int64_t>(gap.lines, 0);
  return Assemble(head.substr(0, head_len), bytes, lines, tail.substr(tail_start));
}

}  // namespace codex::sandbox
