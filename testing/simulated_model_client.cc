#include "testing/simulated_model_client.h"

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

#include "compaction/local_compactor.h"
#include "compaction/rebuild_history.h"
#include "compaction/token_accounting.h"
#include "core/model_client.h"

namespace codex::compaction::sim {

namespace {

using Json = nlohmann::ordered_json;

int64_t Tokens(size_t bytes) { return core::EstimateTextTokens(bytes); }

// The decoded `input` items of a request body (bodies we built ourselves).
std::vector<core::Item> InputItems(const Json& body) {
  std::vector<core::Item> items;
  auto input = body.find("input");
  if (input == body.end() || !input->is_array()) return items;
  for (const auto& e : *input) {
    auto item = core::DecodeItem(e.dump());
    if (item.ok()) items.push_back(std::move(item).value());
  }
  return items;
}

std::string Filler(std::string_view head, size_t bytes) {
  std::string text(head);
  const std::string_view words = "lorem ipsum dolor sit amet consectetur ";
  while (text.size() < bytes) text += words;
  text.resize(std::max(bytes, head.size()));
  return text;
}

// Stands for the encrypted_content of the n-th compaction: `bytes` of
// base64-like text that differs from every other compaction's from its first
// byte, as real ciphertext does (identical stand-ins would let a compaction
// item look like a prompt-cache hit of the previous one).
std::string EncryptedContent(int64_t n, size_t bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  uint64_t state = 0x9E3779B97F4A7C15ULL * static_cast<uint64_t>(n + 1);
  std::string out;
  out.reserve(bytes);
  out += kAlphabet[static_cast<size_t>(n) % 64];
  while (out.size() < bytes) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    out += kAlphabet[(state >> 58) & 63];
  }
  return out;
}

}  // namespace

SimulatedModelClient::SimulatedModelClient(int64_t context_window, size_t summary_bytes)
    : context_window_(context_window), summary_bytes_(summary_bytes) {}

Status SimulatedModelClient::Admit(std::string_view request_body) {
  const int64_t tokens = Tokens(request_body.size());
  ++stats_.requests;
  stats_.bytes_sent += static_cast<int64_t>(request_body.size());
  const auto mismatch = std::mismatch(request_body.begin(), request_body.end(),
                                      previous_request_.begin(), previous_request_.end());
  const auto uncached = static_cast<int64_t>(request_body.end() - mismatch.first);
  stats_.uncached_bytes += uncached;
  stats_.log.push_back(
      {RequestKind::kTask, static_cast<int64_t>(request_body.size()), uncached, 0});
  previous_request_.assign(request_body);
  stats_.largest_request_tokens = std::max(stats_.largest_request_tokens, tokens);
  if (tokens > context_window_) {
    stats_.log.back().kind = RequestKind::kRejected;
    ++stats_.rejected_requests;
    Status status = ResourceExhaustedError("Your input exceeds the context window of this model (" +
                                           std::to_string(tokens) + " > " +
                                           std::to_string(context_window_) + " tokens)");
    status.WithReason(core::reason::kContextLengthExceeded);
    return status;
  }
  return OkStatus();
}

Result<core::ModelResponse> SimulatedModelClient::Stream(std::string_view request_body,
                                                         core::StreamObserver& observer,
                                                         const core::CancelToken& cancel) {
  if (cancel.cancelled()) return CancelledError("cancelled");
  RETURN_IF_ERROR(Admit(request_body));
  Json body = Json::parse(request_body, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded()) return InvalidArgumentError("request body is not JSON");
  const std::vector<core::Item> input = InputItems(body);

  core::ModelResponse response;
  response.response_id = "resp_sim_" + std::to_string(stats_.requests);
  const bool trigger = !input.empty() && input.back().kind == core::ItemKind::kOther &&
                       input.back().body == R"({"type":"compaction_trigger"})";
  if (trigger && !inline_supported_) {
    stats_.log.back().kind = RequestKind::kRejected;
    return InvalidArgumentError(
        "HTTP 400: Invalid value: 'compaction_trigger'. Supported values are: 'message', ...");
  }
  if (trigger || (!input.empty() && core::MessageText(input.back()) == kCompactionPrompt)) {
    stats_.log.back().kind = trigger ? RequestKind::kInlineCompaction : RequestKind::kSummary;
    stats_.log.back().ask_bytes = static_cast<int64_t>(body["input"].back().dump().size()) + 1;
  }
  if (trigger) {
    ++stats_.inline_requests;
    compacted_ = true;
    const int64_t n = next_summary_++;
    Json compaction = {{"type", "compaction"},
                       {"id", "cmp_sim_" + std::to_string(n)},
                       {"encrypted_content", EncryptedContent(n, summary_bytes_)}};
    ASSIGN_OR_RETURN(core::Item item, core::DecodeItem(compaction.dump()));
    response.items.push_back(std::move(item));
  } else if (!input.empty() && core::MessageText(input.back()) == kCompactionPrompt) {
    ++stats_.summary_requests;
    compacted_ = true;
    response.items.push_back(core::AssistantMessage(
        Filler("Summary " + std::to_string(next_summary_++) + ": ", summary_bytes_)));
  } else {
    last_task_request_.assign(request_body);
    if (compacted_) {
      last_restart_request_.assign(request_body);
      stats_.largest_request_after_compaction_bytes = std::max(
          stats_.largest_request_after_compaction_bytes, static_cast<int64_t>(request_body.size()));
      compacted_ = false;
    }
    ASSIGN_OR_RETURN(core::Item item, NextTaskItem());
    response.items.push_back(std::move(item));
  }

  core::TokenUsage usage;
  usage.input_tokens = Tokens(request_body.size());
  for (const auto& item : response.items) {
    RETURN_IF_ERROR(observer.OnOutputItemDone(item));
    usage.output_tokens += Tokens(item.body.size());
  }
  usage.total_tokens = usage.input_tokens + usage.output_tokens;
  response.usage = usage;
  return response;
}

Result<core::Item> SimulatedModelClient::NextTaskItem() {
  const int step = task_steps_++;
  Json item;
  if (step == 0) {
    item = {{"type", "function_call"},
            {"name", "update_plan"},
            {"arguments", R"({"plan":[{"step":"read build.log","status":"in_progress"},)"
                          R"({"step":"fix src/parser.cc","status":"pending"}]})"},
            {"call_id", "call_plan"}};
  } else if (step == 1) {
    item = {{"type", "custom_tool_call"},
            {"name", "apply_patch"},
            {"input",
             "*** Begin Patch\n*** Update File: src/parser.cc\n@@\n-old\n+new\n*** End Patch\n"},
            {"call_id", "call_patch"}};
  } else if (step - 2 < shell_calls_) {
    item = {{"type", "function_call"},
            {"name", "shell"},
            {"arguments", R"({"command":["cat","build.log"]})"},
            {"call_id", "call_" + std::to_string(next_call_++)}};
  } else {
    return core::AssistantMessage("Done: the build passes now.");
  }
  return core::DecodeItem(item.dump());
}

Result<std::string> SimulatedModelClient::Compact(std::string_view request_body,
                                                  const core::CancelToken& cancel) {
  if (cancel.cancelled()) return CancelledError("cancelled");
  ++stats_.compact_requests;
  Status admitted = Admit(request_body);
  if (admitted.ok()) stats_.log.back().kind = RequestKind::kCompactEndpoint;
  RETURN_IF_ERROR(admitted);
  Json body = Json::parse(request_body, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded()) return InvalidArgumentError("request body is not JSON");
  const std::vector<core::Item> input = InputItems(body);

  std::vector<const core::Item*> kept;
  int64_t budget = 2'000;
  for (auto it = input.rbegin(); it != input.rend(); ++it) {
    if (!IsRealUserMessage(*it)) continue;
    budget -= EstimateItemTokens(*it);
    if (budget < 0) break;
    kept.push_back(&*it);
  }
  Json output = Json::array();
  for (auto it = kept.rbegin(); it != kept.rend(); ++it) output.push_back(Json::parse((*it)->body));
  compacted_ = true;
  const int64_t n = next_summary_++;
  output.push_back({{"type", "compaction"},
                    {"id", "cmp_sim_" + std::to_string(n)},
                    {"encrypted_content", EncryptedContent(n, summary_bytes_)}});
  Json resource = {{"id", "resp_sim_compact"},
                   {"object", "response.compaction"},
                   {"output", output},
                   {"created_at", 0},
                   {"usage",
                    {{"input_tokens", Tokens(request_body.size())},
                     {"output_tokens", Tokens(summary_bytes_)},
                     {"total_tokens", Tokens(request_body.size() + summary_bytes_)}}}};
  return resource.dump();
}

}  // namespace codex::compaction::sim
