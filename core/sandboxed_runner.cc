#include "core/sandboxed_runner.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <utility>

namespace codex::core {
namespace {

bool IsDirectory(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::string CurrentDirectory() {
  char buf[4096];
  return ::getcwd(buf, sizeof(buf)) != nullptr ? std::string(buf) : std::string(".");
}

// The sandbox spec for `spec`: workspace-write may write what the workspace
// policy says (sandbox/workspace_policy.h).
Result<sandbox::SandboxSpec> ToSandboxSpec(const CommandSpec& spec) {
  sandbox::SandboxSpec out;
  switch (spec.sandbox.mode) {
    case SandboxMode::kReadOnly:
      out.mode = sandbox::Mode::kReadOnly;
      break;
    case SandboxMode::kWorkspaceWrite:
      out.mode = sandbox::Mode::kWorkspaceWrite;
      break;
    case SandboxMode::kDangerFullAccess:
      out.mode = sandbox::Mode::kFullAccess;
      break;
  }
  out.network = spec.sandbox.network ? sandbox::Network::kAllowed : sandbox::Network::kDenied;
  if (out.mode == sandbox::Mode::kWorkspaceWrite) {
    ASSIGN_OR_RETURN(sandbox::WorkspacePolicy policy,
                     sandbox::WorkspacePolicy::Compute(WritableRootsFor(spec.sandbox, spec.cwd)));
    out.writable_roots = policy.root_paths();
    out.private_paths = spec.sandbox.private_paths;
  }
  return out;
}

}  // namespace

sandbox::WritableRootsSpec WritableRootsFor(const SandboxPolicy& policy, const std::string& cwd) {
  sandbox::WritableRootsSpec out;
  out.workspace = !policy.workspace_root.empty() ? policy.workspace_root
                  : !cwd.empty()                 ? cwd
                                                 : CurrentDirectory();
  out.extra = policy.writable_roots;
  out.exclude_slash_tmp = policy.exclude_slash_tmp;
  out.exclude_tmpdir_env_var = policy.exclude_tmpdir_env_var;
  out.private_paths = policy.private_paths;
  return out;
}

Result<PreparedCommand> PrepareCommand(const CommandSpec& spec, bool exec_in_place) {
  PreparedCommand prepared;
  sandbox::SpawnOptions& options = prepared.options;
  options.argv = spec.argv;
  options.cwd = spec.cwd;
  options.env = spec.env_policy;
  for (const auto& [name, value] : spec.env_overrides) options.env.overrides[name] = value;
  options.timeout_ms = spec.timeout_ms;
  if (!spec.cwd.empty() && !IsDirectory(spec.cwd)) {
    return InvalidArgumentError("working directory '" + spec.cwd +
                                "' does not exist; pass an existing directory");
  }
  ASSIGN_OR_RETURN(sandbox::SandboxSpec sandbox_spec, ToSandboxSpec(spec));
  sandbox_spec.writable_shm = !exec_in_place;
  auto confinement = sandbox::Confinement::Prepare(sandbox_spec);
  if (!confinement.ok()) return confinement.status();
  prepared.confinement = std::move(*confinement);
  if (prepared.confinement->network() == sandbox::Network::kDenied) {
    // Lets tools (and tests) know not to try; the same variable Codex sets.
    options.env.overrides.emplace("CODEX_SANDBOX_NETWORK_DISABLED", "1");
  }
  options.child_setup = prepared.confinement.get();
  return prepared;
}

Result<CommandResult> SandboxedRunner::Run(const CommandSpec& spec, const CancelToken& cancel) {
  ASSIGN_OR_RETURN(PreparedCommand prepared, PrepareCommand(spec));
  sandbox::SpawnOptions& options = prepared.options;
  options.should_cancel = [&cancel] { return cancel.cancelled(); };
  options.on_output = spec.on_output;

  auto run = sandbox::RunProcess(options);
  if (!run.ok()) return run.status();
  sandbox::ProcessResult& r = *run;
  CommandResult out;
  out.exit_code = r.exit_code;
  out.signal = r.signal;
  out.timed_out = r.timed_out;
  out.output = std::move(r.output);
  out.stdout_text = std::move(r.stdout_text);
  out.stderr_text = std::move(r.stderr_text);
  out.dropped_bytes = r.output_dropped;
  out.dropped_lines = r.output_dropped_lines;
  out.gap_offset = r.output_gap_offset;
  out.wall_ms = r.wall_ms;
  return out;
}

}  // namespace codex::core
