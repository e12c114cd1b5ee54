#include "cli/session_json.h"

#include "storage/session_database.h"

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

nlohmann::ordered_json TurnJson(const core::TurnRecord& t) {
  return {{"turn_id", t.turn_id},
          {"status", storage::TurnStatusName(t.status)},
          {"error", t.error},
          {"started_at_ms", t.started_at_ms},
          {"ended_at_ms", t.ended_at_ms},
          {"usage",
           {{"input_tokens", t.usage.input_tokens},
            {"cached_input_tokens", t.usage.cached_input_tokens},
            {"output_tokens", t.usage.output_tokens},
            {"reasoning_output_tokens", t.usage.reasoning_output_tokens},
            {"total_tokens", t.usage.total_tokens}}}};
}

}  // namespace codex::cli
