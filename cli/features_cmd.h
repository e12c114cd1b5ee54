// `codex features list`: Codex's feature flags that mean something here, with
// their stage (as Codex 0.169 names it) and their effective value after
// config.toml, the profile, -c and --enable/--disable, in Codex's table form.
// (`features enable|disable`, which edit config.toml, are refused by
// cli/compat_args.h; `--enable F` or `[features] F = true` do the same.)
#pragma once

#include <CLI/CLI.hpp>

#include "cli/exit_codes.h"
#include "cli/global_options.h"

namespace codex::cli {

void RegisterFeaturesCommand(CLI::App& app, const GlobalOptions& global, CommandOutcome& result);

}  // namespace codex::cli
