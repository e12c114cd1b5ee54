// How full the model's view of a stored session is, as `codex sessions show`
// reports it, and the execution frontier its newest compaction kept.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "cli/global_options.h"
#include "core/session_store.h"

namespace codex::cli {

// How full the model's view of `session` is, estimated as the turn loop does
// (core::ContextBudget): the items after the newest checkpoint, from the
// newest total the server reported for them (item_usage) plus an estimate of
// what came after; without any reported total, the instructions and
// built-in tools plus every item. Against the context window of its model.
struct ContextFill {
  int64_t tokens = 0;
  int64_t window = 0;
  int left_percent = 100;
  bool reported = false;  // started from a server-reported total
};

// The window and limit come from the config as this run sees it (-c, -p).
ContextFill EstimateContextFill(const GlobalOptions& global, const core::SessionInfo& session,
                                const std::vector<core::StoredItem>& history);

// The execution frontier the newest compaction of the view kept (its
// working-state message, compaction/working_state.h), "" when none.
std::string NewestFrontier(std::span<const core::StoredItem> history);

}  // namespace codex::cli
