// The promise of every `codex` command to a user who gets something wrong,
// walked as an adversary would: output that cannot be written (stdout closed,
// a full disk, a reader that goes away mid-turn), stdin that is closed or not
// a file, and malformed arguments. Each failure is one `error:` line naming
// what went wrong and what to do, the documented exit code (README "Exit
// codes"), no death by a signal, and nothing already committed lost: the
// session a turn wrote stays listed and resumable.
#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/e2e_checks.h"
#include "tests/e2e_support.h"

namespace codex::testing {
namespace {

using e2e::ErrorLines;
using e2e::JsonLines;
using e2e::MakeEnv;
using e2e::Run;
using e2e::RunChecked;
using e2e::SessionIdFromBanner;

// `codex ARGS` run by bash with `redirect` after it (">/dev/full", ">&-",
// "| head -1"): the exit status is codex's own (a death by SIGPIPE shows as
// 141), stdout is what reached the end of the pipeline.
ProcessResult RunRedirected(CodexTestEnv& env, std::vector<std::string> args,
                            const std::string& redirect) {
  ProcessOptions command = env.CodexCommand(std::move(args));
  std::vector<std::string> argv = {"/bin/bash", "-c",
                                   "\"$@\" " + redirect + "; exit ${PIPESTATUS[0]}", "bash"};
  argv.insert(argv.end(), command.argv.begin(), command.argv.end());
  command.argv = std::move(argv);
  return RunChecked(command);
}

// The one error line of a failed run ("" and a failed check unless there is
// exactly one).
std::string OneErrorLine(const ProcessResult& run) {
  INFO("stderr: " << run.err.substr(0, 4000));
  auto lines = ErrorLines(run.err);
  CHECK(lines.size() == 1);
  return lines.size() == 1 ? lines[0] : "";
}

// `codex sessions serve` with stdout closed or full: its URL (which carries
// the access token) cannot be shown, so it must not serve, nor run on.
TEST_CASE("sessions serve whose URL cannot be shown serves nothing and exits 1") {
  auto env = MakeEnv(R"({"default": "unused"})");
  for (const std::string redirect : {">&-", ">/dev/full"}) {
    INFO("codex sessions serve " << redirect);
    ProcessOptions command = env->CodexCommand({"sessions", "serve", "--port", "0"});
    std::vector<std::string> argv = {"/bin/bash", "-c", "\"$@\" " + redirect, "bash"};
    argv.insert(argv.end(), command.argv.begin(), command.argv.end());
    command.argv = std::move(argv);
    command.timeout = std::chrono::seconds(20);
    auto run = RunChecked(command);
    CHECK(run.exit_code == 1);
    const std::string line = OneErrorLine(run);
    CHECK_THAT(line, Catch::Contains("cannot write to stdout"));
    CHECK_THAT(line, Catch::Contains("nothing was served"));
  }
}

// The ids of `sessions list --json`.
std::vector<std::string> ListedIds(CodexTestEnv& env) {
  auto run = Run(env, {"sessions", "list", "--json"});
  REQUIRE(run.exit_code == 0);
  std::vector<std::string> ids;
  for (auto& row : JsonLines(run.out)) {
    if (row.is_object() && row.contains("id")) ids.push_back(row.value("id", ""));
  }
  return ids;
}

// A turn whose one command prints 300 KB: its command_execution event
// cannot fit a pipe's buffer, so a reader that stops after the first line
// is gone before it is written, whatever the timing.
constexpr char kBigToolScript[] = R"({
  "responses": [{"output": [{"shell": ["bash", "-c", "head -c 300000 /dev/zero | tr '\\0' a"]}]}],
  "default": "the default answer"
})";

TEST_CASE("exec --json whose reader goes away mid-turn: exit 1, one line, the session resumes") {
  auto env = MakeEnv(kBigToolScript);
  auto run = RunRedirected(*env, {"exec", "--json", "print a lot"}, "| head -1");
  INFO("stderr: " << run.err.substr(0, 4000));
  // The first event reached the reader; codex noticed the rest could not.
  auto first = JsonLines(run.out);
  REQUIRE(first.size() == 1);
  REQUIRE(first[0].value("type", "") == "thread.started");
  const std::string id = first[0].value("thread_id", "");
  CHECK(run.exit_code == 1);  // not 141: no death by SIGPIPE
  const std::string line = OneErrorLine(run);
  CHECK_THAT(line, Catch::Contains("stdout"));
  CHECK_THAT(line, Catch::Contains("codex exec resume " + id));

  // Nothing committed is lost: the session is listed and resumes.
  auto ids = ListedIds(*env);
  REQUIRE(ids.size() == 1);
  CHECK(ids[0] == id);
  auto resumed = Run(*env, {"exec", "resume", id, "go on"});
  CHECK(resumed.exit_code == 0);
  CHECK(resumed.out == "the default answer\n");
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() >= 2);
  CHECK_THAT(requests.back().InputItems().dump(), Catch::Contains("print a lot"));
}

TEST_CASE("exec whose stdout is closed or full exits 1 naming the saved session") {
  for (const std::string redirect : {">&-", ">/dev/full"}) {
    DYNAMIC_SECTION("exec " << redirect) {
      auto env = MakeEnv(R"({"default": "the answer"})");
      auto run = RunRedirected(*env, {"exec", "say something"}, redirect);
      CHECK(run.exit_code == 1);
      const std::string line = OneErrorLine(run);
      const std::string id = SessionIdFromBanner(run.err);
      REQUIRE_FALSE(id.empty());
      CHECK_THAT(line, Catch::Contains("stdout"));
      CHECK_THAT(line, Catch::Contains(id));
      // The turn ran and is kept: its answer can be read back.
      auto ids = ListedIds(*env);
      REQUIRE(ids.size() == 1);
      CHECK(ids[0] == id);
      auto shown = Run(*env, {"sessions", "show", id});
      CHECK(shown.exit_code == 0);
      CHECK_THAT(shown.out, Catch::Contains("the answer"));
    }
    DYNAMIC_SECTION("exec --json " << redirect) {
      // Nobody can read the events: nothing is sent, nothing is saved.
      auto env = MakeEnv(R"({"default": "the answer"})");
      auto run = RunRedirected(*env, {"exec", "--json", "say something"}, redirect);
      CHECK(run.exit_code == 1);
      const std::string line = OneErrorLine(run);
      CHECK_THAT(line, Catch::Contains("stdout"));
      CHECK_THAT(line, Catch::Contains("nothing was sent"));
      CHECK(env->server().requests_to("/responses").empty());
    }
  }
}

TEST_CASE("codex PROMPT in line mode with stdout full or closed exits 1; the session is kept") {
  for (const std::string redirect : {">&-", ">/dev/full"}) {
    INFO("codex PROMPT " << redirect);
    auto env = MakeEnv(R"({"default": "a line-mode answer"})");
    auto run = RunRedirected(*env, {"tell me"}, "</dev/null " + redirect);
    CHECK(run.exit_code == 1);
    CHECK_THAT(OneErrorLine(run), Catch::Contains("cannot write to stdout"));
    auto ids = ListedIds(*env);
    REQUIRE(ids.size() == 1);
    auto shown = Run(*env, {"sessions", "show", ids[0]});
    CHECK_THAT(shown.out, Catch::Contains("a line-mode answer"));
  }
}

TEST_CASE("every command whose stdout is closed or full exits 1 with one line; none says 0") {
  auto env = MakeEnv(R"({"default": "an answer worth keeping"})");
  auto made = Run(*env, {"exec", "first words"});
  REQUIRE(made.exit_code == 0);
  const std::string id = SessionIdFromBanner(made.err);
  const std::vector<std::vector<std::string>> commands = {{"sessions", "list"},
                                                          {"sessions", "list", "--json"},
                                                          {"sessions", "show", id},
                                                          {"sessions", "show", id, "--json"},
                                                          {"sessions", "export", id},
                                                          {"sessions", "tree", id},
                                                          {"sessions", "search", "answer"},
                                                          {"sessions", "usage"},
                                                          {"features", "list"},
                                                          {"completion"},
                                                          {"--help"},
                                                          {"sessions", "list", "--help"},
                                                          {"--version"}};
  for (const auto& args : commands) {
    for (const std::string redirect : {">&-", ">/dev/full"}) {
      std::string shown;
      for (const auto& a : args) shown += " " + a;
      INFO("codex" << shown << " " << redirect);
      auto run = RunRedirected(*env, args, redirect);
      CHECK(run.exit_code == 1);
      CHECK_THAT(OneErrorLine(run), Catch::Contains("cannot write to stdout"));
    }
  }
  // Nothing was lost on the way.
  auto ids = ListedIds(*env);
  REQUIRE(ids.size() == 1);
  CHECK(ids[0] == id);
}

TEST_CASE(
    "a pipe closed early (| head): exit 1 without a line, never a death by SIGPIPE nor exit 0") {
  // The reader's own choice (`| head -1`): nothing to report on stderr, as
  // for a program that SIGPIPE ends, but the status says the output was cut.
  // A 300 KB prompt: the export cannot fit a pipe's buffer.
  auto env = MakeEnv(R"({"default": "read it"})");
  auto made = Run(*env, {"exec", "-"}, std::string(300000, 'w'));
  REQUIRE(made.exit_code == 0);
  const std::string id = SessionIdFromBanner(made.err);
  for (const std::string format : {"jsonl", "markdown"}) {
    INFO("--format " << format);
    auto run = RunRedirected(*env, {"sessions", "export", id, "--format", format}, "| head -c 10");
    CHECK(run.out.size() == 10);
    CHECK(run.exit_code == 1);
    CHECK(ErrorLines(run.err).empty());
    CHECK(run.err.find("cannot write") == std::string::npos);
  }
  // A command that prints through CommandOutcome (the 300 KB prompt is
  // more than a pipe holds).
  auto head = RunRedirected(*env, {"sessions", "show", id}, "| head -1");
  CHECK(head.out.find('\n') == head.out.size() - 1);
  CHECK(head.exit_code == 1);
  CHECK(ErrorLines(head.err).empty());
  auto whole = Run(*env, {"sessions", "export", id});
  CHECK(whole.exit_code == 0);
  CHECK(whole.out.size() > 300000);
}

TEST_CASE("sessions import | head -1: every rollout is imported, exit 1 without a line") {
  auto env = MakeEnv(R"(["unused"])");
  // 240 rollouts under a 200-character directory: ~75 KB of "imported ... from ..." lines,
  // more than a pipe holds, so the reader is gone before the last of them, whatever the timing.
  const std::filesystem::path dir = env->root() / std::string(200, 'd');
  std::filesystem::create_directories(dir);
  for (int i = 0; i < 240; ++i) {
    char id[40];
    std::snprintf(id, sizeof id, "01900000-0000-7000-8000-%012d", i);
    std::ofstream(dir / ("r" + std::to_string(i) + ".jsonl"))
        << R"({"timestamp":"2026-01-02T03:04:05.000Z","type":"session_meta","payload":{"id":")"
        << id << R"(","cwd":"/x"}})"
        << "\n";
  }
  auto run = RunRedirected(*env, {"sessions", "import", dir.string()}, "| head -1");
  INFO("stderr: " << run.err);
  CHECK(run.out.rfind("imported 01900000-", 0) == 0);
  CHECK(run.exit_code == 1);
  CHECK(ErrorLines(run.err).empty());
  CHECK(run.err.find("cannot write") == std::string::npos);
  CHECK(run.err.find("240 imported, 0 already present, 0 failed") != std::string::npos);
  auto again = Run(*env, {"sessions", "import", "--json", dir.string()});
  REQUIRE(again.exit_code == 0);
  CHECK(nlohmann::json::parse(again.out)["already_present"] == 240);
}

TEST_CASE(
    "exec -o into a missing directory or a directory: the answer still shows, the line names the "
    "session") {
  auto env = MakeEnv(R"({"default": "the answer to keep"})");
  for (const std::string& target :
       {(env->root() / "no such dir" / "last.txt").string(), env->root().string()}) {
    INFO("-o " << target);
    auto run = Run(*env, {"exec", "-o", target, "say it"});
    CHECK(run.exit_code == 1);
    CHECK(run.out == "the answer to keep\n");
    const std::string id = SessionIdFromBanner(run.err);
    REQUIRE_FALSE(id.empty());
    const std::string line = OneErrorLine(run);
    CHECK_THAT(line, Catch::Contains(target));
    CHECK_THAT(line, Catch::Contains("codex sessions show " + id));
  }
}

TEST_CASE("-o naming a full device or a directory says which cause, for exec and export") {
  auto env = MakeEnv(R"({"default": "the answer to keep"})");
  auto made = Run(*env, {"exec", "first"});
  REQUIRE(made.exit_code == 0);
  const std::string id = SessionIdFromBanner(made.err);
  for (const auto& [target, cause] : std::vector<std::pair<std::string, std::string>>{
           {"/dev/full", "No space left on device"},
           {env->root().string(), "Is a directory"},
           {(env->root() / "absent" / "f").string(), "No such file or directory"}}) {
    INFO("-o " << target);
    auto exec = Run(*env, {"exec", "-o", target, "again"});
    CHECK(exec.exit_code == 1);
    CHECK_THAT(OneErrorLine(exec), Catch::Contains(target + ": " + cause));
    auto exported = Run(*env, {"sessions", "export", id, "-o", target});
    CHECK(exported.exit_code == 1);
    CHECK_THAT(OneErrorLine(exported), Catch::Contains(target + ": " + cause));
  }
}

TEST_CASE("an option given an empty value (an unset variable) is refused, never read as absent") {
  auto env = MakeEnv(R"({"default": "unused"})");
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"exec", "-C", "", "hi"},
           {"exec", "-o", "", "hi"},
           {"exec", "--output-schema", "", "hi"},
           {"exec", "-m", "", "hi"},
           {"exec", "--add-dir", "", "-s", "workspace-write", "hi"},
           {"-C", "", "exec", "hi"},
           {"-C", "", "hi"},
           {"-p", "", "exec", "hi"},
           {"exec", "-p", "", "hi"}}) {
    std::string shown;
    for (const auto& a : args) shown += " '" + a + "'";
    INFO("codex" << shown);
    auto run = Run(*env, args);
    CHECK(run.exit_code == 2);
    CHECK_THAT(OneErrorLine(run), Catch::Contains("empty value"));
  }
  CHECK(env->server().requests_to("/responses").empty());
  CHECK(ListedIds(*env).empty());
}

TEST_CASE("exec - with stdin closed, empty or a directory says what stdin held; nothing sent") {
  auto env = MakeEnv(R"({"default": "never"})");
  struct Case {
    std::string redirect;
    std::string says;
  };
  const std::vector<Case> cases = {{"<&-", "stdin"},
                                   {"</dev/null", "stdin was empty"},
                                   {"<<<'   '", "stdin was empty"},
                                   {"</", "cannot read the prompt from stdin"}};
  for (const auto& c : cases) {
    INFO("codex exec - " << c.redirect);
    auto run = RunRedirected(*env, {"exec", "-"}, c.redirect);
    CHECK(run.exit_code == 2);
    const std::string line = OneErrorLine(run);
    CHECK_THAT(line, Catch::Contains(c.says));
    // Not the hint for a missing '-': it was given.
    CHECK_THAT(line, !Catch::Contains("or '-' to read it from stdin"));
  }
  CHECK(env->server().requests_to("/responses").empty());
  CHECK(ListedIds(*env).empty());
}

TEST_CASE("a 100 KB argument, or 100000 of them, gives a short line that still says what to do") {
  auto env = MakeEnv(R"({"default": "unused"})");
  std::vector<std::string> many = {"exec"};
  for (int i = 0; i < 100'000; ++i) many.push_back(std::to_string(i));
  for (const auto& args :
       std::vector<std::vector<std::string>>{{"sessions", "show", std::string(100'000, 'a')},
                                             {"exec", "resume", std::string(100'000, 'b'), "hi"},
                                             many}) {
    INFO("codex " << args[0] << " " << args[1].substr(0, 20) << " ... (" << args.size()
                  << " args)");
    auto run = Run(*env, args);
    CHECK((run.exit_code == 2 || run.exit_code == 4));
    const std::string line = OneErrorLine(run);
    CHECK(line.size() < 1200);
    CHECK_THAT(line, Catch::Contains("codex"));  // the what-to-do end is kept
  }
}

TEST_CASE(
    "--full-auto with --dangerously-bypass-approvals-and-sandbox is refused, not the riskier") {
  auto env = MakeEnv(R"({"default": "unused"})");
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"exec", "--full-auto", "--dangerously-bypass-approvals-and-sandbox", "hi"},
           {"--full-auto", "exec", "--dangerously-bypass-approvals-and-sandbox", "hi"},
           {"--dangerously-bypass-approvals-and-sandbox", "--full-auto", "hi"}}) {
    std::string shown;
    for (const auto& a : args) shown += " " + a;
    INFO("codex" << shown);
    auto run = Run(*env, args);
    CHECK(run.exit_code == 2);
    CHECK_THAT(OneErrorLine(run), Catch::Contains("contradict"));
  }
  CHECK(env->server().requests_to("/responses").empty());
  CHECK(ListedIds(*env).empty());
}

TEST_CASE("an argument with a newline cannot split the error into two lines or forge one") {
  auto env = MakeEnv(R"({"default": "an answer"})");
  for (int i = 0; i < 2; ++i)
    REQUIRE(Run(*env, {"exec", "session " + std::to_string(i)}).exit_code == 0);
  const std::string forged = "a\nerror: forged\rb";
  const std::vector<std::vector<std::string>> commands = {
      {"sessions", "show", forged},
      {"exec", "-C", forged, "hi"},
      {"exec", "-i", forged, "--", "hi"},
      {"exec", "--output-schema", forged, "hi"},
      {"exec", "-s", forged, "hi"},
      {"exec", "-p", forged, "hi"},
      {"sessions", "list", "--cursor", forged},
      {"sessions", "purge", "--older-than", forged},
      {"features", "enable", forged},
      {"exec", "--" + forged},
      // Several sessions share the prefix "0": the candidates go on the same line.
      {"sessions", "show", "0"}};
  for (const auto& args : commands) {
    std::string shown;
    for (const auto& a : args) shown += " " + a;
    INFO("codex" << shown);
    auto run = Run(*env, args);
    CHECK(run.exit_code != 0);
    CHECK(run.err.rfind("error: ", 0) == 0);
    CHECK(run.err.find('\n') == run.err.size() - 1);
    CHECK(run.err.find('\r') == std::string::npos);
  }
}

}  // namespace
}  // namespace codex::testing
