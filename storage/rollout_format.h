// Helpers shared by the rollout importer (rollout_import.cc), the JSON Lines
// exporter (rollout_export.cc) and the Markdown renderer (rollout_markdown.cc):
// the raw-JSON scanner that keeps bodies byte for byte, timestamps, and field
// reads that never throw. Internal to storage/; pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/json.h"
#include "base/status.h"
#include "base/time.h"
#include "core/token_usage.h"
#include "storage/rollout.h"
#include "storage/session_database.h"

namespace codex::storage::rollout_internal {

using Json = nlohmann::ordered_json;

// The index of the first non-whitespace byte of `s` at or after `i`.
size_t SkipWs(std::string_view s, size_t i);
// The raw text of member `key` of the object `obj` (nullopt when absent or
// malformed). Just enough of a scanner to find the exact text of a member, so
// bodies can be kept byte for byte; `obj` is already known to parse as JSON.
std::optional<std::string_view> RawMember(std::string_view obj, std::string_view key);
// The raw texts of the elements of the array `arr`.
std::vector<std::string_view> RawElements(std::string_view arr);

// "2026-11-21T05:44:45.282Z" (or +00:00, or no fraction) -> Unix ms; 0 if unparsable.
int64_t ParseTimestamp(const std::string& text);
// Unix ms -> "2026-11-21T05:44:45.282Z".

// StringField (j[key] when a string, else ""): base/json.h.
// A usage object's counts (missing or non-integer fields are 0).
core::TokenUsage UsageFrom(const Json& j);

// The session as rollout JSON Lines (rollout_export.cc); kDataLoss for an item
// whose body is not a JSON object.
Result<std::string> RenderJsonl(const SessionDetails& d, const ExportProgress& progress);
// The session as a readable Markdown transcript (rollout_markdown.cc).
std::string RenderMarkdown(const SessionDetails& d, const ExportProgress& progress);

}  // namespace codex::storage::rollout_internal
