#include "core/tool_router.h"

#include <chrono>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <optional>

#include "base/json.h"
#include "base/shell.h"
#include "core/apply_patch.h"
#include "core/apply_patch_tool.h"
#include "core/sandboxed_runner.h"
#include "core/view_image.h"
#include "sandbox/environment.h"
#include "sandbox/landlock.h"
#include "sandbox/safe_command.h"
#include "sandbox/truncate.h"

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

}  // namespace

size_t ModelOutputMaxBytes(const Config& config) {
  if (!config.tool_output_token_limit) return kModelOutputMaxBytes;
  return static_cast<size_t>(*config.tool_output_token_limit) * 4;
}

std::string FormatShellOutput(const CommandResult& result, size_t max_bytes) {
  std::string text = result.output;
  if (result.timed_out) text += "\n[command timed out]";
  const sandbox::OutputGap gap{result.gap_offset, result.dropped_bytes, result.dropped_lines};
  Json j = {{"output", sandbox::TruncateHeadTail(text, gap, max_bytes)},
            {"metadata",
             {{"exit_code", result.exit_code},
              {"duration_seconds", static_cast<double>(result.wall_ms) / 1000.0}}}};
  return Dump(j);
}

std::string BuiltinToolsJson(const Config& config) {
  Json tools = Json::array();
  if (config.unified_exec) {
    tools.push_back(Json::parse(ExecCommandToolJson()));
    tools.push_back(Json::parse(WriteStdinToolJson()));
  } else {
    tools.push_back(ShellToolJson(DeclaresEscalation(config.approval_policy)));
  }
  // Where Codex 0.169 puts them: right after the command tools, then view_image.
  if (OffersMcpResourceTools(config)) {
    for (auto& t : Json::parse("[" + McpResourceToolsJson().substr(1) + "]")) {
      tools.push_back(std::move(t));
    }
  }
  if (config.view_image) tools.push_back(Json::parse(ViewImageToolJson()));
  tools.push_back(ApplyPatchToolDefinition(config.provider.apply_patch_tool_type));
  tools.push_back(UpdatePlanToolJson());
  // The provider's hosted search: it runs server-side and comes back as
  // web_search_call items (kept and resent verbatim, see core/item.h).
  if (config.web_search) tools.push_back(Json{{"type", "web_search"}});
  return Dump(tools);
}

ToolRouter::ToolRouter(const Config& config, CommandRunner& runner, Approver* approver,
                       TurnObserver& observer)
    : config_(config), runner_(runner), approver_(approver), observer_(observer) {
  tools_json_ = BuiltinToolsJson(config);
  builtin_tools_json_ = tools_json_;
  if (config.shell_snapshot && !config.codex_home.empty()) {
    shell_snapshot_ = std::make_unique<ShellSnapshot>(
        ShellSnapshot::Options{ShellSnapshotDir(config.codex_home), SandboxPolicyFor(config),
                               config.shell_environment_policy, "", kShellSnapshotTimeoutMs},
        runner);
  }
}

void ToolRouter::BeginTurn() {
  if (mcp_ == nullptr) return;
  for (const std::string& line : mcp_->TakeNotices()) observer_.OnNotice(line);
  mcp_tools_ = mcp_->ToolsForTurn();
  std::string json = builtin_tools_json_;
  json.pop_back();  // ']'
  json += McpNamespacesJson(mcp_tools_);
  json += ']';
  tools_json_ = std::move(json);
}

Result<ToolOutcome> ToolRouter::Dispatch(const Item& call, const CancelToken& cancel) {
  Json j = Json::parse(call.body, nullptr, false);
  std::string name = j.is_object() ? j.value("name", "") : "";
  auto fail = [&](const std::string& message) -> Result<ToolOutcome> {
    ToolOutcome outcome;
    outcome.output = CallOutputFor(call.kind, call.call_id, message);
    return outcome;
  };
  if (call.kind == ItemKind::kLocalShellCall) {
    const Json& action = j.value("action", Json::object());
    std::vector<std::string> argv;
    for (const auto& a : action.value("command", Json::array())) {
      if (a.is_string()) argv.push_back(a.get<std::string>());
    }
    return RunShell(call, argv, action.value("working_directory", ""),
                    action.value("timeout_ms", config_.shell_timeout_ms), EscalationRequest{},
                    cancel);
  }
  if (call.kind == ItemKind::kCustomToolCall) {
    if (name == "apply_patch") return RunApplyPatch(call, j.value("input", ""), "");
    return fail("unknown custom tool '" + name + "'");
  }
  if (call.kind == ItemKind::kFunctionCall) {
    const std::string ns =
        j.value("namespace", Json()).is_string() ? j["namespace"].get<std::string>() : "";
    if (const McpToolInfo* t = FindMcpTool(mcp_tools_, ns, name)) {
      return RunMcp(call, *t, j.value("arguments", "{}"), cancel);
    }
    if (ns.empty() && IsMcpResourceTool(name) && OffersMcpResourceTools(config_)) {
      return RunMcpResource(call, name, j.value("arguments", ""), cancel);
    }
    // Codex 0.169's words for a function it has not got in a namespace.
    if (!ns.empty()) return fail("unsupported call: " + ns + name);
  }
  Json args = Json::parse(j.value("arguments", "{}"), nullptr, false);
  if (!args.is_object()) {
    return fail("failed to parse the arguments of '" + name + "' as a JSON object");
  }
  if (name == "shell" || name == "container.exec") {
    auto cmd = args.find("command");
    if (cmd == args.end() || !cmd->is_array() || cmd->empty()) {
      return fail("shell: `command` must be a non-empty array of strings");
    }
    std::vector<std::string> argv;
    for (const auto& a : *cmd) {
      if (!a.is_string()) return fail("shell: `command` must be an array of strings");
      argv.push_back(a.get<std::string>());
    }
    std::string workdir;
    if (auto w = args.find("workdir"); w != args.end() && w->is_string()) workdir = *w;
    int64_t timeout = config_.shell_timeout_ms;
    if (auto t = args.find("timeout_ms"); t != args.end() && t->is_number()) {
      timeout = t->get<int64_t>();
    }
    // apply_patch sent through the shell is applied the same way as the tool.
    auto intercepted = MatchShellApplyPatch(argv);
    if (!intercepted.ok()) return fail(intercepted.status().message());
    if (intercepted->has_value()) {
      std::string dir = (*intercepted)->workdir;
      if (!workdir.empty() && (dir.empty() || dir[0] != '/')) {
        dir = dir.empty() ? workdir : workdir + "/" + dir;
      }
      return RunApplyPatch(call, (*intercepted)->patch, dir);
    }
    auto escalation = ParseEscalation(args, config_.approval_policy);
    if (!escalation.ok()) return fail(escalation.status().message());
    return RunShell(call, argv, workdir, timeout, *escalation, cancel);
  }
  if (name == "apply_patch") {
    if (!args.contains("input") || !args["input"].is_string()) {
      return fail("apply_patch: `input` must be the patch text");
    }
    return RunApplyPatch(call, args["input"].get<std::string>(), "");
  }
  if (name == "update_plan") return RunUpdatePlan(call, j.value("arguments", "{}"));
  if (name == "exec_command") return RunExecCommand(call, j.value("arguments", "{}"), cancel);
  if (name == "write_stdin") return RunWriteStdin(call, j.value("arguments", "{}"), cancel);
  if (name == "view_image" && config_.view_image) {
    return RunViewImage(call, j.value("arguments", "{}"));
  }
  return fail("unknown tool '" + name + "'");
}

ReviewOutcome ToolRouter::Ask(const Item& call, const std::vector<std::string>& argv,
                              const std::string& cwd, const ApprovalPlan& plan,
                              const std::string& justification, const CancelToken& cancel) {
  ApprovalRequest request;
  request.call_id = call.call_id;
  request.argv = argv;
  request.cwd = cwd;
  request.sandbox = plan.sandbox;
  request.reason = plan.reason;
  request.justification = justification;
  if (approver_ == nullptr) {
    // Non-interactive: nobody can answer, so the request is declined.
    observer_.OnNotice("`" + ShellJoin(argv) + "` needs approval under the " +
                       std::string(ApprovalPolicyName(config_.approval_policy)) +
                       " policy; declined because this run cannot ask");
    ReviewOutcome declined;
    declined.action = ReviewOutcome::Action::kDenied;
    return declined;
  }
  const ReviewDecision decision = approver_->Review(request, cancel);
  return ApplyReviewDecision(decision, plan, argv, &approvals_);
}

Result<ToolRouter::CommandGate> ToolRouter::ApproveCommand(const Item& call,
                                                           const std::vector<std::string>& argv,
                                                           const std::string& cwd,
                                                           const EscalationRequest& escalation,
                                                           const CancelToken& cancel) {
  CommandGate gate;
  ApprovalInput& input = gate.input;
  input.policy = config_.approval_policy;
  input.sandbox = config_.sandbox_mode;
  input.argv = argv;
  // Known-safe also needs the PATH the command will see to hold only
  // absolute directories (else a planted ./cat could run instead).
  input.known_safe = sandbox::IsKnownSafeCommand(
      argv, sandbox::LookupEnv(sandbox::BuildEnvironment(config_.shell_environment_policy,
                                                         sandbox::CurrentEnvironment()),
                               "PATH", "/usr/bin:/bin"));
  input.escalation_requested = escalation.escalate;
  input.sandbox_available =
      config_.sandbox_mode == SandboxMode::kDangerFullAccess || sandbox::landlock::AbiVersion() > 0;
  input.session_approval = approvals_.Find(argv);
  ApprovalPlan plan = DecideApproval(input);
  gate.choice = plan.sandbox;
  if (plan.action == ApprovalPlan::Action::kReject) {
    gate.refusal = "command rejected: " + plan.reason;
    return gate;
  }
  if (plan.action == ApprovalPlan::Action::kAsk) {
    ReviewOutcome review = Ask(call, argv, cwd, plan, escalation.justification, cancel);
    if (cancel.cancelled()) return CancelledError("interrupted");
    if (review.action == ReviewOutcome::Action::kDenied) {
      gate.rejected_by_user = approver_ != nullptr;
      gate.refusal = approver_ != nullptr
                         ? std::string(kRejectedByUser)
                         : "this command needs the user's approval, which a non-interactive run "
                           "cannot ask for; do without it or ask the user to rerun with another "
                           "approval policy";
      return gate;
    }
    if (review.action == ReviewOutcome::Action::kAbortTurn) {
      gate.refusal = "the user denied running this command and stopped the turn";
      gate.stop = true;
      return gate;
    }
    gate.choice = review.sandbox;
  }
  gate.run = true;
  return gate;
}

ReviewOutcome::Action ToolRouter::RetryWithoutSandbox(const Item& call,
                                                      const std::vector<std::string>& argv,
                                                      const std::string& cwd, ApprovalInput& input,
                                                      const CommandResult& failed,
                                                      const CancelToken& cancel) {
  // Other failures (grep finding nothing, a failing test) are the model's to
  // handle: no point asking the user to lift the sandbox for them.
  if (!LooksLikeSandboxDenial(failed)) return ReviewOutcome::Action::kDenied;
  input.sandboxed_run_failed = true;
  ApprovalPlan retry = DecideApproval(input);
  if (retry.action != ApprovalPlan::Action::kAsk || retry.sandbox != SandboxChoice::kUnsandboxed) {
    return ReviewOutcome::Action::kDenied;
  }
  // The user decides on what the sandbox refused: its last words.
  const std::string& out = failed.output;
  retry.reason += "\n" + out.substr(out.size() > 400 ? out.size() - 400 : 0);
  return Ask(call, argv, cwd, retry, "", cancel).action;
}

CommandSpec ToolRouter::CommandSpecFor(const std::vector<std::string>& argv, const std::string& cwd,
                                       SandboxChoice choice) const {
  CommandSpec spec;
  spec.argv = argv;
  spec.cwd = cwd;
  spec.env_policy = config_.shell_environment_policy;
  spec.sandbox = SandboxPolicyFor(config_);
  if (choice == SandboxChoice::kUnsandboxed) spec.sandbox.mode = SandboxMode::kDangerFullAccess;
  return spec;
}

Result<ToolOutcome> ToolRouter::RunShell(const Item& call, std::vector<std::string> argv,
                                         std::string workdir, int64_t timeout_ms,
                                         const EscalationRequest& escalation,
                                         const CancelToken& cancel) {
  ToolActivity activity;
  activity.call_id = call.call_id;
  activity.tool = "shell";
  activity.command = ShellJoin(argv);
  const std::string cwd =
      workdir.empty() ? config_.cwd : (workdir[0] == '/' ? workdir : config_.cwd + "/" + workdir);

  ToolOutcome outcome;
  auto refuse = [&](const std::string& message, bool stop) {
    activity.output = message;
    activity.success = false;
    observer_.OnToolStarted(activity);
    observer_.OnToolCompleted(activity);
    CommandResult refused;
    refused.exit_code = -1;
    refused.output = message;
    outcome.output = CallOutputFor(call.kind, call.call_id,
                                   FormatShellOutput(refused, ModelOutputMaxBytes(config_)));
    outcome.stop_turn = stop;
    return outcome;
  };

  ASSIGN_OR_RETURN(CommandGate gate, ApproveCommand(call, argv, cwd, escalation, cancel));
  if (gate.rejected_by_user) {
    // Codex's words and shape: the output is the bare sentence.
    activity.output = gate.refusal;
    activity.success = false;
    observer_.OnToolStarted(activity);
    observer_.OnToolCompleted(activity);
    outcome.output = CallOutputFor(call.kind, call.call_id, gate.refusal);
    return outcome;
  }
  if (!gate.run) return refuse(gate.refusal, gate.stop);
  SandboxChoice choice = gate.choice;
  ApprovalInput& input = gate.input;

  CommandSpec spec = CommandSpecFor(argv, cwd, choice);
  if (shell_snapshot_) shell_snapshot_->Prepare(spec, cancel);
  spec.timeout_ms = timeout_ms > 0 ? timeout_ms : config_.shell_timeout_ms;
  spec.on_output = [this, id = activity.call_id](std::string_view chunk) {
    observer_.OnToolOutput(id, chunk);
  };

  observer_.OnToolStarted(activity);
  auto result = runner_.Run(spec, cancel);
  // on-failure: a sandboxed run that failed because of the sandbox may be
  // retried without it. Other failures (grep finding nothing, a failing
  // test) are the model's to handle: no point asking the user to lift it.
  if (result.ok() && choice == SandboxChoice::kSandboxed &&
      spec.sandbox.mode != SandboxMode::kDangerFullAccess) {
    const ReviewOutcome::Action retry =
        RetryWithoutSandbox(call, argv, cwd, input, *result, cancel);
    if (retry == ReviewOutcome::Action::kRun) {
      spec.sandbox.mode = SandboxMode::kDangerFullAccess;
      result = runner_.Run(spec, cancel);
    } else if (retry == ReviewOutcome::Action::kAbortTurn) {
      outcome.stop_turn = true;
    }
  }
  if (!result.ok()) {
    if (result.status().code() == StatusCode::kCancelled) return result.status();
    activity.output = result.status().message();
    activity.exit_code = -1;
    activity.success = false;
    observer_.OnToolCompleted(activity);
    CommandResult failed;
    failed.exit_code = -1;
    failed.output = "failed to run command: " + result.status().message();
    outcome.output = CallOutputFor(call.kind, call.call_id,
                                   FormatShellOutput(failed, ModelOutputMaxBytes(config_)));
    return outcome;
  }
  // What the user sees (--json aggregated_output, excerpts): the captured
  // head and tail, with the marker where bytes were left out between them.
  const sandbox::OutputGap gap{result->gap_offset, result->dropped_bytes, result->dropped_lines};
  activity.output =
      result->dropped_bytes > 0
          ? sandbox::TruncateHeadTail(result->output, gap, 2 * result->output.size() + 2)
          : result->output;
  activity.exit_code = result->exit_code;
  activity.success = result->exit_code == 0;
  observer_.OnToolCompleted(activity);
  outcome.output = CallOutputFor(call.kind, call.call_id,
                                 FormatShellOutput(*result, ModelOutputMaxBytes(config_)));
  return outcome;
}

Result<ToolOutcome> ToolRouter::RunUpdatePlan(const Item& call, const std::string& arguments) {
  ToolOutcome outcome;
  auto reply = [&](const std::string& text) {
    outcome.output = CallOutputFor(call.kind, call.call_id, text);
    return outcome;
  };
  Json args = Json::parse(arguments, nullptr, false);
  if (!args.is_object() || !args.contains("plan") || !args["plan"].is_array()) {
    return reply("update_plan: `plan` must be an array of {step, status}");
  }
  std::vector<PlanStep> plan;
  int in_progress = 0;
  for (const auto& s : args["plan"]) {
    if (!s.is_object() || !s.value("step", Json()).is_string() ||
        !s.value("status", Json()).is_string()) {
      return reply("update_plan: every step needs a string `step` and `status`");
    }
    PlanStep step{s["step"].get<std::string>(), s["status"].get<std::string>()};
    if (step.status != "pending" && step.status != "in_progress" && step.status != "completed") {
      return reply("update_plan: status '" + step.status +
                   "' is not one of pending, in_progress, completed");
    }
    if (step.status == "in_progress") ++in_progress;
    plan.push_back(std::move(step));
  }
  if (in_progress > 1) return reply("update_plan: at most one step may be in_progress");
  plan_ = plan;
  ToolActivity activity;
  activity.call_id = call.call_id;
  activity.tool = "update_plan";
  activity.plan = plan;
  activity.explanation = args.value("explanation", "");
  activity.success = true;
  observer_.OnToolStarted(activity);
  observer_.OnToolCompleted(activity);
  return reply("Plan updated");
}

Result<ToolOutcome> ToolRouter::RunMcp(const Item& call, const McpToolInfo& tool,
                                       const std::string& arguments, const CancelToken& cancel) {
  ToolActivity activity;
  activity.call_id = call.call_id;
  activity.tool = "mcp";
  activity.mcp_server = tool.server;
  activity.mcp_tool = tool.tool;
  activity.command = tool.server + "." + tool.tool;
  ToolOutcome outcome;
  auto finish = [&](const McpOutput& out) {
    activity.success = out.success;
    observer_.OnToolCompleted(activity);
    Item item;
    item.kind = ItemKind::kFunctionCallOutput;
    item.call_id = call.call_id;
    item.body = R"({"type":"function_call_output","call_id":)" + Dump(Json(call.call_id)) +
                R"(,"output":)" + out.output_json + "}";
    outcome.output = std::move(item);
    return outcome;
  };
  // As Codex 0.169: the wall-time header, then `prefix` + the message.
  double wall_seconds = 0;
  auto fail = [&](const std::string& message, const std::string& prefix = "") {
    activity.error = message;
    activity.output = message;
    return finish(FormatMcpError(prefix + message, wall_seconds));
  };
  // An empty argument string means no arguments, as in Codex.
  const bool blank = arguments.find_first_not_of(" \t\r\n") == std::string::npos;
  Json args = blank ? Json::object() : Json::parse(arguments, nullptr, false);
  activity.mcp_arguments = args.is_discarded() ? arguments : Dump(args);
  if (!args.is_object()) {
    observer_.OnToolStarted(activity);
    return fail("the arguments of " + tool.qualified_name + " must be a JSON object", "err: ");
  }
  const std::vector<std::string> key = {"mcp", tool.server, tool.tool};
  if (McpCallNeedsApproval(config_.approval_policy, config_.sandbox_mode, tool) &&
      !approvals_.Find(key)) {
    ApprovalPlan plan;
    plan.action = ApprovalPlan::Action::kAsk;
    plan.sandbox = SandboxChoice::kUnsandboxed;
    plan.reason = "MCP tool '" + tool.tool + "' of server '" + tool.server +
                  "' (MCP servers run outside the sandbox) with arguments " +
                  activity.mcp_arguments;
    ReviewOutcome review = Ask(call, key, config_.cwd, plan, "", cancel);
    if (cancel.cancelled()) return CancelledError("interrupted");
    if (review.action != ReviewOutcome::Action::kRun) {
      observer_.OnToolStarted(activity);
      ToolOutcome denied =
          fail(approver_ != nullptr
                   ? "the user declined this MCP tool call"
                   : "this MCP tool call needs the user's approval, which a non-interactive "
                     "run cannot ask for; do without it or ask the user to rerun with "
                     "another approval policy");
      denied.stop_turn = review.action == ReviewOutcome::Action::kAbortTurn;
      return denied;
    }
  }
  observer_.OnToolStarted(activity);
  const auto started = std::chrono::steady_clock::now();
  auto result = mcp_->CallTool(tool.server, tool.tool, Dump(args), cancel);
  wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (!result.ok()) {
    if (result.status().code() == StatusCode::kCancelled) return result.status();
    return fail(result.status().message(), "tool call error: ");
  }
  activity.mcp_result = *result;
  McpOutput out = FormatMcpResult(*result, ModelOutputMaxBytes(config_), wall_seconds);
  activity.output = out.output_json;
  return finish(out);
}

Result<ToolOutcome> ToolRouter::RunMcpResource(const Item& call, const std::string& name,
                                               const std::string& arguments,
                                               const CancelToken& cancel) {
  // Shown as Codex shows it: an MCP call of the "codex" server.
  ToolActivity activity;
  activity.call_id = call.call_id;
  activity.tool = "mcp";
  activity.mcp_server = "codex";
  activity.mcp_tool = name;
  activity.command = "codex." + name;
  Json args = Json::parse(arguments, nullptr, false);
  activity.mcp_arguments = args.is_discarded() ? arguments : Dump(args);
  observer_.OnToolStarted(activity);
  Result<std::string> result =
      mcp_ != nullptr ? mcp_->CallResourceTool(name, arguments, cancel)
                      : Result<std::string>(UnavailableError("no MCP server is running"));
  if (!result.ok() && result.status().code() == StatusCode::kCancelled) return result.status();
  // As Codex 0.169: the output is the JSON text, or the error's message.
  const std::string text = result.ok() ? *result : result.status().message();
  activity.success = result.ok();
  if (!result.ok()) activity.error = text;
  activity.output = sandbox::TruncateHeadTail(text, kModelOutputMaxBytes);
  activity.mcp_result =
      result.ok() ? Dump(Json{{"content", Json::array({{{"type", "text"}, {"text", text}}})}}) : "";
  observer_.OnToolCompleted(activity);
  ToolOutcome outcome;
  outcome.output = CallOutputFor(call.kind, call.call_id, activity.output);
  return outcome;
}

Result<ToolOutcome> ToolRouter::RunApplyPatch(const Item& call, const std::string& patch,
                                              const std::string& workdir) {
  ToolOutcome outcome;
  ToolActivity activity;
  activity.call_id = call.call_id;
  activity.tool = "apply_patch";
  auto finish = [&](bool success, std::string text) {
    activity.success = success;
    activity.output = text;
    observer_.OnToolCompleted(activity);
    outcome.output = CallOutputFor(call.kind, call.call_id, text);
    return outcome;
  };
  auto parsed = ParsePatch(patch);
  if (!parsed.ok()) {
    observer_.OnToolStarted(activity);
    return finish(false, parsed.status().message());
  }
  ApplyPatchOptions options;
  options.cwd =
      workdir.empty() ? config_.cwd : (workdir[0] == '/' ? workdir : config_.cwd + "/" + workdir);
  // The workspace policy the sandbox enforces, computed now: its roots, and
  // the protected paths (.git, .codex, gitdirs) no hunk may touch.
  std::optional<sandbox::WorkspacePolicy> policy;
  auto workspace_roots = [&]() -> Status {
    auto computed =
        sandbox::WorkspacePolicy::Compute(WritableRootsFor(SandboxPolicyFor(config_), options.cwd));
    if (!computed.ok()) return computed.status();
    policy = std::move(*computed);
    options.policy = &*policy;
    return OkStatus();
  };
  // Patches need the user's word under `untrusted`, and whenever the sandbox
  // is read-only and the policy may ask; `never` refuses a read-only write.
  bool ask = config_.approval_policy == ApprovalPolicy::kUntrusted;
  Status roots_status = OkStatus();
  switch (config_.sandbox_mode) {
    case SandboxMode::kReadOnly:
      if (config_.approval_policy == ApprovalPolicy::kNever) {
        observer_.OnToolStarted(activity);
        return finish(false,
                      "apply_patch was refused: the sandbox is read-only, so no file may be "
                      "written; ask the user to rerun with --sandbox workspace-write");
      }
      ask = true;
      roots_status = workspace_roots();
      break;
    case SandboxMode::kWorkspaceWrite:
      roots_status = workspace_roots();
      break;
    case SandboxMode::kDangerFullAccess:
      options.writable_roots.push_back("/");
      break;
  }
  if (!roots_status.ok()) {
    observer_.OnToolStarted(activity);
    return finish(false, "apply_patch was refused: " + roots_status.message());
  }
  // Protected paths (.git, .codex, gitdirs) are refused here as the sandbox
  // refuses them: a hook or a config there would run code outside it later.
  auto preview = PreviewPatch(*parsed, options);
  if (!preview.ok()) {
    observer_.OnToolStarted(activity);
    return finish(false, preview.status().message());
  }
  if (ask) {
    ApprovalPlan plan;
    plan.action = ApprovalPlan::Action::kAsk;
    plan.sandbox = SandboxChoice::kSandboxed;
    std::vector<std::string> argv = {"apply_patch"};
    std::string diff;
    for (const auto& c : preview->changes) {
      argv.push_back(c.move_path.empty() ? c.path : c.move_path);
      diff += std::string(FileChangeKindName(c.kind)) + " " + c.path + "\n" + c.unified_diff;
    }
    plan.reason = diff;
    ReviewOutcome review = Ask(call, argv, options.cwd, plan, "", CancelToken());
    if (review.action != ReviewOutcome::Action::kRun) {
      observer_.OnToolStarted(activity);
      ToolOutcome denied = finish(false, "the user denied applying this patch");
      denied.stop_turn = review.action == ReviewOutcome::Action::kAbortTurn;
      return denied;
    }
  }
  for (const auto& c : preview->changes) {
    activity.changes.push_back(
        {c.move_path.empty() ? c.path : c.move_path, std::string(FileChangeKindName(c.kind))});
  }
  observer_.OnToolStarted(activity);
  // Again, as the filesystem is now (an approval may have taken a while).
  if (policy) {
    if (Status again = workspace_roots(); !again.ok()) {
      return finish(false, "apply_patch was refused: " + again.message());
    }
  }
  auto applied = ApplyParsedPatch(*parsed, options);
  if (!applied.ok()) return finish(false, applied.status().message());
  return finish(true, applied->Summary());
}

}  // namespace codex::core
