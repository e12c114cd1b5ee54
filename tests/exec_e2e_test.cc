// End-to-end tests of `codex exec` (the walking skeleton) and its error
// paths: the real binary against an in-process ScriptedServer, each test in
// its own temporary CODEX_HOME. The server rejects (HTTP 400) any request
// that breaks the stateless wire rules, so a passing run already proves them;
// the tests check the recorded requests explicitly as well.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/e2e_checks.h"
#include "tests/e2e_support.h"

namespace codex::testing {
namespace {

using e2e::CheckWireRules;
using e2e::ErrorLines;
using e2e::InputExtends;
using e2e::JsonLines;
using e2e::MakeEnv;
using e2e::OutputFor;
using e2e::Run;
using e2e::SessionIdFromBanner;

// The text of the last user message of a request's input.
std::string LastUserText(const RecordedRequest& r) {
  std::string text;
  for (const auto& item : r.InputItems()) {
    if (item.value("type", "message") == "message" && item.value("role", "") == "user") {
      text.clear();
      for (const auto& part : item["content"]) text += part.value("text", "");
    }
  }
  return text;
}

// The `sessions list --json` rows (without a next_cursor row).
std::vector<Json> ListSessions(CodexTestEnv& env) {
  auto run = Run(env, {"sessions", "list", "--json"});
  REQUIRE(run.exit_code == 0);
  std::vector<Json> rows;
  for (auto& row : JsonLines(run.out)) {
    if (row.is_object() && row.contains("id")) rows.push_back(row);
  }
  return rows;
}

// Checks that a failed run printed exactly one "error: ..." line, last on
// stderr, containing every one of `words`.
void CheckOneErrorLine(const ProcessResult& run, const std::vector<std::string>& words) {
  INFO("stderr: " << run.err);
  auto lines = ErrorLines(run.err);
  REQUIRE(lines.size() == 1);
  CHECK(run.err.size() >= lines[0].size() + 1);
  CHECK(run.err.compare(run.err.size() - lines[0].size() - 1, std::string::npos, lines[0] + "\n") ==
        0);
  for (const auto& w : words) CHECK_THAT(lines[0], Catch::Contains(w, Catch::CaseSensitive::No));
  CHECK(run.out.empty());
}

// A loopback port nothing listens on (bound, then closed).
int ClosedPort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  socklen_t len = sizeof addr;
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
  ::close(fd);
  return ntohs(addr.sin_port);
}

constexpr char kThreeCalls[] = R"({"responses": [
  {"output": [{"reasoning": "plan"}, {"shell": ["echo", "one"]}],
   "usage": {"input_tokens": 100, "cached_tokens": 40, "output_tokens": 10, "reasoning_tokens": 5}},
  {"output": [{"shell": ["echo", "two"]}],
   "usage": {"input_tokens": 200, "cached_tokens": 100, "output_tokens": 20, "reasoning_tokens": 6}},
  {"output": [{"shell": ["sh", "-c", "echo three"]}],
   "usage": {"input_tokens": 300, "cached_tokens": 200, "output_tokens": 30, "reasoning_tokens": 7}},
  {"message": "All three ran.",
   "usage": {"input_tokens": 400, "cached_tokens": 300, "output_tokens": 40, "reasoning_tokens": 8}}
]})";

// A turn = a reasoning + shell call, then a reasoning + final message.
constexpr char kTurns[] = R"({"responses": [{"repeat": 10, "entries": [
  {"output": [{"reasoning": "think {{n}}"}, {"shell": ["echo", "tool {{n}}"]}]},
  {"output": [{"reasoning": "wrap up {{n}}"}], "message": "answer {{n}}"}
]}]})";

}  // namespace

// ---------------------------------------------------------------------------
// A. The walking skeleton.

TEST_CASE("exec: one turn prints only the final message on stdout") {
  auto env = MakeEnv(R"(["Hello from the script"])");
  auto run = Run(*env, {"exec", "say hi"});
  CHECK(run.exit_code == 0);
  CHECK(run.out == "Hello from the script\n");
  const std::string id = SessionIdFromBanner(run.err);
  REQUIRE(id.size() == 36);
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 1);
  CHECK(requests[0].status == 200);
  CheckWireRules(requests[0], id);
  CHECK(requests[0].body.value("model", "") == "gpt-test");
  CHECK(LastUserText(requests[0]) == "say hi");
}

TEST_CASE("exec: '-' reads the prompt from stdin") {
  auto env = MakeEnv(R"(["read it"])");
  auto run = Run(*env, {"exec", "-"}, std::string("a prompt\nfrom stdin\n"));
  CHECK(run.exit_code == 0);
  CHECK(run.out == "read it\n");
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 1);
  CHECK_THAT(LastUserText(requests[0]), Catch::Contains("a prompt\nfrom stdin"));
}

TEST_CASE("exec: a three-call tool loop runs real commands and feeds each output back") {
  auto env = MakeEnv(kThreeCalls);
  auto run = Run(*env, {"exec", "run three commands"});
  INFO("stderr: " << run.err);
  CHECK(run.exit_code == 0);
  CHECK(run.out == "All three ran.\n");
  const std::string id = SessionIdFromBanner(run.err);
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 4);
  const char* expected[] = {"one\n", "two\n", "three\n"};
  for (size_t k = 0; k < requests.size(); ++k) {
    CHECK(requests[k].status == 200);
    CheckWireRules(requests[k], id);
    if (k > 0) CHECK(InputExtends(requests[k - 1], requests[k]));
  }
  // Request k+1 carries the output of the call made in response k.
  for (size_t k = 1; k < requests.size(); ++k) {
    auto calls = ItemsOfType(requests[k], "function_call");
    REQUIRE(calls.size() == k);
    const std::string call_id = calls[k - 1].value("call_id", "");
    CHECK_THAT(OutputFor(requests[k].InputItems(), call_id),
               Catch::Contains(Json(expected[k - 1]).dump()));
  }
}

TEST_CASE("exec --json: thread, turn, command_execution, agent_message and usage events") {
  auto env = MakeEnv(kThreeCalls);
  auto run = Run(*env, {"exec", "--json", "run three commands"});
  INFO("stdout: " << run.out << "\nstderr: " << run.err);
  REQUIRE(run.exit_code == 0);
  auto events = JsonLines(run.out);
  REQUIRE(events.size() >= 4);
  const std::string id = events[0].value("thread_id", "");
  REQUIRE(id.size() == 36);
  CHECK(run.out.substr(0, run.out.find('\n')) ==
        R"({"type":"thread.started","thread_id":")" + id + R"("})");
  CHECK(events[1] == Json::parse(R"({"type":"turn.started"})"));

  std::vector<Json> started, completed;
  std::vector<std::string> messages;
  for (const auto& e : events) {
    REQUIRE(e.is_object());
    const std::string type = e.value("type", "");
    if (!e.contains("item")) continue;
    const Json& item = e["item"];
    if (item.value("type", "") == "command_execution") {
      (type == "item.started" ? started : completed).push_back(item);
    } else if (item.value("type", "") == "agent_message" && type == "item.completed") {
      messages.push_back(item.value("text", ""));
    }
  }
  REQUIRE(started.size() == 3);
  REQUIRE(completed.size() == 3);
  const char* commands[] = {"echo one", "echo two", "three"};
  const char* outputs[] = {"one\n", "two\n", "three\n"};
  for (size_t i = 0; i < 3; ++i) {
    CHECK(started[i].value("id", "") == completed[i].value("id", ""));
    CHECK(started[i].value("status", "") == "in_progress");
    CHECK_THAT(started[i].value("command", ""), Catch::Contains(commands[i]));
    CHECK_THAT(completed[i].value("command", ""), Catch::Contains(commands[i]));
    CHECK(completed[i].value("aggregated_output", "") == outputs[i]);
    CHECK(completed[i]["exit_code"] == 0);
    CHECK(completed[i].value("status", "") == "completed");
  }
  CHECK(started[0].value("id", "") != started[1].value("id", ""));
  CHECK(messages == std::vector<std::string>{"All three ran."});

  const Json& last = events.back();
  REQUIRE(last.value("type", "") == "turn.completed");
  // The sums over the four responses of the script.
  CHECK(last["usage"]["input_tokens"] == 1000);
  CHECK(last["usage"]["cached_input_tokens"] == 640);
  CHECK(last["usage"]["output_tokens"] == 100);
  CHECK(last["usage"]["reasoning_output_tokens"] == 26);
  for (const auto& r : env->server().requests_to("/responses")) CheckWireRules(r, id);
}

TEST_CASE("sessions list shows the session, as a table and as --json") {
  auto env = MakeEnv(R"(["listed"])");
  auto run = Run(*env, {"exec", "a session to list"});
  REQUIRE(run.exit_code == 0);
  const std::string id = SessionIdFromBanner(run.err);
  REQUIRE(!id.empty());

  auto table = Run(*env, {"sessions", "list"});
  CHECK(table.exit_code == 0);
  CHECK_THAT(table.out, Catch::Contains(id));
  CHECK_THAT(table.out, Catch::Contains("a session to list"));

  auto rows = ListSessions(*env);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].value("id", "") == id);
  CHECK(rows[0].value("title", "") == "a session to list");
  CHECK(rows[0].value("model", "") == "gpt-test");
  CHECK(rows[0].value("provider", "") == "scripted");
  CHECK(rows[0].value("cwd", "") == std::filesystem::canonical(env->workdir()).string());
}

TEST_CASE("exec resume (by id, --last, --json before and after) appends to one session") {
  auto env = MakeEnv(kTurns);
  auto first = Run(*env, {"exec", "turn one"});
  REQUIRE(first.exit_code == 0);
  CHECK(first.out == "answer 1\n");
  const std::string id = SessionIdFromBanner(first.err);
  REQUIRE(id.size() == 36);

  auto by_id = Run(*env, {"exec", "resume", id, "turn two"});
  CHECK(by_id.exit_code == 0);
  CHECK(by_id.out == "answer 2\n");
  CHECK(SessionIdFromBanner(by_id.err) == id);

  auto by_prefix = Run(*env, {"exec", "resume", id.substr(0, 13), "turn three"});
  CHECK(by_prefix.exit_code == 0);
  CHECK(by_prefix.out == "answer 3\n");

  auto last = Run(*env, {"exec", "resume", "--last", "turn four"});
  CHECK(last.exit_code == 0);
  CHECK(last.out == "answer 4\n");
  CHECK(SessionIdFromBanner(last.err) == id);

  auto json_before = Run(*env, {"exec", "--json", "resume", "--last", "turn five"});
  CHECK(json_before.exit_code == 0);
  auto events = JsonLines(json_before.out);
  REQUIRE(!events.empty());
  CHECK(events[0] == Json({{"type", "thread.started"}, {"thread_id", id}}));
  CHECK(events.back().value("type", "") == "turn.completed");

  auto json_after = Run(*env, {"exec", "resume", "--last", "--json", "turn six"});
  CHECK(json_after.exit_code == 0);
  events = JsonLines(json_after.out);
  REQUIRE(!events.empty());
  CHECK(events[0] == Json({{"type", "thread.started"}, {"thread_id", id}}));
  CHECK(events.back().value("type", "") == "turn.completed");

  // One session, six turns, twelve requests.
  auto rows = ListSessions(*env);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].value("id", "") == id);
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 12);
  std::vector<std::string> previous_encrypted;
  for (size_t k = 0; k < requests.size(); ++k) {
    INFO("request " << k);
    CHECK(requests[k].status == 200);
    CheckWireRules(requests[k], id);
    if (k > 0) CHECK(InputExtends(requests[k - 1], requests[k]));
    // Reasoning comes back byte for byte, in order, every time.
    std::vector<std::string> encrypted;
    for (const auto& r : ItemsOfType(requests[k], "reasoning")) {
      encrypted.push_back(r.value("encrypted_content", ""));
    }
    REQUIRE(encrypted.size() >= previous_encrypted.size());
    CHECK(std::equal(previous_encrypted.begin(), previous_encrypted.end(), encrypted.begin()));
    previous_encrypted = encrypted;
  }
  CHECK(previous_encrypted.size() == 11);
  // The last request holds every turn's user message in order.
  std::vector<std::string> users;
  for (const auto& item : requests.back().InputItems()) {
    if (item.value("role", "") != "user") continue;
    const std::string text = item["content"][0].value("text", "");
    if (text.rfind("turn ", 0) == 0) users.push_back(text);
  }
  CHECK(users == std::vector<std::string>{"turn one", "turn two", "turn three", "turn four",
                                          "turn five", "turn six"});
}

TEST_CASE("exec works in a directory that is not a git repository") {
  auto env = MakeEnv(R"({"responses": [{"output": [{"shell": ["pwd"]}]}, "done"]})");
  const auto dir = env->workdir() / "plain" / "sub";
  std::filesystem::create_directories(dir);
  // Nothing between the temporary directory and `dir` is a repository (an
  // empty .git directory, the sandbox's mount point for an absent one, is not).
  for (auto p = dir; p != p.root_path(); p = p.parent_path()) {
    const auto git = p / ".git";
    REQUIRE_FALSE((std::filesystem::exists(git) &&
                   !(std::filesystem::is_directory(git) && std::filesystem::is_empty(git))));
  }
  ProcessOptions p = env->CodexCommand({"exec", "where am I"});
  p.cwd = dir;
  auto run = RunProcess(p);
  REQUIRE(run.ok());
  INFO("stderr: " << run->err);
  CHECK(run->exit_code == 0);
  CHECK(run->out == "done\n");
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 2);
  const std::string call_id = ItemsOfType(requests[1], "function_call")[0].value("call_id", "");
  CHECK_THAT(OutputFor(requests[1].InputItems(), call_id),
             Catch::Contains(std::filesystem::canonical(dir).string()));
}

// ---------------------------------------------------------------------------
// B. Errors: one line naming the problem and what to do, a non-zero exit,
// nothing committed lost.

TEST_CASE("exec without the API key fails clearly and loses nothing") {
  auto env = MakeEnv(R"(["first answer", "second answer"])");
  auto first = Run(*env, {"exec", "first"});
  REQUIRE(first.exit_code == 0);
  const std::string id = SessionIdFromBanner(first.err);

  for (auto args : {std::vector<std::string>{"exec", "no key"},
                    std::vector<std::string>{"exec", "resume", "--last", "no key"}}) {
    ProcessOptions p = env->CodexCommand(args);
    p.env.erase("SCRIPTED_API_KEY");
    p.unset_env.push_back("SCRIPTED_API_KEY");
    auto run = RunProcess(p);
    REQUIRE(run.ok());
    CHECK(run->exit_code == 5);
    CheckOneErrorLine(*run, {"SCRIPTED_API_KEY"});
  }
  CHECK(env->server().requests_to("/responses").size() == 1);

  auto rows = ListSessions(*env);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].value("id", "") == id);
  auto again = Run(*env, {"exec", "resume", "--last", "second"});
  CHECK(again.exit_code == 0);
  CHECK(again.out == "second answer\n");
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 2);
  CHECK(InputExtends(requests[0], requests[1]));
}

// A store that cannot open stops the run before anything is sent or
// printed, and its error is the one reported when the API key is missing
// too (whatever the order in which the engine sets the two up).
TEST_CASE("exec whose store cannot open fails naming it, before any request") {
  auto env = MakeEnv(R"(["never sent"])");
  const std::filesystem::path db = env->codex_home() / "sessions.db";
  std::filesystem::create_directories(db / "inside");
  for (bool with_key : {true, false}) {
    for (auto args : {std::vector<std::string>{"exec", "hello"},
                      std::vector<std::string>{"exec", "--json", "hello"}}) {
      ProcessOptions p = env->CodexCommand(args);
      if (!with_key) {
        p.env.erase("SCRIPTED_API_KEY");
        p.unset_env.push_back("SCRIPTED_API_KEY");
      }
      auto run = RunProcess(p);
      REQUIRE(run.ok());
      INFO("key: " << with_key << ", stderr: " << run->err);
      CHECK(run->exit_code != 0);
      CheckOneErrorLine(*run, {db.string(), "is a directory"});
      CHECK(run->err.find("SCRIPTED_API_KEY") == std::string::npos);
      CHECK(run->err.find("session ") == std::string::npos);
    }
  }
  CHECK(env->server().requests_to("/responses").empty());
  CHECK(std::filesystem::exists(db / "inside"));  // left as it was
}

TEST_CASE("exec against an unreachable endpoint fails clearly; the turn stays resumable") {
  auto env = MakeEnv(R"(["first answer", "recovered"])");
  auto first = Run(*env, {"exec", "first"});
  REQUIRE(first.exit_code == 0);
  const std::string id = SessionIdFromBanner(first.err);

  const std::string url = "http://127.0.0.1:" + std::to_string(ClosedPort()) + "/v1";
  auto run = Run(*env, {"-c", "model_providers.scripted.base_url=\"" + url + "\"", "-c",
                        "model_providers.scripted.request_max_retries=1", "-c",
                        "model_providers.scripted.stream_max_retries=1", "exec", "resume", "--last",
                        "while offline"});
  CHECK(run.exit_code != 0);
  CheckOneErrorLine(run, {"127.0.0.1", "base_url"});

  // The failed turn's user message was committed: the next turn sends it.
  auto rows = ListSessions(*env);
  REQUIRE(rows.size() == 1);
  auto again = Run(*env, {"exec", "resume", id, "back online"});
  CHECK(again.exit_code == 0);
  CHECK(again.out == "recovered\n");
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 2);
  CHECK(InputExtends(requests[0], requests[1]));
  CheckWireRules(requests[1], id);
  std::vector<std::string> users;
  for (const auto& item : requests[1].InputItems()) {
    if (item.value("role", "") == "user") users.push_back(item["content"][0].value("text", ""));
  }
  REQUIRE(users.size() >= 3);
  CHECK(users[users.size() - 2] == "while offline");
  CHECK(users.back() == "back online");
}

TEST_CASE("exec with HTTP 400 from the server fails at once; the session stays intact") {
  auto env = MakeEnv(R"(["first answer",
      {"http_error": {"status": 400, "code": "invalid_value", "message": "Bad value for tools"}},
      "third answer"])");
  auto first = Run(*env, {"exec", "first"});
  REQUIRE(first.exit_code == 0);
  const std::string id = SessionIdFromBanner(first.err);

  auto failed = Run(*env, {"exec", "resume", id, "second"});
  CHECK(failed.exit_code != 0);
  CheckOneErrorLine(failed, {"400", "Bad value for tools"});
  CHECK(env->server().requests_to("/responses").size() == 2);  // a 4xx is not retried

  auto third = Run(*env, {"exec", "resume", id, "third"});
  CHECK(third.exit_code == 0);
  CHECK(third.out == "third answer\n");
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 3);
  CHECK(InputExtends(requests[0], requests[1]));
  CHECK(InputExtends(requests[1], requests[2]));
  CHECK(LastUserText(requests[2]) == "third");
  CHECK(ListSessions(*env).size() == 1);
}

TEST_CASE("exec with HTTP 500 fails after its retries; the session stays resumable") {
  auto env = MakeEnv(R"({"responses": ["first answer"], "default": {"http_error": 500}})");
  auto first = Run(*env, {"exec", "first"});
  REQUIRE(first.exit_code == 0);
  const std::string id = SessionIdFromBanner(first.err);

  auto failed = Run(*env, {"-c", "model_providers.scripted.request_max_retries=1", "-c",
                           "model_providers.scripted.stream_max_retries=1", "exec", "resume",
                           "--last", "second"});
  CHECK(failed.exit_code == 1);
  CheckOneErrorLine(failed, {"500"});
  CHECK_THAT(failed.err, Catch::Contains("Reconnecting 1/"));
  const size_t attempts = env->server().requests_to("/responses").size() - 1;
  CHECK(attempts >= 2);

  // The session, with the failed turn's prompt, is still there to resume.
  auto rows = ListSessions(*env);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].value("id", "") == id);
  auto show = Run(*env, {"sessions", "show", id, "--json"});
  CHECK(show.exit_code == 0);
  CHECK_THAT(show.out, Catch::Contains("first answer"));
  CHECK_THAT(show.out, Catch::Contains("second"));
}

TEST_CASE("exec resume of an unknown session fails with exit 4") {
  auto env = MakeEnv(R"(["never used"])");
  // --last finds none in scope: --existing makes that an error (without it a
  // new session starts, scope_e2e_test).
  auto none = Run(*env, {"exec", "resume", "--last", "--existing", "anything"});
  CHECK(none.exit_code == 4);
  CheckOneErrorLine(none, {"no session in " + env->workdir().string(), "--all"});
  auto none_anywhere = Run(*env, {"exec", "resume", "--last", "--all", "--existing", "anything"});
  CHECK(none_anywhere.exit_code == 4);
  CheckOneErrorLine(none_anywhere, {"codex exec"});

  auto unknown = Run(*env, {"exec", "resume", "0190aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee", "anything"});
  CHECK(unknown.exit_code == 4);
  CheckOneErrorLine(unknown, {"0190aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee"});
  CHECK(env->server().requests_to("/responses").empty());
}

TEST_CASE("a malformed config.toml fails with exit 2 naming the file; the sessions survive") {
  auto env = MakeEnv(R"(["first answer", "after the fix"])");
  auto first = Run(*env, {"exec", "first"});
  REQUIRE(first.exit_code == 0);
  const std::string id = SessionIdFromBanner(first.err);

  REQUIRE(env->WriteConfig("approval_policy = \"never\"\nthis is = not [toml\n").ok());
  auto bad = Run(*env, {"exec", "resume", "--last", "with a broken config"});
  CHECK(bad.exit_code == 2);
  CheckOneErrorLine(bad, {"config.toml"});

  REQUIRE(env->WriteConfig("").ok());
  auto rows = ListSessions(*env);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].value("id", "") == id);
  auto fixed = Run(*env, {"exec", "resume", "--last", "fixed"});
  CHECK(fixed.exit_code == 0);
  CHECK(fixed.out == "after the fix\n");
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 2);
  CHECK(InputExtends(requests[0], requests[1]));
}

}  // namespace codex::testing
