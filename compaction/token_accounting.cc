#include "compaction/token_accounting.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>

namespace codex::compaction {

namespace {

struct FamilyWindow {
  std::string_view prefix;
  int64_t window;
};

// Input windows as Codex budgets them: for the gpt-5 family the API accepts
// 400k tokens in all, of which up to 128k are output, so 272k are usable for
// input. Longest matching prefix wins, so order does not matter.
constexpr FamilyWindow kFamilies[] = {
    {"gpt-5", 272'000},       {"gpt-5-codex", 272'000}, {"gpt-5.1-codex", 272'000},
    {"codex-mini", 200'000},  {"gpt-4.1", 1'047'576},   {"gpt-4o", 128'000},
    {"gpt-4-turbo", 128'000}, {"gpt-4", 8'192},         {"gpt-3.5-turbo", 16'385},
    {"o1", 200'000},          {"o1-mini", 128'000},     {"o3", 200'000},
    {"o4-mini", 200'000},     {"gpt-oss", 96'000},
};

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

Status PositiveOrError(std::optional<int64_t> value, std::string_view key) {
  if (value && *value <= 0) {
    return InvalidArgumentError(std::string(key) + " must be a positive number of tokens, got " +
                                std::to_string(*value) + "; fix it in config.toml or -c");
  }
  return OkStatus();
}

}  // namespace

std::optional<int64_t> KnownContextWindow(std::string_view model) {
  if (auto slash = model.rfind('/'); slash != std::string_view::npos) {
    model.remove_prefix(slash + 1);
  }
  const FamilyWindow* best = nullptr;
  for (const auto& family : kFamilies) {
    if (model.substr(0, family.prefix.size()) != family.prefix) continue;
    if (best == nullptr || family.prefix.size() > best->prefix.size()) best = &family;
  }
  if (best == nullptr) return std::nullopt;
  return best->window;
}

Result<ContextLimits> ResolveContextLimits(std::string_view model,
                                           std::optional<int64_t> window_override,
                                           std::optional<int64_t> limit_override) {
  RETURN_IF_ERROR(PositiveOrError(window_override, "model_context_window"));
  RETURN_IF_ERROR(PositiveOrError(limit_override, "model_auto_compact_token_limit"));
  ContextLimits limits;
  limits.context_window =
      window_override.value_or(KnownContextWindow(model).value_or(kFallbackContextWindow));
  limits.auto_compact_limit = limit_override ? std::min(*limit_override, limits.context_window)
                                             : limits.context_window * kAutoCompactPercent / 100;
  return limits;
}

Result<ContextLimits> ResolveContextLimits(const core::Config& config) {
  return ResolveContextLimits(config.model, config.model_context_window,
                              config.model_auto_compact_token_limit);
}

int64_t EstimateItemTokens(const core::Item& item) {
  if (item.kind == core::ItemKind::kCompactionCheckpoint) return 0;
  int64_t bytes = static_cast<int64_t>(item.body.size());
  int64_t images = 0;
  if (item.body.find("\"input_image\"") != std::string::npos) {
    nlohmann::json j = nlohmann::json::parse(item.body, nullptr, /*allow_exceptions=*/false);
    int64_t url_bytes = 0;
    if (!j.is_discarded()) CountImages(j, url_bytes, images);
    bytes = std::max<int64_t>(0, bytes - url_bytes);
  }
  return (bytes + 3) / 4 + images * kImageTokenEstimate;
}

int64_t EstimateTokens(std::span<const core::Item> items) {
  int64_t total = 0;
  for (const auto& item : items) total += EstimateItemTokens(item);
  return total;
}

int ContextLeftPercent(int64_t usage, int64_t context_window) {
  if (context_window <= 0) return 0;
  const int64_t left = std::clamp<int64_t>(context_window - usage, 0, context_window);
  return static_cast<int>(left * 100 / context_window);
}

bool ShouldCompact(int64_t usage, int64_t limit) { return limit > 0 && usage >= limit; }

bool IsContextWindowExceeded(const Status& status) {
  return status.code() == StatusCode::kResourceExhausted &&
         status.reason() == "context_length_exceeded";
}

void UsageTracker::OnResponseCompleted(const std::optional<core::TokenUsage>& usage) {
  if (!usage) return;
  base_ = usage->total_tokens;
  pending_ = 0;
}

void UsageTracker::Reset(std::span<const core::Item> history) {
  base_ = EstimateTokens(history);
  pending_ = 0;
}

}  // namespace codex::compaction
