// The arguments of the built-in tools, decoded from the JSON the model sent
// into typed structs. A malformed call is not a failed turn: each decoder's
// kInvalidArgument message is the one line the model gets back as the call's
// output (as Codex answers it), naming the tool and what was wrong
// ("shell: `command` must be a non-empty array of strings"). Fields the
// model may leave out take the defaults Codex 0.169 uses. Pure functions
// (exec_command's default shell reads $SHELL).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "core/approval.h"
#include "core/turn_observer.h"
#include "core/user_input.h"

namespace codex::core {

// A function call's `arguments` text as a JSON object; kInvalidArgument
// "failed to parse the arguments of 'NAME' as a JSON object" otherwise.
Result<nlohmann::ordered_json> DecodeArgumentsObject(const std::string& name,
                                                     const std::string& arguments);

// `shell` / `container.exec` (and a local_shell_call's action): the argv, the
// working directory ("" = the session's cwd) and the timeout.
struct ShellArgs {
  std::vector<std::string> argv;
  std::string workdir;
  int64_t timeout_ms = 0;
};
// `timeout_ms` defaults to `default_timeout_ms`. The escalation fields are
// read separately (ParseEscalation, core/approval.h), after an apply_patch
// sent through the shell was recognised.
Result<ShellArgs> DecodeShellArgs(const nlohmann::ordered_json& args, int64_t default_timeout_ms);
// A local_shell_call item's body: {"action":{"command":[...],
// "working_directory", "timeout_ms"}}; non-string argv entries are skipped.
ShellArgs DecodeLocalShellAction(const nlohmann::ordered_json& body, int64_t default_timeout_ms);

// The JSON-function `apply_patch`: its `input`, the patch text.
Result<std::string> DecodeApplyPatchInput(const nlohmann::ordered_json& args);

// `update_plan`: the steps (each pending, in_progress or completed, at most
// one in_progress) and the optional explanation.
struct UpdatePlanArgs {
  std::vector<PlanStep> plan;
  std::string explanation;
};
Result<UpdatePlanArgs> DecodeUpdatePlanArgs(const nlohmann::ordered_json& args);

// The shell a command runs in when the model names none: $SHELL when
// absolute, else /bin/bash.
std::string DefaultShell();

// Unified exec's `exec_command` (core/unified_exec.h): `yield_ms` clamped to
// [kMinYieldMs, kMaxYieldMs]; `shell` defaults to $SHELL when absolute, else
// /bin/bash; `login` to true; the escalation under `policy` as
// ParseEscalation reads it.
struct ExecCommandArgs {
  std::string cmd;
  std::string workdir;
  std::string shell;
  bool login = true;
  bool tty = false;
  int64_t yield_ms = 0;
  int64_t max_tokens = 0;
  EscalationRequest escalation;
};
Result<ExecCommandArgs> DecodeExecCommandArgs(const nlohmann::ordered_json& args,
                                              ApprovalPolicy policy);

// Unified exec's `write_stdin`: the session, the characters ("" = only poll)
// and the yield, clamped as exec_command's.
struct WriteStdinArgs {
  int64_t session_id = 0;
  std::string chars;
  int64_t yield_ms = 0;
  int64_t max_tokens = 0;
};
Result<WriteStdinArgs> DecodeWriteStdinArgs(const nlohmann::ordered_json& args);

// `create_goal` (core/goals.h): the objective and the optional token budget.
// Decoded from the arguments text as Codex's serde does, with its messages
// ("missing field `objective` at line 1 column 2"); unknown fields are ignored.
struct CreateGoalArgs {
  std::string objective;
  std::optional<int64_t> token_budget;
};
Result<CreateGoalArgs> DecodeCreateGoalArgs(const std::string& arguments);
// `update_goal`: the wire status, one of Codex's six (active, paused, blocked,
// usageLimited, budgetLimited, complete); otherwise serde's "unknown variant
// `X`, expected one of ... at line L column C" (C: the value's closing quote).
Result<std::string> DecodeUpdateGoalStatus(const std::string& arguments);

// `view_image`: the image's path (relative to the session's cwd or absolute).
Result<std::string> DecodeViewImagePath(const nlohmann::ordered_json& args);

// `request_user_input` (core/user_input.h): its questions, each with an id,
// a header, the question and its options (label + description). A shape
// error reads "failed to parse function arguments: …" (Codex's prefix); a
// question without options Codex's "request_user_input requires non-empty
// options for every question". No questions is no error (the answer is empty).
Result<std::vector<UserInputQuestion>> DecodeRequestUserInputArgs(
    const nlohmann::ordered_json& args);

}  // namespace codex::core
