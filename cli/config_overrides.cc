#include "cli/config_overrides.h"

#include "cli/compat_args.h"

namespace codex::cli {

core::ConfigOverrides GlobalOverrides(const GlobalOptions& global) {
  core::ConfigOverrides o;
  o.dash_c = global.dash_c;
  for (std::string& kv : FeatureOverrides(global.enable, global.disable, global.search)) {
    o.dash_c.push_back(std::move(kv));
  }
  if (!global.profile.empty()) o.profile = global.profile;
  o.strict = global.strict_config;
  return o;
}

Result<core::ConfigOverrides> OverridesFrom(const GlobalOptions& global, const RunFlags& flags) {
  core::ConfigOverrides o = GlobalOverrides(global);
  if (!flags.model.empty()) o.model = flags.model;
  if (!flags.cd.empty()) o.cwd = flags.cd;
  o.oss = flags.oss;
  o.add_dirs = flags.add_dirs;
  o.ignore_user_config = flags.ignore_user_config;
  if (flags.full_auto && flags.bypass) {
    // One asks for the sandbox, the other for none: neither may win silently.
    return InvalidArgumentError(
        "--full-auto (sandboxed, workspace-write) and --dangerously-bypass-approvals-and-sandbox "
        "(no sandbox at all) contradict each other; give one");
  }
  if (flags.full_auto) {
    o.sandbox_mode = core::SandboxMode::kWorkspaceWrite;
    o.approval_policy = core::ApprovalPolicy::kOnRequest;
  }
  if (flags.bypass) {
    o.sandbox_mode = core::SandboxMode::kDangerFullAccess;
    o.approval_policy = core::ApprovalPolicy::kNever;
  }
  if (!flags.sandbox.empty()) {
    auto m = core::ParseSandboxMode(flags.sandbox);
    if (!m) {
      return InvalidArgumentError("--sandbox '" + flags.sandbox +
                                  "' is not one of read-only, workspace-write, danger-full-access");
    }
    o.sandbox_mode = *m;
  }
  if (!flags.approval.empty()) {
    auto p = core::ParseApprovalPolicy(flags.approval);
    if (!p) {
      return InvalidArgumentError("--ask-for-approval '" + flags.approval +
                                  "' is not one of untrusted, on-failure, on-request, never");
    }
    o.approval_policy = *p;
  }
  return o;
}

}  // namespace codex::cli
