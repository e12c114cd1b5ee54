// Registration of the subcommands of `codex`. Each command family lives in its
// own file (exec_cmd.cc, sessions_cmd.cc, sandbox_cmd.cc, apply_patch_cmd.cc,
// ...) and adds itself to the CLI11 app here. A command's callback stores its
// exit code in `*exit_code`; it never calls exit().
#pragma once

#include <CLI/CLI.hpp>

namespace codex::cli {

// Options shared by every subcommand (parsed on the top-level app).
// main() moves them in front of the subcommand (compat_args.h), so Codex's
// `codex exec -c k=v` and `codex -c k=v exec` both work.
struct GlobalOptions {
  std::vector<std::string> dash_c;  // -c key=value
  std::string profile;              // -p/--profile NAME
  bool strict_config = false;       // --strict-config
};

void RegisterAllCommands(CLI::App& app, GlobalOptions& global, int* exit_code);

}  // namespace codex::cli
