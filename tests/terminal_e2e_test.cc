// The interactive terminal UI on a pseudo-terminal against the scripted
// server: control sequences in a tool's output, in the command and in the
// model's text reach the terminal only as visible text (issue 10).
#include <catch2/catch.hpp>
#include <chrono>
#include <string>

#include "tests/e2e_support.h"
#include "tests/pty_support.h"

namespace codex::testing {
namespace {

using namespace std::chrono_literals;

TEST_CASE("interactive: escape sequences from a tool and the model are shown, not obeyed") {
  CodexTestEnvOptions options;
  auto env = CodexTestEnv::Create(R"({"responses": [
    {"output": [{"shell": ["printf", "\u001b]0;pwned-title\u0007\u001b[31;1mPWNED-RED\u001b[0m\u009b2J"],
                 "call_id": "esc"}]},
    "answer \u001b]0;model-title\u0007 done-answer"]})",
                                  options);
  REQUIRE(env.ok());
  auto p = PtyProcess::Spawn((*env)->CodexCommand({}));
  REQUIRE(p.ok());
  REQUIRE((*p)->WaitForText("›", 20s).ok());
  REQUIRE((*p)->Write("go\r").ok());
  INFO("raw: " << (*p)->raw());
  REQUIRE((*p)->WaitForText("done-answer", 20s).ok());
  const std::string& raw = (*p)->raw();
  // Nothing set the title, coloured the text or cleared the screen for them.
  CHECK(raw.find("\x1b]0;pwned-title") == std::string::npos);
  CHECK(raw.find("\x1b[31;1mPWNED-RED") == std::string::npos);
  CHECK(raw.find("\xc2\x9b"
                 "2J") == std::string::npos);
  CHECK(raw.find("\x1b]0;model-title") == std::string::npos);
  // They are visible instead.
  CHECK(raw.find("^[]0;pwned-title^G") != std::string::npos);
  CHECK(raw.find("^[[31;1mPWNED-RED") != std::string::npos);
  CHECK(raw.find("<U+009B>2J") != std::string::npos);
  CHECK(raw.find("^[]0;model-title^G") != std::string::npos);
  REQUIRE((*p)->Write("\x04").ok());
  auto code = (*p)->WaitExit(20s);
  REQUIRE(code.ok());
}

TEST_CASE("exec: the final message is neutralised on a terminal, exact on a pipe") {
  const std::string script = R"(["final \u001b]0;exec-title\u0007 \u001b[2J done-final"])";
  {
    auto env = CodexTestEnv::Create(script);
    REQUIRE(env.ok());
    auto p = PtyProcess::Spawn((*env)->CodexCommand({"exec", "go"}));
    REQUIRE(p.ok());
    auto code = (*p)->WaitExit(60s);
    INFO("raw: " << (*p)->raw());
    REQUIRE(code.ok());
    CHECK(*code == 0);
    const std::string& raw = (*p)->raw();
    CHECK(raw.find("\x1b]0;exec-title") == std::string::npos);
    CHECK(raw.find("\x1b[2J") == std::string::npos);
    CHECK(raw.find("final ^[]0;exec-title^G ^[[2J done-final") != std::string::npos);
  }
  {
    auto env = CodexTestEnv::Create(script);
    REQUIRE(env.ok());
    auto run = (*env)->RunCodex({"exec", "go"});
    REQUIRE(run.ok());
    CHECK(run->exit_code == 0);
    CHECK(run->out == "final \x1b]0;exec-title\x07 \x1b[2J done-final\n");
  }
}

}  // namespace
}  // namespace codex::testing
