// The working state a compaction must not lose (ARCHITECTURE.md, Compaction):
// the files the session touched and its current plan. Both are read from the
// transcript itself, not from a summary the model may get wrong:
//  - files: every path an apply_patch call named ("*** Add File:",
//    "*** Update File:", "*** Delete File:", "*** Move to:"), as a custom
//    tool call or a function call with an `input` argument, or sent through
//    the shell tool (core::MatchShellApplyPatch);
//  - files: what a shell call (shell, container.exec, shell_command,
//    local_shell) writes, read conservatively from its command
//    (shell_edits.h says what is recognised and what is not detectable);
//  - plan: the steps of the newest update_plan call.
// A compacted history carries them in one working-state message (a user
// message starting with kWorkingStatePrefix), which the next compaction reads
// back and merges, so the state survives any number of compactions. Pure;
// thread-safe.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/item.h"

namespace codex::compaction {

inline constexpr std::string_view kWorkingStatePrefix = "<working_state>";

struct PlanStep {
  std::string step;
  std::string status;  // pending | in_progress | completed
  bool operator==(const PlanStep&) const = default;
};

struct WorkingState {
  std::vector<std::string> files;  // first-touched order, no duplicates
  std::vector<PlanStep> plan;      // the newest plan; empty when none was set
  bool empty() const { return files.empty() && plan.empty(); }
};

// The state at the end of `transcript`: earlier working-state messages
// first, then what the items after them add (newer plans replace older ones).
WorkingState ExtractWorkingState(std::span<const core::Item> transcript);

// The working-state message for `state`; nullopt when it is empty.
std::optional<core::Item> WorkingStateMessage(const WorkingState& state);

// True for a message WorkingStateMessage made.
bool IsWorkingStateMessage(const core::Item& item);

}  // namespace codex::compaction
