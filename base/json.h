// JSON text, once: compact, and invalid UTF-8 in a string is replaced by
// U+FFFD instead of throwing (model output and tool output are not always
// valid UTF-8). Header-only over nlohmann/json.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace codex {

inline std::string Dump(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}
inline std::string Dump(const nlohmann::ordered_json& j) {
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace codex
