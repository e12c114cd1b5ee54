#include "tests/scripted_server/render.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "base/json.h"

namespace codex::testing {

namespace {

constexpr size_t kTextDeltas = 4;
constexpr size_t kArgumentDeltas = 3;

int64_t NowSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string Base64Url(std::string_view in) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    uint32_t v = (uint32_t{static_cast<unsigned char>(in[i])} << 16) |
                 (uint32_t{static_cast<unsigned char>(in[i + 1])} << 8) |
                 uint32_t{static_cast<unsigned char>(in[i + 2])};
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += kAlphabet[v & 63];
  }
  if (i < in.size()) {
    uint32_t v = uint32_t{static_cast<unsigned char>(in[i])} << 16;
    if (i + 1 < in.size()) v |= uint32_t{static_cast<unsigned char>(in[i + 1])} << 8;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += i + 1 < in.size() ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

// Looks like the real thing (Fernet tokens start with "gAAAAAB") and is unique per id.
std::string EncryptedContent(std::string_view kind, std::string_view id, std::string_view text) {
  return "gAAAAAB" + Base64Url("scripted-" + std::string(kind) + ":" + std::string(id) + ":" +
                               std::string(text));
}

uint64_t Fnv1a64(std::string_view s) {
  uint64_t h = 1469598103934665603ULL;
  for (char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;
  }
  return h;
}

std::string IdPrefixFor(std::string_view type) {
  if (type == "message") return "msg";
  if (type == "reasoning") return "rs";
  if (type == "function_call") return "fc";
  if (type == "custom_tool_call") return "ctc";
  if (type == "local_shell_call") return "lsh";
  if (type == "compaction") return "cmp";
  return "item";
}

bool IsUserMessage(const Json& item) {
  if (!item.is_object()) return false;
  bool is_message = item.value("type", std::string("message")) == "message";
  return is_message && item.contains("role") && item["role"] == "user";
}

// Records what a finished item hands out so later requests can be checked.
void Track(const Json& item, IssuedState& issued) {
  if (item.contains("id") && item["id"].is_string()) {
    issued.item_ids.insert(item["id"].get<std::string>());
  }
  std::string type = item.value("type", "");
  if (type == "reasoning" || type == "compaction") {
    if (item.contains("encrypted_content") && item["encrypted_content"].is_string()) {
      issued.encrypted_contents.insert(item["encrypted_content"].get<std::string>());
    } else if (type == "reasoning") {
      issued.issued_reasoning_without_content = true;
    }
  }
}

Json MessageItem(std::string id, std::string_view role, std::string_view text, const Json& phase) {
  Json part = {{"type", "output_text"},
               {"annotations", Json::array()},
               {"logprobs", Json::array()},
               {"text", text}};
  Json item = {{"id", std::move(id)},
               {"type", "message"},
               {"status", "completed"},
               {"content", Json::array({part})},
               {"role", role}};
  if (!phase.is_null()) item["phase"] = phase;
  return item;
}

// Expands a script item (shorthand or wire) into the item of output_item.done.
Json ExpandItem(const Json& spec, IssuedState& issued) {
  Json item;
  if (spec.contains("type")) {
    std::string type = spec["type"].get<std::string>();
    item = Json::object();
    if (!spec.contains("id")) item["id"] = issued.NewId(IdPrefixFor(type));
    for (const auto& [k, v] : spec.items()) {
      bool is_comment = k == "comment" || k.starts_with("_");
      if (!is_comment && !(k == "id" && v.is_null())) item[k] = v;
    }
  } else if (spec.contains("message")) {
    item = MessageItem(issued.NewId("msg"), spec.value("role", "assistant"),
                       spec["message"].get<std::string>(), spec.value("phase", Json()));
  } else if (spec.contains("user")) {
    // Compaction output keeps user messages in input form.
    item = {{"type", "message"},
            {"role", "user"},
            {"content", Json::array({{{"type", "input_text"}, {"text", spec["user"]}}})}};
  } else if (spec.contains("reasoning")) {
    std::string id = issued.NewId("rs");
    Json summary = Json::array();
    std::string all_text;
    std::vector<std::string> parts;
    if (spec["reasoning"].is_string()) {
      if (!spec["reasoning"].get<std::string>().empty()) {
        parts.push_back(spec["reasoning"].get<std::string>());
      }
    } else {
      for (const auto& p : spec["reasoning"]) parts.push_back(p.get<std::string>());
    }
    for (const auto& p : parts) {
      summary.push_back({{"type", "summary_text"}, {"text", p}});
      all_text += p;
    }
    item = {{"id", id}, {"type", "reasoning"}};
    if (spec.contains("encrypted_content")) {
      if (!spec["encrypted_content"].is_null()) {
        item["encrypted_content"] = spec["encrypted_content"];
      }
    } else {
      item["encrypted_content"] = EncryptedContent("reasoning", id, all_text);
    }
    item["summary"] = summary;
    if (spec.contains("content")) {
      item["content"] = Json::array({{{"type", "reasoning_text"}, {"text", spec["content"]}}});
    }
  } else if (spec.contains("function_call") || spec.contains("shell")) {
    std::string name;
    std::string arguments;
    if (spec.contains("shell")) {
      name = "shell";
      Json args = {{"command", spec["shell"]}};
      if (spec.contains("workdir")) args["workdir"] = spec["workdir"];
      if (spec.contains("timeout_ms")) args["timeout_ms"] = spec["timeout_ms"];
      arguments = Dump(args);
    } else {
      name = spec["function_call"].get<std::string>();
      const Json args = spec.value("arguments", Json::object());
      arguments = args.is_string() ? args.get<std::string>() : Dump(args);
    }
    std::string id = issued.NewId("fc");
    std::string call_id =
        spec.contains("call_id") ? spec["call_id"].get<std::string>() : issued.NewId("call");
    item = {{"id", id},
            {"type", "function_call"},
            {"status", "completed"},
            {"arguments", arguments},
            {"call_id", call_id},
            {"name", name}};
  } else if (spec.contains("custom_tool_call")) {
    std::string id = issued.NewId("ctc");
    std::string call_id =
        spec.contains("call_id") ? spec["call_id"].get<std::string>() : issued.NewId("call");
    item = {{"id", id},
            {"type", "custom_tool_call"},
            {"status", "completed"},
            {"call_id", call_id},
            {"name", spec["custom_tool_call"]},
            {"input", spec.value("input", "")}};
  } else if (spec.contains("local_shell_call")) {
    std::string id = issued.NewId("lsh");
    std::string call_id =
        spec.contains("call_id") ? spec["call_id"].get<std::string>() : issued.NewId("call");
    Json action = {
        {"type", "exec"}, {"command", spec["local_shell_call"]}, {"env", Json::object()}};
    if (spec.contains("timeout_ms")) action["timeout_ms"] = spec["timeout_ms"];
    if (spec.contains("workdir")) action["working_directory"] = spec["workdir"];
    item = {{"id", id},
            {"type", "local_shell_call"},
            {"status", "completed"},
            {"call_id", call_id},
            {"action", action}};
  } else if (spec.contains("compaction")) {
    std::string id = issued.NewId("cmp");
    item = {{"id", id},
            {"type", "compaction"},
            {"encrypted_content",
             spec.contains("encrypted_content")
                 ? spec["encrypted_content"].get<std::string>()
                 : EncryptedContent("compaction", id, spec["compaction"].get<std::string>())}};
  }
  Track(item, issued);
  return item;
}

// The item as first announced in output_item.added: empty text/arguments, in progress.
Json AddedVersion(const Json& done) {
  Json added = done;
  std::string type = done.value("type", "");
  if (added.contains("status")) added["status"] = "in_progress";
  if (type == "message") {
    added["content"] = Json::array();
  } else if (type == "reasoning") {
    added["summary"] = Json::array();
    added.erase("content");
    // The real API sends a different encrypted_content in .added than in .done;
    // only the .done one is valid to resend.
    if (added.contains("encrypted_content") && added["encrypted_content"].is_string()) {
      added["encrypted_content"] =
          EncryptedContent("partial", done.value("id", ""), "not final, do not resend");
    }
  } else if (type == "function_call") {
    added["arguments"] = "";
  } else if (type == "custom_tool_call") {
    added["input"] = "";
  } else if (type == "local_shell_call") {
    if (added.contains("action") && added["action"].is_object()) {
      added["action"]["command"] = Json::array();
    }
  }
  return added;
}

// Collects SSE events with increasing sequence numbers.
class EventWriter {
 public:
  Json Event(std::string_view type) {
    return Json{{"type", type}, {"sequence_number", sequence_++}};
  }
  void Emit(const Json& event) {
    chunks_.push_back("event: " + event["type"].get<std::string>() + "\ndata: " + Dump(event) +
                      "\n\n");
  }
  std::vector<std::string> Take() { return std::move(chunks_); }

 private:
  int64_t sequence_ = 0;
  std::vector<std::string> chunks_;
};

void EmitItem(const Json& item, int64_t index, EventWriter& w) {
  std::string type = item.value("type", "");
  std::string item_id = item.value("id", "");
  Json added = w.Event("response.output_item.added");
  added["output_index"] = index;
  added["item"] = AddedVersion(item);
  w.Emit(added);

  auto base = [&](std::string_view event_type) {
    Json e = w.Event(event_type);
    e["item_id"] = item_id;
    e["output_index"] = index;
    return e;
  };

  if (type == "message" && item.contains("content") && item["content"].is_array()) {
    int64_t content_index = 0;
    for (const auto& part : item["content"]) {
      if (part.value("type", "") != "output_text" || !part.contains("text")) {
        ++content_index;
        continue;
      }
      std::string text = part["text"].get<std::string>();
      Json empty_part = part;
      empty_part["text"] = "";
      Json e = base("response.content_part.added");
      e["content_index"] = content_index;
      e["part"] = empty_part;
      w.Emit(e);
      for (const auto& delta : SplitIntoDeltas(text, kTextDeltas)) {
        e = base("response.output_text.delta");
        e["content_index"] = content_index;
        e["delta"] = delta;
        e["logprobs"] = Json::array();
        w.Emit(e);
      }
      e = base("response.output_text.done");
      e["content_index"] = content_index;
      e["text"] = text;
      e["logprobs"] = Json::array();
      w.Emit(e);
      e = base("response.content_part.done");
      e["content_index"] = content_index;
      e["part"] = part;
      w.Emit(e);
      ++content_index;
    }
  } else if (type == "reasoning") {
    if (item.contains("summary") && item["summary"].is_array()) {
      int64_t summary_index = 0;
      for (const auto& part : item["summary"]) {
        std::string text = part.value("text", "");
        Json e = base("response.reasoning_summary_part.added");
        e["summary_index"] = summary_index;
        e["part"] = {{"type", "summary_text"}, {"text", ""}};
        w.Emit(e);
        for (const auto& delta : SplitIntoDeltas(text, kTextDeltas)) {
          e = base("response.reasoning_summary_text.delta");
          e["summary_index"] = summary_index;
          e["delta"] = delta;
          w.Emit(e);
        }
        e = base("response.reasoning_summary_text.done");
        e["summary_index"] = summary_index;
        e["text"] = text;
        w.Emit(e);
        e = base("response.reasoning_summary_part.done");
        e["summary_index"] = summary_index;
        e["part"] = {{"type", "summary_text"}, {"text", text}};
        w.Emit(e);
        ++summary_index;
      }
    }
    if (item.contains("content") && item["content"].is_array()) {
      int64_t content_index = 0;
      for (const auto& part : item["content"]) {
        std::string text = part.value("text", "");
        for (const auto& delta : SplitIntoDeltas(text, kTextDeltas)) {
          Json e = base("response.reasoning_text.delta");
          e["content_index"] = content_index;
          e["delta"] = delta;
          w.Emit(e);
        }
        Json e = base("response.reasoning_text.done");
        e["content_index"] = content_index;
        e["text"] = text;
        w.Emit(e);
        ++content_index;
      }
    }
  } else if (type == "function_call" && item.contains("arguments") &&
             item["arguments"].is_string()) {
    std::string arguments = item["arguments"].get<std::string>();
    for (const auto& delta : SplitIntoDeltas(arguments, kArgumentDeltas)) {
      Json e = base("response.function_call_arguments.delta");
      e["delta"] = delta;
      w.Emit(e);
    }
    Json e = base("response.function_call_arguments.done");
    e["arguments"] = arguments;
    w.Emit(e);
  } else if (type == "custom_tool_call" && item.contains("input") && item["input"].is_string()) {
    std::string input = item["input"].get<std::string>();
    for (const auto& delta : SplitIntoDeltas(input, kArgumentDeltas)) {
      Json e = base("response.custom_tool_call_input.delta");
      e["delta"] = delta;
      w.Emit(e);
    }
    Json e = base("response.custom_tool_call_input.done");
    e["input"] = input;
    w.Emit(e);
  }

  Json done = w.Event("response.output_item.done");
  done["output_index"] = index;
  done["item"] = item;
  w.Emit(done);
}

Json ResponseObject(const std::string& id, const RequestInfo& request, std::string_view status) {
  const Json& body = *request.body;
  Json model = body.contains("model") ? body["model"] : Json("gpt-test");
  return {{"id", id},
          {"object", "response"},
          {"created_at", NowSeconds()},
          {"status", status},
          {"background", false},
          {"error", nullptr},
          {"incomplete_details", nullptr},
          {"instructions", nullptr},
          {"max_output_tokens", nullptr},
          {"model", model},
          {"output", Json::array()},
          {"parallel_tool_calls", body.value("parallel_tool_calls", true)},
          {"previous_response_id", nullptr},
          {"store", false},
          {"tool_choice", "auto"},
          {"tools", Json::array()},
          {"usage", nullptr},
          {"metadata", Json::object()}};
}

Json UsageJson(int64_t input, int64_t cached, int64_t output, int64_t reasoning, int64_t total) {
  return {{"input_tokens", input},
          {"input_tokens_details", {{"cached_tokens", cached}}},
          {"output_tokens", output},
          {"output_tokens_details", {{"reasoning_tokens", reasoning}}},
          {"total_tokens", total}};
}

// The usage to report; a null Json means "omit it".
Json ComputeUsage(const Json& spec, const RequestInfo& request, const Json& output) {
  if (spec.is_null()) return Json();
  if (spec.is_object() &&
      (spec.contains("input_tokens_details") || spec.contains("output_tokens_details"))) {
    return spec;
  }
  if (spec.is_object()) {
    int64_t input = spec.value("input_tokens", int64_t{0});
    int64_t output_tokens = spec.value("output_tokens", int64_t{0});
    int64_t total = spec.value("total_tokens", input + output_tokens);
    return UsageJson(input, spec.value("cached_tokens", int64_t{0}), output_tokens,
                     spec.value("reasoning_tokens", int64_t{0}), total);
  }
  // "auto": the input estimate grows with the transcript, which compaction tests rely on.
  int64_t input = EstimateTokens(request.body_bytes);
  size_t output_bytes = 0;
  size_t reasoning_bytes = 0;
  for (const auto& item : output) {
    size_t bytes = Dump(item).size();
    output_bytes += bytes;
    if (item.value("type", "") == "reasoning") reasoning_bytes += bytes;
  }
  int64_t out = EstimateTokens(output_bytes);
  return UsageJson(input, 0, out, EstimateTokens(reasoning_bytes), input + out);
}

std::string DefaultFailureMessage(std::string_view code) {
  if (code == "rate_limit_exceeded") {
    return "Rate limit reached for the scripted model. Please try again in 0.2s.";
  }
  if (code == "context_length_exceeded") {
    return "Your input exceeds the context window of this model. Please adjust your input and "
           "try again.";
  }
  if (code == "insufficient_quota") {
    return "You exceeded your current quota, please check your plan and billing details.";
  }
  if (code == "server_error") {
    return "The server had an error while processing your request (scripted).";
  }
  return "scripted response.failed with code " + std::string(code);
}

void ApplyTiming(const Json& entry, Reply& reply) {
  reply.wait_for_file = entry.value("wait_for_file", std::string());
  reply.header_delay_ms = entry.value("header_delay_ms", int64_t{0});
  reply.delay_ms = entry.value("delay_ms", int64_t{0});
  reply.event_delay_ms = entry.value("event_delay_ms", int64_t{0});
  if (entry.contains("pause_after")) {
    reply.pause_after = entry["pause_after"].get<int64_t>();
    reply.pause_ms = entry.value("pause_ms", int64_t{0});
  }
  if (entry.contains("drop_after")) {
    reply.stop_after = entry["drop_after"].get<int64_t>();
    reply.stop_mode = Reply::StopMode::kDrop;
  } else if (entry.contains("end_after")) {
    reply.stop_after = entry["end_after"].get<int64_t>();
    reply.stop_mode = Reply::StopMode::kEnd;
  }
}

Reply HttpErrorReply(const Json& spec) {
  int status = spec.is_number_integer() ? spec.get<int>() : spec["status"].get<int>();
  std::string type = status == 429   ? "requests"
                     : status >= 500 ? "server_error"
                                     : "invalid_request_error";
  std::string code = status == 401   ? "invalid_api_key"
                     : status == 429 ? "rate_limit_exceeded"
                     : status >= 500 ? "server_error"
                                     : "invalid_request";
  std::string message = status == 429
                            ? "Rate limit reached (scripted HTTP 429). Please try again in 0.2s."
                            : "scripted HTTP " + std::to_string(status) + " error";
  if (spec.is_object()) {
    code = spec.value("code", code);
    message = spec.value("message", message);
  }
  Reply reply = ErrorReply(status, type, code, message);
  if (spec.is_object()) {
    if (spec.contains("body")) {
      reply.body = spec["body"].is_string() ? spec["body"].get<std::string>() : Dump(spec["body"]);
      if (spec["body"].is_string()) reply.content_type = "text/plain";
    }
    if (spec.contains("retry_after")) {
      const Json& r = spec["retry_after"];
      reply.headers.emplace_back("Retry-After", r.is_string() ? r.get<std::string>() : Dump(r));
    }
    if (spec.contains("headers")) {
      for (const auto& [k, v] : spec["headers"].items()) {
        reply.headers.emplace_back(k, v.get<std::string>());
      }
    }
  }
  reply.outcome = "http_error:" + std::to_string(status);
  return reply;
}

}  // namespace

std::vector<std::string> SplitIntoDeltas(std::string_view text, size_t max_pieces) {
  std::vector<std::string> out;
  if (text.empty()) return out;
  size_t pieces = std::max<size_t>(1, std::min(max_pieces, text.size()));
  size_t start = 0;
  for (size_t k = 1; k < pieces; ++k) {
    size_t target = std::max(start + 1, k * text.size() / pieces);
    if (target >= text.size()) break;
    // Prefer to cut just before a space, like real deltas (" world").
    size_t cut = text.find(' ', target);
    if (cut == std::string_view::npos && !out.empty()) break;  // keep the last word whole
    if (cut == std::string_view::npos || cut <= start || cut >= text.size()) {
      cut = target;
      while (cut < text.size() && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) ++cut;
    }
    if (cut <= start || cut >= text.size()) continue;
    out.emplace_back(text.substr(start, cut - start));
    start = cut;
  }
  out.emplace_back(text.substr(start));
  return out;
}

Reply ErrorReply(int status, std::string_view type, std::string_view code,
                 std::string_view message) {
  Reply reply;
  reply.status = status;
  reply.content_type = "application/json";
  Json body = {
      {"error", {{"message", message}, {"type", type}, {"param", nullptr}, {"code", code}}}};
  reply.body = Dump(body);
  reply.outcome = "error:" + std::string(code);
  return reply;
}

Reply RenderResponse(const Json& entry, const RequestInfo& request, IssuedState& issued) {
  if (entry.contains("http_error")) {
    Reply reply = HttpErrorReply(entry["http_error"]);
    reply.header_delay_ms = entry.value("header_delay_ms", int64_t{0});
    return reply;
  }
  Reply reply;
  reply.streaming = true;
  reply.content_type = "text/event-stream";
  ApplyTiming(entry, reply);
  if (entry.contains("raw")) {
    if (entry["raw"].is_string()) {
      reply.chunks.push_back(entry["raw"].get<std::string>());
    } else {
      for (const auto& chunk : entry["raw"]) reply.chunks.push_back(chunk.get<std::string>());
    }
    reply.outcome = "raw";
    return reply;
  }

  std::string response_id = entry.contains("id") ? entry["id"].get<std::string>()
                                                 : "resp_" + std::to_string(issued.next_response++);
  Json output = Json::array();
  if (entry.contains("output")) {
    for (const auto& spec : entry["output"]) output.push_back(ExpandItem(spec, issued));
  }
  if (entry.contains("message")) {
    output.push_back(ExpandItem(Json{{"message", entry["message"]}}, issued));
  }
  std::string incomplete_reason;
  if (entry.contains("incomplete")) {
    incomplete_reason = entry["incomplete"].is_string()
                            ? entry["incomplete"].get<std::string>()
                            : entry["incomplete"]["reason"].get<std::string>();
    for (auto& item : output) {
      if (item.value("type", "") == "message") item["status"] = "incomplete";
    }
  }

  EventWriter w;
  Json created = w.Event("response.created");
  created["response"] = ResponseObject(response_id, request, "in_progress");
  w.Emit(created);
  Json in_progress = w.Event("response.in_progress");
  in_progress["response"] = created["response"];
  w.Emit(in_progress);
  for (size_t i = 0; i < output.size(); ++i) EmitItem(output[i], static_cast<int64_t>(i), w);

  if (entry.contains("failed")) {
    const Json& f = entry["failed"];
    std::string code = f.is_string() ? f.get<std::string>() : f.value("code", "server_error");
    std::string message = f.is_object() && f.contains("message") ? f["message"].get<std::string>()
                                                                 : DefaultFailureMessage(code);
    if (f.is_object() && f.value("error_event", false)) {
      Json e = w.Event("error");
      e["error"] = {{"type", code}, {"code", code}, {"message", message}, {"param", nullptr}};
      w.Emit(e);
    }
    Json failed = w.Event("response.failed");
    failed["response"] = ResponseObject(response_id, request, "failed");
    failed["response"]["error"] = {{"code", code}, {"message", message}};
    failed["response"]["output"] = output;
    w.Emit(failed);
    reply.outcome = "failed:" + code;
  } else {
    Json usage =
        ComputeUsage(entry.contains("usage") ? entry["usage"] : Json("auto"), request, output);
    bool incomplete = !incomplete_reason.empty();
    Json last = w.Event(incomplete ? "response.incomplete" : "response.completed");
    last["response"] =
        ResponseObject(response_id, request, incomplete ? "incomplete" : "completed");
    if (incomplete) last["response"]["incomplete_details"] = {{"reason", incomplete_reason}};
    last["response"]["output"] = output;
    if (usage.is_null()) {
      last["response"].erase("usage");
    } else {
      last["response"]["usage"] = usage;
    }
    w.Emit(last);
    reply.outcome = incomplete ? "incomplete:" + incomplete_reason : "completed";
  }
  reply.chunks = w.Take();
  return reply;
}

Reply RenderContextLengthExceeded(const RequestInfo& request, int64_t tokens, int64_t limit,
                                  IssuedState& issued) {
  std::string response_id = "resp_" + std::to_string(issued.next_response++);
  EventWriter w;
  Json created = w.Event("response.created");
  created["response"] = ResponseObject(response_id, request, "in_progress");
  w.Emit(created);
  Json failed = w.Event("response.failed");
  failed["response"] = ResponseObject(response_id, request, "failed");
  failed["response"]["error"] = {
      {"code", "context_length_exceeded"},
      {"message", "Your input exceeds the context window of this model (" + std::to_string(tokens) +
                      " estimated tokens > max_input_tokens " + std::to_string(limit) +
                      "). Please adjust your input and try again."}};
  w.Emit(failed);
  Reply reply;
  reply.streaming = true;
  reply.content_type = "text/event-stream";
  reply.chunks = w.Take();
  reply.outcome = "failed:context_length_exceeded";
  return reply;
}

Reply RenderInlineCompaction(const Json* entry, const RequestInfo& request, IssuedState& issued) {
  if (entry != nullptr && entry->contains("http_error")) {
    Reply reply = HttpErrorReply((*entry)["http_error"]);
    reply.header_delay_ms = entry->value("header_delay_ms", int64_t{0});
    return reply;
  }
  Json response = {{"output", Json::array()}};
  if (entry != nullptr && entry->contains("output")) {
    response["output"] = (*entry)["output"];
  } else {
    const Json& body = *request.body;
    std::string input_dump = Dump(body.contains("input") ? body["input"] : Json::array());
    char digest[17];
    std::snprintf(digest, sizeof(digest), "%016llx",
                  static_cast<unsigned long long>(Fnv1a64(input_dump)));
    Json summary = {{"input_items", body.contains("input") ? body["input"].size() : 0},
                    {"input_digest", digest},
                    {"inline", true}};
    response["output"].push_back({{"compaction", Dump(summary)}});
  }
  if (entry != nullptr && entry->contains("usage")) response["usage"] = (*entry)["usage"];
  if (entry != nullptr && entry->contains("id")) response["id"] = (*entry)["id"];
  Reply reply = RenderResponse(response, request, issued);
  reply.header_delay_ms = entry != nullptr ? entry->value("header_delay_ms", int64_t{0}) : 0;
  reply.outcome = entry == nullptr ? "inline_compact:default" : "inline_compact";
  return reply;
}

Reply RenderCompact(const Json* entry, const RequestInfo& request, IssuedState& issued) {
  if (entry != nullptr && entry->contains("http_error")) {
    Reply reply = HttpErrorReply((*entry)["http_error"]);
    reply.header_delay_ms = entry->value("header_delay_ms", int64_t{0});
    return reply;
  }
  const Json& body = *request.body;
  Json input = body.contains("input") && body["input"].is_array() ? body["input"] : Json::array();
  Json output = Json::array();
  bool keep_user_messages = entry == nullptr || entry->value("keep_user_messages", false);
  if (keep_user_messages) {
    for (const auto& item : input) {
      if (!IsUserMessage(item)) continue;
      Json kept = item;
      kept.erase("id");
      output.push_back(kept);
    }
  }
  if (entry == nullptr) {
    std::string input_dump = Dump(input);
    char digest[17];
    std::snprintf(digest, sizeof(digest), "%016llx",
                  static_cast<unsigned long long>(Fnv1a64(input_dump)));
    std::string id = issued.NewId("cmp");
    Json summary = {
        {"input_items", input.size()}, {"user_messages", output.size()}, {"input_digest", digest}};
    Json item = {{"id", id},
                 {"type", "compaction"},
                 {"encrypted_content", EncryptedContent("compaction", id, Dump(summary))}};
    Track(item, issued);
    output.push_back(item);
  } else if (entry->contains("output")) {
    for (const auto& spec : (*entry)["output"]) output.push_back(ExpandItem(spec, issued));
  }
  std::string response_id = entry != nullptr && entry->contains("id")
                                ? (*entry)["id"].get<std::string>()
                                : "resp_" + std::to_string(issued.next_response++);
  Json usage_spec = entry != nullptr && entry->contains("usage") ? (*entry)["usage"] : Json("auto");
  Json result = {{"id", response_id},
                 {"object", "response.compaction"},
                 {"created_at", NowSeconds()},
                 {"output", output}};
  Json usage = ComputeUsage(usage_spec, request, output);
  if (!usage.is_null()) result["usage"] = usage;
  Reply reply;
  reply.body = Dump(result);
  reply.content_type = "application/json";
  reply.header_delay_ms = entry != nullptr ? entry->value("header_delay_ms", int64_t{0}) : 0;
  reply.outcome = entry == nullptr ? "compact:default" : "compact";
  return reply;
}

}  // namespace codex::testing
