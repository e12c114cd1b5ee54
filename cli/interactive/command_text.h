// How a command is shown to the user: as they would type it. A model's
// `bash -lc 'script'` (or `sh -c`, `zsh -lc`) is shown as the script alone;
// anything else as the shell-quoted argv. Pure; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace codex::cli {

std::string ShownCommand(const std::vector<std::string>& argv);

// The same for a command line quoted the way ShellJoin quotes
// (words separated by spaces, single quotes, '\'' for a quote).
std::string ShownCommandLine(std::string_view joined);

}  // namespace codex::cli
