// The apply_patch tool as offered to the model, in the two shapes providers
// accept (ApplyPatchToolType in core/config.h):
//   kFreeform: {"type":"custom","name":"apply_patch","description":…,
//               "format":{"type":"grammar","syntax":"lark","definition":<grammar>}}
//              — the model sends the raw patch text, constrained by the Lark
//              grammar below; the call arrives as a custom_tool_call whose
//              `input` is the patch.
//   kFunction: {"type":"function","name":"apply_patch","description":…,
//               "parameters":{"type":"object","properties":{"input":{…}},
//               "required":["input"],"additionalProperties":false},"strict":false}
//              — the patch arrives in the `input` string of the arguments.
// Both are fixed strings built once; thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "core/config.h"

namespace codex::core {

// The Lark grammar of the patch format (what ParsePatch accepts, in its
// canonical form: no heredoc wrapper, no padding around markers).
std::string_view ApplyPatchLarkGrammar();

// The tool definition, as an ordered JSON object (key order as shown above).
nlohmann::ordered_json ApplyPatchToolDefinition(ApplyPatchToolType type);

// The same, serialised compactly, for the request's `tools` array.
std::string ApplyPatchToolJson(ApplyPatchToolType type);

}  // namespace codex::core
