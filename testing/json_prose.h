// A tool definition without its prose, for comparing ours with a capture of
// Codex's: the structure (names, types, keys, required fields) must match,
// while every description is written in our own words.
#pragma once

namespace codex::testing {

// `j` (nlohmann::json or ordered_json) without every "description" whose
// value is text; a property named "description" (an object: its schema) is
// kept and walked like any other.
template <typename JsonT>
JsonT WithoutProse(JsonT j) {
  if (j.is_object()) {
    if (j.contains("description") && j["description"].is_string()) j.erase("description");
    for (auto& [key, value] : j.items()) value = WithoutProse(value);
  } else if (j.is_array()) {
    for (auto& value : j) value = WithoutProse(value);
  }
  return j;
}

}  // namespace codex::testing
