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

// Codex 0.169's request_user_input, byte for byte: the description names the
// modes it works in (Plan only, or Default too with the feature on); this
// codex has Codex's Default mode (core/user_input.h).
Json RequestUserInputToolJson(bool default_mode) {
  auto text = [](const char* description) {
    return Json{{"type", "string"}, {"description", description}};
  };
  Json option = {{"type", "object"},
                 {"properties",
                  {{"description", text("One short sentence explaining impact/tradeoff if "
                                        "selected.")},
                   {"label", text("User-facing label (1-5 words).")}}},
                 {"required", Json::array({"label", "description"})},
                 {"additionalProperties", false}};
  Json question = {
      {"type", "object"},
      {"properties",
       {{"header", text("Short header label shown in the UI (12 or fewer chars).")},
        {"id", text("Stable identifier for mapping answers (snake_case).")},
        {"options",
         {{"type", "array"},
          {"description",
           "Provide 2-3 mutually exclusive choices. Put the recommended option first and suffix "
           "its label with \"(Recommended)\". Do not include an \"Other\" option in this list; "
           "the client will add a free-form \"Other\" option automatically."},
          {"items", std::move(option)}}},
        {"question", text("Single-sentence prompt shown to the user.")}}},
      {"required", Json::array({"id", "header", "question", "options"})},
      {"additionalProperties", false}};
  return Json{
      {"type", "function"},
      {"name", "request_user_input"},
      {"description", std::string("Request user input for one to three short questions and wait "
                                  "for the response. This tool is only available in ") +
                          (default_mode ? "Default or Plan mode." : "Plan mode.")},
      {"strict", false},
      {"parameters",
       {{"type", "object"},
        {"properties",
         {{"questions",
           {{"type", "array"},
            {"description", "Questions to show the user. Prefer 1 and do not exceed 3"},
            {"items", std::move(question)}}}}},
        {"required", Json::array({"questions"})},
        {"additionalProperties", false}}}};
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
  tools.push_back(ApplyPatchToolDefinition(config.provider.apply_patch_tool_type));
  tools.push_back(UpdatePlanToolJson());
  // The provider's hosted search: it runs server-side and comes back as
  // web_search_call items (kept and resent verbatim, see core/item.h).
  if (config.web_search) tools.push_back(Json{{"type", "web_search"}});
  return Dump(tools);
}

}  // namespace codex::core
