// `codex completion bash|zsh|fish`: prints a shell completion script for
// every subcommand and option registered on the CLI11 app (walked when the
// command runs, so new commands are covered without editing this file),
// plus the known values of --sandbox, --ask-for-approval and --format and
// directory completion for --cd/--add-dir.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "cli/exit_codes.h"
#include "cli/global_options.h"

namespace codex::cli {

// The command tree as the generators see it.
struct CompletionOption {
  std::vector<std::string> names;  // "-m", "--model"
  std::string description;
  bool takes_value = false;
};

struct CompletionNode {
  std::vector<std::string> names;  // the name, then aliases ("exec", "e")
  std::string description;
  std::vector<CompletionOption> options;
  std::vector<std::string> words;  // positional values offered ("bash zsh fish")
  std::vector<CompletionNode> children;
};

CompletionNode DescribeCommands(const CLI::App& app);

// kInvalidArgument for an unknown shell.
Result<std::string> CompletionScript(const CLI::App& app, std::string_view shell);

void RegisterCompletionCommand(CLI::App& app, const GlobalOptions& global, CommandOutcome& result);

}  // namespace codex::cli
