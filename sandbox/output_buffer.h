// Bounded capture of a command's output: the first bytes (the head) and the
// last bytes (the tail, in a ring buffer), however much is written. Memory is
// at most head_cap + tail_cap whatever the output's length; the bytes
// between head and tail are counted (bytes and newlines), not kept, so the
// model can be told exactly what was left out. Not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace codex::sandbox {

class HeadTailBuffer {
 public:
  HeadTailBuffer(size_t head_cap, size_t tail_cap);

  void Append(std::string_view data);

  // The kept text: head() then, omitted_bytes() later, tail(). When nothing
  // was omitted, head() + tail() is the whole output.
  const std::string& head() const { return head_; }
  std::string tail() const;
  int64_t total_bytes() const { return total_bytes_; }
  int64_t omitted_bytes() const;
  // Newlines among the omitted bytes.
  int64_t omitted_lines() const;

 private:
  size_t head_cap_;
  size_t tail_cap_;
  std::string head_;
  std::string ring_;       // grows to tail_cap_, then wraps
  size_t ring_start_ = 0;  // oldest byte once the ring is full
  int64_t total_bytes_ = 0;
  int64_t total_lines_ = 0;
};

}  // namespace codex::sandbox
