#include "compaction/working_state.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "compaction/shell_edits.h"
#include "core/apply_patch.h"

namespace codex::compaction {

namespace {

using Json = nlohmann::json;

constexpr std::string_view kFilesLine = "Files touched: ";
constexpr std::string_view kPlanLine = "Current plan:";
constexpr std::string_view kEndTag = "</working_state>";
constexpr std::string_view kPatchHeaders[] = {
    "*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: "};

void AddFile(WorkingState& state, std::string path) {
  while (!path.empty() && (path.back() == '\r' || path.back() == ' ')) path.pop_back();
  if (path.empty()) return;
  if (std::find(state.files.begin(), state.files.end(), path) == state.files.end()) {
    state.files.push_back(std::move(path));
  }
}

void AddPatchFiles(WorkingState& state, std::string_view patch) {
  size_t pos = 0;
  while (pos < patch.size()) {
    size_t end = patch.find('\n', pos);
    if (end == std::string_view::npos) end = patch.size();
    std::string_view line = patch.substr(pos, end - pos);
    for (std::string_view header : kPatchHeaders) {
      if (line.substr(0, header.size()) == header) {
        AddFile(state, std::string(line.substr(header.size())));
      }
    }
    pos = end + 1;
  }
}

// Reads a message WorkingStateMessage wrote back into `state`.
void MergeMessage(WorkingState& state, std::string_view text) {
  size_t pos = 0;
  bool in_plan = false;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    if (line.substr(0, kFilesLine.size()) == kFilesLine) {
      Json files = Json::parse(line.substr(kFilesLine.size()), nullptr, false);
      if (files.is_array()) {
        for (const auto& f : files) {
          if (f.is_string()) AddFile(state, f.get<std::string>());
        }
      }
    } else if (line == kPlanLine) {
      in_plan = true;
      state.plan.clear();
    } else if (in_plan && line.substr(0, 3) == "- [") {
      const size_t close = line.find("] ");
      if (close == std::string_view::npos) continue;
      state.plan.push_back(
          {std::string(line.substr(close + 2)), std::string(line.substr(3, close - 3))});
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

std::string StringField(const Json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// A shell call: apply_patch sent through the shell (as the tool router runs
// it) names its files in the patch; any other command, what it writes.
void AddShellCallFiles(WorkingState& state, const std::vector<std::string>& argv,
                       const std::string& workdir) {
  auto patch = core::MatchShellApplyPatch(argv);
  if (patch.ok() && patch->has_value()) {
    WorkingState patched;
    AddPatchFiles(patched, (*patch)->patch);
    std::string dir = (*patch)->workdir;
    if (!workdir.empty() && (dir.empty() || dir[0] != '/')) {
      dir = dir.empty() ? workdir : workdir + "/" + dir;
    }
    for (auto& f : patched.files) {
      AddFile(state, dir.empty() || f.front() == '/' ? f : dir + "/" + f);
    }
    return;
  }
  for (const auto& f : ShellWrittenFiles(argv, workdir)) AddFile(state, f);
}

void MergeCall(WorkingState& state, const core::Item& item) {
  Json j = Json::parse(item.body, nullptr, false);
  if (!j.is_object()) return;
  if (item.kind == core::ItemKind::kLocalShellCall) {
    auto action = j.find("action");
    if (action == j.end() || !action->is_object()) return;
    auto command = action->find("command");
    if (command == action->end()) return;
    AddShellCallFiles(state, Argv(*command), StringField(*action, "working_directory"));
    return;
  }
  const std::string name = j.value("name", "");
  if (item.kind == core::ItemKind::kCustomToolCall) {
    if (name == "apply_patch") AddPatchFiles(state, j.value("input", ""));
    return;
  }
  if (item.kind != core::ItemKind::kFunctionCall) return;
  Json args = Json::parse(j.value("arguments", "{}"), nullptr, false);
  if (!args.is_object()) return;
  if (name == "apply_patch" && args.contains("input") && args["input"].is_string()) {
    AddPatchFiles(state, args["input"].get<std::string>());
  } else if ((name == "shell" || name == "container.exec") && args.contains("command")) {
    AddShellCallFiles(state, Argv(args["command"]), StringField(args, "workdir"));
  } else if (name == "shell_command" && args.contains("command") && args["command"].is_string()) {
    for (const auto& f : ShellScriptWrittenFiles(args["command"].get<std::string>(),
                                                 StringField(args, "workdir"))) {
      AddFile(state, f);
    }
  } else if (name == "update_plan" && args.contains("plan") && args["plan"].is_array()) {
    std::vector<PlanStep> plan;
    for (const auto& step : args["plan"]) {
      if (!step.is_object()) continue;
      plan.push_back({step.value("step", ""), step.value("status", "pending")});
    }
    state.plan = std::move(plan);
  }
}

}  // namespace

bool IsWorkingStateMessage(const core::Item& item) {
  if (item.kind != core::ItemKind::kMessage || item.role != "user") return false;
  const std::string text = core::MessageText(item);
  return text.substr(0, kWorkingStatePrefix.size()) == kWorkingStatePrefix;
}

WorkingState ExtractWorkingState(std::span<const core::Item> transcript) {
  WorkingState state;
  for (const auto& item : transcript) {
    if (IsWorkingStateMessage(item)) {
      MergeMessage(state, core::MessageText(item));
    } else if (core::IsCall(item.kind)) {
      MergeCall(state, item);
    }
  }
  return state;
}

std::optional<core::Item> WorkingStateMessage(const WorkingState& state) {
  if (state.empty()) return std::nullopt;
  std::string text(kWorkingStatePrefix);
  text += "\nKept by the compaction, read from the conversation it replaced.\n";
  if (!state.files.empty()) {
    text += kFilesLine;
    text += Json(state.files).dump();
    text += '\n';
  }
  if (!state.plan.empty()) {
    text += kPlanLine;
    text += '\n';
    for (const auto& step : state.plan) {
      // One line per step: newlines inside a step would end it early.
      std::string line = step.step;
      std::replace(line.begin(), line.end(), '\n', ' ');
      text += "- [" + step.status + "] " + line + '\n';
    }
  }
  text += kEndTag;
  return core::UserMessage(text);
}

}  // namespace codex::compaction
