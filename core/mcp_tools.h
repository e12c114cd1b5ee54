// McpTools: the seam through which the tool router offers the tools of the
// user's MCP servers (`[mcp_servers]`) and calls them. The real one is
// mcp::McpManager (mcp/); core never sees a transport.
//
// Naming, as Codex 0.169 does it: "mcp__<server>__<tool>", every character
// outside [A-Za-z0-9_-] replaced by '_'; a name over 64 bytes keeps its first
// 24 bytes followed by the 40 hex digits of the SHA-1 of the raw (unsanitised)
// name; a tool whose qualified name repeats an earlier one is skipped. Tools
// are ordered by server name, then tool name, so the `tools` array of every
// request is the same bytes for the same servers.
//
// Results map to the function-call output as Codex does (FormatMcpResult
// below): a "Wall time" header, then `structuredContent` (when present) as
// its JSON text, or else each content block as an input item (text as text).
// Texts are cut head + tail like shell output.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "core/cancel.h"
#include "core/config.h"

namespace codex::core {

struct McpToolInfo {
  std::string qualified_name;  // the flat name mcp__SERVER__TOOL (older transcripts call it)
  std::string server;          // config name
  std::string tool;            // the server's name for it
  // Codex's namespace form: the tool is `function_name` inside the namespace
  // tool `namespace_name` ("mcp__SERVER"), both sanitised as Codex does.
  std::string namespace_name;
  // The server's `instructions` (initialize), which Codex 0.169 sends as the
  // namespace's description; "" = "Tools in the mcp__SERVER namespace.".
  std::string namespace_description;
  std::string function_name;
  std::string definition_json;  // the function entry inside its namespace
  // The tool's annotations (MCP ToolAnnotations), when the server gave them.
  std::optional<bool> read_only_hint;
  std::optional<bool> destructive_hint;
  std::optional<bool> open_world_hint;
};

class McpTools {
 public:
  virtual ~McpTools() = default;
  // The tools for the turn that starts now, ordered as described above. A
  // `notifications/tools/list_changed` received earlier is applied here (the
  // server is asked again), never in the middle of a turn.
  virtual std::vector<McpToolInfo> ToolsForTurn() = 0;
  // Calls `tool` of `server` with `arguments_json` (a JSON object) and
  // returns the MCP CallToolResult object as JSON text. Errors: kCancelled
  // when `cancel` fired (the server was sent notifications/cancelled),
  // kDeadlineExceeded after tool_timeout_sec, kUnavailable when the server is
  // not running or exited during the call.
  virtual Result<std::string> CallTool(const std::string& server, const std::string& tool,
                                       const std::string& arguments_json,
                                       const CancelToken& cancel) = 0;
  // Runs one of the resource tools (kMcpResourceToolNames) with the model's
  // argument text. ok: the output as Codex 0.169 sends it (JSON text); an
  // error's message is what the model is told instead (Codex's wording where
  // it has one: "unknown MCP server 'X'", "cursor can only be used when a
  // server is specified", "failed to parse function arguments: ...").
  virtual Result<std::string> CallResourceTool(const std::string& name,
                                               const std::string& arguments_json,
                                               const CancelToken& cancel) = 0;
  // One line per server that failed to start since the last call (servers
  // start in the background); the router shows them when a turn starts.
  virtual std::vector<std::string> TakeNotices() { return {}; }
};

// Codex 0.169's three resource tools, offered (after the shell tools, as
// Codex places them) whenever an enabled MCP server is configured — whether
// or not a server declares resources, and before any server has started, so
// the tools array does not depend on startup timing.
inline constexpr const char* kMcpResourceToolNames[] = {
    "list_mcp_resources", "list_mcp_resource_templates", "read_mcp_resource"};
bool IsMcpResourceTool(const std::string& name);
bool OffersMcpResourceTools(const Config& config);
// Their definitions, Codex's exact schemas and descriptions, in that order:
// each JSON object preceded by a comma, ready to append to a tools array.
std::string McpResourceToolsJson();

// The MCP part of a request's `tools` array, as Codex 0.169 sends it: one
// {"type":"namespace","name":"mcp__SERVER","description":"Tools in the
// mcp__SERVER namespace." (or the server's instructions),"tools":[...]} per server, in the order of
// `tools` (grouped by namespace_name). Each JSON object is preceded by a comma, ready to append to
// the built-in list; "" when there are none.
std::string McpNamespacesJson(const std::vector<McpToolInfo>& tools);

// The tool a function call names: `namespace_name`/`function_name` when the
// call has a "namespace", else the flat qualified name. nullptr when none.
const McpToolInfo* FindMcpTool(const std::vector<McpToolInfo>& tools, const std::string& ns,
                               const std::string& name);

// Codex 0.169's sanitising of a namespace or function name: every character
// other than [A-Za-z0-9_] becomes '_' (the flat names above keep '-').
std::string SanitizeMcpName(const std::string& name);

// Builds the qualified names of `tools` (in the given order) per the rule
// above; tools with a repeated name get "" (the caller skips them).
std::vector<std::string> QualifyMcpToolNames(
    const std::vector<std::pair<std::string, std::string>>& server_and_tool);

// The function-call output for a CallToolResult (JSON text of the result
// object), as Codex 0.169 sends it: "Wall time: S seconds\nOutput:" and then
// structuredContent as one text string, or else an array of input items (the
// header, then each content block: text, input_image, or the block's JSON).
// `success` is false when the result has isError: true. Texts are cut to
// `max_bytes` head + tail.
struct McpOutput {
  std::string output_json;  // a JSON string or array, ready to embed
  bool success = true;
};
McpOutput FormatMcpResult(const std::string& result_json, size_t max_bytes, double wall_seconds);
// The output for a call that produced no result, as Codex 0.169 sends it:
// the "Wall time" header, then `text` ("tool call error: <why>" for a failed
// call, "err: <why>" for arguments that are not a JSON object), each an
// input_text item; success false.
McpOutput FormatMcpError(const std::string& text, double wall_seconds);
// "Wall time: S seconds\nOutput:", S with four decimals, as Codex writes it.
std::string WallHeader(double wall_seconds);

// Whether an MCP call needs the user's word under `policy` (as Codex): never
// asks under `never` or with danger-full-access (except untrusted); untrusted
// asks unless the tool says readOnlyHint; on-request and on-failure ask when
// the tool says destructiveHint, or readOnlyHint false with openWorldHint.
bool McpCallNeedsApproval(ApprovalPolicy policy, SandboxMode sandbox, const McpToolInfo& tool);

}  // namespace codex::core
