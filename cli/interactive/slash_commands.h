// Slash commands of the interactive session (/help, /status, /compact, ...):
// the table that /help and Tab completion show, and the parser that turns a
// typed line into a SlashCommand or a one-line error. Pure; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace codex::cli {

enum class SlashKind {
  kHelp,
  kStatus,
  kCompact,
  kFork,
  kSessions,
  kResume,
  kModel,
  kApprovals,
  kDiff,
  kNew,
  kInit,
  kMention,
  kPermissions,
  kCopy,
  kExport,
  kMcp,
  kRename,
  kUndo,
  kReview,
  kQuit,
};

struct SlashSpec {
  SlashKind kind;
  std::string_view name;  // with the slash: "/fork"
  std::string_view args;  // "[TURN]", "" when none
  std::string_view help;
};

// Every command, in the order /help lists them.
const std::vector<SlashSpec>& SlashCommands();
// The names ("/help", ...) plus aliases, for completion.
std::vector<std::string> SlashCompletions();

// The commands for the "/" popup while `typed` (what follows the slash) is
// being typed: names starting with it first, then names containing it, each
// group in /help order. An empty `typed` gives every command.
std::vector<const SlashSpec*> MatchSlashCommands(std::string_view typed);

struct SlashCommand {
  SlashKind kind = SlashKind::kHelp;
  std::string arg;          // /resume ID, /model NAME, /approvals POLICY ("" = show)
  std::optional<int> turn;  // /fork TURN
  std::string effort;       // /model NAME EFFORT ("" = not given)
};

// nullopt when `line` is not a command (it does not start with '/'); else
// the command, or kInvalidArgument naming what is wrong ("unknown command
// '/x'; /help lists the commands").
std::optional<Result<SlashCommand>> ParseSlashCommand(std::string_view line);

}  // namespace codex::cli
