#include "testing/fake_command_runner.h"

#include <string_view>

namespace codex::testing {

Result<core::CommandResult> FakeCommandRunner::Run(const core::CommandSpec& spec,
                                                   const core::CancelToken& cancel) {
  std::lock_guard<std::mutex> lock(mu_);
  ran.push_back(spec.argv);
  if (on_run) on_run();
  if (cancel.cancelled()) return Status(StatusCode::kCancelled, "the command was cancelled");
  core::CommandResult r;
  r.output = "ran " + spec.argv.back() + "\n";
  if (spec.on_output) {
    spec.on_output(std::string_view(r.output).substr(0, 3));
    spec.on_output(std::string_view(r.output).substr(3));
  }
  return r;
}

}  // namespace codex::testing
