// ToolRouter: the dispatch and execution of the model's tool calls. What is
// offered on the wire is core/tool_schemas.h, how each call's arguments are
// decoded core/tool_args.h, and whether a command may run (asking the user)
// core/approval_flow.h; the router runs what they let through: `shell` (also
// `container.exec` and local_shell_call; executed whichever command tool is
// offered, so a recorded session resumes under either), unified exec's
// `exec_command` and `write_stdin` (core/tool_router_exec.cc, core/unified_exec.h),
// `view_image`, `apply_patch` (and one the model runs through `shell`),
// `update_plan`, `request_user_input`, the goal tools (core/goals.h), the sub-agent tools
// (core/agent_tools.h), and the MCP tools. Every
// call yields exactly one output item, also when the tool fails or is unknown, so the transcript
// stays valid. Borrows the runner, approver and observer for its lifetime.
//
// Threads: the calls of one response that RunsInParallel() (Codex 0.169's
// parallel-capable tools) may be dispatched together from several threads,
// with the runner thread-safe (core/sandboxed_runner.h is); every other call
// and method only from the session's thread while no call runs (the caller's
// rule, core/conversation.cc). What parallel calls share is guarded: the
// approval flow (one question at a time), the observer (SerializedObserver:
// one callback at a time), the unified exec sessions.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "core/agent_tools.h"
#include "core/approval.h"
#include "core/approval_flow.h"
#include "core/cancel.h"
#include "core/command_runner.h"
#include "core/compactor.h"
#include "core/config.h"
#include "core/goals.h"
#include "core/item.h"
#include "core/mcp_tools.h"
#include "core/shell_snapshot.h"
#include "core/tool_schemas.h"
#include "core/turn_observer.h"
#include "core/unified_exec.h"

namespace codex::core {

// What a call produced: the output item for the model, and whether the user
// asked to stop the turn (deny-and-stop).
struct ToolOutcome {
  Item output;
  bool stop_turn = false;
};

class ToolRouter {
 public:
  // `approver` answers approval requests; null = deny every request (the
  // model is told). All references are borrowed for the router's lifetime.
  // `shell_snapshot`: the session's (SessionShellSnapshot; null = none),
  // owned from here on.
  ToolRouter(const Config& config, CommandRunner& runner, Approver* approver,
             TurnObserver& observer, std::unique_ptr<ShellSnapshot> shell_snapshot = nullptr);

  // The `tools` array of every request: the built-in tools, then the MCP
  // tools in McpTools order. Changes only in BeginTurn.
  const std::string& ToolsJson() const { return tools_json_; }

  // The sub-agents the multi_agent_v1 calls act on (borrowed; null = none: the
  // calls are unsupported). Offered only with config.multi_agent.
  void set_agents(AgentPool* agents) { agents_ = agents; }
  // The <subagent_notification> messages to commit before the next request.
  std::vector<std::string> TakeAgentNotifications() {
    return agents_ != nullptr ? agents_->TakeNotifications(goals_.thread_id())
                              : std::vector<std::string>{};
  }

  // Offers the tools of `mcp` (borrowed; null = none) from the next BeginTurn.
  void set_mcp_tools(McpTools* mcp) { mcp_ = mcp; }
  // Called when a turn starts: takes the MCP tool list for this turn, so a
  // list change reported mid-turn shows in the next turn's requests only, and
  // lets the user be asked again after a stop (ApprovalFlow::BeginTurn).
  void BeginTurn();

  // Runs the call `call` (a function_call, custom_tool_call or
  // local_shell_call item). kCancelled when `cancel` fired while it ran; the
  // caller then records an "aborted" output. `gate_passed` (may be empty) is
  // called once, on the calling thread, when the call is past its approval
  // gate (asked, refused or not needing it) and before it runs: the caller
  // starts the next call of a parallel group then, so questions come one at
  // a time in call order while the commands run together.
  Result<ToolOutcome> Dispatch(const Item& call, const CancelToken& cancel,
                               const std::function<void()>& gate_passed = {});

  // Whether `call` may run together with the other such calls of its
  // response (Codex 0.169's parallel-capable tools): the command tools
  // (shell, container.exec, shell_command, local_shell_call, exec_command),
  // view_image, the MCP resource tools, read_file / grep_files / list_dir.
  // Not: write_stdin, update_plan, apply_patch (also when sent through
  // shell: it changes files through the patch path), request_user_input,
  // MCP tool calls, the agent and goal tools; such a call waits for the
  // running ones and runs alone.
  bool RunsInParallel(const Item& call) const;

  // The plan as last set by update_plan.
  const std::vector<PlanStep>& plan() const { return plan_; }

  // The thread goal the goal tools read and change, with its budget
  // accounting (core/goals.h). Conversation resets it when it creates or
  // resumes a session, feeds it each response's usage and accounts after a
  // request's calls; it records each change as a "goal" event.
  GoalTracker& goals() { return goals_; }
  const std::optional<ThreadGoal>& goal() const { return goals_.goal(); }

  // The processes still running between calls (unified exec sessions), for
  // the execution frontier a compaction keeps.
  std::vector<OpenProcess> OpenProcesses() const;

 private:
  // The spec of a command the gate let through (no timeout set).
  CommandSpec CommandSpecFor(const std::vector<std::string>& argv, const std::string& cwd,
                             SandboxChoice choice) const;
  // Unified exec (core/tool_router_exec.cc).
  Result<ToolOutcome> RunExecCommand(const Item& call, const std::string& arguments,
                                     const CancelToken& cancel,
                                     const std::function<void()>& gate_passed);
  Result<ToolOutcome> RunWriteStdin(const Item& call, const std::string& arguments,
                                    const CancelToken& cancel);
  // view_image (core/view_image.h): the image as an input_image output part.
  Result<ToolOutcome> RunViewImage(const Item& call, const std::string& arguments);

  Result<ToolOutcome> RunShell(const Item& call, std::vector<std::string> argv, std::string workdir,
                               int64_t timeout_ms, const EscalationRequest& escalation,
                               const CancelToken& cancel, const std::function<void()>& gate_passed);
  // Dispatch without its promise to call `gate_passed`.
  Result<ToolOutcome> DispatchCall(const Item& call, const CancelToken& cancel,
                                   const std::function<void()>& gate_passed);
  Result<ToolOutcome> RunApplyPatch(const Item& call, const std::string& patch,
                                    const std::string& workdir);
  Result<ToolOutcome> RunUpdatePlan(const Item& call, const std::string& arguments);
  // request_user_input (core/user_input.h): the approver asks the user.
  Result<ToolOutcome> RunRequestUserInput(const Item& call, const nlohmann::ordered_json& args,
                                          const CancelToken& cancel);
  // get_goal, create_goal, update_goal (core/goals.h).
  Result<ToolOutcome> RunGoalTool(const Item& call, const std::string& name,
                                  const std::string& arguments);
  // multi_agent_v1's functions (core/agent_tools.h), reported as Codex's collab_tool_call.
  Result<ToolOutcome> RunAgentTool(const Item& call, const std::string& name,
                                   const std::string& arguments, const CancelToken& cancel);
  Result<ToolOutcome> RunMcpResource(const Item& call, const std::string& name,
                                     const std::string& arguments, const CancelToken& cancel);
  Result<ToolOutcome> RunMcp(const Item& call, const McpToolInfo& tool,
                             const std::string& arguments, const CancelToken& cancel);

  const Config& config_;
  CommandRunner& runner_;
  SerializedObserver observer_;  // the caller's, one callback at a time
  ApprovalFlow approval_;        // the gate of every command, patch and MCP call
  std::string tools_json_;
  std::string builtin_tools_json_;  // the built-in tools' array
  McpTools* mcp_ = nullptr;
  AgentPool* agents_ = nullptr;
  std::vector<McpToolInfo> mcp_tools_;  // this turn's, in offered order
  std::vector<PlanStep> plan_;
  GoalTracker goals_;
  ExecSessions exec_sessions_;  // unified exec's live processes, killed with the router
  // features.shell_snapshot: login commands start from it (null when off).
  std::unique_ptr<ShellSnapshot> shell_snapshot_;
};

// The session's shell snapshot (features.shell_snapshot, with a CODEX_HOME),
// capturing through `runner` (borrowed for its lifetime); null when off.
std::unique_ptr<ShellSnapshot> SessionShellSnapshot(const Config& config, CommandRunner& runner);

// A session that may run commands starts (as early as its configuration is
// known, before its store opens and its first request goes): what its first
// command needs starts beside that work, as Codex does — `runner`'s sandbox
// server for the session's policy (CommandRunner::Warm) and, when the default
// shell is bash, `snapshot`'s capture (may be null). Ending the session
// first (destroying `snapshot`, then `runner`) cancels them: nothing is left.
void StartSessionWork(const Config& config, CommandRunner& runner, ShellSnapshot* snapshot);

// Formats a finished command for the model: {"output":…,"metadata":{exit_code,duration_seconds}}
// with the output cut to `max_bytes` (head + tail, with a marker).
inline constexpr size_t kModelOutputMaxBytes = 10 * 1024;
std::string FormatShellOutput(const CommandResult& result, size_t max_bytes = kModelOutputMaxBytes);

// How much of a tool's output the model gets: Codex's tool_output_token_limit
// (about 4 bytes a token), else kModelOutputMaxBytes.
size_t ModelOutputMaxBytes(const Config& config);

// Shell-quoting argv for display ("bash -lc 'echo hi'") is base/shell.h's ShellJoin.

}  // namespace codex::core
