// Thread goals, as Codex 0.169 keeps them: at most one goal per session (an
// objective, a status, an optional token budget and its usage), set by the
// model through the `create_goal` / `update_goal` tools and read with
// `get_goal` (offered in core/tool_schemas.h, arguments decoded in
// core/tool_args.h, run by ToolRouter). Codex keeps the goal in a table of its
// own (`thread_goals` in goals_1.sqlite); here every change is a "goal" event
// of the session (SessionStore::RecordEvent) whose payload is that row, and
// the latest one is the goal (SessionStore::LatestEvent, which a fork reads
// from its parent), so resume and fork see it on both store backends.
//
// Budget accounting, as Codex 0.169 does it (GoalTracker): a request's usage
// (input - cached + output) is added to the goal once that request's tool
// calls have run, and at the end of a turn, while the goal is active or
// budget_limited; the request whose calls created the goal is not counted,
// and an update_goal counts what was spent before it changes the status.
// Seconds count while the goal is active (from the goal's creation or the
// first turn of this process). When the tokens reach the budget the goal
// becomes budget_limited and, once per goal in a process, a
// <codex_internal_context source="goal"> message tells the model to wrap up.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "base/status.h"
#include "core/token_usage.h"

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
// "completionBudgetReport": null}; {"goal":null,...} without a goal. With
// `completed` (the answer to the update_goal that completed it) a goal with a
// budget or time used gets a completionBudgetReport: a line (our words)
// asking the model to tell the user the final usage, as Codex's does.
std::string GoalToolOutput(std::string_view thread_id, const std::optional<ThreadGoal>& goal,
                           bool completed = false);

// create_goal on a session whose goal is `current`: the new goal, or the
// error text Codex answers (an unfinished goal exists; a budget that is not
// positive; an empty objective).
Result<ThreadGoal> CreateGoal(const std::optional<ThreadGoal>& current, std::string objective,
                              std::optional<int64_t> token_budget, std::string goal_id,
                              int64_t now_ms);
// update_goal with the wire status `status` (camelCase, already one of
// Codex's six): the updated goal, or Codex's error text (no goal; a status the
// model may not set: active, usageLimited, budgetLimited). A pause leaves a
// budget_limited goal budget_limited, as Codex answers.
Result<ThreadGoal> UpdateGoal(const std::optional<ThreadGoal>& current, std::string_view status,
                              int64_t now_ms);

// What a request spends on a goal, as Codex counts it: input - cached + output
// (at least 0).
int64_t GoalTokenDelta(const TokenUsage& usage);

// The user messages that carry goal context to the model (our words, in
// Codex's <codex_internal_context source="goal"> envelope): the wrap-up once
// the budget is reached, and the reminder a resumed session with an active
// goal gets before its first prompt. The objective is quoted as data.
std::string GoalBudgetLimitMessage(const ThreadGoal& goal);
std::string GoalContinuationMessage(const ThreadGoal& goal);

// The goal of one session in this process and its accounting (see above).
// Not thread-safe: the turn loop and the tools it runs use it in turn.
class GoalTracker {
 public:
  // The session's id (the goal's threadId), its goal as stored (null: none),
  // and the clock of goal stamps and seconds (null: the system clock).
  void Reset(std::string thread_id, std::optional<ThreadGoal> goal, const Clock* clock);
  const std::optional<ThreadGoal>& goal() const { return goal_; }
  const std::string& thread_id() const { return thread_id_; }

  // A turn starts: a goal that counts starts its clock if it has none running.
  void BeginTurn();
  // A response arrived with `usage`: held until the next Account.
  void OnResponseUsage(const TokenUsage& usage);
  // create_goal / update_goal with the decoded arguments: the tool's output
  // text (Codex's JSON, or its error line). get_goal is Output().
  std::string Create(std::string objective, std::optional<int64_t> token_budget);
  std::string Update(std::string_view wire_status);
  std::string Output() const;
  // Adds the usage and seconds since the last accounting to a goal that
  // counts (active or budget_limited), turning it budget_limited at its
  // budget. With `wrap_up_allowed` (after a request's tool calls, not at a
  // turn's end), returns the wrap-up message the first time this goal is
  // seen budget_limited here.
  std::optional<std::string> Account(bool wrap_up_allowed);
  // The goal as last changed (by a tool or by Account), once: the caller
  // records it as a "goal" event.
  std::optional<ThreadGoal> TakeChange();

 private:
  bool Counts() const;
  int64_t NowMs() const { return ClockOr(clock_).NowMs(); }

  std::string thread_id_;
  std::optional<ThreadGoal> goal_;
  const Clock* clock_ = nullptr;
  bool changed_ = false;
  int64_t pending_tokens_ = 0;
  std::optional<int64_t> counting_since_ms_;  // the goal's clock, while it counts
  std::string wrap_up_sent_for_;              // the goal id the wrap-up went to
  bool suspended_ = false;                    // paused while budget_limited: not counted this turn
};

}  // namespace codex::core
