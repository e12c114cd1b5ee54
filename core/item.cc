#include "core/item.h"

#include <nlohmann/json.hpp>

#include "base/json.h"

namespace codex::core {

using Json = nlohmann::ordered_json;

namespace {

struct KindName {
  ItemKind kind;
  std::string_view name;
};

constexpr KindName kKindNames[] = {
    {ItemKind::kMessage, "message"},
    {ItemKind::kReasoning, "reasoning"},
    {ItemKind::kFunctionCall, "function_call"},
    {ItemKind::kFunctionCallOutput, "function_call_output"},
    {ItemKind::kCustomToolCall, "custom_tool_call"},
    {ItemKind::kCustomToolCallOutput, "custom_tool_call_output"},
    {ItemKind::kLocalShellCall, "local_shell_call"},
    {ItemKind::kLocalShellCallOutput, "local_shell_call_output"},
    {ItemKind::kCompaction, "compaction"},
    {ItemKind::kCompactionCheckpoint, "compaction_checkpoint"},
    {ItemKind::kOther, "other"},
};

// Fields that describe server state or client bookkeeping, never resent.
constexpr std::string_view kStrippedFields[] = {"id", "status",
                                                "internal_chat_message_metadata_passthrough"};

Item MessageItem(std::string_view role, std::string_view part_type, std::string_view text) {
  Json j = {{"type", "message"},
            {"role", role},
            {"content", Json::array({{{"type", part_type}, {"text", text}}})}};
  Item item;
  item.kind = ItemKind::kMessage;
  item.role = std::string(role);
  item.body = Dump(j);
  return item;
}

}  // namespace

std::string_view ItemKindName(ItemKind kind) {
  for (const auto& kn : kKindNames) {
    if (kn.kind == kind) return kn.name;
  }
  return "other";
}

ItemKind ItemKindFromName(std::string_view name) {
  for (const auto& kn : kKindNames) {
    if (kn.name == name) return kn.kind;
  }
  return ItemKind::kOther;
}

bool IsCall(ItemKind kind) {
  return kind == ItemKind::kFunctionCall || kind == ItemKind::kCustomToolCall ||
         kind == ItemKind::kLocalShellCall;
}

bool IsCallOutput(ItemKind kind) {
  return kind == ItemKind::kFunctionCallOutput || kind == ItemKind::kCustomToolCallOutput ||
         kind == ItemKind::kLocalShellCallOutput;
}

ItemKind OutputKindFor(ItemKind call_kind) {
  switch (call_kind) {
    case ItemKind::kCustomToolCall:
      return ItemKind::kCustomToolCallOutput;
    case ItemKind::kLocalShellCall:
      return ItemKind::kLocalShellCallOutput;
    default:
      return ItemKind::kFunctionCallOutput;
  }
}

Result<Item> DecodeItem(std::string_view json) {
  Json j = Json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return InvalidArgumentError("item is not a JSON object");
  }
  auto type = j.find("type");
  if (type == j.end() || !type->is_string()) {
    return InvalidArgumentError("item has no \"type\"");
  }
  Item item;
  const std::string type_name = type->get<std::string>();
  item.kind = ItemKindFromName(type_name);
  if (item.kind == ItemKind::kCompactionCheckpoint) {
    return InvalidArgumentError("\"compaction_checkpoint\" is not a wire item");
  }
  // local_shell_call keeps its id: the API requires it on that item type.
  if (auto id = j.find("id"); id != j.end() && id->is_string()) {
    item.server_id = id->get<std::string>();
  }
  for (auto field : kStrippedFields) {
    if (field == "id" && item.kind == ItemKind::kLocalShellCall) continue;
    j.erase(std::string(field));
  }
  if (auto role = j.find("role"); role != j.end() && role->is_string()) {
    item.role = role->get<std::string>();
  }
  if (auto call_id = j.find("call_id"); call_id != j.end() && call_id->is_string()) {
    item.call_id = call_id->get<std::string>();
  }
  if (IsCall(item.kind) || IsCallOutput(item.kind)) {
    if (item.call_id.empty()) {
      return InvalidArgumentError("\"" + type_name + "\" item has no \"call_id\"");
    }
  }
  item.body = Dump(j);
  return item;
}

Item UserMessage(std::string_view text) { return MessageItem("user", "input_text", text); }

Item UserMessage(std::string_view text, std::span<const std::string> image_urls) {
  if (image_urls.empty()) return UserMessage(text);
  Json content = Json::array();
  for (const std::string& url : image_urls) {
    content.push_back({{"type", "input_image"}, {"image_url", url}});
  }
  content.push_back({{"type", "input_text"}, {"text", text}});
  Json j = {{"type", "message"}, {"role", "user"}, {"content", std::move(content)}};
  Item item;
  item.kind = ItemKind::kMessage;
  item.role = "user";
  item.body = Dump(j);
  return item;
}
Item DeveloperMessage(std::string_view text) {
  return MessageItem("developer", "input_text", text);
}
Item AssistantMessage(std::string_view text) {
  return MessageItem("assistant", "output_text", text);
}

Item CallOutputFor(ItemKind call_kind, std::string_view call_id, std::string_view output) {
  Item item;
  item.kind = OutputKindFor(call_kind);
  item.call_id = std::string(call_id);
  Json j = {{"type", ItemKindName(item.kind)}, {"call_id", call_id}, {"output", output}};
  item.body = Dump(j);
  return item;
}

Item FunctionCallOutput(std::string_view call_id, std::string_view output) {
  return CallOutputFor(ItemKind::kFunctionCall, call_id, output);
}

Item CustomToolCallOutput(std::string_view call_id, std::string_view output) {
  return CallOutputFor(ItemKind::kCustomToolCall, call_id, output);
}

std::string MessageText(const Item& item) {
  if (item.kind != ItemKind::kMessage) return {};
  Json j = Json::parse(item.body, nullptr, false);
  std::string text;
  if (!j.is_object()) return text;
  auto content = j.find("content");
  if (content == j.end()) return text;
  if (content->is_string()) return content->get<std::string>();
  if (!content->is_array()) return text;
  for (const auto& part : *content) {
    if (!part.is_object()) continue;
    auto t = part.find("text");
    if (t != part.end() && t->is_string()) text += t->get<std::string>();
  }
  return text;
}

std::string WireBody(const Item& item, bool send_item_ids) {
  if (!send_item_ids || item.server_id.empty() || item.body.size() < 2 ||
      item.kind == ItemKind::kLocalShellCall) {
    return item.body;
  }
  std::string out = "{\"id\":";
  out += Dump(Json(item.server_id));
  out += item.body == "{}" ? "" : ",";
  out.append(item.body, 1, std::string::npos);
  return out;
}

}  // namespace codex::core
