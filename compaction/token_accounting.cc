#include "compaction/token_accounting.h"

#include <algorithm>
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
                                           std::optional<int64_t> limit_override,
                                           std::optional<int64_t> soft_override) {
  RETURN_IF_ERROR(PositiveOrError(window_override, "model_context_window"));
  RETURN_IF_ERROR(PositiveOrError(limit_override, "model_auto_compact_token_limit"));
  RETURN_IF_ERROR(PositiveOrError(soft_override, "model_auto_compact_soft_token_limit"));
  ContextLimits limits;
  limits.context_window =
      window_override.value_or(KnownContextWindow(model).value_or(kFallbackContextWindow));
  limits.auto_compact_limit = limit_override ? std::min(*limit_override, limits.context_window)
                                             : limits.context_window * kAutoCompactPercent / 100;
  limits.soft_compact_limit = soft_override ? std::min(*soft_override, limits.auto_compact_limit)
                                            : limits.auto_compact_limit * kSoftCompactPercent / 100;
  return limits;
}

Result<ContextLimits> ResolveContextLimits(const core::Config& config) {
  return ResolveContextLimits(config.model, config.model_context_window,
                              config.model_auto_compact_token_limit,
                              config.model_auto_compact_soft_token_limit);
}

}  // namespace codex::compaction
