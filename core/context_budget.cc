#include "core/context_budget.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>

#include "core/model_client.h"
#include "core/session_store.h"

namespace codex::core {

namespace {

// Bytes of image_url payloads and the number of input_image parts in `j`.
void CountImages(const nlohmann::json& j, int64_t& url_bytes, int64_t& images) {
  if (j.is_array()) {
    for (const auto& e : j) CountImages(e, url_bytes, images);
    return;
  }
  if (!j.is_object()) return;
  auto type = j.find("type");
  if (type != j.end() && type->is_string() &&
      type->get_ref<const std::string&>() == "input_image") {
    ++images;
    auto url = j.find("image_url");
    if (url != j.end() && url->is_string()) {
      // As written in the body: the quotes plus the (escape-free base64) text.
      url_bytes += static_cast<int64_t>(url->get_ref<const std::string&>().size()) + 2;
    }
    return;
  }
  for (const auto& [key, value] : j.items()) CountImages(value, url_bytes, images);
}

}  // namespace

int64_t EstimateItemTokens(const Item& item) {
  if (item.kind == ItemKind::kCompactionCheckpoint) return 0;
  int64_t bytes = static_cast<int64_t>(item.body.size());
  int64_t images = 0;
  if (item.body.find("\"input_image\"") != std::string::npos) {
    nlohmann::json j = nlohmann::json::parse(item.body, nullptr, /*allow_exceptions=*/false);
    int64_t url_bytes = 0;
    if (!j.is_discarded()) CountImages(j, url_bytes, images);
    bytes = std::max<int64_t>(0, bytes - url_bytes);
  }
  return EstimateTextTokens(static_cast<size_t>(bytes)) + images * kImageTokenEstimate;
}

int64_t EstimateTokens(std::span<const Item> items) {
  int64_t total = 0;
  for (const auto& item : items) total += EstimateItemTokens(item);
  return total;
}

int ContextLeftPercent(int64_t usage, int64_t context_window) {
  if (context_window <= 0) return 100;
  const int64_t left = std::clamp<int64_t>(context_window - usage, 0, context_window);
  return static_cast<int>(left * 100 / context_window);
}

std::optional<UsageMark> NewestUsageMark(std::span<const StoredItem> view) {
  for (size_t i = view.size(); i-- > 0;) {
    if (view[i].reported_total_tokens) return UsageMark{i, *view[i].reported_total_tokens};
  }
  return std::nullopt;
}

bool IsContextWindowExceeded(const Status& status) {
  return status.code() == StatusCode::kResourceExhausted &&
         status.reason() == core::reason::kContextLengthExceeded;
}

void ContextBudget::Seed(std::span<const Item> transcript, std::optional<UsageMark> mark,
                         int64_t fixed_tokens) {
  if (mark && mark->item_index < transcript.size()) {
    base_ = mark->total_tokens;
    pending_ = EstimateTokens(transcript.subspan(mark->item_index + 1));
  } else {
    base_ = fixed_tokens;
    pending_ = EstimateTokens(transcript);
  }
}

void ContextBudget::OnResponseCompleted(const std::optional<TokenUsage>& usage) {
  if (!usage || usage->total_tokens <= 0) return;
  base_ = usage->total_tokens;
  pending_ = 0;
}

void ContextBudget::OnTurnStarted() {
  requests_in_turn_ = 0;
  compacted_since_request_ = false;
  overflow_retried_ = false;
}

bool ContextBudget::ShouldCompactBeforeTurn() const { return limit_ > 0 && usage() >= soft_; }

bool ContextBudget::ShouldCompactBeforeRequest(bool plan_step_completed) const {
  if (limit_ <= 0 || requests_in_turn_ == 0 || compacted_since_request_) return false;
  return usage() >= limit_ || (plan_step_completed && usage() >= soft_);
}

void ContextBudget::OnRequestSent() {
  ++requests_in_turn_;
  compacted_since_request_ = false;
}

bool ContextBudget::ShouldCompactAfterFailure(const Status& failure) const {
  return IsContextWindowExceeded(failure) && !overflow_retried_;
}

void ContextBudget::OnOverflowCompacted() {
  overflow_retried_ = true;
  compacted_since_request_ = true;
}

void ContextBudget::OnCompacted() { compacted_since_request_ = true; }

bool ContextBudget::ManualCompactionWorthwhile() const {
  // A compacted history is built to take at most half the limit
  // (compaction's HistoryCeiling): at exactly half it may be one, and
  // compacting it again would summarise a summary.
  return limit_ <= 0 || usage() > limit_ / 2;
}

}  // namespace codex::core
