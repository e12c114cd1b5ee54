#include "cli/features_cmd.h"

#include <algorithm>
#include <array>
#include <memory>
#include <string>
#include <vector>

#include "cli/config_overrides.h"
#include "cli/terminal_text.h"
#include "core/config.h"
#include "core/mcp_config_edit.h"

namespace codex::cli {

namespace {

// Every feature name Codex 0.169 knows (its `codex features list`, 215 rows),
// sorted: `features enable|disable` accepts these and no other.
constexpr std::array<std::string_view, 215> kCodexFeatureNames = {
    "agent_message_board",
    "agent_message_board_mcp",
    "analytics_plan_history",
    "api_key_cyber_access_programs",
    "api_key_model_discovery",
    "app_server_websocket_compression",
    "apply_patch_freeform",
    "apply_patch_preserve_line_endings",
    "apply_patch_streaming_events",
    "apps",
    "apps_early_resource_discovery",
    "apps_mcp_path_override",
    "artifact",
    "async_compaction",
    "async_compaction_root_only",
    "auth_elicitation",
    "background_paginated_rollout_migration",
    "bedrock_setup_wizard",
    "browser_annotation_api",
    "browser_use",
    "browser_use_external",
    "browser_use_full_cdp_access",
    "chronicle",
    "cli_daybreak",
    "cli_resume_account_check",
    "code_mode",
    "code_mode_buffered_exec",
    "code_mode_host",
    "code_mode_host_grpc",
    "code_mode_host_output_truncation",
    "code_mode_interrupt",
    "code_mode_only",
    "code_mode_only_strict_3p_tools",
    "code_mode_prewarm",
    "code_mode_tool_description_first",
    "code_mode_tool_search",
    "codex_apps_mcp_2026_07_28",
    "codex_git_commit",
    "collaboration_modes",
    "command_sessions_world_state",
    "compaction_image_budget",
    "computer_use",
    "concurrent_reasoning_summaries",
    "content_item_kinds",
    "context_management",
    "credential_masking",
    "critical_path_timing",
    "current_time_reminder",
    "cwd_relative_turn_diffs",
    "daemon_auto_start",
    "daybreak_program_propagation",
    "default_mode_request_user_input",
    "defer_mailbox_preemption",
    "deferred_executor",
    "deferred_tool_world_state",
    "elevated_windows_sandbox",
    "enable_fanout",
    "enable_mcp_apps",
    "enable_request_compression",
    "exec_permission_approvals",
    "executed_tool_call_metadata",
    "executor_capability_discovery",
    "executor_capability_discovery_v2",
    "experimental_windows_sandbox",
    "external_agent_memory_import",
    "external_migration",
    "fast_mode",
    "gateway_setup_wizard",
    "gcp_setup_wizard",
    "goals",
    "guardian_approval",
    "guardian_conversation_history_tools",
    "guardian_denial_reconsideration",
    "guardian_enhanced_node_repl_transcripts",
    "guardian_ext",
    "guardian_include_additional_context",
    "guardian_native_multi_agent_history",
    "guardian_node_repl_transcript_images",
    "guardian_recorded_items",
    "guardian_reuse_parent_compaction",
    "guardian_root_handoff_context",
    "guardian_trust_orchestrator_connectors",
    "guardianv2",
    "guardianv2.thread_context",
    "guardianv2_decisions_comparison",
    "guardianv3",
    "hooks",
    "hosted_search_policy",
    "image_detail_original",
    "image_generation",
    "image_generation_animation",
    "image_resize_notice",
    "in_app_browser",
    "in_app_chat",
    "in_app_dictation",
    "in_app_local_automation",
    "in_app_updates",
    "in_app_voice",
    "incremental_exec_tools",
    "incremental_tools",
    "incremental_tools_legacy",
    "incremental_tools_legacy_gcp",
    "instant_interrupt",
    "interrupt_on_cancel",
    "item_ids",
    "js_repl",
    "js_repl_tools_only",
    "local_thread_store_compression",
    "local_thread_store_shared_compression",
    "login_shell_package_path",
    "mcp_2026_07_28",
    "mcp_connection_sharing",
    "mcp_lazy_stdio_startup",
    "mcp_oauth_refresh_coordination",
    "mcp_tool_list_changed",
    "memories",
    "mentions_v2",
    "model_catalog_in_context",
    "multi_agent",
    "multi_agent_mode",
    "multi_agent_v2",
    "multi_agent_v2_dynamic_tools",
    "multi_env_copy_file",
    "network_proxy",
    "non_prefixed_mcp_tool_names",
    "nonfatal_clock_read_errors",
    "omit_app_server_notification_media",
    "omit_skill_descriptions",
    "output_token_replay",
    "personality",
    "plugin_discovery_prefetch",
    "plugin_hooks",
    "plugin_sharing",
    "plugins",
    "powershell_shell_version",
    "prediction_preserve_parent_tools",
    "prefer_mxc",
    "prevent_idle_sleep",
    "psp",
    "realtime_conversation",
    "reasoning_effort_override",
    "recommended_plugins",
    "remote_compaction_v2",
    "remote_control",
    "remote_models",
    "remote_plugin",
    "request_permissions_tool",
    "request_rule",
    "resize_all_images",
    "respect_system_proxy",
    "responses_websockets",
    "responses_websockets_v2",
    "retain_client_developer_messages",
    "retain_client_tool_outputs",
    "rollout_budget",
    "runtime_agent_instances",
    "runtime_metrics",
    "search_tool",
    "secret_auth_storage",
    "send_async_message",
    "send_message_to_user_async",
    "shell_snapshot",
    "shell_snapshot_v2",
    "shell_tool",
    "shell_zsh_fork",
    "simplified_selection_hints",
    "skill_catalog_deltas",
    "skill_env_var_dependency_prompt",
    "skill_mcp_dependency_install",
    "skill_search",
    "skip_host_skill_discovery",
    "sleep_tool",
    "sqlite",
    "stable_environment_tools",
    "standalone_web_search",
    "steer",
    "step_model_switching",
    "subagent_default_context_limits",
    "subagent_thread_environments",
    "suppress_model_change_announcements",
    "system_proxy_fallback",
    "terminal_resize_reflow",
    "terminal_visualization_instructions",
    "token_budget",
    "tool_call_mcp_elicitation",
    "tool_search",
    "tool_search_always_defer_mcp_tools",
    "tool_suggest",
    "transcript_v2",
    "tui_app_server",
    "tui_extensions_statusline",
    "tui_multi_backend",
    "tui_workspace",
    "ultrafast_mode",
    "unavailable_dummy_tools",
    "unbounded_connection_retries",
    "undo",
    "unified_exec",
    "unified_exec_tty",
    "unified_exec_zsh_fork",
    "unified_image_budget",
    "untrusted_as_tool_output",
    "use_agent_identity",
    "use_legacy_landlock",
    "use_linux_sandbox_bwrap",
    "use_xaa",
    "view_image",
    "wake_on_agent_messages",
    "web_search_cached",
    "web_search_request",
    "windows_sandbox_service",
    "workspace_dependencies",
    "workspace_owner_usage_nudge",
    "worktrees",
    "write_stdin_approval",
};

struct FeatureRow {
  std::string name;
  std::string stage;  // Codex 0.169's word for it
  bool enabled = false;
};

// The features with a counterpart here (core/config.cc reads them), by name.
std::vector<FeatureRow> KnownFeatures(const core::Config& config) {
  return {
      {"default_mode_request_user_input", "under development",
       config.default_mode_request_user_input},
      {"multi_agent", "deprecated", config.multi_agent},
      {"shell_snapshot", "stable", config.shell_snapshot},
      {"unified_exec", "stable", config.unified_exec},
      {"view_image", "stable", config.view_image},
      {"web_search_cached", "deprecated", config.web_search},
      {"web_search_request", "deprecated", config.web_search},
  };
}

Status ListFeatures(const GlobalOptions& global) {
  ASSIGN_OR_RETURN(core::Config config,
                   core::LoadConfig(core::DefaultCodexHome(), GlobalOverrides(global)));
  const std::vector<FeatureRow> rows = KnownFeatures(config);
  size_t name_width = 0;
  size_t stage_width = 0;
  for (const FeatureRow& r : rows) {
    name_width = std::max(name_width, r.name.size());
    stage_width = std::max(stage_width, r.stage.size());
  }
  for (const FeatureRow& r : rows) {
    PrintF(stdout, "%-*s  %-*s  %s\n", static_cast<int>(name_width), r.name.c_str(),
           static_cast<int>(stage_width), r.stage.c_str(), r.enabled ? "true" : "false");
  }
  return OkStatus();
}

// `codex features enable|disable NAME`, in Codex's words.
Status SetFeature(const GlobalOptions& global, const std::string& name, bool enabled) {
  if (!global.profile.empty()) {
    return InvalidArgumentError(
        "--profile does not apply to codex features " +
        std::string(enabled ? "enable" : "disable") +
        ": it edits the top-level [features] table of config.toml; drop --profile");
  }
  if (!std::binary_search(kCodexFeatureNames.begin(), kCodexFeatureNames.end(), name)) {
    return InvalidArgumentError("unknown feature flag '" + name +
                                "'; Codex 0.169 has no feature of that name (codex features list "
                                "shows the ones this codex acts on)");
  }
  const std::string home = core::DefaultCodexHome();
  RETURN_IF_ERROR(core::WriteFeatureFlag(home, name, enabled));
  PrintF(stdout, "%s feature `%s` in config.toml.\n", enabled ? "Enabled" : "Disabled",
         name.c_str());
  const auto acts = [&name](const FeatureRow& r) { return r.name == name; };
  const std::vector<FeatureRow> here = KnownFeatures(core::Config{});
  if (std::none_of(here.begin(), here.end(), acts)) {
    PrintF(stderr, "note: this codex does not act on `%s`; Codex reads it from the same file\n",
           name.c_str());
  }
  return OkStatus();
}

}  // namespace

void RegisterFeaturesCommand(CLI::App& app, const GlobalOptions& global, CommandOutcome& result) {
  CLI::App* features = app.add_subcommand("features", "Inspect feature flags");
  features->require_subcommand(1, 1);
  CLI::App* list = features->add_subcommand(
      "list", "List the Codex features this codex acts on, with their stage and effective state");
  list->callback([&global, &result]() { result.Set(ListFeatures(global)); });
  for (const bool enabled : {true, false}) {
    CLI::App* set = features->add_subcommand(
        enabled ? "enable" : "disable",
        enabled ? "Enable a feature in config.toml ([features] NAME = true)"
                : "Disable a feature in config.toml ([features] NAME = false)");
    auto name = std::make_shared<std::string>();
    set->add_option("FEATURE", *name, "A Codex feature name (any of Codex 0.169's)")->required();
    set->callback(
        [&global, &result, name, enabled]() { result.Set(SetFeature(global, *name, enabled)); });
  }
}

}  // namespace codex::cli
