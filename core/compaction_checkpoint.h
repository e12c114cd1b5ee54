// Checkpoint items: the marker a compaction leaves in the session tree
// (ARCHITECTURE.md, Data model). The turn loop appends
// [MakeCheckpointItem(output, trigger), output.new_history...]; the store's
// transcript walk stops at the newest checkpoint, so the items after it are
// the compacted view while everything before it stays in the tree. A
// checkpoint is never sent to the model (request_builder skips its kind).
//
// Body (compact JSON, keys in this order):
//   {"type":"compaction_checkpoint","mode":"local"|"remote",
//    "trigger":"auto"|"manual"|"overflow","tokens_before":N,"tokens_after":N,
//    "replacement_items":N,"dropped_items":N,"summary":"..."|null}
// `summary` is null for a remote compaction (its summary is encrypted).
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "core/compactor.h"
#include "core/item.h"

namespace codex::core {

// "auto", "manual", "overflow".
std::string_view CompactionTriggerName(CompactionTrigger trigger);

Item MakeCheckpointItem(const CompactionOutput& output, CompactionTrigger trigger);

// What a checkpoint body says (for `codex sessions show`, export, events).
struct CheckpointInfo {
  std::string mode;
  std::string trigger;
  int64_t tokens_before = 0;
  int64_t tokens_after = 0;
  int64_t replacement_items = 0;
  int64_t dropped_items = 0;
  std::optional<std::string> summary;
};

// kInvalidArgument when `item` is not a checkpoint; kDataLoss when its body
// is not the JSON object described above.
Result<CheckpointInfo> ParseCheckpointItem(const Item& item);

}  // namespace codex::core
