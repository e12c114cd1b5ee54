// From the command line to core::ConfigOverrides: the one place that says
// what -c, -p, --strict-config and the run flags (-m, -C, -s, -a, --add-dir,
// --oss, --full-auto, --dangerously-bypass-approvals-and-sandbox) change in
// the config that core::LoadConfig builds.
#pragma once

#include "base/status.h"
#include "cli/global_options.h"
#include "cli/run_flags.h"
#include "core/config.h"

namespace codex::cli {

// The global options alone (-c, -p, --strict-config), for commands without
// run flags (sessions, sandbox, mcp, ...).
core::ConfigOverrides GlobalOverrides(const GlobalOptions& global);

// The global options and the run flags; kInvalidArgument for a --sandbox or
// --ask-for-approval value that is not one of the known names.
Result<core::ConfigOverrides> OverridesFrom(const GlobalOptions& global, const RunFlags& flags);

}  // namespace codex::cli
