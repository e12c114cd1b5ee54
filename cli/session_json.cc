#include "cli/session_json.h"

namespace codex::cli {

using Json = nlohmann::ordered_json;

nlohmann::ordered_json SessionJson(const core::SessionInfo& s) {
  Json j;
  j["id"] = s.id;
  j["name"] = s.name;
  j["title"] = s.title;
  j["cwd"] = s.cwd;
  j["host"] = s.host;
  j["project"] = s.project;
  j["model"] = s.model;
  j["provider"] = s.provider;
  j["source"] = s.source;
  j["created_at_ms"] = s.created_at_ms;
  j["updated_at_ms"] = s.updated_at_ms;
  j["archived"] = s.archived;
  j["tokens_used"] = s.tokens_used;
  j["forked_from_session"] = s.forked_from_session;
  j["forked_from_item"] = s.forked_from_item ? Json(*s.forked_from_item) : Json(nullptr);
  j["head_item_id"] = s.head_item_id ? Json(*s.head_item_id) : Json(nullptr);
  return j;
}

}  // namespace codex::cli
