// FakeCommandRunner: a core::CommandRunner that runs nothing (test support,
// never linked into codex). Each Run records its argv, calls `on_run` (a test
// may cancel from there) and answers "ran <last argument>\n", handed to
// spec.on_output in two pieces as the real runner hands output as it is read.
// Not thread-safe.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/command_runner.h"

namespace codex::testing {

class FakeCommandRunner final : public core::CommandRunner {
 public:
  Result<core::CommandResult> Run(const core::CommandSpec& spec,
                                  const core::CancelToken& cancel) override;

  std::vector<std::vector<std::string>> ran;
  std::function<void()> on_run;
};

}  // namespace codex::testing
