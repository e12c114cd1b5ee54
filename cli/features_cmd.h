// `codex features list`: Codex's feature flags that mean something here, with
// their stage (as Codex 0.169 names it) and their effective value after
// config.toml, the profile, -c and --enable/--disable, in Codex's table form.
// `features enable|disable NAME` write `[features] NAME = true|false` into
// $CODEX_HOME/config.toml (core/mcp_config_edit.h), for any of Codex 0.169's
// feature names, as Codex does; an unknown name is refused (exit 2).
#pragma once

#include <CLI/CLI.hpp>

#include "cli/exit_codes.h"
#include "cli/global_options.h"

namespace codex::cli {

void RegisterFeaturesCommand(CLI::App& app, const GlobalOptions& global, CommandOutcome& result);

}  // namespace codex::cli
