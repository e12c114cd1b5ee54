#include "core/sse_parser.h"

#include <cstring>
#include <limits>
#include <utility>

namespace codex::core {

namespace {

constexpr std::string_view kBom = "\xEF\xBB\xBF";

// Offset of the first `c` in data[from, size), or `size` when there is none.
size_t FindByte(std::string_view data, size_t from, char c) {
  const void* hit = std::memchr(data.data() + from, c, data.size() - from);
  return hit == nullptr ? data.size()
                        : static_cast<size_t>(static_cast<const char*>(hit) - data.data());
}

}  // namespace

SseParser::SseParser(Callback callback, size_t max_event_bytes)
    : callback_(std::move(callback)), max_event_bytes_(max_event_bytes) {}

Status SseParser::Fail(Status status) {
  status_ = std::move(status);
  return status_;
}

Status SseParser::Feed(std::string_view chunk) {
  if (!status_.ok()) return status_;
  if (!bom_checked_) {
    while (!chunk.empty() && bom_prefix_.size() < kBom.size() &&
           chunk.front() == kBom[bom_prefix_.size()]) {
      bom_prefix_.push_back(chunk.front());
      chunk.remove_prefix(1);
    }
    if (bom_prefix_.size() == kBom.size()) {
      bom_checked_ = true;
      bom_prefix_.clear();
    } else if (chunk.empty()) {
      return OkStatus();  // still undecided
    } else {
      // Not a BOM after all: the held bytes are ordinary content.
      bom_checked_ = true;
      if (!bom_prefix_.empty()) {
        std::string held = std::move(bom_prefix_);
        bom_prefix_.clear();
        RETURN_IF_ERROR(FeedLines(held));
      }
    }
  }
  return FeedLines(chunk);
}

Status SseParser::FeedLines(std::string_view chunk) {
  size_t pos = 0;
  const size_t size = chunk.size();
  if (skip_lf_ && size > 0) {
    skip_lf_ = false;
    if (chunk[0] == '\n') pos = 1;
  }
  // Positions of the next LF and CR at or after `pos`; each is searched again
  // only once it has been passed, so a chunk is scanned for each byte value
  // once in total even when the stream uses only one kind of line end.
  size_t next_lf = 0;
  size_t next_cr = 0;
  bool lf_known = false;
  bool cr_known = false;
  while (pos < size) {
    if (!lf_known || next_lf < pos) {
      next_lf = FindByte(chunk, pos, '\n');
      lf_known = true;
    }
    if (!cr_known || next_cr < pos) {
      next_cr = FindByte(chunk, pos, '\r');
      cr_known = true;
    }
    const size_t eol = next_lf < next_cr ? next_lf : next_cr;
    if (eol == size) {
      if (partial_line_.size() + (size - pos) > max_event_bytes_) {
        return Fail(ResourceExhaustedError("SSE line longer than " +
                                           std::to_string(max_event_bytes_) + " bytes"));
      }
      partial_line_.append(chunk.substr(pos));
      return OkStatus();
    }
    const std::string_view line = chunk.substr(pos, eol - pos);
    if (partial_line_.size() + line.size() > max_event_bytes_) {
      return Fail(ResourceExhaustedError("SSE line longer than " +
                                         std::to_string(max_event_bytes_) + " bytes"));
    }
    if (partial_line_.empty()) {
      RETURN_IF_ERROR(ProcessLine(line));
    } else {
      partial_line_.append(line);
      Status s = ProcessLine(partial_line_);
      partial_line_.clear();
      RETURN_IF_ERROR(s);
    }
    pos = eol + 1;
    if (chunk[eol] == '\r') {
      if (pos < size) {
        if (chunk[pos] == '\n') ++pos;
      } else {
        skip_lf_ = true;
      }
    }
  }
  return OkStatus();
}

Status SseParser::ProcessLine(std::string_view line) {
  if (line.empty()) return Dispatch();
  if (line.front() == ':') return OkStatus();  // comment
  std::string_view field = line;
  std::string_view value;
  if (const size_t colon = line.find(':'); colon != std::string_view::npos) {
    field = line.substr(0, colon);
    value = line.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  }
  if (field == "data") {
    if (data_.size() + value.size() + 1 > max_event_bytes_) {
      return Fail(ResourceExhaustedError("SSE event larger than " +
                                         std::to_string(max_event_bytes_) + " bytes"));
    }
    if (has_data_) data_.push_back('\n');
    data_.append(value);
    has_data_ = true;
  } else if (field == "event") {
    event_name_.assign(value);
  } else if (field == "id") {
    if (value.find('\0') == std::string_view::npos) last_id_.assign(value);
  } else if (field == "retry") {
    if (value.empty()) return OkStatus();
    int64_t ms = 0;
    for (char c : value) {
      if (c < '0' || c > '9') return OkStatus();
      if (ms > (std::numeric_limits<int64_t>::max() - 9) / 10) return OkStatus();
      ms = ms * 10 + (c - '0');
    }
    retry_ms_ = ms;
  }
  // Any other field is ignored, as the standard requires.
  return OkStatus();
}

Status SseParser::Dispatch() {
  if (!has_data_) {
    event_name_.clear();
    return OkStatus();
  }
  SseEvent event;
  event.event = event_name_.empty() ? std::string_view("message") : std::string_view(event_name_);
  event.data = data_;
  event.id = last_id_;
  ++events_dispatched_;
  Status s = callback_(event);
  data_.clear();
  has_data_ = false;
  event_name_.clear();
  if (!s.ok()) return Fail(std::move(s));
  return OkStatus();
}

Status SseParser::Finish() {
  if (!status_.ok()) return status_;
  if (!bom_checked_ && !bom_prefix_.empty()) {
    bom_checked_ = true;
    std::string held = std::move(bom_prefix_);
    bom_prefix_.clear();
    RETURN_IF_ERROR(FeedLines(held));
  }
  if (!partial_line_.empty()) {
    Status s = ProcessLine(partial_line_);
    partial_line_.clear();
    RETURN_IF_ERROR(s);
  }
  skip_lf_ = false;
  return Dispatch();
}

}  // namespace codex::core
