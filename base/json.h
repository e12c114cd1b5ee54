// JSON text, once: compact, and invalid UTF-8 in a string is replaced by
// U+FFFD instead of throwing (model output and tool output are not always
// valid UTF-8). Header-only over nlohmann/json.
#pragma once

#include <concepts>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace codex {

inline std::string Dump(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}
// For ordered_json (key order kept). A template, so that a braced list,
// Dump({{"k", v}}), is a nlohmann::json without ambiguity.
template <typename J>
requires std::same_as<J, nlohmann::ordered_json> std::string Dump(const J& j) {
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

// The string at `key` of the object `j`; `fallback` when `j` is not an
// object, has no `key`, or holds something else there. Never throws: the
// JSON a model, a provider, an MCP server or a file sends may hold anything
// (nlohmann's value() throws type_error when the key holds another type).
template <typename J>
requires std::same_as<J, nlohmann::json> || std::same_as<J, nlohmann::ordered_json> std::string
StringField(const J& j, const char* key, std::string_view fallback = "") {
  if (!j.is_object()) return std::string(fallback);
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return std::string(fallback);
  return it->template get<std::string>();
}

}  // namespace codex
