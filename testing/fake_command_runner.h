// FakeCommandRunner: a core::CommandRunner that runs nothing (test support,
// never linked into codex). Each Run records its argv, calls `on_run` (a test
// may cancel from there) and answers "ran <last argument>\n", handed to
// spec.on_output in two pieces as the real runner hands output as it is read;
// a command whose cancel fired by then ends as the real runner's does
// (kCancelled). Runs may come from several threads (the calls of one
// response run together); `ran` is read once they are done.
#pragma once

#include <functional>
#include <mutex>
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

 private:
  std::mutex mu_;  // one Run at a time: `ran` and on_run are the test's
};

}  // namespace codex::testing
