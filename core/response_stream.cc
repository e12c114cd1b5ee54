#include "core/response_stream.h"

#include <cmath>
#include <nlohmann/json.hpp>
#include <utility>

#include "base/json.h"
#include "core/model_client.h"

namespace codex::core {

namespace {

// ordered_json keeps the key order of items as received, so the body that
// DecodeItem writes is the server's item minus the stripped fields.
using Json = nlohmann::ordered_json;

std::string_view Str(const Json& j, const char* key) {
  if (!j.is_object()) return {};
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return {};
  return it->get_ref<const std::string&>();
}

const Json* Obj(const Json& j, const char* key) {
  if (!j.is_object()) return nullptr;
  auto it = j.find(key);
  if (it == j.end() || !it->is_object()) return nullptr;
  return &*it;
}

// Integers as sent; floats truncated; anything else (null, missing) is 0.
int64_t Int(const Json* j, const char* key) {
  if (j == nullptr || !j->is_object()) return 0;
  auto it = j->find(key);
  if (it == j->end()) return 0;
  if (it->is_number_integer()) return it->get<int64_t>();
  if (it->is_number_float()) {
    const double d = it->get<double>();
    if (std::isfinite(d) && std::fabs(d) < 9.0e18) return static_cast<int64_t>(d);
  }
  return 0;
}

std::optional<TokenUsage> ParseUsage(const Json& response) {
  const Json* usage = Obj(response, "usage");
  if (usage == nullptr) return std::nullopt;
  TokenUsage u;
  u.input_tokens = Int(usage, "input_tokens");
  u.cached_input_tokens = Int(Obj(*usage, "input_tokens_details"), "cached_tokens");
  u.output_tokens = Int(usage, "output_tokens");
  u.reasoning_output_tokens = Int(Obj(*usage, "output_tokens_details"), "reasoning_tokens");
  u.total_tokens = Int(usage, "total_tokens");
  u.cache_write_input_tokens = Int(Obj(*usage, "input_tokens_details"), "cache_write_tokens");
  return u;
}

// A short printable excerpt of a payload for warnings.
std::string Excerpt(std::string_view data) {
  constexpr size_t kMax = 40;
  std::string out;
  for (char c : data.substr(0, kMax)) {
    out.push_back(c >= 0x20 && c < 0x7f ? c : '?');
  }
  if (data.size() > kMax) out += "...";
  return out;
}

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
char LowerChar(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

}  // namespace

std::optional<int64_t> ParseRetryAfterMs(std::string_view message) {
  constexpr std::string_view kPhrase = "try again in";
  for (size_t start = 0; start + kPhrase.size() <= message.size(); ++start) {
    size_t i = 0;
    while (i < kPhrase.size() && LowerChar(message[start + i]) == kPhrase[i]) ++i;
    if (i < kPhrase.size()) continue;
    size_t p = start + kPhrase.size();
    while (p < message.size() && IsSpace(message[p])) ++p;
    const size_t number_start = p;
    while (p < message.size() && IsDigit(message[p])) ++p;
    if (p == number_start) continue;
    if (p + 1 < message.size() && message[p] == '.' && IsDigit(message[p + 1])) {
      p += 2;
      while (p < message.size() && IsDigit(message[p])) ++p;
    }
    const std::string number(message.substr(number_start, p - number_start));
    while (p < message.size() && IsSpace(message[p])) ++p;
    if (p >= message.size()) continue;
    double scale = 0;
    if (LowerChar(message[p]) == 's') {
      scale = 1000.0;  // "s", "second", "seconds"
    } else if (LowerChar(message[p]) == 'm' && p + 1 < message.size() &&
               LowerChar(message[p + 1]) == 's') {
      scale = 1.0;
    } else {
      continue;
    }
    const double ms = std::strtod(number.c_str(), nullptr) * scale;
    if (!std::isfinite(ms) || ms > 9.0e15) continue;
    return static_cast<int64_t>(std::llround(ms));
  }
  return std::nullopt;
}

Status ClassifyResponseError(std::string_view code, std::string_view message) {
  if (code == "context_length_exceeded") {
    return ResourceExhaustedError(message.empty()
                                      ? "the conversation exceeds the model's context window"
                                      : std::string(message))
        .WithReason(core::reason::kContextLengthExceeded);
  }
  if (code == "insufficient_quota") {
    return ResourceExhaustedError(
               "you exceeded your current API quota (insufficient_quota); check your plan and "
               "billing details with your provider, then try again")
        .WithReason(core::reason::kInsufficientQuota);
  }
  if (code == "usage_not_included") {
    return ResourceExhaustedError(
               "model usage is not included in your plan (usage_not_included); check your plan "
               "and billing details or use an API key")
        .WithReason(core::reason::kUsageNotIncluded);
  }
  if (code == "rate_limit_exceeded") {
    Status s = ResourceExhaustedError(message.empty() ? "rate limit exceeded; try again later"
                                                      : std::string(message));
    s.WithReason(core::reason::kRateLimitExceeded);
    if (auto ms = ParseRetryAfterMs(message)) s.WithRetryAfterMs(*ms);
    return s;
  }
  std::string text =
      message.empty() ? std::string("response.failed event received") : std::string(message);
  return UnavailableError(std::move(text)).WithReason(core::reason::kServerError);
}

ResponseStream::ResponseStream(StreamObserver& observer)
    : observer_(observer),
      parser_([this](const SseEvent& event) { return HandleEvent(event.data); }) {}

Status ResponseStream::Feed(std::string_view bytes) { return parser_.Feed(bytes); }

Status ResponseStream::HandleData(std::string_view data) { return HandleEvent(data); }

Status ResponseStream::HandleEvent(std::string_view data) {
  Json j = Json::parse(data, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    observer_.OnWarning("skipping SSE data that is not a JSON object: " + Excerpt(data));
    return OkStatus();
  }
  const std::string_view type = Str(j, "type");
  if (type.empty()) {
    observer_.OnWarning("skipping SSE event without a \"type\": " + Excerpt(data));
    return OkStatus();
  }

  if (type == "response.output_text.delta") {
    const std::string_view delta = Str(j, "delta");
    if (!delta.empty()) {
      delivered_ = true;
      observer_.OnTextDelta(Str(j, "item_id"), delta);
    }
    return OkStatus();
  }
  if (type == "response.reasoning_summary_text.delta" || type == "response.reasoning_text.delta") {
    const std::string_view delta = Str(j, "delta");
    if (!delta.empty()) {
      delivered_ = true;
      if (type == "response.reasoning_text.delta") {
        observer_.OnRawReasoningDelta(Str(j, "item_id"), delta);
      } else {
        observer_.OnReasoningDelta(Str(j, "item_id"), delta);
      }
    }
    return OkStatus();
  }
  if (type == "response.reasoning_summary_part.added") {
    // Summary parts are separate paragraphs; Codex starts a new section per part.
    if (Int(&j, "summary_index") > 0) {
      delivered_ = true;
      observer_.OnReasoningDelta(Str(j, "item_id"), "\n\n");
    }
    return OkStatus();
  }
  if (type == "response.output_item.added") {
    if (const Json* item = Obj(j, "item")) {
      delivered_ = true;
      observer_.OnOutputItemAdded(Dump(*item));
    }
    return OkStatus();
  }
  if (type == "response.output_item.done") return OnOutputItemDone(j);
  if (type == "response.created" || type == "response.in_progress" || type == "response.queued") {
    if (const Json* response = Obj(j, "response")) {
      if (auto id = Str(*response, "id"); !id.empty()) response_.response_id = std::string(id);
    }
    return OkStatus();
  }
  if (type == "error") {
    OnErrorEvent(j);
    return OkStatus();
  }
  if (type == "response.completed" || type == "response.failed" || type == "response.incomplete") {
    OnOutcome(type, j);
    return OkStatus();
  }
  // Everything else (content_part.*, *.done, refusal.*, annotations,
  // function_call_arguments.*, custom_tool_call_input.*, hosted-tool events
  // and types added later) carries nothing the finished item will not.
  return OkStatus();
}

Status ResponseStream::OnOutputItemDone(const Json& event) {
  const Json* item_json = Obj(event, "item");
  if (item_json == nullptr) {
    observer_.OnWarning("skipping response.output_item.done without an item");
    return OkStatus();
  }
  Result<Item> item = DecodeItem(Dump(*item_json));
  if (!item.ok()) {
    observer_.OnWarning("skipping an output item: " + item.status().message());
    return OkStatus();
  }
  delivered_ = true;
  RETURN_IF_ERROR(observer_.OnOutputItemDone(*item));
  response_.items.push_back(std::move(item).value());
  return OkStatus();
}

// The payload is flat {code, message, param} per the spec, but real
// streams nest it under "error" {type, code, message, param}.
void ResponseStream::OnErrorEvent(const Json& event) {
  // The payload is flat {code, message, param} per the spec, but real
  // streams nest it under "error" {type, code, message, param}.
  const Json* nested = Obj(event, "error");
  const Json& e = nested != nullptr ? *nested : event;
  saw_error_event_ = true;
  error_code_ = std::string(Str(e, "code"));
  if (error_code_.empty() && nested != nullptr) error_code_ = std::string(Str(e, "type"));
  error_message_ = std::string(Str(e, "message"));
  if (error_message_.empty()) error_message_ = "error event received";
}

// response.completed / .failed / .incomplete: the first one decides the outcome.
void ResponseStream::OnOutcome(std::string_view type, const Json& event) {
  if (outcome_ != Outcome::kNone) return;  // the first outcome wins
  static const Json kEmpty = Json::object();
  const Json* response_ptr = Obj(event, "response");
  const Json& response = response_ptr != nullptr ? *response_ptr : kEmpty;
  if (auto id = Str(response, "id"); !id.empty()) response_.response_id = std::string(id);
  if (type == "response.completed") {
    outcome_ = Outcome::kCompleted;
    response_.usage = ParseUsage(response);
  } else if (type == "response.incomplete") {
    outcome_ = Outcome::kIncomplete;
    const Json* details = Obj(response, "incomplete_details");
    std::string reason(details != nullptr ? Str(*details, "reason") : std::string_view());
    if (reason.empty()) reason = "unknown";
    failure_ = FailedPreconditionError("response incomplete: " + reason)
                   .WithReason(core::reason::kIncomplete);
  } else {
    outcome_ = Outcome::kFailed;
    const Json* error = Obj(response, "error");
    const std::string_view code = error ? Str(*error, "code") : std::string_view();
    const std::string_view message = error ? Str(*error, "message") : std::string_view();
    if (!code.empty() || !message.empty()) {
      failure_ = ClassifyResponseError(code, message);
    } else if (saw_error_event_) {
      failure_ = ClassifyResponseError(error_code_, error_message_);
    } else {
      failure_ =
          UnavailableError("response.failed event received").WithReason(core::reason::kServerError);
    }
  }
}

Result<ModelResponse> ResponseStream::Finish() {
  RETURN_IF_ERROR(parser_.Finish());
  switch (outcome_) {
    case Outcome::kCompleted:
      return std::move(response_);
    case Outcome::kFailed:
    case Outcome::kIncomplete:
      return failure_;
    case Outcome::kNone:
      break;
  }
  if (saw_error_event_) {
    Status s = ClassifyResponseError(error_code_, error_message_);
    if (s.code() != StatusCode::kUnavailable) return s;
    return UnavailableError("stream closed before response.completed: " + error_message_)
        .WithReason(core::reason::kStreamClosed);
  }
  return UnavailableError("stream closed before response.completed")
      .WithReason(core::reason::kStreamClosed);
}

}  // namespace codex::core
