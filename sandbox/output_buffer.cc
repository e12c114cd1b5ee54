#include "sandbox/output_buffer.h"

#include <algorithm>

namespace codex::sandbox {

HeadTailBuffer::HeadTailBuffer(size_t head_cap, size_t tail_cap)
    : head_cap_(head_cap), tail_cap_(tail_cap) {}

void HeadTailBuffer::Append(std::string_view data) {
  total_bytes_ += static_cast<int64_t>(data.size());
  total_lines_ += std::count(data.begin(), data.end(), '\n');
  if (head_.size() < head_cap_) {
    const size_t take = std::min(head_cap_ - head_.size(), data.size());
    head_.append(data.substr(0, take));
    data.remove_prefix(take);
  }
  if (data.empty() || tail_cap_ == 0) return;
  if (data.size() >= tail_cap_) {
    ring_.assign(data.substr(data.size() - tail_cap_));
    ring_start_ = 0;
    return;
  }
  if (ring_.size() < tail_cap_) {
    const size_t take = std::min(tail_cap_ - ring_.size(), data.size());
    ring_.append(data.substr(0, take));
    data.remove_prefix(take);
  }
  // The ring is full: overwrite the oldest bytes, wrapping at the end.
  while (!data.empty()) {
    const size_t take = std::min(tail_cap_ - ring_start_, data.size());
    ring_.replace(ring_start_, take, data.substr(0, take));
    ring_start_ = (ring_start_ + take) % tail_cap_;
    data.remove_prefix(take);
  }
}

std::string HeadTailBuffer::tail() const {
  std::string out;
  out.reserve(ring_.size());
  out.append(ring_, ring_start_, std::string::npos);
  out.append(ring_, 0, ring_start_);
  return out;
}

int64_t HeadTailBuffer::omitted_bytes() const {
  return total_bytes_ - static_cast<int64_t>(head_.size() + ring_.size());
}

int64_t HeadTailBuffer::omitted_lines() const {
  const int64_t kept =
      std::count(head_.begin(), head_.end(), '\n') + std::count(ring_.begin(), ring_.end(), '\n');
  return total_lines_ - kept;
}

}  // namespace codex::sandbox
