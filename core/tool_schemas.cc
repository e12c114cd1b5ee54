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

// Codex 0.169's multi_agent_v1 namespace (core/agent_tools.h): its function
// names, order, parameter schemas and strictness; the descriptions are ours.
Json MultiAgentToolJson() {
  auto text = [](const char* description) {
    return Json{{"type", "string"}, {"description", description}};
  };
  auto function = [](const char* name, const char* description, Json properties, Json required) {
    Json parameters = {{"type", "object"}, {"properties", std::move(properties)}};
    if (!required.empty()) parameters["required"] = std::move(required);
    parameters["additionalProperties"] = false;
    return Json{{"type", "function"},
                {"name", name},
                {"description", description},
                {"strict", false},
                {"parameters", std::move(parameters)}};
  };
  // The structured input items of spawn_agent and send_input.
  const Json items = {
      {"type", "array"},
      {"description", "The input as items (this codex reads `text` items) instead of `message`."},
      {"items",
       {{"type", "object"},
        {"properties",
         {{"audio_url", text("For an audio item: its data URL.")},
          {"image_url", text("For an image item: its URL.")},
          {"name", text("For a skill or mention item: the name shown.")},
          {"path", text("For a local file, skill or mention item: where it is.")},
          {"text", text("For a text item: the text.")},
          {"type", text("text, image, local_image, audio, local_audio, skill or mention.")}}},
        {"additionalProperties", false}}}};
  Json tools = Json::array();
  tools.push_back(function(
      "close_agent",
      "Stops a sub-agent (and its commands) and returns the status it had. A finished agent "
      "stays open, and counts toward the limit of open agents, until it is closed.",
      Json{{"target", text("The id spawn_agent returned.")}}, Json::array({"target"})));
  tools.push_back(function("resume_agent",
                           "Opens a closed sub-agent again, so send_input and wait_agent reach it.",
                           Json{{"id", text("The id of the closed agent.")}}, Json::array({"id"})));
  tools.push_back(function(
      "send_input",
      "Gives a sub-agent another message: queued after its current task, or with interrupt=true "
      "in place of it. Reuse an agent that already holds the context a task needs.",
      Json{{"interrupt",
            {{"type", "boolean"},
             {"description", "true: stop the agent's current task and take this message now."}}},
           {"items", items},
           {"message", text("The message, as plain text (or give `items`).")},
           {"target", text("The id spawn_agent returned.")}},
      Json::array({"target"})));
  tools.push_back(function(
      "spawn_agent",
      "Starts a sub-agent on a self-contained task and returns its id and nickname. It runs "
      "beside you in a session of its own, under your sandbox and approval policy, with your "
      "model unless `model` says otherwise, and cannot start agents itself. Spawn only when the "
      "user or the project's instructions ask for sub-agents or parallel work; give each a "
      "concrete task that does not block your next step and does not overlap another's, keep "
      "working meanwhile, and wait_agent only when you need the result.",
      Json{{"fork_context",
            {{"type", "boolean"},
             {"description",
              "true: the agent starts with a copy of this conversation; else "
              "with only its task."}}},
           {"items", items},
           {"message", text("The task, as plain text (or give `items`).")},
           {"model", text("Another model for the agent; leave out to use yours.")},
           {"reasoning_effort", text("Another reasoning effort; leave out to use yours.")}},
      Json::array()));
  tools.push_back(function(
      "wait_agent",
      "Waits until one of the agents reaches a final status (its final message when it "
      "completed) or the timeout passes (an empty status, timed_out true). A finished agent is "
      "also announced in a <subagent_notification> message.",
      Json{{"targets",
            {{"type", "array"},
             {"description", "The ids to wait for; the first to finish ends the wait."},
             {"items", {{"type", "string"}}}}},
           {"timeout_ms",
            {{"type", "number"},
             {"description",
              "Milliseconds: 30000 when left out, at least 10000, at most "
              "3600000. Prefer long waits to polling."}}}},
      Json::array({"targets"})));
  return Json{{"type", "namespace"},
              {"name", "multi_agent_v1"},
              {"description", "Start and manage sub-agents."},
              {"tools", std::move(tools)}};
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
  // Then the sub-agent tools (never offered to a sub-agent: its config has them off).
  if (config.multi_agent) tools.push_back(MultiAgentToolJson());
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
