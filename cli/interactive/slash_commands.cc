#include "cli/interactive/slash_commands.h"

#include <charconv>

namespace codex::cli {

const std::vector<SlashSpec>& SlashCommands() {
  static const std::vector<SlashSpec> kCommands = {
      {SlashKind::kHelp, "/help", "", "show this list"},
      {SlashKind::kStatus, "/status", "",
       "model, provider, session id, tokens used and context left"},
      {SlashKind::kCompact, "/compact", "", "summarise the conversation to free context"},
      {SlashKind::kFork, "/fork", "[TURN]",
       "branch this session (after turn TURN) and continue in the branch"},
      {SlashKind::kSessions, "/sessions", "", "list recent sessions in this directory"},
      {SlashKind::kResume, "/resume", "[ID]", "switch to another session (without ID: pick one)"},
      {SlashKind::kModel, "/model", "[NAME [EFFORT]]",
       "show or change the model and its reasoning effort (minimal | low | medium | high)"},
      {SlashKind::kApprovals, "/approvals", "[POLICY]",
       "show or set the approval policy: untrusted | on-failure | on-request | never"},
      {SlashKind::kDiff, "/diff", "", "show the git diff of the workspace (untracked files too)"},
      {SlashKind::kNew, "/new", "", "start a new session"},
      {SlashKind::kInit, "/init", "", "ask the model to write an AGENTS.md for this project"},
      {SlashKind::kMention, "/mention", "", "mention a file: opens the @ file search"},
      {SlashKind::kPermissions, "/permissions", "[PRESET]",
       "what codex may do without asking: read-only | auto | full-access"},
      {SlashKind::kCopy, "/copy", "", "copy the last answer to the clipboard (OSC 52)"},
      {SlashKind::kExport, "/export", "[FILE]", "write this session as Markdown to FILE"},
      {SlashKind::kMcp, "/mcp", "", "list the configured MCP servers and their tools"},
      {SlashKind::kRename, "/rename", "NAME", "name this session (codex resume NAME finds it)"},
      {SlashKind::kUndo, "/undo", "",
       "restore the files the last turn changed (again: the turn before)"},
      {SlashKind::kReview, "/review",
       "[base BRANCH | uncommitted | commit SHA [TITLE] | INSTRUCTIONS]",
       "review my current changes and find issues (a picker of what to review)"},
      {SlashKind::kQuit, "/quit", "", "exit (also /exit, Ctrl-D)"},
  };
  return kCommands;
}

std::vector<std::string> SlashCompletions() {
  std::vector<std::string> out;
  for (const auto& c : SlashCommands()) out.emplace_back(c.name);
  out.emplace_back("/exit");
  return out;
}

std::vector<const SlashSpec*> MatchSlashCommands(std::string_view typed) {
  std::vector<const SlashSpec*> prefix;
  std::vector<const SlashSpec*> inside;
  for (const auto& c : SlashCommands()) {
    std::string_view name = c.name.substr(1);
    if (name.substr(0, typed.size()) == typed) {
      prefix.push_back(&c);
    } else if (name.find(typed) != std::string_view::npos) {
      inside.push_back(&c);
    }
  }
  prefix.insert(prefix.end(), inside.begin(), inside.end());
  return prefix;
}

std::optional<Result<SlashCommand>> ParseSlashCommand(std::string_view line) {
  // Only a line that starts with "/" is a command: " /x" is a message.
  if (line.empty() || line[0] != '/') return std::nullopt;
  while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\n')) {
    line.remove_suffix(1);
  }
  size_t sp = line.find_first_of(" \t\n");
  std::string_view name = line.substr(0, sp);
  std::string_view rest;
  if (sp != std::string_view::npos) {
    rest = line.substr(sp);
    rest.remove_prefix(std::min(rest.size(), rest.find_first_not_of(" \t\n")));
  }
  if (name == "/exit") name = "/quit";
  const SlashSpec* spec = nullptr;
  for (const auto& c : SlashCommands()) {
    if (c.name == name) spec = &c;
  }
  if (spec == nullptr) {
    return Result<SlashCommand>(InvalidArgumentError(
        "unknown command '" + std::string(name) +
        "'; /help lists the commands (start the line with a space to send it as a message)"));
  }
  SlashCommand cmd;
  cmd.kind = spec->kind;
  auto usage = [&](std::string why) {
    return Result<SlashCommand>(
        InvalidArgumentError(why + "; usage: " + std::string(spec->name) +
                             (spec->args.empty() ? "" : " " + std::string(spec->args))));
  };
  bool takes_arg = !spec->args.empty();
  bool needs_arg = takes_arg && spec->args[0] != '[';
  if (!takes_arg && !rest.empty()) return usage(std::string(name) + " takes no argument");
  if (needs_arg && rest.empty())
    return usage(std::string(name) + " needs " + std::string(spec->args));
  if (cmd.kind == SlashKind::kModel && !rest.empty()) {
    const size_t sp2 = rest.find_first_of(" \t\n");
    if (sp2 != std::string_view::npos) {
      std::string_view effort = rest.substr(sp2);
      effort.remove_prefix(effort.find_first_not_of(" \t\n"));
      if (effort.find_first_of(" \t\n") != std::string_view::npos) {
        return usage("/model takes a model and a reasoning effort");
      }
      if (effort != "minimal" && effort != "low" && effort != "medium" && effort != "high") {
        return usage("the reasoning effort is one of minimal, low, medium, high, not '" +
                     std::string(effort) + "'");
      }
      cmd.arg = std::string(rest.substr(0, sp2));
      cmd.effort = std::string(effort);
      return Result<SlashCommand>(std::move(cmd));
    }
  }
  if (cmd.kind == SlashKind::kReview) {  // free text: what to review
    cmd.arg = std::string(rest);
    return Result<SlashCommand>(std::move(cmd));
  }
  if (rest.find_first_of(" \t\n") != std::string_view::npos) {
    return usage(std::string(name) + " takes one argument");
  }
  if (cmd.kind == SlashKind::kFork && !rest.empty()) {
    int turn = 0;
    auto [ptr, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), turn);
    if (ec != std::errc() || ptr != rest.data() + rest.size() || turn <= 0) {
      return usage("TURN must be a positive number, not '" + std::string(rest) + "'");
    }
    cmd.turn = turn;
  } else {
    cmd.arg = std::string(rest);
  }
  return Result<SlashCommand>(std::move(cmd));
}

}  // namespace codex::cli
