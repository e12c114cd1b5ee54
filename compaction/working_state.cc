#include "compaction/working_state.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "base/json.h"
#include "base/shell.h"
#include "base/strings.h"
#include "compaction/shell_edits.h"
#include "core/apply_patch.h"
#include "core/transcript.h"

namespace codex::compaction {

namespace {

using Json = nlohmann::json;

constexpr std::string_view kPreamble =
    "Kept by codex across the compaction, read from the stored conversation (not a summary). "
    "Answered tasks are done: do not redo them.";
constexpr std::string_view kTasksLine = "Tasks (oldest first):";
constexpr std::string_view kAnswerLine = "  answer: ";
constexpr std::string_view kPlanLine = "Current plan:";
constexpr std::string_view kFilesLine = "Files touched (last action):";
constexpr std::string_view kCommandsLine = "Last commands (oldest first):";
constexpr std::string_view kProcessesLine = "Open processes:";
constexpr std::string_view kEndTag = "</working_state>";
constexpr std::string_view kEllipsis = "\xE2\x80\xA6";  // U+2026

constexpr std::string_view kAnswered = "answered";
constexpr std::string_view kInProgress = "in progress";
constexpr std::string_view kInterrupted = "interrupted";
// A task compacted by a codex that kept no frontier (a session from before
// it): its answer went into the summary.
constexpr std::string_view kUnknown = "status unknown";

enum class Section { kNone, kTasks, kPlan, kFiles, kCommands, kProcesses };

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// One line of at most kMaxLineBytes: line breaks and tabs become spaces, a
// longer text is cut on a UTF-8 boundary and ends with an ellipsis. A text
// that went through it once comes out unchanged (byte-stable round trips).
std::string Line(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  if (out.size() <= kMaxLineBytes) return out;
  out.resize(Utf8Prefix(out, kMaxLineBytes - kEllipsis.size()).size());
  out += kEllipsis;
  return out;
}

template <typename T>
void KeepNewest(std::vector<T>& v, size_t max) {
  if (v.size() > max) v.erase(v.begin(), v.end() - static_cast<std::ptrdiff_t>(max));
}

// "- [tag] rest" -> (tag, rest); false for any other line.
bool TaggedLine(std::string_view line, std::string& tag, std::string& rest) {
  if (!StartsWith(line, "- [")) return false;
  const size_t close = line.find("] ");
  if (close == std::string_view::npos) return false;
  tag = std::string(line.substr(3, close - 3));
  rest = std::string(line.substr(close + 2));
  return true;
}

void TouchFile(WorkingState& state, std::string path, std::string_view action) {
  while (!path.empty() && (path.back() == '\r' || path.back() == ' ')) path.pop_back();
  if (path.empty()) return;
  path = Line(path);
  auto it = std::find_if(state.files.begin(), state.files.end(),
                         [&](const FileTouch& f) { return f.path == path; });
  if (it != state.files.end()) {
    it->action = std::string(action);
  } else {
    state.files.push_back({std::move(path), std::string(action)});
  }
}

void AddPatchFiles(WorkingState& state, std::string_view patch, const std::string& dir = "") {
  auto resolve = [&](std::string_view f) {
    std::string path(f);
    return dir.empty() || (!path.empty() && path.front() == '/') ? path : dir + "/" + path;
  };
  std::string last_updated;
  for (const std::string_view line : SplitLines(patch)) {
    struct Header {
      std::string_view text, action;
    };
    for (const Header& h :
         {Header{"*** Add File: ", "added"}, Header{"*** Update File: ", "updated"},
          Header{"*** Delete File: ", "deleted"}, Header{"*** Move to: ", "moved here"}}) {
      if (!StartsWith(line, h.text)) continue;
      const std::string path = resolve(line.substr(h.text.size()));
      if (h.action == "moved here" && !last_updated.empty()) {
        TouchFile(state, last_updated, "moved away");
      }
      TouchFile(state, path, h.action);
      last_updated = h.action == "updated" ? path : "";
    }
  }
}

// Reads a message WorkingStateMessage wrote back into `state` (which it
// replaces: the message carries everything before it).
void ReadMessage(WorkingState& state, std::string_view text) {
  state = WorkingState{};
  Section section = Section::kNone;
  for (const std::string_view line : SplitLines(text)) {
    if (line == kTasksLine) {
      section = Section::kTasks;
    } else if (line == kPlanLine) {
      section = Section::kPlan;
    } else if (line == kFilesLine) {
      section = Section::kFiles;
    } else if (line == kCommandsLine) {
      section = Section::kCommands;
    } else if (line == kProcessesLine) {
      section = Section::kProcesses;
    } else if (section == Section::kTasks && StartsWith(line, kAnswerLine) &&
               !state.tasks.empty()) {
      state.tasks.back().answer = std::string(line.substr(kAnswerLine.size()));
    } else {
      std::string tag, rest;
      if (!TaggedLine(line, tag, rest)) continue;
      switch (section) {
        case Section::kTasks:
          state.tasks.push_back({rest, tag, ""});
          break;
        case Section::kPlan:
          state.plan.push_back({rest, tag});
          break;
        case Section::kFiles:
          state.files.push_back({rest, tag});
          break;
        case Section::kCommands: {
          CommandRun run{rest, tag, 1};
          const size_t times = tag.rfind(", ");
          if (times != std::string::npos && tag.size() > times + 8 &&
              tag.compare(tag.size() - 6, 6, " times") == 0) {
            run.exit = tag.substr(0, times);
            run.times = std::atoi(tag.c_str() + times + 2);
            if (run.times < 1) run.times = 1;
          }
          state.commands.push_back(std::move(run));
          break;
        }
        case Section::kProcesses:
          state.processes.push_back({tag, rest});
          break;
        case Section::kNone:
          break;
      }
    }
  }
}

// A JSON array of strings as an argv; empty when it is anything else.
std::vector<std::string> Argv(const Json& command) {
  std::vector<std::string> argv;
  if (!command.is_array()) return argv;
  for (const auto& a : command) {
    if (!a.is_string()) return {};
    argv.push_back(a.get<std::string>());
  }
  return argv;
}

// How a command is shown: a shell's script (bash -lc X, sh -c X) as X, any
// other argv joined with spaces.
std::string CommandText(const std::vector<std::string>& argv) {
  if (const auto script = ShellScriptOf(argv)) return Line(*script);
  std::string text;
  for (const auto& a : argv) {
    if (!text.empty()) text += ' ';
    text += a;
  }
  return Line(text);
}

// A shell call: apply_patch sent through the shell (as the tool router runs
// it) names its files in the patch; any other command, what it writes.
// True when it was a patch (not a command).
bool AddShellCallFiles(WorkingState& state, const std::vector<std::string>& argv,
                       const std::string& workdir) {
  auto patch = core::MatchShellApplyPatch(argv);
  if (patch.ok() && patch->has_value()) {
    std::string dir = (*patch)->workdir;
    if (!workdir.empty() && (dir.empty() || dir[0] != '/')) {
      dir = dir.empty() ? workdir : workdir + "/" + dir;
    }
    AddPatchFiles(state, (*patch)->patch, dir);
    return true;
  }
  for (const auto& f : ShellWrittenFiles(argv, workdir))
    TouchFile(state, f, "written by a command");
  return false;
}

// The exit status an output item reports: the shell tool's JSON
// (metadata.exit_code), Codex's "Exit code: N" text, an "aborted" output.
std::string ExitOf(const core::Item& output) {
  Json j = Json::parse(output.body, nullptr, false);
  if (!j.is_object()) return "no exit code";
  std::string text = StringField(j, "output");
  Json inner = Json::parse(text, nullptr, false);
  if (inner.is_object() && inner.contains("metadata") && inner["metadata"].is_object()) {
    const Json& code = inner["metadata"].value("exit_code", Json());
    if (code.is_number_integer()) return "exit " + std::to_string(code.get<int64_t>());
  }
  if (StartsWith(text, "Exit code: ")) {
    const int code = std::atoi(text.c_str() + 11);
    return "exit " + std::to_string(code);
  }
  if (StartsWith(text, "aborted")) return "aborted";
  return "no exit code";
}

// What one scan of the items after the newest working-state message adds.
class Scanner {
 public:
  // `from_frontier`: the scan starts after a frontier message (whose own
  // summary or compaction item follows it).
  Scanner(WorkingState& state, bool from_frontier) : state_(state), from_frontier_(from_frontier) {
    // A message read back: its last task may still be running.
    if (!state_.tasks.empty() && state_.tasks.back().status == kInProgress) open_task_ = true;
  }

  void Add(const core::Item& item) {
    if (core::IsUserShellRecord(item)) return;  // the person's `!cmd`, not a task
    if (core::IsSummaryMessage(item) || item.kind == core::ItemKind::kCompaction) {
      if (from_frontier_) return;
      // Compacted without a frontier: whether its tasks were answered is gone.
      for (auto& t : state_.tasks) {
        if (t.status != kAnswered) t.status = std::string(kUnknown);
      }
      open_task_ = false;
    } else if (core::IsRealUserMessage(item)) {
      AddUserMessage(item);
    } else if (item.kind == core::ItemKind::kMessage && item.role == "assistant") {
      const std::string text = core::MessageText(item);
      if (!text.empty() && !state_.tasks.empty()) {
        state_.tasks.back().status = std::string(kAnswered);
        state_.tasks.back().answer = Line(text);
        open_task_ = false;
      }
    } else if (core::IsCall(item.kind)) {
      // Work after an answer (or after a compaction that kept no status): the task goes on.
      if (!state_.tasks.empty() &&
          (state_.tasks.back().status == kAnswered || state_.tasks.back().status == kUnknown)) {
        state_.tasks.back().status = std::string(kInProgress);
        state_.tasks.back().answer.clear();
        open_task_ = true;
      }
      AddCall(item);
    } else if (core::IsCallOutput(item.kind)) {
      for (size_t i = pending_.size(); i-- > 0;) {
        if (pending_[i].call_id == item.call_id) {
          state_.commands[pending_[i].index].exit = ExitOf(item);
          pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(i));
          break;
        }
      }
    }
  }

 private:
  void AddUserMessage(const core::Item& item) {
    std::string text = Line(core::MessageText(item));
    if (text.empty()) text = "(an image)";
    // The running task itself again (the endpoint form keeps it after the
    // working state): not a new task.
    if (open_task_ && !state_.tasks.empty() && state_.tasks.back().text == text &&
        !seen_user_message_) {
      seen_user_message_ = true;
      return;
    }
    seen_user_message_ = true;
    if (!state_.tasks.empty() && state_.tasks.back().status == kInProgress) {
      state_.tasks.back().status = std::string(kInterrupted);
    }
    state_.tasks.push_back({std::move(text), std::string(kInProgress), ""});
    open_task_ = true;
  }

  void AddCommand(const core::Item& call, std::string command) {
    pending_.push_back({call.call_id, state_.commands.size()});
    state_.commands.push_back({std::move(command), "running", 1});
  }

  void AddCall(const core::Item& item) {
    Json j = Json::parse(item.body, nullptr, false);
    if (!j.is_object()) return;
    if (item.kind == core::ItemKind::kLocalShellCall) {
      auto action = j.find("action");
      if (action == j.end() || !action->is_object()) return;
      auto command = action->find("command");
      if (command == action->end()) return;
      const auto argv = Argv(*command);
      if (!AddShellCallFiles(state_, argv, StringField(*action, "working_directory"))) {
        AddCommand(item, CommandText(argv));
      }
      return;
    }
    const std::string name = StringField(j, "name");
    if (item.kind == core::ItemKind::kCustomToolCall) {
      if (name == "apply_patch") AddPatchFiles(state_, StringField(j, "input"));
      return;
    }
    if (item.kind != core::ItemKind::kFunctionCall) return;
    Json args = Json::parse(StringField(j, "arguments", "{}"), nullptr, false);
    if (!args.is_object()) return;
    if (name == "apply_patch" && args.contains("input") && args["input"].is_string()) {
      AddPatchFiles(state_, args["input"].get<std::string>());
    } else if ((name == "shell" || name == "container.exec") && args.contains("command")) {
      const auto argv = Argv(args["command"]);
      if (!AddShellCallFiles(state_, argv, StringField(args, "workdir"))) {
        AddCommand(item, CommandText(argv));
      }
    } else if (name == "shell_command" && args.contains("command") && args["command"].is_string()) {
      const std::string script = args["command"].get<std::string>();
      for (const auto& f : ShellScriptWrittenFiles(script, StringField(args, "workdir"))) {
        TouchFile(state_, f, "written by a command");
      }
      AddCommand(item, Line(script));
    } else if (name == "update_plan" && args.contains("plan") && args["plan"].is_array()) {
      std::vector<PlanStep> plan;
      for (const auto& step : args["plan"]) {
        if (!step.is_object()) continue;
        plan.push_back(
            {Line(StringField(step, "step")), Line(StringField(step, "status", "pending"))});
      }
      state_.plan = std::move(plan);
    }
  }

  struct Pending {
    std::string call_id;
    size_t index;
  };
  WorkingState& state_;
  bool from_frontier_ = false;
  std::vector<Pending> pending_;
  bool open_task_ = false;
  bool seen_user_message_ = false;
};

// Adjacent runs of the same command with the same exit become one entry.
void CollapseCommands(std::vector<CommandRun>& commands) {
  std::vector<CommandRun> out;
  for (auto& c : commands) {
    if (!out.empty() && out.back().command == c.command && out.back().exit == c.exit) {
      out.back().times += c.times;
    } else {
      out.push_back(std::move(c));
    }
  }
  commands = std::move(out);
}

}  // namespace

std::vector<std::string> WorkingState::paths() const {
  std::vector<std::string> out;
  for (const auto& f : files) out.push_back(f.path);
  return out;
}

bool IsWorkingStateMessage(const core::Item& item) {
  if (item.kind != core::ItemKind::kMessage || item.role != "user") return false;
  const std::string text = core::MessageText(item);
  return text.substr(0, kWorkingStatePrefix.size()) == kWorkingStatePrefix;
}

WorkingState ExtractWorkingState(std::span<const core::Item> transcript, bool turn_running,
                                 std::span<const core::OpenProcess> processes) {
  WorkingState state;
  size_t from = 0;
  for (size_t i = transcript.size(); i-- > 0;) {
    if (IsWorkingStateMessage(transcript[i])) {
      ReadMessage(state, core::MessageText(transcript[i]));
      state.processes.clear();  // live: the compaction's own list replaces them
      from = i + 1;
      break;
    }
  }
  {
    Scanner scanner(state, from > 0);
    for (size_t i = from; i < transcript.size(); ++i) scanner.Add(transcript[i]);
  }
  if (!turn_running && !state.tasks.empty() && state.tasks.back().status == kInProgress) {
    state.tasks.back().status = std::string(kInterrupted);
  }
  CollapseCommands(state.commands);
  for (const auto& p : processes) state.processes.push_back({Line(p.id), Line(p.command)});
  KeepNewest(state.tasks, kMaxTasks);
  KeepNewest(state.plan, kMaxPlanSteps);
  KeepNewest(state.files, kMaxFiles);
  KeepNewest(state.commands, kMaxCommands);
  KeepNewest(state.processes, kMaxProcesses);
  return state;
}

std::optional<core::Item> WorkingStateMessage(const WorkingState& state) {
  if (state.empty()) return std::nullopt;
  std::string text(kWorkingStatePrefix);
  text += '\n';
  text += kPreamble;
  text += '\n';
  auto tagged = [&](std::string_view tag, std::string_view rest) {
    text += "- [";
    text += Line(tag);
    text += "] ";
    text += Line(rest);
    text += '\n';
  };
  if (!state.tasks.empty()) {
    text += kTasksLine;
    text += '\n';
    for (const auto& t : state.tasks) {
      tagged(t.status, t.text);
      if (!t.answer.empty()) {
        text += kAnswerLine;
        text += Line(t.answer);
        text += '\n';
      }
    }
  }
  if (!state.plan.empty()) {
    text += kPlanLine;
    text += '\n';
    for (const auto& step : state.plan) tagged(step.status, step.step);
  }
  if (!state.files.empty()) {
    text += kFilesLine;
    text += '\n';
    for (const auto& f : state.files) tagged(f.action, f.path);
  }
  if (!state.commands.empty()) {
    text += kCommandsLine;
    text += '\n';
    for (const auto& c : state.commands) {
      tagged(c.times > 1 ? c.exit + ", " + std::to_string(c.times) + " times" : c.exit, c.command);
    }
  }
  if (!state.processes.empty()) {
    text += kProcessesLine;
    text += '\n';
    for (const auto& p : state.processes) tagged(p.id, p.command);
  }
  text += kEndTag;
  return core::UserMessage(text);
}

std::string KeptSummary(std::span<const core::Item> history) {
  const core::Item* message = nullptr;
  for (const auto& item : history) {
    if (IsWorkingStateMessage(item)) message = &item;
  }
  if (message == nullptr) return "";
  WorkingState state;
  ReadMessage(state, core::MessageText(*message));
  std::string out;
  auto add = [&](const std::string& part) { out += (out.empty() ? "" : ", ") + part; };
  auto plural = [](size_t n, const char* word) {
    return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
  };
  if (!state.tasks.empty()) {
    size_t answered = 0, running = 0, interrupted = 0, unknown = 0;
    for (const auto& t : state.tasks) {
      answered += t.status == kAnswered;
      running += t.status == kInProgress;
      interrupted += t.status == kInterrupted;
      unknown += t.status == kUnknown;
    }
    std::string detail;
    auto part = [&](size_t n, const char* what) {
      if (n > 0) detail += (detail.empty() ? "" : ", ") + std::to_string(n) + " " + what;
    };
    part(answered, "answered");
    part(running, "in progress");
    part(interrupted, "interrupted");
    part(unknown, "status unknown");
    add(plural(state.tasks.size(), "task") + " (" + detail + ")");
  }
  if (!state.plan.empty()) {
    size_t done = 0;
    for (const auto& s : state.plan) done += s.status == "completed";
    add("plan " + std::to_string(done) + "/" + std::to_string(state.plan.size()) + " completed");
  }
  if (!state.files.empty()) add(plural(state.files.size(), "file"));
  if (!state.commands.empty()) {
    const CommandRun& last = state.commands.back();
    std::string command =
        last.command.size() > 60 ? last.command.substr(0, 57) + "..." : last.command;
    add("last command `" + command + "` " + last.exit);
  }
  if (!state.processes.empty()) add(plural(state.processes.size(), "open process"));
  return out;
}

}  // namespace codex::compaction
