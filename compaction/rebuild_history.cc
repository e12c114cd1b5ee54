#include "compaction/rebuild_history.h"

#include <algorithm>

#include "base/strings.h"
#include "compaction/token_accounting.h"
#include "compaction/working_state.h"

namespace codex::compaction {

bool SameBodyAsAny(const core::Item& item, std::span<const core::Item> items) {
  return std::any_of(items.begin(), items.end(),
                     [&](const core::Item& other) { return other.body == item.body; });
}

namespace {

std::string OmittedMarker(size_t omitted_bytes) {
  return "\n[... " + std::to_string(omitted_bytes) + " bytes omitted by compaction ...]\n";
}

// A user message `prefix` + (`text` cut in the middle) whose estimate is at
// most `max_tokens`; nullopt when even `prefix` alone does not fit. JSON
// escaping makes the body longer than the text, so shrink until it fits.
std::optional<core::Item> FitUserMessage(std::string_view prefix, std::string_view text,
                                         int64_t max_tokens) {
  if (max_tokens <= 0) return std::nullopt;
  core::Item empty = core::UserMessage(prefix);
  if (EstimateItemTokens(empty) > max_tokens) return std::nullopt;
  const int64_t max_body_bytes = max_tokens * static_cast<int64_t>(core::kBytesPerToken);
  int64_t text_bytes = max_body_bytes - static_cast<int64_t>(empty.body.size());
  for (int attempt = 0; attempt < 64 && text_bytes > 0; ++attempt) {
    std::string candidate(prefix);
    candidate += TruncateMiddle(text, static_cast<size_t>(text_bytes));
    core::Item item = core::UserMessage(candidate);
    const int64_t excess = static_cast<int64_t>(item.body.size()) - max_body_bytes;
    if (excess <= 0) return item;
    // Escapes made the body `excess` bytes too long; the text shrinks by at
    // least as much, and by a growing share when escapes are dense.
    text_bytes -= std::max<int64_t>(excess, text_bytes / 8);
  }
  return empty;
}

}  // namespace

core::Item SummaryMessage(std::string_view summary) {
  std::string text(kSummaryPrefix);
  text += summary;
  return core::UserMessage(text);
}

std::string TruncateMiddle(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  // The marker's length with the largest possible count bounds the real one.
  const size_t marker_bound = OmittedMarker(text.size()).size();
  if (marker_bound >= max_bytes) {
    return std::string(text.substr(0, Utf8BoundaryAtOrBefore(text, max_bytes)));
  }
  const size_t keep = max_bytes - marker_bound;
  const size_t head_end = Utf8BoundaryAtOrBefore(text, keep / 2);
  const size_t tail_start = Utf8BoundaryAtOrAfter(text, text.size() - (keep - keep / 2));
  std::string out(text.substr(0, head_end));
  out += OmittedMarker(tail_start - head_end);
  out += text.substr(tail_start);
  return out;
}

std::optional<core::Item> TruncateUserMessage(const core::Item& message, int64_t max_tokens) {
  if (max_tokens < kMinPartialMessageTokens) return std::nullopt;
  return FitUserMessage("", core::MessageText(message), max_tokens);
}

std::vector<core::Item> RebuildHistoryAround(std::span<const core::Item> transcript,
                                             std::span<const core::Item> initial_context,
                                             std::span<const core::Item> replacement,
                                             int64_t user_message_budget,
                                             const std::optional<core::Item>& current_user_message,
                                             std::span<const core::OpenProcess> open_processes) {
  std::optional<size_t> current_index;
  if (current_user_message) {
    for (size_t i = transcript.size(); i-- > 0;) {
      if (transcript[i].body == current_user_message->body) {
        current_index = i;
        break;
      }
    }
  }

  std::vector<core::Item> kept_newest_first;
  int64_t remaining = std::max<int64_t>(0, user_message_budget);
  for (size_t i = transcript.size(); i-- > 0;) {
    const core::Item& item = transcript[i];
    if (i == current_index || !IsRealUserMessage(item) || SameBodyAsAny(item, initial_context)) {
      continue;
    }
    const int64_t cost = EstimateItemTokens(item);
    if (cost <= remaining) {
      kept_newest_first.push_back(item);
      remaining -= cost;
      continue;
    }
    if (auto cut = TruncateUserMessage(item, remaining)) kept_newest_first.push_back(*cut);
    break;
  }

  std::vector<core::Item> out;
  out.reserve(initial_context.size() + kept_newest_first.size() + replacement.size() + 2);
  out.insert(out.end(), initial_context.begin(), initial_context.end());
  out.insert(out.end(), kept_newest_first.rbegin(), kept_newest_first.rend());
  // The user messages, the turn's own last, come before the working state and
  // the summary, as Codex orders them. In a history compacted before (and in
  // a turn's first stretch) the compaction request carries the same items
  // right after the initial context, so the request after the compaction
  // shares its prefix through them and through an unchanged working state:
  // only the new summary is past the prompt cache.
  if (current_user_message) out.push_back(*current_user_message);
  if (auto state = FrontierMessage(transcript, current_user_message, open_processes)) {
    out.push_back(*state);
  }
  out.insert(out.end(), replacement.begin(), replacement.end());
  return out;
}

std::vector<core::Item> RebuildHistory(std::span<const core::Item> transcript,
                                       std::span<const core::Item> initial_context,
                                       std::string_view summary, int64_t user_message_budget,
                                       const std::optional<core::Item>& current_user_message,
                                       std::span<const core::OpenProcess> open_processes) {
  const core::Item summary_item = SummaryMessage(summary);
  return RebuildHistoryAround(transcript, initial_context, {&summary_item, 1}, user_message_budget,
                              current_user_message, open_processes);
}

Result<std::vector<core::Item>> RebuildHistoryAroundWithin(
    std::span<const core::Item> transcript, std::span<const core::Item> initial_context,
    std::span<const core::Item> replacement, int64_t user_message_budget,
    const std::optional<core::Item>& current_user_message, int64_t max_tokens,
    std::span<const core::OpenProcess> open_processes) {
  int64_t fixed = EstimateTokens(initial_context) + EstimateTokens(replacement);
  if (current_user_message) fixed += EstimateItemTokens(*current_user_message);
  if (auto state = FrontierMessage(transcript, current_user_message, open_processes)) {
    fixed += EstimateItemTokens(*state);
  }
  if (fixed > max_tokens) {
    return ResourceExhaustedError(
        "the initial context, the compaction output and the current message take " +
        std::to_string(fixed) + " tokens, more than the " + std::to_string(max_tokens) +
        " a compacted history may take; raise model_auto_compact_token_limit");
  }
  return RebuildHistoryAround(transcript, initial_context, replacement,
                              std::min(user_message_budget, max_tokens - fixed),
                              current_user_message, open_processes);
}

Result<std::vector<core::Item>> RebuildHistoryWithin(
    std::span<const core::Item> transcript, std::span<const core::Item> initial_context,
    std::string_view summary, int64_t user_message_budget,
    const std::optional<core::Item>& current_user_message, int64_t max_tokens,
    std::span<const core::OpenProcess> open_processes) {
  int64_t fixed = EstimateTokens(initial_context);
  if (current_user_message) fixed += EstimateItemTokens(*current_user_message);
  if (auto state = FrontierMessage(transcript, current_user_message, open_processes)) {
    fixed += EstimateItemTokens(*state);
  }
  const int64_t summary_tokens = EstimateItemTokens(SummaryMessage(summary));
  if (fixed + summary_tokens <= max_tokens) {
    const int64_t budget = std::min(user_message_budget, max_tokens - fixed - summary_tokens);
    return RebuildHistory(transcript, initial_context, summary, budget, current_user_message,
                          open_processes);
  }
  // No room for user messages: cut the summary to what is left.
  std::optional<core::Item> cut = FitUserMessage(kSummaryPrefix, summary, max_tokens - fixed);
  if (!cut) {
    return ResourceExhaustedError(
        "the initial context and current message alone take " + std::to_string(fixed) +
        " tokens, leaving no room for a summary under " + std::to_string(max_tokens) +
        "; shorten the message or AGENTS.md, or raise model_auto_compact_token_limit");
  }
  std::string cut_summary = core::MessageText(*cut).substr(kSummaryPrefix.size());
  return RebuildHistory(transcript, initial_context, cut_summary, 0, current_user_message,
                        open_processes);
}

std::optional<core::Item> FrontierMessage(std::span<const core::Item> transcript,
                                          const std::optional<core::Item>& current_user_message,
                                          std::span<const core::OpenProcess> open_processes) {
  const bool turn_running = current_user_message.has_value();
  if (current_user_message &&
      std::none_of(transcript.begin(), transcript.end(), [&](const core::Item& item) {
        return item.body == current_user_message->body;
      })) {
    // Compacted before the message was appended: it is still the running task.
    std::vector<core::Item> with_current(transcript.begin(), transcript.end());
    with_current.push_back(*current_user_message);
    return WorkingStateMessage(ExtractWorkingState(with_current, turn_running, open_processes));
  }
  return WorkingStateMessage(ExtractWorkingState(transcript, turn_running, open_processes));
}

int DropOldestItems(std::vector<core::Item>& items, std::span<const core::Item> keep,
                    int64_t min_tokens) {
  auto is_protected = [&](const core::Item& item) {
    return IsSummaryMessage(item) || SameBodyAsAny(item, keep);
  };
  int removed = 0;
  int64_t removed_tokens = 0;
  while (removed == 0 || removed_tokens < min_tokens) {
    const size_t n = items.size();
    size_t i = 0;
    while (i < n && is_protected(items[i])) ++i;
    if (i == n) break;

    std::vector<size_t> unit;
    size_t j = i;
    while (j < n && items[j].kind == core::ItemKind::kReasoning) unit.push_back(j++);
    if (j < n && !is_protected(items[j])) {
      unit.push_back(j);
      for (size_t k : core::OutputsAnswering(items, j)) unit.push_back(k);
    }
    for (auto it = unit.rbegin(); it != unit.rend(); ++it) {
      removed_tokens += EstimateItemTokens(items[*it]);
      items.erase(items.begin() + static_cast<std::ptrdiff_t>(*it));
      ++removed;
    }
  }
  return removed;
}

std::vector<core::Item> WithoutCheckpoints(std::span<const core::Item> items) {
  std::vector<core::Item> out;
  out.reserve(items.size());
  for (const auto& item : items) {
    if (item.kind != core::ItemKind::kCompactionCheckpoint) out.push_back(item);
  }
  return out;
}

}  // namespace codex::compaction
