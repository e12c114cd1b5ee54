// "!cmd" in the interactive session: the command the user runs themselves,
// as the user (outside the sandbox, as Codex runs it: it is what they typed),
// and the record of it the model sees on its next request (a
// <user_shell_command> user message, as Codex writes it). Pure.
#pragma once

#include <string>
#include <string_view>

#include "core/config.h"
#include "core/sandboxed_runner.h"

namespace codex::cli {

// `command` run by bash (not a login shell: no profile noise) in the
// session's directory, unsandboxed (danger-full-access: the user's own
// command, like one typed in their shell), with the session's environment
// policy, for up to ten minutes (Esc or Ctrl-C stop it sooner).
core::CommandSpec LocalShellSpec(const core::Config& config, const std::string& command);

// The user message that records `command` and what it printed (cut like a
// tool's output) for the model.
std::string LocalShellRecord(const std::string& command, const core::CommandResult& result);

}  // namespace codex::cli
