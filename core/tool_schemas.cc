#include "core/tool_schemas.h"

#include <nlohmann/json.hpp>

#include "base/json.h"
#include "core/apply_patch_tool.h"
#include "core/approval.h"
#include "core/mcp_tools.h"
#include "core/unified_exec.h"
#include "core/view_image.h"

namespace codex::core {

using Json = nlohmann::ordered_json;

namespace {

// The shell tool. Under on-request it declares the escalation fields Codex
// 0.169 declares (names, types and descriptions as on its wire), so the model
// can ask to run a command outside the sandbox; under every other policy it
// declares neither, and the router honours only declared fields.
Json ShellToolJson(bool escalation) {
  Json properties = {
      {"command",
       {{"type", "array"}, {"items", {{"type", "string"}}}, {"description", "argv to run"}}},
      {"workdir", {{"type", "string"}, {"description", "working directory (default: cwd)"}}},
      {"timeout_ms", {{"type", "number"}, {"description", "timeout in milliseconds"}}}};
  if (escalation) {
    const Json fields = EscalationProperties();
    for (const auto& [name, schema] : fields.items()) properties[name] = schema;
  }
  return Json{{"type", "function"},
              {"name", "shell"},
              {"description",
               "Runs a command on the user's machine and returns its output. `command` is an argv "
               "array executed without a shell; use [\"bash\", \"-lc\", \"...\"] for shell syntax. "
               "Runs inside the session's sandbox."},
              {"strict", false},
              {"parameters",
               {{"type", "object"},
                {"properties", std::move(properties)},
                {"required", Json::array({"command"})},
                {"additionalProperties", false}}}};
}

Json UpdatePlanToolJson() {
  return Json{
      {"type", "function"},
      {"name", "update_plan"},
      {"description",
       "Records the task plan shown to the user: a list of steps, each pending, in_progress or "
       "completed, with at most one in_progress."},
      {"strict", false},
      {"parameters",
       {{"type", "object"},
        {"properties",
         {{"explanation", {{"type", "string"}}},
          {"plan",
           {{"type", "array"},
            {"items",
             {{"type", "object"},
              {"properties",
               {{"step", {{"type", "string"}}},
                {"status",
                 {{"type", "string"},
                  {"enum", Json::array({"pending", "in_progress", "completed"})}}}}},
              {"required", Json::array({"step", "status"})},
              {"additionalProperties", false}}}}}}},
        {"required", Json::array({"plan"})},
        {"additionalProperties", false}}}};
}

// Codex 0.169's request_user_input: its name, parameter schema, strictness
// and place; the descriptions are ours (what each field is for, in brief),
// save the fact Codex's states too: the modes it works in (Plan only, or
// Default too with the feature on; this codex has Codex's Default mode,
// core/user_input.h).
Json RequestUserInputToolJson(bool default_mode) {
  auto text = [](const char* description) {
    return Json{{"type", "string"}, {"description", description}};
  };
  Json option = {{"type", "object"},
                 {"properties",
                  {{"description", text("One sentence: what choosing this means.")},
                   {"label", text("What the user sees: 1 to 5 words.")}}},
                 {"required", Json::array({"label", "description"})},
                 {"additionalProperties", false}};
  Json question = {
      {"type", "object"},
      {"properties",
       {{"header", text("A label of at most 12 characters shown above the question.")},
        {"id", text("The snake_case key its answer comes back under.")},
        {"options",
         {{"type", "array"},
          {"description",
           "Two or three choices that exclude each other, the recommended one first with "
           "\"(Recommended)\" after its label. No \"Other\" choice: the user always gets a "
           "free-form one."},
          {"items", std::move(option)}}},
        {"question", text("The question, in one sentence.")}}},
      {"required", Json::array({"id", "header", "question", "options"})},
      {"additionalProperties", false}};
  return Json{
      {"type", "function"},
      {"name", "request_user_input"},
      {"description", std::string("Asks the user one to three short questions and waits for the "
                                  "answers. Works only in ") +
                          (default_mode ? "Default or Plan mode." : "Plan mode.")},
      {"strict", false},
      {"parameters",
       {{"type", "object"},
        {"properties",
         {{"questions",
           {{"type", "array"},
            {"description", "The questions: one if you can, three at most."},
            {"items", std::move(question)}}}}},
        {"required", Json::array({"questions"})},
        {"additionalProperties", false}}}};
}

// The goal tools (core/goals.h): Codex 0.169's names, parameter schemas and
// order; the descriptions are ours: their rules in brief, since every
// request carries them.
Json GoalToolJson(const char* name, const char* description, Json properties, Json required) {
  return Json{{"type", "function"},
              {"name", name},
              {"description", description},
              {"strict", false},
              {"parameters",
               {{"type", "object"},
                {"properties", std::move(properties)},
                {"required", std::move(required)},
                {"additionalProperties", false}}}};
}

void AppendGoalTools(Json& tools) {
  tools.push_back(GoalToolJson(
      "get_goal",
      "This thread's goal: objective, status, token budget, tokens and time used, tokens left.",
      Json::object(), Json::array()));
  tools.push_back(GoalToolJson(
      "create_goal",
      "Starts this thread's goal, only when the user or the instructions ask for one. Fails "
      "while a goal is unfinished; update_goal changes a goal's status.",
      Json{{"objective", {{"type", "string"}, {"description", "Required. What to achieve."}}},
           {"token_budget",
            {{"type", "integer"},
             {"description", "Positive token budget; only when one was asked for."}}}},
      Json::array({"objective"})));
  tools.push_back(GoalToolJson(
      "update_goal",
      "Sets the status of this thread's goal.\n`complete`: only when the objective is achieved "
      "and nothing required is left, not because the budget is nearly spent or work stops; with "
      "a budget, tell the user the final token usage from the result.\n`blocked`: only when the "
      "same obstacle has stopped progress for three goal turns in a row.\n`paused`: only when "
      "the user asks; then report the status and stop working on the goal.\nResuming and the "
      "budget or usage limits are never set with this tool.",
      Json{{"status",
            {{"type", "string"},
             {"description", "Required."},
             {"enum", Json::array({"complete", "blocked", "paused"})}}}},
      Json::array({"status"})));
}

}  // namespace

std::string BuiltinToolsJson(const Config& config) {
  Json tools = Json::array();
  if (config.unified_exec) {
    tools.push_back(Json::parse(ExecCommandToolJson()));
    tools.push_back(Json::parse(WriteStdinToolJson()));
  } else {
    tools.push_back(ShellToolJson(DeclaresEscalation(config.approval_policy)));
  }
  // Where Codex 0.169 puts them: right after the command tools, then
  // request_user_input, then view_image.
  if (OffersMcpResourceTools(config)) {
    for (auto& t : Json::parse("[" + McpResourceToolsJson().substr(1) + "]")) {
      tools.push_back(std::move(t));
    }
  }
  tools.push_back(RequestUserInputToolJson(config.default_mode_request_user_input));
  if (config.view_image) tools.push_back(Json::parse(ViewImageToolJson()));
  // Codex 0.169 offers the goal tools next, in every request.
  AppendGoalTools(tools);
  tools.push_back(ApplyPatchToolDefinition(config.provider.apply_patch_tool_type));
  tools.push_back(UpdatePlanToolJson());
  // The provider's hosted search: it runs server-side and comes back as
  // web_search_call items (kept and resent verbatim, see core/item.h).
  if (config.web_search) tools.push_back(Json{{"type", "web_search"}});
  return Dump(tools);
}

}  // namespace codex::core
