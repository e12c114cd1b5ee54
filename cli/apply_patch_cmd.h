// `codex apply-patch [PATCH]`: applies a patch in the `*** Begin Patch` format
// to the current directory (core/apply_patch.h), reading it from stdin when
// PATCH is absent. The output contract is the reference apply_patch tool's:
//   success: stdout "Success. Updated the following files:\nA p\nM p\nD p\n", exit 0;
//   a patch that does not parse or apply: the error on stderr, exit 1
//     (earlier hunks stay applied);
//   empty stdin or more than one argument: a usage line on stderr, exit 2.
// PATCH is taken verbatim (it starts with "***" and spans lines; it may even
// start with '-'), so the subcommand does no option parsing after its name.
#pragma once

#include <CLI/CLI.hpp>

#include "cli/exit_codes.h"
#include "cli/global_options.h"

namespace codex::cli {

void RegisterApplyPatchCommand(CLI::App& app, const GlobalOptions& global, CommandOutcome& result);

}  // namespace codex::cli
