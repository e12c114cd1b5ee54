// SseParser: an incremental parser for the text/event-stream format
// (WHATWG HTML, "Server-sent events", section "Interpreting an event stream").
//
// Bytes are fed in chunks of any size (a single byte works); every complete
// event is handed to the callback as it is recognised. Lines may end in CRLF,
// LF or CR, also when the CR and LF arrive in different chunks. Supported
// fields: `data` (several lines joined with "\n"), `event`, `id` (persists
// across events; ignored when it contains NUL) and `retry` (digits only).
// Lines starting with ':' are comments. One space after the colon is removed.
// A leading UTF-8 BOM is skipped. An event is dispatched at a blank line when
// at least one `data` field was seen; Finish() also dispatches an event that
// was not terminated by a blank line (streams that end without one).
//
// Speed: lines are located with memchr and handed on as views into the chunk;
// only lines that straddle chunks and data fields are copied, into buffers
// whose capacity is reused, so steady-state parsing allocates nothing.
//
// Failure: an event larger than `max_event_bytes` gives kResourceExhausted;
// a non-OK Status from the callback stops the parser. After a failure every
// later call returns the same Status. Thread-compatible; the callback runs on
// the calling thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace codex::core {

// One dispatched event. The views are valid only during the callback.
struct SseEvent {
  std::string_view event;  // the `event:` field, "message" when absent
  std::string_view data;   // `data:` lines joined with "\n"
  std::string_view id;     // last event id seen so far ("" if none)
};

class SseParser {
 public:
  using Callback = std::function<Status(const SseEvent&)>;

  static constexpr size_t kDefaultMaxEventBytes = 64u << 20;  // 64 MiB

  explicit SseParser(Callback callback, size_t max_event_bytes = kDefaultMaxEventBytes);

  // Parses `chunk`; dispatches every event it completes.
  Status Feed(std::string_view chunk);
  // End of stream: a pending unterminated line and event are dispatched.
  Status Finish();

  // The last valid `retry:` value, if any.
  std::optional<int64_t> retry_ms() const { return retry_ms_; }
  // Events dispatched so far.
  uint64_t events_dispatched() const { return events_dispatched_; }

 private:
  Status FeedLines(std::string_view chunk);
  Status ProcessLine(std::string_view line);
  Status Dispatch();
  Status Fail(Status status);

  Callback callback_;
  size_t max_event_bytes_;
  Status status_;

  std::string partial_line_;  // a line whose end has not arrived yet
  bool skip_lf_ = false;      // the previous chunk ended with CR: drop a leading LF
  bool bom_checked_ = false;
  std::string bom_prefix_;  // up to 2 bytes of a possible BOM split across chunks

  std::string data_;
  bool has_data_ = false;
  std::string event_name_;
  std::string last_id_;
  std::optional<int64_t> retry_ms_;
  uint64_t events_dispatched_ = 0;
};

}  // namespace codex::core
