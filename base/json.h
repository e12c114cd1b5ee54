// JSON text, once: compact, and invalid UTF-8 in a string is replaced by
// U+FFFD instead of throwing (model output and tool output are not always
// valid UTF-8). Header-only over nlohmann/json.
#pragma once

#include <concepts>
#include <nlohmann/json.hpp>
#include <string>

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

}  // namespace codex
