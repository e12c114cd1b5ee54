// Config: $CODEX_HOME/config.toml in the Codex format, plus `-c key=value`
// overrides (value parsed as TOML, falling back to a bare string) and
// command-line flags. Loading never throws; a malformed file gives
// kInvalidArgument naming the file, line and what to fix. Thread-compatible.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "core/command_runner.h"
#include "core/mcp_config.h"
#include "core/store_location.h"
#include "sandbox/environment.h"

namespace codex::core {

enum class WireApi { kResponses, kChat };

enum class ApprovalPolicy { kUntrusted, kOnFailure, kOnRequest, kNever };
std::string_view ApprovalPolicyName(ApprovalPolicy policy);
std::optional<ApprovalPolicy> ParseApprovalPolicy(std::string_view name);

// How apply_patch is offered to the model.
enum class ApplyPatchToolType { kFreeform, kFunction };

// One [model_providers.<id>] table (or a built-in one).
struct ProviderInfo {
  std::string id;
  std::string name;
  std::string base_url;  // e.g. https://api.openai.com/v1 (no trailing slash)
  std::string env_key;   // env var holding the API key; "" = no key needed
  WireApi wire_api = WireApi::kResponses;
  std::map<std::string, std::string> query_params;      // appended to every URL
  std::map<std::string, std::string> http_headers;      // sent as is
  std::map<std::string, std::string> env_http_headers;  // header -> env var name
  int request_max_retries = 4;
  int stream_max_retries = 5;
  int64_t stream_idle_timeout_ms = 300'000;
  bool send_item_ids = false;     // resend server item ids
  bool supports_compact = false;  // POST /responses/compact exists
  ApplyPatchToolType apply_patch_tool_type = ApplyPatchToolType::kFreeform;
};

// One [model_prices.<model>] table: what a model's tokens cost, in US dollars
// per million tokens, for the estimate `codex sessions usage` prints. Input
// counts the uncached part of input_tokens at `input` and the cached part at
// `cached_input` (= `input` when the table does not set it); reasoning tokens
// are part of output_tokens and cost `output`.
struct ModelPrice {
  double input = 0;
  double cached_input = 0;
  double output = 0;
};

struct Config {
  std::string codex_home;  // absolute
  std::string cwd;         // absolute working directory of the session
  std::string model = "gpt-5-codex";
  std::string model_provider_id = "openai";
  ProviderInfo provider;  // the selected provider, resolved
  std::map<std::string, ProviderInfo> providers;
  std::string model_reasoning_effort;  // "" = not sent
  std::string model_reasoning_summary = "auto";
  ApprovalPolicy approval_policy = ApprovalPolicy::kNever;
  SandboxMode sandbox_mode = SandboxMode::kReadOnly;
  std::vector<std::string> writable_roots;  // [sandbox_workspace_write] writable_roots + --add-dir
  bool sandbox_network_access = false;
  bool sandbox_exclude_slash_tmp = false;       // [sandbox_workspace_write] exclude_slash_tmp
  bool sandbox_exclude_tmpdir_env_var = false;  // ... exclude_tmpdir_env_var
  // Paths of codex's own that no command may touch (the --ephemeral store);
  // set by the CLI, not read from config.toml.
  std::vector<std::string> sandbox_private_paths;
  std::optional<int64_t> model_context_window;
  std::optional<int64_t> model_auto_compact_token_limit;
  // Above it compaction waits for a natural boundary (core/context_budget.h);
  // default 75% of the auto-compact limit.
  std::optional<int64_t> model_auto_compact_soft_token_limit;
  std::string compaction = "auto";  // auto | inline | endpoint | local (README, "Compaction")
  std::optional<int> history_retention_days;  // [history] retention_days
  std::string instructions;  // base instructions override ("" = built-in); model_instructions_file
  // A review session (core/review.h): its guidelines, sent as the first
  // developer message, and no base instructions, as Codex 0.169's review
  // turn; set by the CLI, not read from config.toml.
  std::string review_guidelines;
  // Codex's developer_instructions: a developer message after the permissions one.
  std::string developer_instructions;
  // Codex's project_doc_fallback_filenames: tried in order in a directory without AGENTS.md.
  std::vector<std::string> project_doc_fallback_filenames;
  int64_t shell_timeout_ms = 10'000;
  // [shell_environment_policy]: the environment of the commands the model runs.
  sandbox::EnvPolicy shell_environment_policy;
  // [mcp_servers.<name>], by name.
  std::map<std::string, McpServerConfig> mcp_servers;
  // Codex parity (issue 13).
  std::string model_verbosity;      // low | medium | high; "" = not sent (text.verbosity)
  bool parallel_tool_calls = true;  // sent as Codex 0.169 does
  // [features] unified_exec: offer exec_command + write_stdin (live processes,
  // core/unified_exec.h) instead of the one-shot `shell` tool. On by default,
  // as in Codex 0.169; `false` offers `shell`. A `shell` call in a recorded
  // session runs under either harness.
  bool unified_exec = true;
  // [features] shell_snapshot: capture the login shell's state once per
  // session and run each `bash -lc SCRIPT` as `bash -c SCRIPT` from it
  // (core/shell_snapshot.h). On by default, as in Codex 0.169.
  bool shell_snapshot = true;
  // [tools] view_image: offer view_image (core/view_image.h). On by default,
  // as in Codex 0.169.
  bool view_image = true;
  // [features] default_mode_request_user_input: request_user_input asks the
  // user (the interactive UI) instead of answering "unavailable in Default
  // mode" (core/user_input.h). Off by default, as in Codex 0.169.
  bool default_mode_request_user_input = false;
  // [features] multi_agent: offer the multi_agent_v1 namespace (sub-agents,
  // core/agent_tools.h). On by default, as in Codex 0.169. A sub-agent's own
  // config has it off: it cannot spawn.
  bool multi_agent = true;
  // [tools] web_search: offer the provider's hosted web search ({"type":"web_search"});
  // its web_search_call items are stored and resent like any other.
  bool web_search = false;
  // Codex's tool_output_token_limit: how much of a tool's output (shell, MCP)
  // the model gets (ModelOutputMaxBytes in core/tool_router.h); nullopt = 10 KiB.
  std::optional<int64_t> tool_output_token_limit;
  // Codex's compact_prompt (or the text of experimental_compact_prompt_file):
  // the local compaction's summary prompt; "" = the built-in one.
  std::string compact_prompt;
  std::optional<int64_t> project_doc_max_bytes;  // AGENTS.md budget; nullopt = built-in
  bool hide_agent_reasoning = false;             // renderers omit reasoning text
  // Codex's show_raw_agent_reasoning: renderers also show the raw reasoning
  // text (reasoning_text content and deltas), not only the summaries.
  bool show_raw_agent_reasoning = false;
  // Codex's file_opener: the URI scheme of the hyperlinks the interactive UI
  // makes of local file references ("vscode", "vscode-insiders", "windsurf",
  // "cursor"; "none" = plain text).
  std::string file_opener = "vscode";
  // [history] max_bytes (Codex's): history.jsonl is cut to its newest entries that fit.
  std::optional<int64_t> history_max_bytes;
  bool history_persistence = true;  // [history] persistence = "save-all" | "none"
  std::vector<std::string> notify;  // program + args, run with the turn-complete JSON
  std::string output_schema_json;   // --output-schema: the JSON Schema text; "" = none
  std::string profile;              // the [profiles.NAME] applied ("" = none)
  // Where sessions live (core/store_location.h): `session_store`, else
  // CODEX_SESSION_STORE, else SQLite at $CODEX_HOME/sessions.db.
  StoreLocation session_store;
  // [model_prices.<model>], by model name (ModelPrice); empty = no estimate.
  std::map<std::string, ModelPrice> model_prices;
  // One line per config key that is not supported (each key once), for the
  // CLI to print as "warning: ...". Empty under strict loading (those are errors).
  std::vector<std::string> warnings;
};

// Flags that override config.toml (applied after the file and -c overrides).
struct ConfigOverrides {
  std::vector<std::string> dash_c;  // "key=value" as typed
  std::optional<std::string> model;
  std::optional<std::string> provider;
  std::optional<std::string> cwd;
  std::optional<SandboxMode> sandbox_mode;
  std::optional<ApprovalPolicy> approval_policy;
  std::vector<std::string> add_dirs;
  bool oss = false;                    // --oss: the local open-source provider
  std::optional<std::string> profile;  // -p/--profile NAME
  bool strict = false;                 // --strict-config: unsupported keys are errors
  bool ignore_user_config = false;     // --ignore-user-config: $CODEX_HOME/config.toml is not read
};

// Validates `value` of enum key `key` against `allowed`: kInvalidArgument
// naming the allowed values when it is not one of them.
Status CheckEnum(std::string_view key, std::string_view value,
                 std::initializer_list<std::string_view> allowed);

// $CODEX_HOME, else ~/.codex (absolute, not created).
std::string DefaultCodexHome();

// Reads <codex_home>/config.toml (absent = defaults) and applies overrides.
Result<Config> LoadConfig(const std::string& codex_home, const ConfigOverrides& overrides);

// The session's sandbox for its commands (the shell tool, `!cmd`, `codex
// sandbox`): sandbox_mode, the workspace (cwd), [sandbox_workspace_write]
// roots (+ --add-dir), network and the /tmp and $TMPDIR exclusions. The one
// translation of the config into a SandboxPolicy.
SandboxPolicy SandboxPolicyFor(const Config& config);

// The built-in providers: "openai" (OPENAI_BASE_URL honoured) and "oss".
std::map<std::string, ProviderInfo> BuiltInProviders();

// The API key for `provider` from its env_key, or kUnauthenticated with a
// message saying which variable to set. "" when the provider needs none.
Result<std::string> ResolveApiKey(const ProviderInfo& provider);

}  // namespace codex::core
