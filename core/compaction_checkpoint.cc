#include "core/compaction_checkpoint.h"

#include <nlohmann/json.hpp>

#include "base/json.h"

namespace codex::core {

namespace {

using Json = nlohmann::ordered_json;

Status Corrupt(std::string_view why) {
  return DataLossError("compaction checkpoint is corrupt (" + std::string(why) +
                       "); export the session and report this");
}

}  // namespace

std::string_view CompactionTriggerName(CompactionTrigger trigger) {
  switch (trigger) {
    case CompactionTrigger::kAuto:
      return "auto";
    case CompactionTrigger::kManual:
      return "manual";
    case CompactionTrigger::kOverflow:
      return "overflow";
  }
  return "auto";
}

Item MakeCheckpointItem(const CompactionOutput& output, CompactionTrigger trigger) {
  Json j = {
      {"type", ItemKindName(ItemKind::kCompactionCheckpoint)},
      {"mode", output.mode},
      {"trigger", CompactionTriggerName(trigger)},
      {"tokens_before", output.tokens_before},
      {"tokens_after", output.tokens_after},
      {"replacement_items", output.new_history.size()},
      {"dropped_items", output.dropped_items},
      {"summary", output.summary.empty() ? Json(nullptr) : Json(output.summary)},
  };
  Item item;
  item.kind = ItemKind::kCompactionCheckpoint;
  item.body = Dump(j);
  return item;
}

Result<CheckpointInfo> ParseCheckpointItem(const Item& item) {
  if (item.kind != ItemKind::kCompactionCheckpoint) {
    return InvalidArgumentError("item of kind " + std::string(ItemKindName(item.kind)) +
                                " is not a compaction checkpoint");
  }
  Json j = Json::parse(item.body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return Corrupt("body is not a JSON object");
  CheckpointInfo info;
  auto get_string = [&](const char* key, std::string& out) -> Status {
    auto it = j.find(key);
    if (it == j.end() || !it->is_string()) return Corrupt(std::string("no string \"") + key + "\"");
    out = it->get<std::string>();
    return OkStatus();
  };
  auto get_int = [&](const char* key, int64_t& out) -> Status {
    auto it = j.find(key);
    if (it == j.end() || !it->is_number_integer()) {
      return Corrupt(std::string("no integer \"") + key + "\"");
    }
    out = it->get<int64_t>();
    return OkStatus();
  };
  RETURN_IF_ERROR(get_string("mode", info.mode));
  RETURN_IF_ERROR(get_string("trigger", info.trigger));
  RETURN_IF_ERROR(get_int("tokens_before", info.tokens_before));
  RETURN_IF_ERROR(get_int("tokens_after", info.tokens_after));
  RETURN_IF_ERROR(get_int("replacement_items", info.replacement_items));
  RETURN_IF_ERROR(get_int("dropped_items", info.dropped_items));
  auto summary = j.find("summary");
  if (summary != j.end() && summary->is_string()) {
    info.summary = summary->get<std::string>();
  } else if (summary != j.end() && !summary->is_null()) {
    return Corrupt("\"summary\" is neither a string nor null");
  }
  return info;
}

}  // namespace codex::core
