// Thread goals, as Codex 0.169 keeps them: at most one goal per session (an
// objective, a status, an optional token budget and its usage), set by the
// model through the `create_goal` / `update_goal` tools and read with
// `get_goal` (offered in core/tool_schemas.h, arguments decoded in
// core/tool_args.h, run by ToolRouter). Codex keeps the goal in a table of its
// own (`thread_goals` in goals_1.sqlite); here every change is a "goal" event
// of the session (SessionStore::RecordEvent) whose payload is that row, and
// the latest one is the goal (SessionStore::LatestEvent, which a fork reads
// from its parent), so resume and fork see it on both store backends.
// Pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace codex::core {

// The event type that records a goal change.
inline constexpr std::string_view kGoalEventType = "goal";

struct ThreadGoal {
  std::string goal_id;
  std::string objective;
  // Codex's stored form: active | paused | blocked | usage_limited |
  // budget_limited | complete.
  std::string status = "active";
  std::optional<int64_t> token_budget;
  int64_t tokens_used = 0;
  int64_t time_used_seconds = 0;
  int64_t created_at_ms = 0;
  int64_t updated_at_ms = 0;
};

// The event payload (Codex's thread_goals row without the thread id) and back;
// kInvalidArgument for a payload that is not one.
std::string GoalEventPayload(const ThreadGoal& goal);
Result<ThreadGoal> ParseGoalEventPayload(std::string_view payload_json);

// What get_goal, create_goal and update_goal answer, byte for byte as Codex
// 0.169: {"goal":{threadId, objective, status (camelCase), tokenBudget (only
// when set), tokensUsed, timeUsedSeconds, createdAt, updatedAt (seconds)},
// "remainingTokens": budget - used (at least 0) or null,
// "completionBudgetReport": null}; {"goal":null,...} without a goal.
std::string GoalToolOutput(std::string_view thread_id, const std::optional<ThreadGoal>& goal);

// create_goal on a session whose goal is `current`: the new goal, or the
// error text Codex answers (an unfinished goal exists; a budget that is not
// positive; an empty objective).
Result<ThreadGoal> CreateGoal(const std::optional<ThreadGoal>& current, std::string objective,
                              std::optional<int64_t> token_budget, std::string goal_id,
                              int64_t now_ms);
// update_goal with the wire status `status` (camelCase, already one of
// Codex's six): the updated goal, or Codex's error text (no goal; a status the
// model may not set: active, usageLimited, budgetLimited).
Result<ThreadGoal> UpdateGoal(const std::optional<ThreadGoal>& current, std::string_view status,
                              int64_t now_ms);

}  // namespace codex::core
