// The built-in tools as they are offered on the wire: the `tools` array a
// request carries before any MCP tool, in Codex 0.169's order. Unified
// exec's `exec_command` and `write_stdin` (core/unified_exec.h; the default,
// as in Codex), or with `features.unified_exec = false` the one-shot `shell`
// (argv array, workdir, timeout_ms; under on-request also Codex's
// `sandbox_permissions` and `justification`, core/approval.h); the MCP
// resource tools when MCP servers are configured (core/mcp_tools.h);
// `request_user_input` (core/user_input.h); `view_image` (core/view_image.h); the
// `multi_agent_v1` namespace of the sub-agent tools (core/agent_tools.h); the goal tools
// `get_goal`, `create_goal` and `update_goal` (core/goals.h); `apply_patch` (freeform or JSON
// function per provider, core/apply_patch_tool.h); `update_plan`; and the provider's hosted
// `web_search` when enabled. A function of the config alone, so the request prefix stays
// byte-stable from turn to turn until the policy changes (request_builder_test and the
// conformance captures pin the bytes). Pure functions.
#pragma once

#include <string>

#include "core/config.h"

namespace codex::core {

// The `tools` array of the built-in tools for `config` (what ToolRouter sends
// before any MCP tool): also what `codex sessions show` counts as the fixed
// part of a request.
std::string BuiltinToolsJson(const Config& config);

}  // namespace codex::core
