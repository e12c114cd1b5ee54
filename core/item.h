// Protocol items: the units of a transcript, kept as the exact JSON text that
// goes on the wire (ARCHITECTURE.md, "Bytes on the wire are data").
//
// An Item's `body` is never re-serialised once created: request bodies are
// built by concatenating bodies. Decoding only classifies (kind, role,
// call_id) and strips fields that must not be resent. Token estimates are
// core/context_budget.h's (EstimateItemTokens). Thread-compatible.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace codex::core {

enum class ItemKind {
  kMessage,
  kReasoning,
  kFunctionCall,
  kFunctionCallOutput,
  kCustomToolCall,
  kCustomToolCallOutput,
  kLocalShellCall,
  kLocalShellCallOutput,
  kCompaction,            // server-issued {type:"compaction", encrypted_content}
  kCompactionCheckpoint,  // ours: marks where a compaction rewrote the history (never sent)
  kOther,                 // any other wire item type, kept and resent verbatim
};

std::string_view ItemKindName(ItemKind kind);
// Inverse of ItemKindName; kOther for unknown names.
ItemKind ItemKindFromName(std::string_view name);

// True for kinds that open a tool call that needs exactly one output.
bool IsCall(ItemKind kind);
// True for kinds that answer a call.
bool IsCallOutput(ItemKind kind);
// The output kind that answers a call kind (kFunctionCall -> kFunctionCallOutput, ...).
ItemKind OutputKindFor(ItemKind call_kind);

struct Item {
  ItemKind kind = ItemKind::kOther;
  std::string role;       // messages: user|assistant|developer|system
  std::string call_id;    // calls and outputs
  std::string server_id;  // the "id" the server gave it (stripped from body)
  std::string body;       // JSON text exactly as sent on the wire
};

// Decodes a wire item received from the server (output_item.done) or read
// from a rollout. The body is rewritten once, compactly, without "id",
// "status" and client-only fields, so that it is what we will resend.
// Fails with kInvalidArgument when `json` is not an object with a "type".
Result<Item> DecodeItem(std::string_view json);

// Builders for items we author. Bodies are compact JSON.
Item UserMessage(std::string_view text);
// A user message whose content is one input_image part per URL (data: URLs
// included), then the text, as Codex sends attached images.
Item UserMessage(std::string_view text, std::span<const std::string> image_urls);
Item DeveloperMessage(std::string_view text);
Item AssistantMessage(std::string_view text);
Item FunctionCallOutput(std::string_view call_id, std::string_view output);
Item CustomToolCallOutput(std::string_view call_id, std::string_view output);
// The output item answering a call item of `call_kind` (function, custom, local shell).
Item CallOutputFor(ItemKind call_kind, std::string_view call_id, std::string_view output);

// Text of a message item (all input_text/output_text parts concatenated), "" otherwise.
std::string MessageText(const Item& item);

// The body to put on the wire: `item.body`, or with `"id":server_id` spliced
// in front when `send_item_ids` is set and the item has a server id.
std::string WireBody(const Item& item, bool send_item_ids);

}  // namespace codex::core
