#include "core/response_stream.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "core/model_client.h"

namespace codex::core {
namespace {

// Records every callback; optionally fails OnOutputItemDone.
class Recorder : public StreamObserver {
 public:
  void OnTextDelta(std::string_view item_id, std::string_view delta) override {
    text += delta;
    text_item_ids.emplace_back(item_id);
  }
  void OnReasoningDelta(std::string_view, std::string_view delta) override { reasoning += delta; }
  void OnRawReasoningDelta(std::string_view, std::string_view delta) override {
    raw_reasoning += delta;
  }
  void OnOutputItemAdded(std::string_view item_json) override { added.emplace_back(item_json); }
  Status OnOutputItemDone(const Item& item) override {
    if (!fail_with.ok()) return fail_with;
    done.push_back(item);
    return OkStatus();
  }
  void OnWarning(std::string_view message) override { warnings.emplace_back(message); }

  std::string text;
  std::vector<std::string> text_item_ids;
  std::string reasoning;
  std::string raw_reasoning;
  std::vector<std::string> added;
  std::vector<Item> done;
  std::vector<std::string> warnings;
  Status fail_with;
};

std::string Sse(std::string_view data) {
  return "event: ignored\ndata: " + std::string(data) + "\n\n";
}

const char* const kCreated = R"({"type":"response.created","response":{"id":"resp_1"}})";
const char* const kMessageDone =
    R"({"type":"response.output_item.done","output_index":0,"item":{"id":"msg_1","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"hi there"}]}})";
const char* const kCompletedNoUsage =
    R"({"type":"response.completed","response":{"id":"resp_1","output":[]}})";

Result<ModelResponse> Run(std::string_view stream, Recorder& recorder) {
  ResponseStream rs(recorder);
  Status s = rs.Feed(stream);
  if (!s.ok()) return s;
  return rs.Finish();
}

TEST_CASE("ResponseStream: minimal stream gives id, the decoded item and no usage") {
  Recorder rec;
  auto r = Run(Sse(kCreated) + Sse(kMessageDone) + Sse(kCompletedNoUsage), rec);
  REQUIRE(r.ok());
  REQUIRE(r->response_id == "resp_1");
  REQUIRE(!r->usage.has_value());
  REQUIRE(r->items.size() == 1);
  REQUIRE(r->items[0].kind == ItemKind::kMessage);
  REQUIRE(r->items[0].role == "assistant");
  REQUIRE(r->items[0].server_id == "msg_1");
  REQUIRE(MessageText(r->items[0]) == "hi there");
  REQUIRE(rec.done.size() == 1);
  REQUIRE(rec.warnings.empty());
}

TEST_CASE("ResponseStream: usage mapping, null and missing details count as zero") {
  Recorder rec;
  auto full = Run(
      Sse(R"({"type":"response.completed","response":{"id":"r","usage":{"input_tokens":100,"input_tokens_details":{"cached_tokens":40},"output_tokens":30,"output_tokens_details":{"reasoning_tokens":12},"total_tokens":130}}})"),
      rec);
  REQUIRE(full.ok());
  REQUIRE(full->usage == TokenUsage{100, 40, 30, 12, 130});

  auto nulls = Run(
      Sse(R"({"type":"response.completed","response":{"id":"r","usage":{"input_tokens":5,"input_tokens_details":null,"output_tokens":6,"output_tokens_details":null,"total_tokens":11}}})"),
      rec);
  REQUIRE(nulls.ok());
  REQUIRE(nulls->usage == TokenUsage{5, 0, 6, 0, 11});

  auto missing = Run(
      Sse(R"({"type":"response.completed","response":{"id":"r","usage":{"input_tokens":1,"total_tokens":1}}})"),
      rec);
  REQUIRE(missing.ok());
  REQUIRE(missing->usage == TokenUsage{1, 0, 0, 0, 1});

  auto null_usage =
      Run(Sse(R"({"type":"response.completed","response":{"id":"r","usage":null}})"), rec);
  REQUIRE(null_usage.ok());
  REQUIRE(!null_usage->usage.has_value());
}

TEST_CASE("ResponseStream: deltas reach the observer; the event line is ignored") {
  Recorder rec;
  std::string stream =
      Sse(kCreated) +
      "event: response.completed\n"  // a misleading event name: data.type decides
      "data: {\"type\":\"response.output_text.delta\",\"item_id\":\"msg_1\",\"delta\":\"hi "
      "\"}\n\n" +
      Sse(R"({"type":"response.output_text.delta","item_id":"msg_1","delta":"there"})") +
      Sse(R"({"type":"response.reasoning_summary_part.added","item_id":"rs_1","summary_index":0})") +
      Sse(R"({"type":"response.reasoning_summary_text.delta","item_id":"rs_1","summary_index":0,"delta":"plan"})") +
      Sse(R"({"type":"response.reasoning_summary_part.added","item_id":"rs_1","summary_index":1})") +
      Sse(R"({"type":"response.reasoning_summary_text.delta","item_id":"rs_1","summary_index":1,"delta":"more"})") +
      Sse(R"({"type":"response.reasoning_text.delta","item_id":"rs_1","content_index":0,"delta":"!"})") +
      Sse(kMessageDone) + Sse(kCompletedNoUsage);
  ResponseStream rs(rec);
  REQUIRE(!rs.delivered());
  REQUIRE(rs.Feed(stream).ok());
  REQUIRE(rs.delivered());
  auto r = rs.Finish();
  REQUIRE(r.ok());
  REQUIRE(rec.text == "hi there");
  REQUIRE(rec.text_item_ids == std::vector<std::string>{"msg_1", "msg_1"});
  REQUIRE(rec.reasoning == "plan\n\nmore");  // raw reasoning text is kept apart
  REQUIRE(rec.raw_reasoning == "!");
}

TEST_CASE("ResponseStream: output_item.added passes the item JSON") {
  Recorder rec;
  auto r = Run(
      Sse(R"({"type":"response.output_item.added","item":{"id":"fc_1","type":"function_call","call_id":"c1","name":"shell","arguments":""}})") +
          Sse(kCompletedNoUsage),
      rec);
  REQUIRE(r.ok());
  REQUIRE(
      rec.added ==
      std::vector<std::string>{
          R"({"id":"fc_1","type":"function_call","call_id":"c1","name":"shell","arguments":""})"});
  REQUIRE(r->items.empty());
}

TEST_CASE("ResponseStream: data that is not JSON is skipped with a warning") {
  Recorder rec;
  auto r = Run(Sse("[DONE]") + Sse("{\"no_type\":1}") + Sse("42") + Sse(kMessageDone) +
                   Sse(kCompletedNoUsage),
               rec);
  REQUIRE(r.ok());
  REQUIRE(r->items.size() == 1);
  REQUIRE(rec.warnings.size() == 3);
  REQUIRE(rec.warnings[0].find("[DONE]") != std::string::npos);
}

TEST_CASE("ResponseStream: unknown and deliberately ignored types cause no callbacks") {
  Recorder rec;
  std::string stream;
  for (const char* type :
       {"response.in_progress", "response.queued", "response.content_part.added",
        "response.content_part.done", "response.output_text.done", "response.refusal.delta",
        "response.refusal.done", "response.output_text.annotation.added",
        "response.reasoning_summary_part.done", "response.reasoning_summary_text.done",
        "response.reasoning_text.done", "response.function_call_arguments.delta",
        "response.function_call_arguments.done", "response.custom_tool_call_input.delta",
        "response.custom_tool_call_input.done", "response.web_search_call.searching",
        "response.brand_new_event"}) {
    stream += Sse(std::string(R"({"type":")") + type + R"(","item_id":"x","delta":"d"})");
  }
  ResponseStream rs(rec);
  REQUIRE(rs.Feed(stream).ok());
  REQUIRE(!rs.delivered());
  REQUIRE(rec.text.empty());
  REQUIRE(rec.reasoning.empty());
  REQUIRE(rec.warnings.empty());
  REQUIRE(rs.Finish().status().reason() == core::reason::kStreamClosed);
}

TEST_CASE("ResponseStream: an undecodable item is skipped with a warning") {
  Recorder rec;
  auto r = Run(
      Sse(R"({"type":"response.output_item.done","item":{"type":"function_call","name":"x"}})") +
          Sse(R"({"type":"response.output_item.done","item":"nope"})") + Sse(kCompletedNoUsage),
      rec);
  REQUIRE(r.ok());
  REQUIRE(r->items.empty());
  REQUIRE(rec.warnings.size() == 2);
}

TEST_CASE("ResponseStream: an observer error aborts the stream") {
  Recorder rec;
  rec.fail_with = DataLossError("disk full");
  ResponseStream rs(rec);
  Status s = rs.Feed(Sse(kMessageDone) + Sse(kCompletedNoUsage));
  REQUIRE(s.code() == StatusCode::kDataLoss);
  REQUIRE(rs.Finish().status().code() == StatusCode::kDataLoss);
}

TEST_CASE("ResponseStream: a stream without response.completed is stream_closed") {
  Recorder rec;
  auto r = Run(Sse(kCreated) + Sse(kMessageDone), rec);
  REQUIRE(r.status().code() == StatusCode::kUnavailable);
  REQUIRE(r.status().reason() == core::reason::kStreamClosed);
  REQUIRE(r.status().message() == "stream closed before response.completed");
  REQUIRE(rec.done.size() == 1);  // delivered before the drop

  // A truncated final event is not JSON: warned about, still stream_closed.
  Recorder rec2;
  auto cut = Run(Sse(kCreated) + "data: {\"type\":\"response.compl", rec2);
  REQUIRE(cut.status().reason() == core::reason::kStreamClosed);
  REQUIRE(rec2.warnings.size() == 1);
}

TEST_CASE("ResponseStream: the final event needs no blank line") {
  Recorder rec;
  auto r = Run(Sse(kMessageDone) + "data: " + kCompletedNoUsage, rec);
  REQUIRE(r.ok());
}

TEST_CASE("ResponseStream: response.incomplete is kFailedPrecondition naming the reason") {
  Recorder rec;
  auto r = Run(
      Sse(kMessageDone) +
          Sse(R"({"type":"response.incomplete","response":{"id":"r","incomplete_details":{"reason":"content_filter"}}})"),
      rec);
  REQUIRE(r.status().code() == StatusCode::kFailedPrecondition);
  REQUIRE(r.status().reason() == core::reason::kIncomplete);
  REQUIRE(r.status().message() == "response incomplete: content_filter");
  REQUIRE(rec.done.size() == 1);
}

std::string Failed(std::string_view code, std::string_view message) {
  return Sse(std::string(R"({"type":"response.failed","response":{"id":"r","error":{"code":")") +
             std::string(code) + R"(","message":")" + std::string(message) + R"("}}})");
}

TEST_CASE("ResponseStream: response.failed codes are classified") {
  Recorder rec;
  auto ctx = Run(Failed("context_length_exceeded", "too long"), rec);
  REQUIRE(ctx.status().code() == StatusCode::kResourceExhausted);
  REQUIRE(ctx.status().reason() == core::reason::kContextLengthExceeded);

  auto quota = Run(Failed("insufficient_quota", "You exceeded your current quota"), rec);
  REQUIRE(quota.status().code() == StatusCode::kResourceExhausted);
  REQUIRE(quota.status().reason() == core::reason::kInsufficientQuota);
  REQUIRE(quota.status().message().find("billing") != std::string::npos);

  auto usage = Run(Failed("usage_not_included", "x"), rec);
  REQUIRE(usage.status().code() == StatusCode::kResourceExhausted);
  REQUIRE(usage.status().reason() == core::reason::kUsageNotIncluded);
  REQUIRE(usage.status().message().find("plan") != std::string::npos);

  auto rate = Run(Failed("rate_limit_exceeded", "Slow down. Please try again in 1.5s."), rec);
  REQUIRE(rate.status().code() == StatusCode::kResourceExhausted);
  REQUIRE(rate.status().reason() == core::reason::kRateLimitExceeded);
  REQUIRE(rate.status().retry_after_ms() == 1500);

  auto other = Run(Failed("server_error", "The server had an error"), rec);
  REQUIRE(other.status().code() == StatusCode::kUnavailable);
  REQUIRE(other.status().reason() == core::reason::kServerError);
  REQUIRE(other.status().message() == "The server had an error");

  auto bare = Run(Sse(R"({"type":"response.failed","response":{"id":"r","error":null}})"), rec);
  REQUIRE(bare.status().code() == StatusCode::kUnavailable);
  REQUIRE(bare.status().message() == "response.failed event received");
}

TEST_CASE("ResponseStream: the first outcome wins") {
  Recorder rec;
  auto r = Run(Failed("server_error", "boom") + Sse(kCompletedNoUsage), rec);
  REQUIRE(r.status().message() == "boom");
}

TEST_CASE("ResponseStream: an error event is reported when the stream then fails") {
  Recorder rec;
  // Nested payload, then a failed event without an error of its own.
  auto nested = Run(
      Sse(R"({"type":"error","error":{"type":"insufficient_quota","code":null,"message":"quota","param":null}})") +
          Sse(R"({"type":"response.failed","response":{"id":"r"}})"),
      rec);
  REQUIRE(nested.status().reason() == core::reason::kInsufficientQuota);

  // Flat payload, then the stream closes.
  auto flat = Run(
      Sse(R"({"type":"error","code":"server_error","message":"overloaded","param":null})"), rec);
  REQUIRE(flat.status().code() == StatusCode::kUnavailable);
  REQUIRE(flat.status().reason() == core::reason::kStreamClosed);
  REQUIRE(flat.status().message() == "stream closed before response.completed: overloaded");

  auto ctx =
      Run(Sse(R"({"type":"error","code":"context_length_exceeded","message":"too big"})"), rec);
  REQUIRE(ctx.status().reason() == core::reason::kContextLengthExceeded);

  // An error event followed by completion is not an error.
  auto ok = Run(Sse(R"({"type":"error","code":"x","message":"y"})") + Sse(kCompletedNoUsage), rec);
  REQUIRE(ok.ok());
}

TEST_CASE("ParseRetryAfterMs follows the Codex regex") {
  REQUIRE(ParseRetryAfterMs("Please try again in 11.054s. Visit") == 11054);
  REQUIRE(ParseRetryAfterMs("Try again in 35ms") == 35);
  REQUIRE(ParseRetryAfterMs("try again in 2 seconds") == 2000);
  REQUIRE(ParseRetryAfterMs("try again in 1 second") == 1000);
  REQUIRE(ParseRetryAfterMs("TRY AGAIN IN1.5S") == 1500);
  REQUIRE(ParseRetryAfterMs("try again in\t 7 s") == 7000);
  REQUIRE(ParseRetryAfterMs("try again in soon; or try again in 3s") == 3000);
  REQUIRE(!ParseRetryAfterMs("try again in 1.s").has_value());
  REQUIRE(!ParseRetryAfterMs("try again in 5 minutes").has_value());
  REQUIRE(!ParseRetryAfterMs("try again later").has_value());
  REQUIRE(!ParseRetryAfterMs("").has_value());
}

}  // namespace
}  // namespace codex::core
