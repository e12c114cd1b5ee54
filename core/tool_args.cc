#include "core/tool_args.h"

#include <algorithm>
#include <cstdlib>

#include "base/json.h"
#include "core/unified_exec.h"

namespace codex::core {

namespace {

using Json = nlohmann::ordered_json;

int64_t ClampYield(int64_t yield_ms) { return std::clamp(yield_ms, kMinYieldMs, kMaxYieldMs); }

int64_t IntArg(const Json& args, const char* name, int64_t fallback) {
  auto it = args.find(name);
  return it != args.end() && it->is_number() ? it->get<int64_t>() : fallback;
}

}  // namespace

std::string DefaultShell() {
  const char* shell = std::getenv("SHELL");
  return shell != nullptr && *shell == '/' ? shell : "/bin/bash";
}

Result<Json> DecodeArgumentsObject(const std::string& name, const std::string& arguments) {
  Json args = Json::parse(arguments, nullptr, false);
  if (!args.is_object()) {
    return InvalidArgumentError("failed to parse the arguments of '" + name + "' as a JSON object");
  }
  return args;
}

Result<ShellArgs> DecodeShellArgs(const Json& args, int64_t default_timeout_ms) {
  auto cmd = args.find("command");
  if (cmd == args.end() || !cmd->is_array() || cmd->empty()) {
    return InvalidArgumentError("shell: `command` must be a non-empty array of strings");
  }
  ShellArgs out;
  for (const auto& a : *cmd) {
    if (!a.is_string()) return InvalidArgumentError("shell: `command` must be an array of strings");
    out.argv.push_back(a.get<std::string>());
  }
  if (auto w = args.find("workdir"); w != args.end() && w->is_string()) out.workdir = *w;
  out.timeout_ms = default_timeout_ms;
  if (auto t = args.find("timeout_ms"); t != args.end() && t->is_number()) {
    out.timeout_ms = t->get<int64_t>();
  }
  return out;
}

ShellArgs DecodeLocalShellAction(const Json& body, int64_t default_timeout_ms) {
  const Json& action = body.value("action", Json::object());
  ShellArgs out;
  for (const auto& a : action.value("command", Json::array())) {
    if (a.is_string()) out.argv.push_back(a.get<std::string>());
  }
  out.workdir = StringField(action, "working_directory");
  out.timeout_ms = action.value("timeout_ms", default_timeout_ms);
  return out;
}

Result<std::string> DecodeApplyPatchInput(const Json& args) {
  if (!args.contains("input") || !args["input"].is_string()) {
    return InvalidArgumentError("apply_patch: `input` must be the patch text");
  }
  return args["input"].get<std::string>();
}

Result<UpdatePlanArgs> DecodeUpdatePlanArgs(const Json& args) {
  if (!args.is_object() || !args.contains("plan") || !args["plan"].is_array()) {
    return InvalidArgumentError("update_plan: `plan` must be an array of {step, status}");
  }
  UpdatePlanArgs out;
  int in_progress = 0;
  for (const auto& s : args["plan"]) {
    if (!s.is_object() || !s.value("step", Json()).is_string() ||
        !s.value("status", Json()).is_string()) {
      return InvalidArgumentError("update_plan: every step needs a string `step` and `status`");
    }
    PlanStep step{s["step"].get<std::string>(), s["status"].get<std::string>()};
    if (step.status != "pending" && step.status != "in_progress" && step.status != "completed") {
      return InvalidArgumentError("update_plan: status '" + step.status +
                                  "' is not one of pending, in_progress, completed");
    }
    if (step.status == "in_progress") ++in_progress;
    out.plan.push_back(std::move(step));
  }
  if (in_progress > 1) {
    return InvalidArgumentError("update_plan: at most one step may be in_progress");
  }
  out.explanation = StringField(args, "explanation");
  return out;
}

Result<ExecCommandArgs> DecodeExecCommandArgs(const Json& args, ApprovalPolicy policy) {
  if (!args.is_object() || !args.contains("cmd") || !args["cmd"].is_string()) {
    return InvalidArgumentError("exec_command: `cmd` must be the command to run, as a string");
  }
  ExecCommandArgs out;
  out.cmd = args["cmd"].get<std::string>();
  out.workdir = args.value("workdir", Json("")).is_string() ? args.value("workdir", std::string())
                                                            : std::string();
  out.shell = args.contains("shell") && args["shell"].is_string() ? args["shell"].get<std::string>()
                                                                  : DefaultShell();
  out.login = !args.contains("login") || !args["login"].is_boolean() || args["login"].get<bool>();
  out.tty = args.contains("tty") && args["tty"].is_boolean() && args["tty"].get<bool>();
  out.yield_ms = ClampYield(IntArg(args, "yield_time_ms", kExecDefaultYieldMs));
  out.max_tokens = IntArg(args, "max_output_tokens", kDefaultMaxOutputTokens);
  auto escalation = ParseEscalation(args, policy);
  if (!escalation.ok()) {
    return InvalidArgumentError("exec_command: " + escalation.status().message());
  }
  out.escalation = *escalation;
  return out;
}

Result<WriteStdinArgs> DecodeWriteStdinArgs(const Json& args) {
  if (!args.is_object() || !args.contains("session_id") || !args["session_id"].is_number()) {
    return InvalidArgumentError(
        "write_stdin: `session_id` must be the number exec_command returned");
  }
  WriteStdinArgs out;
  out.session_id = args["session_id"].get<int64_t>();
  out.chars = args.contains("chars") && args["chars"].is_string() ? args["chars"].get<std::string>()
                                                                  : std::string();
  out.yield_ms = ClampYield(IntArg(args, "yield_time_ms", kWriteStdinDefaultYieldMs));
  out.max_tokens = IntArg(args, "max_output_tokens", kDefaultMaxOutputTokens);
  return out;
}

Result<std::string> DecodeViewImagePath(const Json& args) {
  if (!args.is_object() || !args.contains("path") || !args["path"].is_string()) {
    return InvalidArgumentError("view_image: `path` must be the image's path, as a string");
  }
  return args["path"].get<std::string>();
}

Result<std::vector<UserInputQuestion>> DecodeRequestUserInputArgs(const Json& args) {
  auto bad = [](const std::string& what) {
    return InvalidArgumentError("failed to parse function arguments: request_user_input: " + what);
  };
  // A string field of `j` named `key`: required ones must be present.
  auto text = [](const Json& j, const char* key, std::string* out) {
    auto it = j.find(key);
    if (it == j.end() || !it->is_string()) return false;
    *out = it->get<std::string>();
    return true;
  };
  if (!args.is_object() || !args.contains("questions") || !args["questions"].is_array()) {
    return bad("`questions` must be an array of questions");
  }
  std::vector<UserInputQuestion> questions;
  bool missing_options = false;
  for (const Json& q : args["questions"]) {
    const std::string at = "questions[" + std::to_string(questions.size()) + "]";
    if (!q.is_object()) return bad(at + " must be an object");
    UserInputQuestion question;
    if (!text(q, "id", &question.id)) return bad(at + ".id must be a string");
    if (!text(q, "header", &question.header)) return bad(at + ".header must be a string");
    if (!text(q, "question", &question.question)) return bad(at + ".question must be a string");
    auto options = q.find("options");
    if (options != q.end() && !options->is_null()) {
      if (!options->is_array()) return bad(at + ".options must be an array");
      for (const Json& o : *options) {
        UserInputOption option;
        const std::string oat = at + ".options[" + std::to_string(question.options.size()) + "]";
        if (!o.is_object() || !text(o, "label", &option.label) ||
            !text(o, "description", &option.description)) {
          return bad(oat + " must have a string label and description");
        }
        question.options.push_back(std::move(option));
      }
    }
    if (question.options.empty()) missing_options = true;
    questions.push_back(std::move(question));
  }
  if (missing_options) {
    return InvalidArgumentError("request_user_input requires non-empty options for every question");
  }
  return questions;
}

}  // namespace codex::core

namespace codex::core {

namespace {

// serde_json's position suffix: " at line L column C" for the byte `at`
// (0-based) of `text`, C counted from 1 as serde counts.
std::string SerdePosition(const std::string& text, size_t at) {
  int64_t line = 1;
  int64_t column = 0;
  for (size_t i = 0; i <= at && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 0;
    } else {
      ++column;
    }
  }
  return " at line " + std::to_string(line) + " column " + std::to_string(column);
}

// Where serde reports a missing field: the object's closing brace.
size_t ObjectEnd(const std::string& text) {
  const size_t end = text.find_last_not_of(" \t\r\n");
  return end == std::string::npos ? 0 : end;
}

// The closing quote of the top-level string value of `key` in `text`, or
// ObjectEnd when it cannot be found.
size_t StringValueEnd(const std::string& text, const std::string& key) {
  const std::string quoted = "\"" + key + "\"";
  for (size_t at = text.find(quoted); at != std::string::npos;
       at = text.find(quoted, at + quoted.size())) {
    size_t i = text.find_first_not_of(" \t\r\n", at + quoted.size());
    if (i == std::string::npos || text[i] != ':') continue;
    i = text.find_first_not_of(" \t\r\n", i + 1);
    if (i == std::string::npos || text[i] != '"') continue;
    for (++i; i < text.size(); ++i) {
      if (text[i] == '\\') {
        ++i;
      } else if (text[i] == '"') {
        return i;
      }
    }
  }
  return ObjectEnd(text);
}

std::string SerdeTypeName(const Json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return std::string("boolean `") + (v.get<bool>() ? "true" : "false") + "`";
  if (v.is_number_integer()) return "integer `" + v.dump() + "`";
  if (v.is_number()) return "floating point `" + v.dump() + "`";
  if (v.is_string()) return "string " + v.dump();
  if (v.is_array()) return "sequence";
  return "map";
}

}  // namespace

Result<CreateGoalArgs> DecodeCreateGoalArgs(const std::string& arguments) {
  ASSIGN_OR_RETURN(Json args, DecodeArgumentsObject("create_goal", arguments));
  const size_t end = ObjectEnd(arguments);
  auto objective = args.find("objective");
  if (objective == args.end()) {
    return InvalidArgumentError("missing field `objective`" + SerdePosition(arguments, end));
  }
  if (!objective->is_string()) {
    return InvalidArgumentError("invalid type: " + SerdeTypeName(*objective) +
                                ", expected a string" + SerdePosition(arguments, end));
  }
  CreateGoalArgs out;
  out.objective = objective->get<std::string>();
  auto budget = args.find("token_budget");
  if (budget != args.end() && !budget->is_null()) {
    if (!budget->is_number_integer()) {
      return InvalidArgumentError("invalid type: " + SerdeTypeName(*budget) + ", expected i64" +
                                  SerdePosition(arguments, end));
    }
    out.token_budget = budget->get<int64_t>();
  }
  return out;
}

Result<std::string> DecodeUpdateGoalStatus(const std::string& arguments) {
  ASSIGN_OR_RETURN(Json args, DecodeArgumentsObject("update_goal", arguments));
  auto status = args.find("status");
  if (status == args.end()) {
    return InvalidArgumentError("missing field `status`" +
                                SerdePosition(arguments, ObjectEnd(arguments)));
  }
  if (!status->is_string()) {
    return InvalidArgumentError("invalid type: " + SerdeTypeName(*status) + ", expected a string" +
                                SerdePosition(arguments, ObjectEnd(arguments)));
  }
  const std::string value = status->get<std::string>();
  for (const char* known :
       {"active", "paused", "blocked", "usageLimited", "budgetLimited", "complete"}) {
    if (value == known) return value;
  }
  return InvalidArgumentError("unknown variant `" + value +
                              "`, expected one of `active`, `paused`, `blocked`, "
                              "`usageLimited`, `budgetLimited`, `complete`" +
                              SerdePosition(arguments, StringValueEnd(arguments, "status")));
}

}  // namespace codex::core
