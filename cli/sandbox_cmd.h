// `codex sandbox [-s MODE] [--add-dir DIR]... [--network] [-C DIR] -- CMD...`:
// runs CMD under the same sandbox the agent's shell tool uses, for a human to
// try it out. The command replaces the codex process (same pid, terminal and
// stdio; nothing is captured), so the exit status is the command's own.
// Before the command starts: 2 for a bad command line, 1 when the sandbox
// cannot be set up (e.g. neither Landlock nor user namespaces), 127 when CMD
// is not found, 126 when it is not executable. `--explain` prints the active
// layers (namespaces, Landlock, capabilities, seccomp) and why, and runs nothing.
//
// Default mode: workspace-write (the working directory, /tmp and $TMPDIR
// writable, .git read-only, network off), like Codex's
// `codex sandbox linux --full-auto`, because that is the mode the agent
// usually runs in. The environment is the agent's: inherited minus variables
// that look like secrets (…KEY…, …TOKEN…, …SECRET…, …PASSWORD…), plus
// CODEX_SANDBOX_NETWORK_DISABLED=1 when the network is off.
#pragma once

#include <CLI/CLI.hpp>

#include "cli/exit_codes.h"
#include "cli/global_options.h"

namespace codex::cli {

void RegisterSandboxCommand(CLI::App& app, const GlobalOptions& global, CommandOutcome& result);

}  // namespace codex::cli
