// ToolRouter's unified exec tools (see core/unified_exec.h): exec_command and
// write_stdin, through the same approval gate as `shell`.
#include <chrono>
#include <nlohmann/json.hpp>

#include "base/shell.h"
#include "core/tool_args.h"
#include "core/tool_router.h"
#include "core/unified_exec.h"
#include "core/view_image.h"

namespace codex::core {
namespace {

using Json = nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

Result<ToolOutcome> ToolRouter::RunExecCommand(const Item& call, const std::string& arguments,
                                               const CancelToken& cancel,
                                               const std::function<void()>& gate_passed) {
  ToolOutcome outcome;
  auto reply = [&](const std::string& text, bool stop = false) {
    outcome.output = CallOutputFor(call.kind, call.call_id, text);
    outcome.stop_turn = stop;
    return outcome;
  };
  auto args =
      DecodeExecCommandArgs(Json::parse(arguments, nullptr, false), config_.approval_policy);
  if (!args.ok()) return reply(args.status().message());
  const std::string& cmd = args->cmd;
  const std::string& workdir = args->workdir;
  const std::string& shell = args->shell;
  const bool login = args->login;
  const bool tty = args->tty;
  const int64_t yield_ms = args->yield_ms;
  const int64_t max_tokens = args->max_tokens;
  const EscalationRequest& escalation = args->escalation;
  const std::vector<std::string> argv = {shell, login ? "-lc" : "-c", cmd};
  const std::string cwd =
      workdir.empty() ? config_.cwd : (workdir[0] == '/' ? workdir : config_.cwd + "/" + workdir);

  ToolActivity activity;
  activity.call_id = call.call_id;
  activity.tool = "shell";
  activity.command = ShellJoin(argv);
  Result<CommandGate> gated = approval_.ApproveCommand(call, argv, cwd, escalation, cancel);
  gate_passed();
  ASSIGN_OR_RETURN(CommandGate gate, std::move(gated));
  if (!gate.run) {
    activity.output = gate.refusal;
    activity.success = false;
    observer_.OnToolStarted(activity);
    observer_.OnToolCompleted(activity);
    // A user's no is Codex's bare sentence; any other refusal says which tool.
    return reply(gate.rejected_by_user ? gate.refusal : "exec_command: " + gate.refusal, gate.stop);
  }
  CommandSpec spec = CommandSpecFor(argv, cwd, gate.choice);
  if (shell_snapshot_) shell_snapshot_->Prepare(spec, cancel);
  observer_.OnToolStarted(activity);
  auto start = Clock::now();
  auto process = runner_.Start(spec, tty);
  if (!process.ok()) {
    activity.output = process.status().message();
    activity.exit_code = -1;
    activity.success = false;
    observer_.OnToolCompleted(activity);
    return reply("exec_command failed: " + process.status().message());
  }
  // The output as it arrives, for a live view (as `shell`'s on_output).
  const auto live = [this, id = call.call_id](std::string_view chunk) {
    observer_.OnToolOutput(id, chunk);
  };
  LiveProcess::Chunk chunk = (*process)->Collect(yield_ms, kExecCollectCapBytes, cancel, live);
  if (cancel.cancelled()) return CancelledError("interrupted");
  // on-failure, as for shell: a command the sandbox stopped within its first
  // yield may be rerun without it once the user agrees. A command still
  // running is not judged.
  if (chunk.exited && chunk.lost.empty() && gate.choice == SandboxChoice::kSandboxed &&
      spec.sandbox.mode != SandboxMode::kDangerFullAccess) {
    CommandResult failed;
    failed.exit_code = chunk.exit_code;
    failed.output = chunk.output;
    ASSIGN_OR_RETURN(const ReviewOutcome::Action retry,
                     approval_.RetryWithoutSandbox(call, argv, cwd, gate.input, failed, cancel));
    if (cancel.cancelled()) return CancelledError("interrupted");
    if (retry == ReviewOutcome::Action::kAbortTurn) outcome.stop_turn = true;
    if (retry == ReviewOutcome::Action::kRun) {
      spec.sandbox.mode = SandboxMode::kDangerFullAccess;
      start = Clock::now();
      process = runner_.Start(spec, tty);
      if (!process.ok()) {
        activity.output = process.status().message();
        activity.exit_code = -1;
        activity.success = false;
        observer_.OnToolCompleted(activity);
        return reply("exec_command failed: " + process.status().message());
      }
      chunk = (*process)->Collect(yield_ms, kExecCollectCapBytes, cancel, live);
      if (cancel.cancelled()) return CancelledError("interrupted");
    }
  }
  if (!chunk.lost.empty()) {
    // The server (or the command's keeper) died: no exit status to report,
    // and nothing to rerun outside the sandbox.
    activity.output = chunk.output;
    activity.exit_code = -1;
    activity.success = false;
    observer_.OnToolCompleted(activity);
    return reply(FormatLostOutput("exec_command", chunk, max_tokens), outcome.stop_turn);
  }
  int64_t session_id = -1;
  if (!chunk.exited) session_id = exec_sessions_.Add(std::move(*process), cmd);
  activity.output = chunk.output;
  activity.exec_session = session_id;
  // A command still running has no exit code yet (found: `exec --json`
  // reported exit_code 0, "completed", for a server still running).
  if (chunk.exited) activity.exit_code = chunk.exit_code;
  activity.success = !chunk.exited || chunk.exit_code == 0;
  observer_.OnToolCompleted(activity);
  return reply(FormatExecOutput(chunk, SecondsSince(start), session_id, max_tokens),
               outcome.stop_turn);
}

Result<ToolOutcome> ToolRouter::RunWriteStdin(const Item& call, const std::string& arguments,
                                              const CancelToken& cancel) {
  ToolOutcome outcome;
  auto reply = [&](const std::string& text) {
    outcome.output = CallOutputFor(call.kind, call.call_id, text);
    return outcome;
  };
  auto args = DecodeWriteStdinArgs(Json::parse(arguments, nullptr, false));
  if (!args.ok()) return reply(args.status().message());
  const int64_t id = args->session_id;
  const std::string& chars = args->chars;
  const int64_t yield_ms = args->yield_ms;
  const int64_t max_tokens = args->max_tokens;
  LiveProcess* process = exec_sessions_.Find(id);
  if (process == nullptr) {
    // Codex 0.169's words.
    return reply("write_stdin failed: Unknown process id " + std::to_string(id));
  }
  const auto start = Clock::now();
  if (!chars.empty()) {
    if (Status written = process->Write(chars); !written.ok()) {
      return reply("write_stdin failed: " + written.message());
    }
  }
  LiveProcess::Chunk chunk = process->Collect(yield_ms, kExecCollectCapBytes, cancel, nullptr);
  if (cancel.cancelled()) return CancelledError("interrupted");
  const std::string text =
      !chunk.lost.empty()
          ? FormatLostOutput("write_stdin", chunk, max_tokens)
          : FormatExecOutput(chunk, SecondsSince(start), chunk.exited ? -1 : id, max_tokens);
  if (chunk.exited) exec_sessions_.Remove(id);
  return reply(text);
}

Result<ToolOutcome> ToolRouter::RunViewImage(const Item& call, const std::string& arguments) {
  ToolOutcome outcome;
  auto path = DecodeViewImagePath(Json::parse(arguments, nullptr, false));
  std::string output_json;
  if (!path.ok()) {
    output_json = Json(path.status().message()).dump();
  } else {
    auto image = ViewImageOutputJson(*path, config_.cwd);
    output_json = image.ok() ? *image : Json(image.status().message()).dump();
  }
  Item item;
  item.kind = ItemKind::kFunctionCallOutput;
  item.call_id = call.call_id;
  item.body = R"({"type":"function_call_output","call_id":)" + Json(call.call_id).dump() +
              R"(,"output":)" + output_json + "}";
  outcome.output = std::move(item);
  return outcome;
}

std::vector<OpenProcess> ToolRouter::OpenProcesses() const {
  std::vector<OpenProcess> out;
  for (auto& [id, command] : exec_sessions_.List()) {
    out.push_back(OpenProcess{std::to_string(id), std::move(command)});
  }
  return out;
}

}  // namespace codex::core
