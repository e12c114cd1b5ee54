// The built-in tools offered on the wire (core/tool_schemas.h): which, in
// what order, with which fields, as a function of the config alone.
#include "core/tool_schemas.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/mcp_tools.h"
#include "testing/json_prose.h"

using codex::core::ApplyPatchToolType;
using codex::core::ApprovalPolicy;
using codex::core::BuiltinToolsJson;
using codex::core::Config;
using codex::testing::WithoutProse;

namespace {

using SchemaJson = nlohmann::ordered_json;

// Each offered tool's name (a hosted tool's type).
std::vector<std::string> OfferedNames(const Config& config) {
  std::vector<std::string> names;
  for (const auto& t : SchemaJson::parse(BuiltinToolsJson(config))) {
    names.push_back(t.contains("name") ? t["name"].get<std::string>()
                                       : t["type"].get<std::string>());
  }
  return names;
}

SchemaJson OfferedTool(const Config& config, const std::string& name) {
  for (const auto& t : SchemaJson::parse(BuiltinToolsJson(config))) {
    if (t.value("name", "") == name) return t;
  }
  FAIL("tool " << name << " is not offered");
  return {};
}

}  // namespace

TEST_CASE(
    "by default: unified exec, request_user_input, view_image, the goal tools, apply_patch and "
    "update_plan") {
  const Config config;
  CHECK(OfferedNames(config) ==
        std::vector<std::string>{"exec_command", "write_stdin", "request_user_input", "view_image",
                                 "multi_agent_v1", "get_goal", "create_goal", "update_goal",
                                 "apply_patch", "update_plan"});
  const SchemaJson exec = OfferedTool(config, "exec_command");
  CHECK(exec["type"] == "function");
  CHECK(exec["parameters"]["properties"].contains("cmd"));
}

TEST_CASE("without unified exec the one-shot shell; escalation fields only under on-request") {
  Config config;
  config.unified_exec = false;
  for (ApprovalPolicy policy : {ApprovalPolicy::kUntrusted, ApprovalPolicy::kOnFailure,
                                ApprovalPolicy::kOnRequest, ApprovalPolicy::kNever}) {
    config.approval_policy = policy;
    INFO(codex::core::ApprovalPolicyName(policy));
    REQUIRE(OfferedNames(config).front() == "shell");
    const SchemaJson shell = OfferedTool(config, "shell");
    const SchemaJson& props = shell["parameters"]["properties"];
    CHECK(props.contains("command"));
    CHECK(props.contains("workdir"));
    CHECK(props.contains("timeout_ms"));
    CHECK(shell["parameters"]["additionalProperties"] == false);
    CHECK(shell["parameters"]["required"] == SchemaJson::array({"command"}));
    const bool escalation = policy == ApprovalPolicy::kOnRequest;
    CHECK(props.contains("sandbox_permissions") == escalation);
    CHECK(props.contains("justification") == escalation);
  }
}

TEST_CASE("view_image, web_search and the MCP resource tools follow the config") {
  Config config;
  config.view_image = false;
  config.web_search = true;
  std::vector<std::string> names = OfferedNames(config);
  CHECK(std::find(names.begin(), names.end(), "view_image") == names.end());
  // The hosted search is the last tool, the bare object the provider expects.
  const SchemaJson tools = SchemaJson::parse(BuiltinToolsJson(config));
  CHECK(tools.back() == SchemaJson{{"type", "web_search"}});

  // An enabled MCP server brings the resource tools, right after the command
  // tools; a disabled one does not.
  config = Config();
  config.mcp_servers["docs"].enabled = false;
  CHECK(OfferedNames(config).size() == 10);
  config.mcp_servers["docs"].enabled = true;
  names = OfferedNames(config);
  REQUIRE(names.size() > 10);
  CHECK(names[0] == "exec_command");
  CHECK(names[1] == "write_stdin");
  size_t i = 2;
  for (; i < names.size() && codex::core::IsMcpResourceTool(names[i]); ++i) {
  }
  CHECK(i > 2);
  REQUIRE(i + 1 < names.size());
  // Codex 0.169's order (tests/compat/codex-0.169-mcp-capture.json).
  CHECK(names[i] == "request_user_input");
  CHECK(names[i + 1] == "view_image");
}

TEST_CASE("request_user_input: Codex 0.169's definition less its prose, in every configuration") {
  // As Codex 0.169 sent it (captured: tests/compat/codex-0.169-request-user-input.json).
  // Names, types, keys and their order, strictness and required fields are
  // Codex's; the descriptions are our own words.
  const SchemaJson codex = WithoutProse(SchemaJson::parse(
      R"({"type":"function","name":"request_user_input","description":"Request user input for one to three short questions and wait for the response. This tool is only available in Plan mode.","strict":false,"parameters":{"type":"object","properties":{"questions":{"type":"array","description":"Questions to show the user. Prefer 1 and do not exceed 3","items":{"type":"object","properties":{"header":{"type":"string","description":"Short header label shown in the UI (12 or fewer chars)."},"id":{"type":"string","description":"Stable identifier for mapping answers (snake_case)."},"options":{"type":"array","description":"Provide 2-3 mutually exclusive choices. Put the recommended option first and suffix its label with \"(Recommended)\". Do not include an \"Other\" option in this list; the client will add a free-form \"Other\" option automatically.","items":{"type":"object","properties":{"description":{"type":"string","description":"One short sentence explaining impact/tradeoff if selected."},"label":{"type":"string","description":"User-facing label (1-5 words)."}},"required":["label","description"],"additionalProperties":false}},"question":{"type":"string","description":"Single-sentence prompt shown to the user."}},"required":["id","header","question","options"],"additionalProperties":false}}},"required":["questions"],"additionalProperties":false}})"));
  Config config;
  SchemaJson off = OfferedTool(config, "request_user_input");
  CHECK(WithoutProse(off).dump() == codex.dump());
  CHECK(off["description"].get<std::string>().ends_with("Works only in Plan mode."));
  // The one-shot shell, no view_image: still offered, same bytes, after the command tool.
  config.unified_exec = false;
  config.view_image = false;
  CHECK(OfferedTool(config, "request_user_input") == off);
  CHECK(OfferedNames(config)[1] == "request_user_input");
  // With the feature on, only the modes named differ (the fact Codex states).
  config.default_mode_request_user_input = true;
  SchemaJson on = OfferedTool(config, "request_user_input");
  CHECK(on["description"].get<std::string>().ends_with("Works only in Default or Plan mode."));
  on["description"] = off["description"];
  CHECK(on == off);
}

TEST_CASE("apply_patch is offered in the provider's shape") {
  Config config;
  config.provider.apply_patch_tool_type = ApplyPatchToolType::kFreeform;
  CHECK(OfferedTool(config, "apply_patch")["type"] == "custom");
  config.provider.apply_patch_tool_type = ApplyPatchToolType::kFunction;
  const SchemaJson fn = OfferedTool(config, "apply_patch");
  CHECK(fn["type"] == "function");
  CHECK(fn["parameters"]["required"] == SchemaJson::array({"input"}));
}

TEST_CASE("the array depends on the tool settings only, so the request prefix stays stable") {
  Config a;
  Config b;
  b.cwd = "/elsewhere";
  b.model = "another-model";
  b.shell_timeout_ms = 1;
  CHECK(BuiltinToolsJson(a) == BuiltinToolsJson(a));
  CHECK(BuiltinToolsJson(a) == BuiltinToolsJson(b));
  // exec_command declares its escalation fields under every policy.
  b.approval_policy = ApprovalPolicy::kOnRequest;
  CHECK(BuiltinToolsJson(a) == BuiltinToolsJson(b));
  // The one-shot shell's fields do change with the policy.
  a.unified_exec = b.unified_exec = false;
  CHECK(BuiltinToolsJson(a) != BuiltinToolsJson(b));
  // Compact JSON, as sent.
  CHECK(BuiltinToolsJson(a).find('\n') == std::string::npos);
}

TEST_CASE("the goal tools: Codex 0.169's names, parameter schemas and place") {
  Config config;
  config.web_search = true;
  const std::vector<std::string> names = OfferedNames(config);
  // After view_image and the sub-agent tools, before our apply_patch/update_plan
  // and the hosted search.
  auto at = std::find(names.begin(), names.end(), "multi_agent_v1");
  REQUIRE(at != names.end());
  CHECK(*(at - 1) == "view_image");
  CHECK(std::vector<std::string>(at + 1, at + 4) ==
        std::vector<std::string>{"get_goal", "create_goal", "update_goal"});
  // Codex 0.169's parameters (captured on the wire), descriptions aside: the
  // model must be able to send what it sends Codex, and nothing else.
  auto without_descriptions = [](SchemaJson params) {
    for (auto& [name, p] : params["properties"].items()) p.erase("description");
    return params;
  };
  for (const char* name : {"get_goal", "create_goal", "update_goal"}) {
    const SchemaJson tool = OfferedTool(config, name);
    INFO(name);
    CHECK(tool["type"] == "function");
    CHECK(tool["strict"] == false);
    CHECK_FALSE(tool["description"].get<std::string>().empty());
    for (auto& [key, p] : tool["parameters"]["properties"].items()) {
      CHECK_FALSE(p["description"].get<std::string>().empty());
    }
  }
  CHECK(OfferedTool(config, "get_goal")["parameters"] ==
        SchemaJson::parse(R"({"type":"object","properties":{},"required":[],)"
                          R"("additionalProperties":false})"));
  CHECK(without_descriptions(OfferedTool(config, "create_goal")["parameters"]) ==
        SchemaJson::parse(R"({"type":"object","properties":{"objective":{"type":"string"},)"
                          R"("token_budget":{"type":"integer"}},"required":["objective"],)"
                          R"("additionalProperties":false})"));
  CHECK(without_descriptions(OfferedTool(config, "update_goal")["parameters"]) ==
        SchemaJson::parse(R"({"type":"object","properties":{"status":{"type":"string",)"
                          R"("enum":["complete","blocked","paused"]}},"required":["status"],)"
                          R"("additionalProperties":false})"));
  // Offered whatever else the config turns off: Codex offers them in every request.
  config.unified_exec = false;
  config.view_image = false;
  const std::vector<std::string> bare = OfferedNames(config);
  CHECK(bare[2] == "multi_agent_v1");
  CHECK(std::vector<std::string>(bare.begin() + 3, bare.begin() + 6) ==
        std::vector<std::string>{"get_goal", "create_goal", "update_goal"});
}
