// Codex's per-project trust: what its "Trust this folder?" records in
// config.toml ([projects."<dir>"] trust_level = "trusted" | "untrusted"),
// and whether the sandbox and approval were named anywhere, which decides
// whether the interactive session asks (cli/interactive/trust_prompt.h).
// Read by the config loader's own rules (core/config.cc): config.toml, -c,
// the profile, the flags.
#pragma once

#include <string>

#include "base/status.h"
#include "core/config.h"

namespace codex::core {

struct ProjectTrust {
  // Where a decision for the directory is recorded: its ProjectRoot
  // (core/project_context.h).
  std::string project;
  // The recorded level for the directory, else for `project`: "trusted",
  // "untrusted", or "" when undecided.
  std::string level;
  // sandbox_mode / approval_policy named in config.toml, the profile, -c or
  // a flag (--sandbox, --ask-for-approval, --full-auto, --dangerously-...).
  bool sandbox_mode_named = false;
  bool approval_policy_named = false;
};

// For the (canonical) directory `cwd`; kInvalidArgument naming the key when a
// recorded trust_level is neither "trusted" nor "untrusted".
Result<ProjectTrust> LoadProjectTrust(const std::string& codex_home,
                                      const ConfigOverrides& overrides, const std::string& cwd);

}  // namespace codex::core
