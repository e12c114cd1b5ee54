// The built-in tools offered on the wire (core/tool_schemas.h): which, in
// what order, with which fields, as a function of the config alone.
#include "core/tool_schemas.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/mcp_tools.h"

using codex::core::ApplyPatchToolType;
using codex::core::ApprovalPolicy;
using codex::core::BuiltinToolsJson;
using codex::core::Config;

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

TEST_CASE("by default: unified exec, then view_image, apply_patch and update_plan") {
  const Config config;
  CHECK(OfferedNames(config) == std::vector<std::string>{"exec_command", "write_stdin",
                                                         "view_image", "apply_patch",
                                                         "update_plan"});
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
  CHECK(OfferedNames(config).size() == 5);
  config.mcp_servers["docs"].enabled = true;
  names = OfferedNames(config);
  REQUIRE(names.size() > 5);
  CHECK(names[0] == "exec_command");
  CHECK(names[1] == "write_stdin");
  size_t i = 2;
  for (; i < names.size() && codex::core::IsMcpResourceTool(names[i]); ++i) {
  }
  CHECK(i > 2);
  REQUIRE(i < names.size());
  CHECK(names[i] == "view_image");
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
