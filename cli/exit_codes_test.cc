// CommandOutcome and ExitCodeFor: the one place a command's Status becomes
// the process exit code and the `error:` line (cli/exit_codes.h).
#include "cli/exit_codes.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "core/model_client.h"
#include "core/session_store.h"

namespace cli = codex::cli;
namespace core = codex::core;
using codex::Status;
using codex::StatusCode;
using codex::StatusReason;

namespace {

// What `f` writes on stderr, through a temporary file.
template <typename F>
std::string CaptureStderr(F&& f) {
  char path[] = "/tmp/codex-exit-codes-XXXXXX";
  const int fd = ::mkstemp(path);
  REQUIRE(fd >= 0);
  std::fflush(stderr);
  const int saved = ::dup(STDERR_FILENO);
  REQUIRE(saved >= 0);
  REQUIRE(::dup2(fd, STDERR_FILENO) == STDERR_FILENO);
  f();
  std::fflush(stderr);
  ::dup2(saved, STDERR_FILENO);
  ::close(saved);
  ::close(fd);
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  ::unlink(path);
  return text.str();
}

Status WithReason(Status status, StatusReason reason) {
  status.WithReason(reason);
  return status;
}

}  // namespace

TEST_CASE("ExitCodeFor maps each code and the reasons that change it") {
  CHECK(cli::ExitCodeFor(codex::OkStatus()) == cli::kExitOk);
  CHECK(cli::ExitCodeFor(codex::InvalidArgumentError("x")) == cli::kExitUsage);
  // A request the server refused is not a mistake on the command line.
  CHECK(cli::ExitCodeFor(WithReason(codex::InvalidArgumentError("x"),
                                    core::reason::kRejectedByServer)) == cli::kExitError);
  // An ambiguous prefix is: give more characters.
  CHECK(cli::ExitCodeFor(WithReason(codex::InvalidArgumentError("x"),
                                    core::reason::kAmbiguousPrefix)) == cli::kExitUsage);
  CHECK(cli::ExitCodeFor(codex::NotFoundError("x")) == cli::kExitNotFound);
  CHECK(cli::ExitCodeFor(codex::UnauthenticatedError("x")) == cli::kExitAuth);
  CHECK(cli::ExitCodeFor(codex::CancelledError("x")) == cli::kExitInterrupted);
  CHECK(cli::ExitCodeFor(WithReason(codex::FailedPreconditionError("x"),
                                    core::reason::kSessionAdvanced)) == cli::kExitConflict);
  CHECK(cli::ExitCodeFor(WithReason(codex::FailedPreconditionError("x"),
                                    core::reason::kSessionBusy)) == cli::kExitConflict);
  CHECK(cli::ExitCodeFor(codex::FailedPreconditionError("x")) == cli::kExitError);
  for (StatusCode code :
       {StatusCode::kResourceExhausted, StatusCode::kDeadlineExceeded, StatusCode::kUnavailable,
        StatusCode::kPermissionDenied, StatusCode::kDataLoss, StatusCode::kInternal}) {
    INFO(codex::StatusCodeName(code));
    CHECK(cli::ExitCodeFor(Status(code, "x")) == cli::kExitError);
  }
}

TEST_CASE("CommandOutcome: nothing set and OK are exit 0, silently") {
  cli::CommandOutcome untouched;
  int code = -1;
  CHECK(CaptureStderr([&] { code = untouched.Finish(); }).empty());
  CHECK(code == cli::kExitOk);

  cli::CommandOutcome ok;
  ok.Set(codex::OkStatus());
  CHECK(CaptureStderr([&] { code = ok.Finish(); }).empty());
  CHECK(code == cli::kExitOk);
}

TEST_CASE("CommandOutcome: a failure is one error line and ExitCodeFor's code") {
  cli::CommandOutcome outcome;
  outcome.Set(WithReason(codex::FailedPreconditionError("session 0193 is busy; wait"),
                         core::reason::kSessionBusy));
  int code = -1;
  const std::string err = CaptureStderr([&] { code = outcome.Finish(); });
  CHECK(err == "error: session 0193 is busy; wait\n");
  CHECK(code == cli::kExitConflict);
}

TEST_CASE("CommandOutcome: the error line never shows a store password") {
  cli::CommandOutcome outcome;
  outcome.Set(codex::UnavailableError(
      "cannot reach postgresql://codex:hunter2@db.internal:5432/team; check the server"));
  int code = -1;
  const std::string err = CaptureStderr([&] { code = outcome.Finish(); });
  CHECK(err.rfind("error: cannot reach postgresql://codex:", 0) == 0);
  CHECK(err.find("hunter2") == std::string::npos);
  CHECK(code == cli::kExitError);
}

TEST_CASE("CommandOutcome: an exit code of the command's own passes through") {
  for (int own : {0, 1, 2, 126, 127}) {
    cli::CommandOutcome outcome;
    outcome.Set(codex::Result<int>(own));
    int code = -1;
    CHECK(CaptureStderr([&] { code = outcome.Finish(); }).empty());
    CHECK(code == own);
  }
  // A failed Result<int> is a failure like a Status.
  cli::CommandOutcome failed;
  failed.Set(codex::Result<int>(codex::NotFoundError("no session 'x'")));
  int code = -1;
  CHECK(CaptureStderr([&] { code = failed.Finish(); }) == "error: no session 'x'\n");
  CHECK(code == cli::kExitNotFound);
}

TEST_CASE("CommandOutcome: the last Set wins") {
  // main() sets a CLI11 parse error after nothing ran, or a command sets
  // its result once; either way only the last one is reported.
  cli::CommandOutcome outcome;
  outcome.Set(codex::InvalidArgumentError("first"));
  outcome.Set(codex::OkStatus());
  int code = -1;
  CHECK(CaptureStderr([&] { code = outcome.Finish(); }).empty());
  CHECK(code == cli::kExitOk);
}

TEST_CASE("CommandOutcome: a line break in the message cannot split or forge the error line") {
  cli::CommandOutcome outcome;
  outcome.Set(codex::NotFoundError("no session 'a\nerror: forged\r'; list sessions"));
  int code = -1;
  const std::string err = CaptureStderr([&] { code = outcome.Finish(); });
  CHECK(err == "error: no session 'a\\nerror: forged\\r'; list sessions\n");
  CHECK(code == cli::kExitNotFound);
}

TEST_CASE("CommandOutcome: a huge quoted argument leaves a short line that still says what to do") {
  cli::CommandOutcome outcome;
  // 100 KB of a two-byte character: the cuts fall on character boundaries.
  std::string id;
  for (int i = 0; i < 50'000; ++i) id += "\xc3\xa9";
  outcome.Set(
      codex::NotFoundError("no session '" + id + "'; list sessions with 'codex sessions list'"));
  int code = -1;
  const std::string err = CaptureStderr([&] { code = outcome.Finish(); });
  CHECK(err.size() < 1200);
  CHECK(err.rfind("error: no session '\xc3\xa9", 0) == 0);
  CHECK(err.find("bytes left out") != std::string::npos);
  CHECK(err.find("'; list sessions with 'codex sessions list'\n") != std::string::npos);
  CHECK(err.find('\n') == err.size() - 1);
  // Every byte sequence is whole: no lone continuation byte after a cut.
  for (size_t i = 0; i + 1 < err.size(); ++i) {
    if (err[i] == '\xc3') CHECK((err[i + 1] & 0xC0) == 0x80);
  }
  CHECK(code == cli::kExitNotFound);
}
