// client_bench: figures for the Responses client's hot paths.
//
//   1. SSE parse throughput (SseParser alone) over a large synthetic stream
//      fed in 16 KiB reads, with LF and with CRLF line ends. Target >= 200 MB/s.
//   2. The same stream through ResponseStream (SSE + JSON + item decoding),
//      for information: this is what a real turn pays per byte.
//   3. Request building for a ~1 MB transcript with BuildResponsesRequest.
//      Target <= 1 ms.
//
// Usage: client_bench [stream_megabytes (default 64)]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "core/request_builder.h"
#include "core/response_stream.h"
#include "core/sse_parser.h"

namespace {

using Clock = std::chrono::steady_clock;
using codex::OkStatus;
using codex::Status;
using codex::core::Item;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// A stream shaped like a real response: mostly small text deltas, some
// reasoning deltas, and now and then a large output_item.done.
std::string SyntheticStream(size_t target_bytes, std::string_view eol) {
  std::string out;
  out.reserve(target_bytes + 4096);
  const std::string sep = std::string(eol) + std::string(eol);
  auto event = [&](std::string_view type, const std::string& json) {
    out += "event: ";
    out += type;
    out += eol;
    out += "data: ";
    out += json;
    out += sep;
  };
  event("response.created", R"({"type":"response.created","response":{"id":"resp_bench"}})");
  const std::string big_text(8000, 'x');
  size_t n = 0;
  while (out.size() < target_bytes) {
    ++n;
    if (n % 500 == 0) {
      event(
          "response.output_item.done",
          R"({"type":"response.output_item.done","output_index":0,"item":{"id":"msg_)" +
              std::to_string(n) +
              R"(","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","annotations":[],"text":")" +
              big_text + R"("}]}})");
    } else if (n % 7 == 0) {
      event(
          "response.reasoning_summary_text.delta",
          R"({"type":"response.reasoning_summary_text.delta","sequence_number":)" +
              std::to_string(n) +
              R"(,"item_id":"rs_0123456789abcdef","output_index":0,"summary_index":0,"delta":" considering the options","obfuscation":"Xy12"})");
    } else {
      event(
          "response.output_text.delta",
          R"({"type":"response.output_text.delta","sequence_number":)" + std::to_string(n) +
              R"(,"item_id":"msg_0123456789abcdef","output_index":0,"content_index":0,"delta":" token","logprobs":[],"obfuscation":"aB3dE"})");
    }
  }
  event(
      "response.completed",
      R"({"type":"response.completed","response":{"id":"resp_bench","usage":{"input_tokens":1,"output_tokens":1,"total_tokens":2}}})");
  return out;
}

constexpr size_t kReadSize = 16 * 1024;

// Best of `rounds` runs of SseParser over `stream`; returns MB/s.
double SseThroughput(const std::string& stream, int rounds, uint64_t* events_out) {
  double best = 1e100;
  for (int r = 0; r < rounds; ++r) {
    uint64_t events = 0;
    size_t data_bytes = 0;
    codex::core::SseParser parser([&](const codex::core::SseEvent& e) {
      ++events;
      data_bytes += e.data.size();
      return OkStatus();
    });
    const auto start = Clock::now();
    for (size_t i = 0; i < stream.size(); i += kReadSize) {
      if (!parser.Feed(std::string_view(stream).substr(i, kReadSize)).ok()) std::abort();
    }
    if (!parser.Finish().ok()) std::abort();
    best = std::min(best, Seconds(Clock::now() - start));
    *events_out = events;
    if (data_bytes == 0) std::abort();
  }
  return static_cast<double>(stream.size()) / 1e6 / best;
}

class NullObserver : public codex::core::StreamObserver {
 public:
  void OnTextDelta(std::string_view, std::string_view d) override { bytes += d.size(); }
  void OnReasoningDelta(std::string_view, std::string_view d) override { bytes += d.size(); }
  Status OnOutputItemDone(const Item& item) override {
    bytes += item.body.size();
    return OkStatus();
  }
  size_t bytes = 0;
};

double ResponseStreamThroughput(const std::string& stream) {
  NullObserver observer;
  codex::core::ResponseStream rs(observer);
  const auto start = Clock::now();
  for (size_t i = 0; i < stream.size(); i += kReadSize) {
    if (!rs.Feed(std::string_view(stream).substr(i, kReadSize)).ok()) std::abort();
  }
  auto result = rs.Finish();
  const double secs = Seconds(Clock::now() - start);
  if (!result.ok() || observer.bytes == 0) std::abort();
  return static_cast<double>(stream.size()) / 1e6 / secs;
}

// A transcript of about `bytes` bytes: user turns, reasoning with encrypted
// content, function calls and their outputs, assistant messages.
std::vector<Item> Transcript(size_t bytes) {
  std::vector<Item> items;
  size_t total = 0;
  int n = 0;
  while (total < bytes) {
    ++n;
    Item item;
    switch (n % 4) {
      case 0:
        item = codex::core::UserMessage("please look at file " + std::to_string(n) + " and " +
                                        std::string(300, 'u'));
        break;
      case 1: {
        auto r = codex::core::DecodeItem(
            R"({"type":"reasoning","id":"rs_)" + std::to_string(n) +
            R"(","summary":[{"type":"summary_text","text":"thinking"}],"encrypted_content":")" +
            std::string(1500, 'E') + R"("})");
        if (!r.ok()) std::abort();
        item = std::move(r).value();
        break;
      }
      case 2: {
        auto r = codex::core::DecodeItem(
            R"({"type":"function_call","id":"fc_)" + std::to_string(n) + R"(","call_id":"call_)" +
            std::to_string(n) +
            R"(","name":"shell","arguments":"{\"command\":[\"bash\",\"-lc\",\"ls -la\"]}"})");
        if (!r.ok()) std::abort();
        item = std::move(r).value();
        break;
      }
      default:
        item = codex::core::FunctionCallOutput("call_" + std::to_string(n - 1),
                                               std::string(1200, 'o'));
        break;
    }
    total += item.body.size();
    items.push_back(std::move(item));
  }
  return items;
}

}  // namespace

int main(int argc, char** argv) {
  size_t megabytes = 64;
  if (argc > 1) {
    const long v = std::strtol(argv[1], nullptr, 10);
    if (v <= 0 || v > 4096) {
      std::fprintf(stderr, "error: stream size must be 1..4096 MB, got '%s'\n", argv[1]);
      return 2;
    }
    megabytes = static_cast<size_t>(v);
  }

  for (std::string_view eol : {std::string_view("\n"), std::string_view("\r\n")}) {
    const std::string stream = SyntheticStream(megabytes << 20, eol);
    uint64_t events = 0;
    const double mbps = SseThroughput(stream, 3, &events);
    std::printf("sse_parse_%s: %.1f MB/s (%.1f MB, %llu events, %zu-byte reads; target >= 200)\n",
                eol.size() == 1 ? "lf" : "crlf", mbps, static_cast<double>(stream.size()) / 1e6,
                static_cast<unsigned long long>(events), kReadSize);
    if (eol.size() == 1) {
      std::printf("response_stream (SSE + JSON + items): %.1f MB/s\n",
                  ResponseStreamThroughput(stream));
    }
  }

  const std::vector<Item> transcript = Transcript(1 << 20);
  codex::core::RequestOptions options;
  options.model = "gpt-5-codex";
  options.instructions = std::string(12'000, 'i');
  options.tools_json = R"([{"type":"function","name":"shell","parameters":{}}])";
  options.reasoning_effort = "medium";
  options.prompt_cache_key = "0193a5b2-0000-7000-8000-000000000000";
  constexpr int kIterations = 200;
  size_t body_size = 0;
  std::vector<double> times;
  for (int i = 0; i < kIterations; ++i) {
    const auto start = Clock::now();
    const std::string body = codex::core::BuildResponsesRequest(options, transcript);
    times.push_back(Seconds(Clock::now() - start));
    body_size = body.size();
  }
  std::sort(times.begin(), times.end());
  double total = 0;
  for (double t : times) total += t;
  std::printf(
      "build_request: median %.3f ms, mean %.3f ms, best %.3f ms (%zu items, %.2f MB body; "
      "target <= 1)\n",
      times[times.size() / 2] * 1e3, total / kIterations * 1e3, times.front() * 1e3,
      transcript.size(), static_cast<double>(body_size) / 1e6);
  return 0;
}
