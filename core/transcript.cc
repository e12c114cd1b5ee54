#include "core/transcript.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "base/strings.h"

namespace codex::core {

namespace {

bool TextIsContext(std::string_view text) {
  text = TrimLeft(text);
  return std::any_of(std::begin(kContextMarkers), std::end(kContextMarkers),
                     [&](std::string_view marker) { return text.starts_with(marker); });
}

bool TextIsSummary(std::string_view text) {
  return text.starts_with(kSummaryPrefix) || text.starts_with(kCodexSummaryPrefix);
}

}  // namespace

bool IsUserRoleMessage(const Item& item) {
  return item.kind == ItemKind::kMessage && item.role == "user";
}

bool HasImage(const Item& item) {
  if (item.kind != ItemKind::kMessage) return false;
  // Cheap test first: most messages carry no image.
  if (item.body.find("input_image") == std::string::npos) return false;
  const nlohmann::json j = nlohmann::json::parse(item.body, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return false;
  auto content = j.find("content");
  if (content == j.end() || !content->is_array()) return false;
  return std::any_of(content->begin(), content->end(), [](const nlohmann::json& part) {
    if (!part.is_object()) return false;
    auto type = part.find("type");
    return type != part.end() && type->is_string() && *type == "input_image";
  });
}

bool IsContextItem(const Item& item) {
  if (item.kind != ItemKind::kMessage) return false;
  if (item.role == "developer" || item.role == "system") return true;
  return item.role == "user" && TextIsContext(MessageText(item));
}

bool IsSummaryMessage(const Item& item) {
  return IsUserRoleMessage(item) && TextIsSummary(MessageText(item));
}

std::string TurnAbortedMessage() {
  return "<turn_aborted>\nThe user interrupted the previous turn on purpose. Commands that were "
         "stopped may have run in part; check the current state before repeating them.\n"
         "</turn_aborted>";
}

bool IsRealUserMessage(const Item& item) {
  if (!IsUserRoleMessage(item)) return false;
  const std::string text = MessageText(item);
  if (TextIsContext(text) || TextIsSummary(text)) return false;
  return !TrimLeft(text).empty() || HasImage(item);
}

bool IsUserShellRecord(const Item& item) {
  return IsUserRoleMessage(item) &&
         std::string_view(MessageText(item)).starts_with(kUserShellRecordPrefix);
}

bool IsTypedUserMessage(const Item& item) {
  return IsRealUserMessage(item) &&
         !std::string_view(MessageText(item)).starts_with(kUserShellRecordPrefix);
}

bool Answers(const Item& output, const Item& call) {
  return IsCall(call.kind) && IsCallOutput(output.kind) && output.call_id == call.call_id;
}

std::vector<size_t> UnansweredCalls(std::span<const Item> items, size_t from) {
  std::set<std::string_view> answered;
  for (const Item& item : items) {
    if (IsCallOutput(item.kind)) answered.insert(item.call_id);
  }
  std::vector<size_t> out;
  for (size_t i = from; i < items.size(); ++i) {
    if (IsCall(items[i].kind) && !answered.count(items[i].call_id)) out.push_back(i);
  }
  return out;
}

std::vector<size_t> OutputsAnswering(std::span<const Item> items, size_t call_index) {
  std::vector<size_t> out;
  if (call_index >= items.size() || !IsCall(items[call_index].kind)) return out;
  for (size_t k = call_index + 1; k < items.size(); ++k) {
    if (Answers(items[k], items[call_index])) out.push_back(k);
  }
  return out;
}

}  // namespace codex::core
