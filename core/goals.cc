#include "core/goals.h"

#include <nlohmann/json.hpp>

#include "base/json.h"
#include "base/strings.h"

namespace codex::core {

using Json = nlohmann::ordered_json;

namespace {

// Codex's stored status words and the wire's camelCase ones, in its order.
struct GoalStatusName {
  std::string_view stored;
  std::string_view wire;
};
constexpr GoalStatusName kGoalStatuses[] = {{"active", "active"},
                                            {"paused", "paused"},
                                            {"blocked", "blocked"},
                                            {"usage_limited", "usageLimited"},
                                            {"budget_limited", "budgetLimited"},
                                            {"complete", "complete"}};

std::string_view WireGoalStatus(std::string_view stored) {
  for (const auto& s : kGoalStatuses) {
    if (s.stored == stored) return s.wire;
  }
  return stored;
}

std::string_view StoredGoalStatus(std::string_view wire) {
  for (const auto& s : kGoalStatuses) {
    if (s.wire == wire) return s.stored;
  }
  return {};
}

}  // namespace

std::string GoalEventPayload(const ThreadGoal& goal) {
  Json j = {{"goal_id", goal.goal_id},
            {"objective", goal.objective},
            {"status", goal.status},
            {"token_budget", goal.token_budget ? Json(*goal.token_budget) : Json()},
            {"tokens_used", goal.tokens_used},
            {"time_used_seconds", goal.time_used_seconds},
            {"created_at_ms", goal.created_at_ms},
            {"updated_at_ms", goal.updated_at_ms}};
  return Dump(j);
}

Result<ThreadGoal> ParseGoalEventPayload(std::string_view payload_json) {
  const Json j = Json::parse(payload_json, nullptr, false);
  if (!j.is_object() || !j.contains("objective") || !j["objective"].is_string() ||
      !j.contains("status") || !j["status"].is_string() ||
      StoredGoalStatus(WireGoalStatus(j["status"].get<std::string>())).empty()) {
    return InvalidArgumentError("a goal event's payload is not a goal");
  }
  ThreadGoal g;
  g.goal_id = StringField(j, "goal_id");
  g.objective = j["objective"].get<std::string>();
  g.status = j["status"].get<std::string>();
  if (j.contains("token_budget") && j["token_budget"].is_number_integer()) {
    g.token_budget = j["token_budget"].get<int64_t>();
  }
  auto integer = [&](const char* key) {
    return j.contains(key) && j[key].is_number_integer() ? j[key].get<int64_t>() : int64_t{0};
  };
  g.tokens_used = integer("tokens_used");
  g.time_used_seconds = integer("time_used_seconds");
  g.created_at_ms = integer("created_at_ms");
  g.updated_at_ms = integer("updated_at_ms");
  return g;
}

std::string GoalToolOutput(std::string_view thread_id, const std::optional<ThreadGoal>& goal) {
  Json out = Json::object();
  if (!goal) {
    out["goal"] = nullptr;
    out["remainingTokens"] = nullptr;
  } else {
    Json g = {{"threadId", std::string(thread_id)},
              {"objective", goal->objective},
              {"status", std::string(WireGoalStatus(goal->status))}};
    if (goal->token_budget) g["tokenBudget"] = *goal->token_budget;
    g["tokensUsed"] = goal->tokens_used;
    g["timeUsedSeconds"] = goal->time_used_seconds;
    g["createdAt"] = goal->created_at_ms / 1000;
    g["updatedAt"] = goal->updated_at_ms / 1000;
    out["goal"] = std::move(g);
    out["remainingTokens"] =
        goal->token_budget ? Json(std::max<int64_t>(0, *goal->token_budget - goal->tokens_used))
                           : Json();
  }
  out["completionBudgetReport"] = nullptr;
  return Dump(out);
}

Result<ThreadGoal> CreateGoal(const std::optional<ThreadGoal>& current, std::string objective,
                              std::optional<int64_t> token_budget, std::string goal_id,
                              int64_t now_ms) {
  if (Trim(objective).empty()) return InvalidArgumentError("goal objective must not be empty");
  if (token_budget && *token_budget <= 0) {
    return InvalidArgumentError("goal budgets must be positive when provided");
  }
  if (current && current->status != "complete") {
    return FailedPreconditionError(
        "cannot create a new goal because this thread has an unfinished goal; complete the "
        "existing goal first");
  }
  ThreadGoal g;
  g.goal_id = std::move(goal_id);
  g.objective = std::move(objective);
  g.token_budget = token_budget;
  g.created_at_ms = g.updated_at_ms = now_ms;
  return g;
}

Result<ThreadGoal> UpdateGoal(const std::optional<ThreadGoal>& current, std::string_view status,
                              int64_t now_ms) {
  if (!current) {
    return FailedPreconditionError("cannot update goal because this thread has no goal");
  }
  if (status != "complete" && status != "blocked" && status != "paused") {
    return InvalidArgumentError(
        "update_goal can only mark the existing goal complete, blocked, or paused at the user's "
        "explicit request; resume, budget-limited, and usage-limited status changes are "
        "controlled by the user or system");
  }
  ThreadGoal g = *current;
  g.status = std::string(StoredGoalStatus(status));
  g.updated_at_ms = now_ms;
  return g;
}

}  // namespace codex::core
