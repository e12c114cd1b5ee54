// Tests of the end-to-end support library: real child processes and the
// temporary CODEX_HOME wiring (with /bin/sh standing in for codex).
#include "tests/e2e_support.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "testing/eventually.h"
#include "testing/files.h"
#include "testing/processes.h"
#include "testing/temp_dir.h"

namespace codex::testing {
namespace {

ProcessOptions Shell(const std::string& script) {
  ProcessOptions p;
  p.argv = {"/bin/sh", "-c", script};
  p.timeout = std::chrono::seconds(30);
  return p;
}

}  // namespace

TEST_CASE("RunProcess captures stdout, stderr and the exit code") {
  auto r = RunProcess(Shell("echo out; echo err >&2; exit 3"));
  REQUIRE(r.ok());
  CHECK(r->out == "out\n");
  CHECK(r->err == "err\n");
  CHECK(r->exit_code == 3);
  CHECK(r->term_signal == 0);
  CHECK_FALSE(r->timed_out);
}

TEST_CASE("RunProcess feeds stdin and copes with large output on both pipes") {
  ProcessOptions p = Shell("cat; head -c 300000 /dev/zero | tr '\\0' e >&2");
  std::string input(500000, 'i');
  p.stdin_text = input;
  auto r = RunProcess(p);
  REQUIRE(r.ok());
  CHECK(r->exit_code == 0);
  CHECK(r->out == input);
  CHECK(r->err == std::string(300000, 'e'));
}

TEST_CASE("RunProcess applies env, unset_env and cwd") {
  auto dir = std::filesystem::temp_directory_path();
  ProcessOptions p = Shell("echo \"$ADDED|${HOME-unset}\"; pwd");
  p.env = {{"ADDED", "yes"}};
  p.unset_env = {"HOME"};
  p.cwd = dir;
  auto r = RunProcess(p);
  REQUIRE(r.ok());
  CHECK(r->out == "yes|unset\n" + std::filesystem::canonical(dir).string() + "\n");
}

TEST_CASE("RunProcess kills the whole process group on timeout") {
  ProcessOptions p = Shell("sleep 30 & echo started; sleep 30");
  p.timeout = std::chrono::milliseconds(500);
  auto r = RunProcess(p);
  REQUIRE(r.ok());
  CHECK(r->timed_out);
  CHECK(r->term_signal == SIGKILL);
  CHECK(r->exit_code == -1);
  CHECK(r->out == "started\n");
}

TEST_CASE("Spawn reports a program that cannot be executed") {
  ProcessOptions p;
  p.argv = {"/nonexistent/codex-binary"};
  auto r = ChildProcess::Spawn(p);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::kNotFound);
  CHECK_THAT(r.status().message(), Catch::Contains("/nonexistent/codex-binary"));
  CHECK(ChildProcess::Spawn(ProcessOptions{}).status().code() == StatusCode::kInvalidArgument);
}

TEST_CASE("ChildProcess reads lines as they come and takes signals") {
  auto child = ChildProcess::Spawn(Shell("echo one; echo two; exec sleep 30"));
  REQUIRE(child.ok());
  CHECK(*(*child)->ReadStdoutLine(std::chrono::seconds(10)) == "one");
  CHECK(*(*child)->ReadStdoutLine(std::chrono::seconds(10)) == "two");
  REQUIRE((*child)->Signal(SIGTERM).ok());
  auto r = (*child)->Wait(std::chrono::seconds(10));
  REQUIRE(r.ok());
  CHECK(r->term_signal == SIGTERM);
  CHECK(r->out == "one\ntwo\n");
}

TEST_CASE("CodexTestEnv writes a config for the scripted provider and cleans up") {
  CodexTestEnvOptions options;
  options.codex_binary = "/bin/sh";
  options.extra_config = "approval_policy = \"never\"";
  std::filesystem::path root;
  {
    auto env = CodexTestEnv::Create(R"(["hi"])", options);
    INFO(env.status().ToString());
    REQUIRE(env.ok());
    root = (*env)->root();
    auto r = (*env)->RunCodex(
        {"-c", "cat \"$CODEX_HOME/config.toml\"; echo \"key=$SCRIPTED_API_KEY\"; pwd"});
    REQUIRE(r.ok());
    CHECK(r->exit_code == 0);
    std::string expected_url = "base_url = \"" + (*env)->server().base_url() + "\"";
    CHECK_THAT(r->out, Catch::StartsWith("model = \"gpt-test\"\nmodel_provider = \"scripted\"\n"
                                         "approval_policy = \"never\"\n"));
    CHECK_THAT(r->out, Catch::Contains("[model_providers.scripted]") &&
                           Catch::Contains(expected_url) &&
                           Catch::Contains("env_key = \"SCRIPTED_API_KEY\"") &&
                           Catch::Contains("wire_api = \"responses\"") &&
                           Catch::Contains("key=sk-scripted-test"));
    CHECK_THAT(r->out, Catch::EndsWith((*env)->workdir().string() + "\n"));
    CHECK((*env)->server().base_url() ==
          "http://127.0.0.1:" + std::to_string((*env)->server().port()) + "/v1");
    CHECK(std::filesystem::is_directory(root));
  }
  CHECK_FALSE(std::filesystem::exists(root));
}

TEST_CASE("ItemsOfType picks input items by type") {
  RecordedRequest r;
  r.body = Json::parse(R"({"input": [
    {"role": "user", "content": "typeless message"},
    {"type": "function_call", "call_id": "c1", "name": "shell", "arguments": "{}"},
    {"type": "function_call_output", "call_id": "c1", "output": "x"},
    {"type": "message", "role": "assistant", "content": []}
  ]})");
  CHECK(ItemsOfType(r, "message").size() == 2);
  CHECK(ItemsOfType(r, "function_call_output").size() == 1);
  CHECK(ItemsOfType(r, "reasoning").empty());
}

TEST_CASE("ReadFile of what cannot be read midway is empty, never an exception") {
  // A directory opens but fails at its first read (EISDIR), as a /proc file
  // of a process that ends between the open and the read fails (ESRCH).
  TempDir dir("codex-readfile-");
  CHECK(ReadFile(dir.path()) == "");
  CHECK(ReadFile(dir.path() / "absent") == "");
}

TEST_CASE("Processes, ProcessEnded and ProcessesMentioning see a child come and go") {
  const std::string token = "codex-processes-test-" + std::to_string(::getpid());
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ::execl("/bin/sh", "sh", "-c", "sleep 30", token.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  REQUIRE(Eventually([&] { return ProcessesMentioning(token).size() == 1; }));
  const auto found = ProcessesMentioning(token);
  CHECK(found[0].pid == child);
  CHECK(found[0].parent == ::getpid());
  CHECK_FALSE(ProcessEnded(child));
  ::kill(child, SIGKILL);
  // A zombie not yet reaped has ended, and is no longer mentioned.
  REQUIRE(Eventually([&] { return ProcessEnded(child); }));
  CHECK(ProcessesMentioning(token).empty());
  int status = 0;
  ::waitpid(child, &status, 0);
  CHECK(ProcessEnded(child));
}

}  // namespace codex::testing
