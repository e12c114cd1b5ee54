#include "core/user_input.h"

#include <nlohmann/json.hpp>

#include "base/json.h"

namespace codex::core {

std::string UserInputAnswersJson(const std::vector<UserInputAnswer>& answers) {
  nlohmann::ordered_json by_id = nlohmann::ordered_json::object();
  for (const UserInputAnswer& a : answers) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array({a.label});
    if (!a.note.empty()) list.push_back(std::string(kUserInputNotePrefix) + a.note);
    by_id[a.id] = {{"answers", std::move(list)}};
  }
  return Dump(nlohmann::ordered_json{{"answers", std::move(by_id)}});
}

}  // namespace codex::core
