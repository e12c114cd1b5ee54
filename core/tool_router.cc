#include "core/tool_router.h"

#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>

#include "base/json.h"
#include "base/shell.h"
#include "core/apply_patch.h"
#include "core/sandboxed_runner.h"
#include "core/tool_args.h"
#include "core/uuid.h"
#include "core/view_image.h"
#include "sandbox/truncate.h"

namespace codex::core {

using Json = nlohmann::ordered_json;

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

std::unique_ptr<ShellSnapshot> SessionShellSnapshot(const Config& config, CommandRunner& runner) {
  if (!config.shell_snapshot || config.codex_home.empty()) return nullptr;
  return std::make_unique<ShellSnapshot>(
      ShellSnapshot::Options{ShellSnapshotDir(config.codex_home), SandboxPolicyFor(config),
                             config.shell_environment_policy, "", kShellSnapshotTimeoutMs},
      runner);
}

void StartSessionWork(const Config& config, CommandRunner& runner, ShellSnapshot* snapshot) {
  CommandSpec spec;
  spec.cwd = config.cwd;
  spec.env_policy = config.shell_environment_policy;
  spec.sandbox = SandboxPolicyFor(config);
  runner.Warm(spec);
  if (snapshot == nullptr) return;
  const std::string shell = DefaultShell();
  // Another shell's commands keep -lc: no snapshot to make for them.
  if (IsLoginBashScript({shell, "-lc", "true"})) snapshot->StartCapture(shell);
}

ToolRouter::ToolRouter(const Config& config, CommandRunner& runner, Approver* approver,
                       TurnObserver& observer, std::unique_ptr<ShellSnapshot> shell_snapshot)
    : config_(config),
      runner_(runner),
      observer_(observer),
      approval_(config, approver, observer_),
      shell_snapshot_(std::move(shell_snapshot)) {
  tools_json_ = BuiltinToolsJson(config);
  builtin_tools_json_ = tools_json_;
}

void ToolRouter::BeginTurn() {
  approval_.BeginTurn();
  if (mcp_ == nullptr) return;
  for (const std::string& line : mcp_->TakeNotices()) observer_.OnNotice(line);
  mcp_tools_ = mcp_->ToolsForTurn();
  std::string json = builtin_tools_json_;
  json.pop_back();  // ']'
  json += McpNamespacesJson(mcp_tools_);
  json += ']';
  tools_json_ = std::move(json);
}

bool ToolRouter::RunsInParallel(const Item& call) const {
  if (call.kind == ItemKind::kLocalShellCall) return true;
  if (call.kind != ItemKind::kFunctionCall) return false;
  Json j = Json::parse(call.body, nullptr, false);
  const std::string name = StringField(j, "name");
  const std::string ns = StringField(j, "namespace");
  if (!ns.empty() || FindMcpTool(mcp_tools_, ns, name) != nullptr) return false;
  if (name == "shell" || name == "container.exec" || name == "shell_command") {
    // A call answered with an error touches nothing; one that is a patch
    // goes through apply_patch, which runs alone.
    auto args = DecodeArgumentsObject(name, StringField(j, "arguments", "{}"));
    if (!args.ok()) return true;
    auto shell = DecodeShellArgs(*args, config_.shell_timeout_ms);
    if (!shell.ok()) return true;
    auto patch = MatchShellApplyPatch(shell->argv);
    return !patch.ok() || !patch->has_value();
  }
  return name == "exec_command" || name == "view_image" || IsMcpResourceTool(name) ||
         name == "read_file" || name == "grep_files" || name == "list_dir";
}

Result<ToolOutcome> ToolRouter::Dispatch(const Item& call, const CancelToken& cancel,
                                         const std::function<void()>& gate_passed) {
  bool passed = false;
  auto pass = [&] {
    if (!std::exchange(passed, true) && gate_passed) gate_passed();
  };
  Result<ToolOutcome> outcome = DispatchCall(call, cancel, pass);
  pass();
  return outcome;
}

Result<ToolOutcome> ToolRouter::DispatchCall(const Item& call, const CancelToken& cancel,
                                             const std::function<void()>& gate_passed) {
  Json j = Json::parse(call.body, nullptr, false);
  std::string name = StringField(j, "name");
  auto fail = [&](const std::string& message) -> Result<ToolOutcome> {
    ToolOutcome outcome;
    outcome.output = CallOutputFor(call.kind, call.call_id, message);
    return outcome;
  };
  if (call.kind == ItemKind::kLocalShellCall) {
    ShellArgs shell = DecodeLocalShellAction(j, config_.shell_timeout_ms);
    return RunShell(call, std::move(shell.argv), std::move(shell.workdir), shell.timeout_ms,
                    EscalationRequest{}, cancel, gate_passed);
  }
  if (call.kind == ItemKind::kCustomToolCall) {
    if (name == "apply_patch") return RunApplyPatch(call, StringField(j, "input"), "");
    return fail("unknown custom tool '" + name + "'");
  }
  if (call.kind == ItemKind::kFunctionCall) {
    const std::string ns =
        j.value("namespace", Json()).is_string() ? j["namespace"].get<std::string>() : "";
    if (const McpToolInfo* t = FindMcpTool(mcp_tools_, ns, name)) {
      return RunMcp(call, *t, StringField(j, "arguments", "{}"), cancel);
    }
    if (ns.empty() && IsMcpResourceTool(name) && OffersMcpResourceTools(config_)) {
      gate_passed();  // nothing to ask
      return RunMcpResource(call, name, StringField(j, "arguments"), cancel);
    }
    if (ns == kMultiAgentNamespace && agents_ != nullptr && config_.multi_agent) {
      return RunAgentTool(call, name, StringField(j, "arguments", "{}"), cancel);
    }
    // Codex 0.169's words for a function it has not got in a namespace.
    if (!ns.empty()) return fail("unsupported call: " + ns + name);
  }
  // As Codex 0.169: refused before its arguments are read while the feature is off.
  if (name == "request_user_input" && !config_.default_mode_request_user_input) {
    return fail(std::string(kUserInputUnavailable));
  }
  auto parsed = DecodeArgumentsObject(name, StringField(j, "arguments", "{}"));
  if (!parsed.ok()) return fail(parsed.status().message());
  const Json& args = *parsed;
  if (name == "shell" || name == "container.exec") {
    auto shell = DecodeShellArgs(args, config_.shell_timeout_ms);
    if (!shell.ok()) return fail(shell.status().message());
    std::vector<std::string>& argv = shell->argv;
    const std::string& workdir = shell->workdir;
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
    return RunShell(call, argv, workdir, shell->timeout_ms, *escalation, cancel, gate_passed);
  }
  if (name == "apply_patch") {
    auto input = DecodeApplyPatchInput(args);
    if (!input.ok()) return fail(input.status().message());
    return RunApplyPatch(call, *input, "");
  }
  if (name == "update_plan") return RunUpdatePlan(call, StringField(j, "arguments", "{}"));
  if (name == "request_user_input") return RunRequestUserInput(call, args, cancel);
  if (name == "get_goal" || name == "create_goal" || name == "update_goal") {
    return RunGoalTool(call, name, StringField(j, "arguments", "{}"));
  }
  if (name == "exec_command") {
    return RunExecCommand(call, StringField(j, "arguments", "{}"), cancel, gate_passed);
  }
  if (name == "write_stdin") return RunWriteStdin(call, StringField(j, "arguments", "{}"), cancel);
  if (name == "view_image" && config_.view_image) {
    gate_passed();  // nothing to ask
    return RunViewImage(call, StringField(j, "arguments", "{}"));
  }
  return fail("unknown tool '" + name + "'");
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
                                         const CancelToken& cancel,
                                         const std::function<void()>& gate_passed) {
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

  Result<CommandGate> gated = approval_.ApproveCommand(call, argv, cwd, escalation, cancel);
  gate_passed();
  ASSIGN_OR_RETURN(CommandGate gate, std::move(gated));
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
    ASSIGN_OR_RETURN(const ReviewOutcome::Action retry,
                     approval_.RetryWithoutSandbox(call, argv, cwd, input, *result, cancel));
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
  auto args = DecodeUpdatePlanArgs(Json::parse(arguments, nullptr, false));
  if (!args.ok()) return reply(args.status().message());
  plan_ = args->plan;
  ToolActivity activity;
  activity.call_id = call.call_id;
  activity.tool = "update_plan";
  activity.plan = args->plan;
  activity.explanation = args->explanation;
  activity.success = true;
  observer_.OnToolStarted(activity);
  observer_.OnToolCompleted(activity);
  return reply("Plan updated");
}

Result<ToolOutcome> ToolRouter::RunRequestUserInput(const Item& call, const Json& args,
                                                    const CancelToken& cancel) {
  ToolOutcome outcome;
  auto questions = DecodeRequestUserInputArgs(args);
  if (!questions.ok()) {
    outcome.output = CallOutputFor(call.kind, call.call_id, questions.status().message());
    return outcome;
  }
  std::vector<UserInputAnswer> answers;
  if (Approver* approver = approval_.approver(); approver != nullptr && !questions->empty()) {
    ASSIGN_OR_RETURN(auto asked, approver->AskUserInput(*questions, cancel));
    if (cancel.cancelled()) return CancelledError("interrupted");
    if (asked) answers = std::move(*asked);
  }
  outcome.output = CallOutputFor(call.kind, call.call_id, UserInputAnswersJson(answers));
  return outcome;
}

Result<ToolOutcome> ToolRouter::RunAgentTool(const Item& call, const std::string& name,
                                             const std::string& arguments,
                                             const CancelToken& cancel) {
  ToolActivity activity;
  activity.call_id = call.call_id;
  activity.tool = "collab";
  activity.command = name;
  auto fields = [&](const AgentCallReport& r) {
    Json receivers = Json::array();
    Json states = Json::object();
    for (const auto& a : r.agents) {
      receivers.push_back(a.id);
      states[a.id] = Json{{"status", a.status}, {"message", a.message ? Json(*a.message) : Json()}};
    }
    return Dump(Json{{"tool", r.tool.empty() ? name : r.tool},
                     {"sender_thread_id", goals_.thread_id()},
                     {"receiver_thread_ids", std::move(receivers)},
                     {"prompt", r.prompt ? Json(*r.prompt) : Json()},
                     {"agents_states", std::move(states)}});
  };
  AgentCallReport report;
  report.tool = name == "wait_agent" ? "wait" : name;
  activity.collab = fields(report);
  observer_.OnToolStarted(activity);
  Result<std::string> out = agents_->Call(goals_.thread_id(), name, arguments, cancel, &report);
  if (!out.ok() && out.status().code() == StatusCode::kCancelled) return out.status();
  activity.success = out.ok();
  activity.output = out.ok() ? *out : out.status().message();
  activity.collab = fields(report);
  observer_.OnToolCompleted(activity);
  ToolOutcome outcome;
  outcome.output = CallOutputFor(call.kind, call.call_id, activity.output);
  return outcome;
}

Result<ToolOutcome> ToolRouter::RunGoalTool(const Item& call, const std::string& name,
                                            const std::string& arguments) {
  Result<std::string> text = [&]() -> Result<std::string> {
    if (name == "get_goal") return goals_.Output();
    if (name == "create_goal") {
      ASSIGN_OR_RETURN(CreateGoalArgs args, DecodeCreateGoalArgs(arguments));
      return goals_.Create(std::move(args.objective), args.token_budget);
    }
    ASSIGN_OR_RETURN(std::string status, DecodeUpdateGoalStatus(arguments));
    return goals_.Update(status);
  }();
  ToolOutcome outcome;
  outcome.output =
      CallOutputFor(call.kind, call.call_id, text.ok() ? *text : text.status().message());
  return outcome;
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
      !approval_.approvals().Find(key)) {
    ApprovalPlan plan;
    plan.action = ApprovalPlan::Action::kAsk;
    plan.sandbox = SandboxChoice::kUnsandboxed;
    plan.reason = "MCP tool '" + tool.tool + "' of server '" + tool.server +
                  "' (MCP servers run outside the sandbox) with arguments " +
                  activity.mcp_arguments;
    ReviewOutcome review = approval_.Ask(call, key, config_.cwd, plan, "", cancel);
    if (cancel.cancelled()) return CancelledError("interrupted");
    if (review.action != ReviewOutcome::Action::kRun) {
      observer_.OnToolStarted(activity);
      ToolOutcome denied =
          fail(approval_.can_ask()
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
    ReviewOutcome review = approval_.Ask(call, argv, options.cwd, plan, "", CancelToken());
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
