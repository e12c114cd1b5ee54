#include "core/sandboxed_runner.h"

#include <utility>

#include "sandbox/process.h"

namespace codex::core {
namespace {

Status ToStatus(const sandbox::Error& error) {
  switch (error.kind()) {
    case sandbox::ErrorKind::kInvalidArgument:
      return InvalidArgumentError(error.message());
    case sandbox::ErrorKind::kNotFound:
      return NotFoundError(error.message());
    case sandbox::ErrorKind::kPermissionDenied:
    case sandbox::ErrorKind::kUnavailable:
      return FailedPreconditionError(error.message());
    case sandbox::ErrorKind::kCancelled:
      return CancelledError(error.message());
    case sandbox::ErrorKind::kInternal:
      break;
  }
  return InternalError(error.message());
}

}  // namespace

Result<CommandResult> SandboxedRunner::Run(const CommandSpec& spec, const CancelToken& cancel) {
  sandbox::SpawnOptions options;
  options.argv = spec.argv;
  options.cwd = spec.cwd;
  options.env.inherit = sandbox::EnvInherit::kAll;
  options.env.secrets = sandbox::SecretFilter::kDropSecretLike;
  options.env.overrides = spec.env_overrides;
  options.timeout_ms = spec.timeout_ms;
  options.should_cancel = [&cancel] { return cancel.cancelled(); };
  // FIXME(sandbox): spec.sandbox is not enforced yet; Landlock + seccomp land next.

  auto run = sandbox::RunProcess(options);
  if (!run.ok()) return ToStatus(run.error());
  sandbox::ProcessResult& r = *run;
  CommandResult out;
  out.exit_code = r.exit_code;
  out.signal = r.signal;
  out.timed_out = r.timed_out;
  out.output = std::move(r.output);
  out.stdout_text = std::move(r.stdout_text);
  out.stderr_text = std::move(r.stderr_text);
  out.dropped_bytes = r.output_dropped;
  out.wall_ms = r.wall_ms;
  return out;
}

}  // namespace codex::core
