// libFuzzer target: arbitrary bytes through SseParser and ResponseStream.
//
// Checks, beyond the sanitizers: (1) feeding the input whole and in pieces
// (piece sizes taken from the input's first byte) yields the same events, and
// (2) ResponseStream never crashes and its Finish() always gives either a
// response or a non-OK Status.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/response_stream.h"
#include "core/sse_parser.h"

namespace {

using codex::OkStatus;
using codex::Status;
using codex::core::Item;
using codex::core::SseEvent;
using codex::core::SseParser;

struct Event {
  std::string event, data, id;
  bool operator==(const Event&) const = default;
};

std::vector<Event> Parse(std::string_view input, size_t piece, bool* ok) {
  std::vector<Event> events;
  SseParser parser(
      [&](const SseEvent& e) {
        events.push_back({std::string(e.event), std::string(e.data), std::string(e.id)});
        return OkStatus();
      },
      /*max_event_bytes=*/1 << 16);
  *ok = true;
  for (size_t i = 0; i < input.size() && *ok; i += piece) {
    *ok = parser.Feed(input.substr(i, piece)).ok();
  }
  if (*ok) *ok = parser.Finish().ok();
  return events;
}

class CountingObserver : public codex::core::StreamObserver {
 public:
  explicit CountingObserver(bool fail_items) : fail_items_(fail_items) {}
  void OnTextDelta(std::string_view id, std::string_view delta) override {
    bytes_ += id.size() + delta.size();
  }
  void OnReasoningDelta(std::string_view id, std::string_view delta) override {
    bytes_ += id.size() + delta.size();
  }
  void OnOutputItemAdded(std::string_view json) override { bytes_ += json.size(); }
  Status OnOutputItemDone(const Item& item) override {
    bytes_ += item.body.size();
    if (fail_items_) return codex::DataLossError("observer refused the item");
    return OkStatus();
  }
  void OnWarning(std::string_view message) override { bytes_ += message.size(); }

 private:
  bool fail_items_;
  size_t bytes_ = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t piece = static_cast<size_t>(data[0] % 64) + 1;
  const bool fail_items = (data[0] & 0x80) != 0;
  const std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);

  bool whole_ok = false;
  bool pieces_ok = false;
  const std::vector<Event> whole = Parse(input, input.size() + 1, &whole_ok);
  const std::vector<Event> pieces = Parse(input, piece, &pieces_ok);
  // Splitting must not change the result (an oversize event fails both ways).
  if (whole_ok != pieces_ok || (whole_ok && whole != pieces)) __builtin_trap();

  CountingObserver observer(fail_items);
  codex::core::ResponseStream stream(observer);
  Status fed;
  for (size_t i = 0; i < input.size() && fed.ok(); i += piece) {
    fed = stream.Feed(input.substr(i, piece));
  }
  if (fed.ok()) {
    auto result = stream.Finish();
    if (!result.ok() && result.status().message().empty()) __builtin_trap();
  }
  return 0;
}
