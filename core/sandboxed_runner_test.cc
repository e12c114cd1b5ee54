#include "core/sandboxed_runner.h"

#include <catch2/catch.hpp>
#include <thread>

using namespace codex;
using namespace codex::core;

namespace {

CommandSpec Spec(std::vector<std::string> argv) {
  CommandSpec spec;
  spec.argv = std::move(argv);
  spec.sandbox.mode = SandboxMode::kDangerFullAccess;
  return spec;
}

}  // namespace

TEST_CASE("SandboxedRunner runs a command and maps the result") {
  SandboxedRunner runner;
  CancelToken cancel;
  auto spec = Spec({"sh", "-c", "echo hi; echo oops >&2; exit 7"});
  spec.env_overrides["UNUSED"] = "1";
  auto r = runner.Run(spec, cancel);
  REQUIRE(r.ok());
  CHECK(r->exit_code == 7);
  CHECK(r->stdout_text == "hi\n");
  CHECK(r->stderr_text == "oops\n");
  CHECK(r->output.size() == 8);
  CHECK(r->dropped_bytes == 0);
  CHECK_FALSE(r->timed_out);
}

TEST_CASE("SandboxedRunner honours the working directory and overrides") {
  SandboxedRunner runner;
  CancelToken cancel;
  auto spec = Spec({"sh", "-c", "pwd; echo $GREETING"});
  spec.cwd = "/";
  spec.env_overrides["GREETING"] = "hello";
  auto r = runner.Run(spec, cancel);
  REQUIRE(r.ok());
  CHECK(r->stdout_text == "/\nhello\n");
}

TEST_CASE("SandboxedRunner times out with exit code 124") {
  SandboxedRunner runner;
  CancelToken cancel;
  auto spec = Spec({"sleep", "30"});
  spec.timeout_ms = 200;
  auto r = runner.Run(spec, cancel);
  REQUIRE(r.ok());
  CHECK(r->timed_out);
  CHECK(r->exit_code == 124);
}

TEST_CASE("SandboxedRunner turns spawn failures into Status codes") {
  SandboxedRunner runner;
  CancelToken cancel;
  auto missing = runner.Run(Spec({"codex-definitely-missing-cmd"}), cancel);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == StatusCode::kNotFound);
  CHECK(missing.status().message().find("codex-definitely-missing-cmd") != std::string::npos);

  auto empty = runner.Run(Spec({}), cancel);
  REQUIRE_FALSE(empty.ok());
  CHECK(empty.status().code() == StatusCode::kInvalidArgument);

  auto spec = Spec({"true"});
  spec.cwd = "/nonexistent-codex-dir";
  auto bad_cwd = runner.Run(spec, cancel);
  REQUIRE_FALSE(bad_cwd.ok());
  CHECK(bad_cwd.status().code() == StatusCode::kInvalidArgument);
}

TEST_CASE("SandboxedRunner honours the CancelToken") {
  SandboxedRunner runner;
  CancelToken cancel;
  auto spec = Spec({"sleep", "30"});
  spec.timeout_ms = 60'000;
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    cancel.Cancel();
  });
  auto r = runner.Run(spec, cancel);
  canceller.join();
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::kCancelled);

  // Already cancelled: nothing runs.
  auto again = runner.Run(Spec({"true"}), cancel);
  REQUIRE_FALSE(again.ok());
  CHECK(again.status().code() == StatusCode::kCancelled);
}
