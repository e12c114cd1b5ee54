// The options every `codex` command shares (-c, -p, --strict-config,
// --enable/--disable FEATURE, --search), parsed
// on the top-level app. main() moves them in front of the subcommand
// (compat_args.h), so Codex's `codex exec -c k=v` and `codex -c k=v exec`
// both work. A command reads them in its callback, after parsing.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace codex::cli {

struct GlobalOptions {
  std::vector<std::string> dash_c;   // -c key=value
  std::string profile;               // -p/--profile NAME
  bool strict_config = false;        // --strict-config
  std::vector<std::string> enable;   // --enable FEATURE (features.FEATURE = true)
  std::vector<std::string> disable;  // --disable FEATURE (features.FEATURE = false)
  bool search = false;               // --search (web_search = "live")
};

// Refuses an empty value given to an option (`-C ""`, `-p "$UNSET"`), which
// would otherwise mean "not given": a script's unset variable must not run
// the session in the current directory, without its profile, or drop its
// output file. Adds no help text.
const CLI::Validator& NonEmptyValue();

// Adds -c/--config, -p/--profile and --strict-config to the top-level `app`,
// storing into `global` (which must outlive the parse).
void AddGlobalOptions(CLI::App& app, GlobalOptions& global);

}  // namespace codex::cli
