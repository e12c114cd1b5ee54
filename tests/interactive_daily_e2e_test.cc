// End-to-end tests of issue 26 (interactive mode past Codex): the real codex
// binary in tmux (tests/tmux_support.h), a terminal that re-wraps its lines
// as real ones do, against the scripted Responses server.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <thread>

#include "testing/files.h"
#include "tests/e2e_checks.h"
#include "tests/e2e_support.h"
#include "tests/tmux_support.h"

namespace codex::testing {
namespace {

using e2e::MakeEnv;
using e2e::RunOk;

// The request's input without its last `n` items.
Json InputPrefix(const RecordedRequest& r, size_t drop) {
  Json input = r.InputItems();
  Json out = Json::array();
  for (size_t i = 0; i + drop < input.size(); ++i) out.push_back(input[i]);
  return out;
}

// Waits until the prompt is back (no spinner) after a turn.
void WaitIdle(TmuxCodex& t) {
  t.WaitFor([&](const std::string&) {
    std::string s = t.Screen();
    return s.find("Esc to interrupt") == std::string::npos && s.rfind("›") != std::string::npos;
  });
}

bool Skip() { return TmuxCodex::Missing("the interactive UI cannot be tested on a terminal"); }

TEST_CASE("in tmux: an Esc-Esc edit forks at the branch point, keeps the cache key, clears") {
  if (Skip()) return;
  auto env = MakeEnv(R"({"responses": ["answer one", "answer two", "answer three",
                                       "answer to the edit"]})");
  TmuxCodex t(*env, {}, 100, 40);
  t.WaitForText("›");
  const std::string original = FirstId(t.Text(), "session ");
  REQUIRE(!original.empty());
  for (const char* q : {"first question", "second question", "third question"}) {
    t.Submit(q);
    WaitIdle(t);
  }
  t.WaitForText("answer three");
  t.Key("Escape");
  t.WaitForText("Esc again to edit a previous message");
  t.Key("Escape");
  t.WaitForText("editing message 3 of 3");
  t.Key("Escape");
  t.WaitForText("editing message 2 of 3");
  t.Submit(", edited");
  t.WaitForText("answer to the edit");
  WaitIdle(t);

  // The abandoned turns left the screen, scrollback included; the branch's
  // own history is shown again.
  const std::string text = t.Text();
  INFO(text);
  CHECK(text.find("answer two") == std::string::npos);
  CHECK(text.find("third question") == std::string::npos);
  CHECK(text.find("answer three") == std::string::npos);
  CHECK(text.find("answer one") != std::string::npos);
  CHECK(text.find("second question, edited") != std::string::npos);
  const std::string branch = FirstId(text, "before that message into ");
  REQUIRE(!branch.empty());
  CHECK(branch != original);

  // The fork's first request shares the parent's prompt_cache_key and the
  // prefix of the parent's second request (turn 1), so the cache serves it.
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 4);
  CHECK(requests[0].body.value("prompt_cache_key", "") == original);
  CHECK(requests[3].body.value("prompt_cache_key", "") == original);
  CHECK(InputPrefix(requests[3], 1) == InputPrefix(requests[1], 1));
  CHECK(Contains(UserTexts(requests[3]), "second question, edited"));
  CHECK(!Contains(UserTexts(requests[3]), "third question"));

  // Recorded at the branch point, as `codex fork --at-turn 1` records it.
  auto tree = RunOk(*env, {"sessions", "tree", original});
  CHECK(tree.out.find(branch) != std::string::npos);
  CHECK(tree.out.find("(forked after turn 1)") != std::string::npos);
  auto shown = RunOk(*env, {"sessions", "show", branch});
  const std::string at = shown.out.substr(shown.out.find("(forked from"));
  auto by_cli = RunOk(*env, {"fork", original, "--at-turn", "1"});
  std::string cli_fork = by_cli.out.substr(0, 36);
  auto cli_shown = RunOk(*env, {"sessions", "show", cli_fork});
  INFO(shown.out << "\n" << cli_shown.out);
  CHECK(cli_shown.out.find(at.substr(0, at.find(')') + 1)) != std::string::npos);
  t.Key("C-d");
}

TEST_CASE("in tmux: Esc-Esc on the very first message branches from before the first turn") {
  if (Skip()) return;
  auto env = MakeEnv(R"({"responses": ["answer one", "answer two", "answer to the edit",
                                       "answer after the edit"]})");
  TmuxCodex t(*env, {}, 100, 40);
  t.WaitForText("›");
  const std::string original = FirstId(t.Text(), "session ");
  REQUIRE(!original.empty());
  for (const char* q : {"first question", "second question"}) {
    t.Submit(q);
    WaitIdle(t);
  }
  t.WaitForText("answer two");
  t.Key("Escape");
  t.WaitForText("Esc again to edit a previous message");
  t.Key("Escape");
  t.WaitForText("editing message 2 of 2");
  t.Key("Escape");
  t.WaitForText("editing message 1 of 2");
  t.Type(", rewritten");  // (emptying the composer would cancel the edit)
  t.Key("Enter");
  t.WaitForText("answer to the edit");
  WaitIdle(t);
  const std::string text = t.Text();
  INFO(text);
  CHECK(text.find("answer one") == std::string::npos);  // nothing of the old branch stays
  CHECK(text.find("second question") == std::string::npos);
  const std::string branch = FirstId(text, "before that message into ");
  REQUIRE(!branch.empty());

  // The edit's request holds no turn of the parent: only the context the
  // session starts with, then the rewritten message, under the parent's key.
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 3);
  std::vector<std::string> users = UserTexts(requests[2]);
  CHECK(Contains(users, "first question, rewritten"));
  CHECK(!Contains(users, "first question"));
  CHECK(!Contains(users, "second question"));
  for (const Json& item : requests[2].InputItems()) {
    CHECK(item.value("role", "") != "assistant");
  }
  CHECK(InputPrefix(requests[2], 1) == InputPrefix(requests[0], 1));
  CHECK(requests[2].body.value("prompt_cache_key", "") == original);

  // Recorded before turn 1, as `codex fork --at-turn 0` records it.
  auto tree = RunOk(*env, {"sessions", "tree", original});
  INFO(tree.out);
  const size_t row = tree.out.find(branch);
  REQUIRE(row != std::string::npos);
  CHECK(tree.out.substr(row, tree.out.find('\n', row) - row).find("(forked before turn 1)") !=
        std::string::npos);
  auto shown = RunOk(*env, {"sessions", "show", branch});
  auto by_cli = RunOk(*env, {"fork", original, "--at-turn", "0"});
  auto cli_shown = RunOk(*env, {"sessions", "show", by_cli.out.substr(0, 36)});
  const std::string at = shown.out.substr(shown.out.find("(forked from"));
  INFO(shown.out << "\n" << cli_shown.out);
  CHECK(cli_shown.out.find(at.substr(0, at.find(')') + 1)) != std::string::npos);

  // The branch goes on from there; Esc-Esc in it offers its own message only.
  t.Submit("and next");
  t.WaitForText("answer after the edit");
  WaitIdle(t);
  t.Key("Escape");
  t.WaitForText("Esc again to edit a previous message");
  t.Key("Escape");
  t.WaitForText("editing message 2 of 2");
  t.Key("Escape");
  t.WaitForText("editing message 1 of 2");
  CHECK(t.Screen().find("› first question, rewritten") != std::string::npos);
  t.Key("C-c");
  t.Key("C-d");
}

TEST_CASE("in tmux: /fork and codex exec fork keep the parent's prompt_cache_key") {
  if (Skip()) return;
  auto env = MakeEnv(R"({"responses": ["answer one", "answer in the fork", "exec fork answer"]})");
  TmuxCodex t(*env, {}, 70, 30);
  t.WaitForText("›");
  const std::string original = FirstId(t.Joined(), "session ");
  REQUIRE(!original.empty());
  t.Submit("first question");
  t.WaitForText("answer one");
  WaitIdle(t);
  t.Submit("/fork");
  t.WaitForJoined("you are now in the branch");
  // The line is wider than the screen: wrapped between words, so the new
  // session's id stays whole on its row instead of being cut by the terminal.
  CHECK(std::regex_search(t.Text(), std::regex("\n[0-9a-f-]{36}; you are now")));
  t.Submit("in the fork");
  t.WaitForText("answer in the fork");
  WaitIdle(t);
  t.Key("C-d");
  auto exec_fork = RunOk(*env, {"exec", "fork", original, "from exec"});
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 3);
  for (const auto& r : requests) CHECK(r.body.value("prompt_cache_key", "") == original);
  CHECK(exec_fork.out == "exec fork answer\n");
}

TEST_CASE("in tmux: Enter during a turn steers it (sent in the same turn); Tab queues") {
  if (Skip()) return;
  nlohmann::json script = {{"responses",
                            {{{"message", LongParagraph()}, {"pause_after", 6}, {"pause_ms", 3000}},
                             "Answer with the steer.",
                             "Answer to the queued one."}}};
  auto env = MakeEnv(script.dump());
  TmuxCodex t(*env, {}, 100, 40);
  t.WaitForText("›");
  t.Submit("first");
  t.WaitForText("word01");
  t.Submit("also check the tests");  // steers: shown at once, not queued
  t.WaitForText("› also check the tests");
  t.Type("afterwards");
  t.Key("Tab");  // queues
  t.WaitForText("↳ queued: afterwards");
  CHECK(t.Text().find("queued: also check") == std::string::npos);
  t.WaitForText("Answer to the queued one.");
  WaitIdle(t);
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 3);
  // The steered message went in the same turn, after the answer it
  // interrupted, with no further key from the user; the queued one waited
  // for the turn's end.
  auto second = UserTexts(requests[1]);
  CHECK(Contains(second, "first"));
  CHECK(Contains(second, "also check the tests"));
  CHECK(!Contains(second, "afterwards"));
  const std::string body = requests[1].InputItems().dump();
  CHECK(body.find("word40") < body.find("also check the tests"));
  CHECK(Contains(UserTexts(requests[2]), "afterwards"));
  t.Key("C-d");
}

// request_user_input with [features] default_mode_request_user_input (as
// Codex 0.169 offers it then): the questions one at a time, an option picked
// for one and free text for the other, the answer in Codex's JSON; a label
// with escape sequences drawn inert; Esc interrupts as Codex's does; the
// session resumes with the call and its output.
TEST_CASE("in tmux: request_user_input asks, answers in Codex's JSON, Esc interrupts, resumes") {
  if (Skip()) return;
  const std::string evil = "Postgre\x1b]0;pwned\x07SQL\x1b[2J";
  auto ask = [&](const std::string& call_id, nlohmann::json questions) {
    return nlohmann::json{
        {"output",
         {{{"function_call", "request_user_input"},
           {"call_id", call_id},
           {"arguments", nlohmann::json{{"questions", std::move(questions)}}.dump()}}}}};
  };
  nlohmann::json two = {
      {{"id", "db"},
       {"header", "Database"},
       {"question", "Which database should I use?"},
       {"options",
        {{{"label", "SQLite (Recommended)"}, {"description", "One file, no server."}},
         {{"label", evil}, {"description", "A \x1b[31mserver."}}}}},
      {{"id", "name"},
       {"header", "Name"},
       {"question", "What should the table be called?"},
       {"options",
        {{{"label", "items"}, {"description", "The default name."}},
         {{"label", "things"}, {"description", "Another name."}}}}}};
  nlohmann::json one = {{{"id", "go"},
                         {"header", "Go"},
                         {"question", "Shall I go on?"},
                         {"options",
                          {{{"label", "Yes"}, {"description", "Go on."}},
                           {{"label", "No"}, {"description", "Stop."}}}}}};
  nlohmann::json script = {
      {"responses", {ask("ask1", two), "Thanks, done.", ask("ask2", one), "after", "resumed"}}};
  auto env = MakeEnv(script.dump(), "[features]\ndefault_mode_request_user_input = true\n");
  {
    TmuxCodex t(*env, {}, 110, 34);
    t.WaitForText("›");
    t.Submit("ask me");
    t.WaitForText("Question 1/2 (2 unanswered)");
    // The model's label is shown inert: its escapes visible, the title untouched.
    t.WaitForText("2. Postgre^[]0;pwned^GSQL^[[2J");
    CHECK(t.Text().find("What should the table be called?") == std::string::npos);
    CHECK(t.PaneTitle().find("pwned") == std::string::npos);
    CHECK(t.Text().find("3. None of the above") != std::string::npos);
    t.Key("Down");
    t.Key("Enter");
    t.WaitForText("Question 2/2 (1 unanswered)");
    t.Type("3");
    t.Key("Tab");
    t.Type("orders");
    t.WaitForText("› orders");
    t.Key("Enter");
    t.WaitForText("Thanks, done.");
    t.WaitForText("Questions 2/2 answered");
    CHECK(t.Text().find("note: orders") != std::string::npos);
    WaitIdle(t);
    auto requests = env->server().requests_to("/responses");
    REQUIRE(requests.size() == 2);
    // Codex's answer JSON (tests/compat/codex-0.169-request-user-input.json), in question order.
    CHECK(e2e::OutputFor(requests[1].InputItems(), "ask1") ==
          nlohmann::json{{"answers",
                          {{"db", {{"answers", {evil}}}},
                           {"name", {{"answers", {"None of the above", "user_note: orders"}}}}}}}
              .dump());

    // Esc interrupts the turn, as in Codex: the call reads aborted, the model is told.
    t.Submit("again");
    t.WaitForText("Shall I go on?");
    t.Key("Escape");
    t.WaitForText("Interrupted");
    WaitIdle(t);
    t.Submit("next");
    t.WaitForText("after");
    WaitIdle(t);
    requests = env->server().requests_to("/responses");
    REQUIRE(requests.size() == 4);
    CHECK_THAT(e2e::OutputFor(requests[3].InputItems(), "ask2"), Catch::StartsWith("aborted"));
    std::vector<std::string> users = UserTexts(requests[3]);
    REQUIRE(users.size() >= 2);
    CHECK(users[users.size() - 2].rfind("<turn_aborted>", 0) == 0);
    t.Key("C-d");
  }
  // Resumed: the calls and their outputs go back as they were.
  RunOk(*env, {"exec", "resume", "--last", "go on"});
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 5);
  CHECK(e2e::OutputFor(requests[4].InputItems(), "ask1") ==
        e2e::OutputFor(requests[3].InputItems(), "ask1"));
  CHECK_THAT(e2e::OutputFor(requests[4].InputItems(), "ask2"), Catch::StartsWith("aborted"));
}

TEST_CASE("in tmux: after Esc the model is told the turn was aborted; Ctrl-C then warns") {
  if (Skip()) return;
  nlohmann::json script = {
      {"responses",
       {{{"message", LongParagraph()}, {"pause_after", 6}, {"pause_ms", 60000}}, "Fine."}}};
  auto env = MakeEnv(script.dump());
  TmuxCodex t(*env, {}, 100, 30);
  t.WaitForText("›");
  t.Submit("a long task");
  t.WaitForText("word01");
  t.Key("Escape");
  t.WaitForText("Interrupted");
  WaitIdle(t);
  t.Submit("something else");
  t.WaitForText("Fine.");
  WaitIdle(t);
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 2);
  const Json input = requests[1].InputItems();
  // a long task, (the partial answer), <turn_aborted>, something else.
  std::vector<std::string> users = UserTexts(requests[1]);
  REQUIRE(users.size() >= 3);
  CHECK(users[users.size() - 3] == "a long task");
  CHECK(users[users.size() - 2].rfind("<turn_aborted>\n", 0) == 0);
  CHECK(users[users.size() - 2].find("</turn_aborted>") != std::string::npos);
  CHECK(users.back() == "something else");
  // Esc-Esc offers what the user typed, not the marker.
  t.Key("Escape");
  t.Key("Escape");
  t.WaitForText("editing message 2 of 2");
  t.Key("C-c");  // cancels the edit
  t.Key("C-d");
}

TEST_CASE("in tmux: Ctrl-C right after an interrupt warns first; the next one quits") {
  if (Skip()) return;
  nlohmann::json script = {
      {"responses", {{{"message", LongParagraph()}, {"pause_after", 6}, {"pause_ms", 60000}}}}};
  auto env = MakeEnv(script.dump());
  TmuxCodex u(*env, {}, 100, 30);
  u.WaitForText("›");
  u.Submit("a long task");
  u.WaitForText("word01");
  u.Key("C-c");
  u.WaitForText("Interrupted");
  WaitIdle(u);
  u.Key("C-c");
  u.WaitForText("Press Ctrl-C again to quit");
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  CHECK(u.Text().find("codex resume") == std::string::npos);  // still running
  u.Key("C-c");
  u.WaitForText("codex resume");  // left, with the hint to come back
}

TEST_CASE("in tmux: !cmd runs as the user (outside the read-only sandbox), kept from the start") {
  if (Skip()) return;
  auto env = MakeEnv(R"({"responses": ["seen it", "seen the second"]})");
  TmuxCodex t(*env, {}, 100, 30);
  t.WaitForText("›");
  // The first action of a session: a command that writes (the model's
  // sandbox is read-only here; the user's own command is not sandboxed).
  t.Submit("!echo built > made.txt && cat made.txt");
  t.WaitForText("└ built");
  WaitIdle(t);
  CHECK(std::filesystem::exists(env->workdir() / "made.txt"));
  CHECK(t.Text().find("error:") == std::string::npos);
  t.Submit("what did I run?");
  t.WaitForText("seen it");
  WaitIdle(t);
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 1);
  std::string record;
  for (const auto& u : UserTexts(requests[0])) {
    if (u.rfind("<user_shell_command>", 0) == 0) record = u;
  }
  CHECK(record.find("echo built > made.txt") != std::string::npos);
  CHECK(record.find("built\n") != std::string::npos);
  // After /new the same: the record starts the new session.
  t.Submit("/new");
  WaitIdle(t);
  t.Submit("!echo second-output");
  t.WaitForText("└ second-output");
  WaitIdle(t);
  t.Submit("and now?");
  t.WaitForText("seen the second");
  WaitIdle(t);
  const std::string text = t.Text();
  INFO(text);
  CHECK(text.find("error:") == std::string::npos);
  requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 2);
  bool seen = false;
  for (const auto& u : UserTexts(requests[1])) {
    if (u.find("second-output") != std::string::npos) seen = true;
    CHECK(u.find("made.txt") == std::string::npos);  // a new session
  }
  CHECK(seen);
  // Titled by what the user typed, not by the command record.
  auto list = RunOk(*env, {"sessions", "list"});
  CHECK(list.out.find("what did I run?") != std::string::npos);
  CHECK(list.out.find("user_shell_command") == std::string::npos);
  t.Key("C-d");
}

TEST_CASE("in tmux: code is coloured by its language and wraps inside its block; CJK breaks") {
  if (Skip()) return;
  const std::string code_line =
      "        result = compute(alpha, beta, gamma, delta, epsilon, zeta, eta, theta, iota)";
  std::string cjk;
  for (int i = 0; i < 40; ++i) cjk += "漢";
  nlohmann::json script = {
      {"responses", {"```python\ndef f():\n" + code_line + "\n    return 1\n```\n\n" + cjk}}};
  auto env = MakeEnv(script.dump());
  TmuxCodex t(*env, {}, 60, 40);
  t.WaitForText("›");
  t.Submit("show code");
  t.WaitForText("return 1");
  WaitIdle(t);
  const std::string text = t.Text();
  INFO(text);
  // The long line wraps inside the block: its continuation keeps the block's
  // 4 columns and the line's own 8, never back at column 0.
  const size_t at = text.find("result = compute(");
  REQUIRE(at != std::string::npos);
  const size_t row_end = text.find('\n', at);
  const std::string next_row = text.substr(row_end + 1, text.find('\n', row_end + 1) - row_end - 1);
  CHECK(next_row.rfind("            ", 0) == 0);
  CHECK(next_row.find("iota)") != std::string::npos);
  // Colours: the keyword "def" and the number are drawn in other colours
  // than the plain code (tmux's escape-preserving capture).
  const std::string escaped = t.EscapedText();
  CHECK(escaped.find("def") != std::string::npos);
  CHECK(escaped.find("\x1b[1m\x1b[34mdef") != std::string::npos);
  // 40 CJK characters (80 columns) in 59: broken between characters, the
  // first row filled rather than the whole run pushed down and cut.
  const size_t cjk_at = text.find("漢漢");
  REQUIRE(cjk_at != std::string::npos);
  const std::string cjk_row = text.substr(cjk_at, text.find('\n', cjk_at) - cjk_at);
  CHECK(cjk_row.size() >= 3 * 28);
  t.Key("C-d");
}

TEST_CASE("in tmux: a footer shows model, context left and directory; usage is printed on exit") {
  if (Skip()) return;
  auto env = MakeEnv(R"({"responses": [{"message": "hello", "usage": {"input_tokens": 1200,
      "cached_tokens": 200, "output_tokens": 34, "reasoning_tokens": 4}}]})");
  TmuxCodex t(*env, {}, 100, 30);
  t.WaitForText("% context left · ");
  std::string screen = t.Screen();
  INFO(screen);
  CHECK(std::regex_search(screen, std::regex("gpt-test[a-z ]* · [0-9]+% context left · ")));
  const std::string dir = env->workdir().filename().string();
  CHECK(screen.find(dir) != std::string::npos);
  // Under the prompt, on the last drawn row.
  CHECK(screen.find("% context left") > screen.rfind("›"));
  t.Submit("hi");
  t.WaitForText("hello");
  WaitIdle(t);
  t.Key("C-d");
  t.WaitForText("codex resume");
  const std::string text = t.Text();
  INFO(text);
  CHECK(text.find("Token usage: total=1,234 input=1,000 (+ 200 cached) output=34 (reasoning 4)") !=
        std::string::npos);
  // The footer is not left behind in the transcript on exit.
  CHECK(text.find("context left · ") == std::string::npos);
}

TEST_CASE("in tmux: /rename, /copy, /export, /mcp, /permissions, /mention, /init, /compact") {
  if (Skip()) return;
  nlohmann::json script = {{"responses", {LongParagraph(), "I will write AGENTS.md."}}};
  auto env = MakeEnv(script.dump());
  std::ofstream(env->workdir() / "notes.txt") << "x\n";
  TmuxCodex t(*env, {"-c", "model_providers.scripted.supports_compact=true"}, 110, 40);
  t.WaitForJoined("›");
  t.Submit("/rename early");  // before the first message: nothing stored to name
  t.WaitForJoined("nothing to rename yet");
  t.Submit("hello");
  t.WaitForJoined("word40");
  WaitIdle(t);
  const std::string id = FirstId(t.Text(), "session ");

  t.Submit("/rename daily-work");
  t.WaitForJoined("session named daily-work");
  auto shown = RunOk(*env, {"sessions", "show", "daily-work"});
  CHECK(shown.out.find(id) != std::string::npos);

  t.Submit("/copy");
  t.WaitForJoined("copied the last answer");

  t.Submit("/export");
  t.WaitForJoined("exported this session as Markdown to ");
  {
    const std::string md = ReadFile(env->workdir() / ("codex-" + id.substr(0, 8) + ".md"));
    CHECK(md.find("hello") != std::string::npos);
    CHECK(md.find("word40") != std::string::npos);
  }
  t.Submit("/export");  // not overwritten
  t.WaitForJoined("exists; give /export another file name");

  t.Submit("/mcp");
  t.WaitForJoined("no MCP servers configured");

  t.Submit("/permissions auto");
  t.WaitForJoined("permissions set to auto (sandbox workspace-write, approvals on-request)");
  t.Submit("/permissions");
  t.WaitForJoined("current: auto");
  t.WaitFor(
      [&](const std::string&) { return t.Screen().find("read files;") != std::string::npos; });
  t.Key("Escape");  // closes the picker
  t.WaitFor(
      [&](const std::string&) { return t.Screen().find("read files;") == std::string::npos; });

  t.Submit("/mention");
  t.WaitForJoined("notes.txt");  // the @ file search is open
  t.Key("Enter");
  t.WaitForJoined("› notes.txt");
  t.Key("C-u");

  // /model: the known models, then a reasoning effort for the one chosen;
  // Esc in the efforts goes back to the models (as Codex 0.169's does), and
  // the model chosen again still leads to its efforts.
  t.Submit("/model");
  t.WaitForJoined("gpt-5.1-codex");
  t.Key("Enter");  // the current model
  t.WaitForJoined("most thorough, slowest");
  t.Key("Escape");
  t.WaitFor([&](const std::string&) {
    const std::string screen = t.Screen();
    return screen.find("gpt-5.1-codex-mini") != std::string::npos &&
           screen.find("most thorough, slowest") == std::string::npos;
  });
  t.Key("Enter");  // the current model, still selected
  t.WaitFor([&](const std::string&) {
    return t.Screen().find("most thorough, slowest") != std::string::npos;
  });
  t.Key("Down");  // medium -> high
  t.Key("Enter");
  t.WaitForJoined("model set to gpt-test (reasoning effort high)");
  WaitIdle(t);
  t.WaitFor(
      [&](const std::string&) { return t.Screen().find("gpt-test high · ") != std::string::npos; });

  t.Submit("/init");
  t.WaitForJoined("I will write AGENTS.md.");
  WaitIdle(t);
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 2);
  CHECK(UserTexts(requests[1]).back().find("AGENTS.md") != std::string::npos);
  CHECK(requests[1].body["reasoning"].value("effort", "") == "high");

  // /compact when asked, although far under half the limit.
  t.Submit("/compact");
  t.WaitForJoined("compacted; context");
  CHECK(env->server().compactions_served() == 1);
  t.Key("C-d");
}

TEST_CASE("in tmux: the resume picker searches content, previews, shows a transcript, archives") {
  if (Skip()) return;
  auto env = MakeEnv(R"({"responses": ["the answer mentions zebras", "plain answer"]})");
  RunOk(*env, {"exec", "alpha question"});
  RunOk(*env, {"exec", "beta question"});
  TmuxCodex t(*env, {"resume"}, 160, 30);
  t.WaitForText("Resume a session");
  t.WaitForText("2 of 2 sessions");
  // "/" searches what the transcripts say (full-text), not titles only.
  t.Type("/zebras");
  t.WaitForText("1 of 2 sessions");
  CHECK(t.Screen().find("alpha question") != std::string::npos);
  CHECK(t.Screen().find("beta question") == std::string::npos);
  t.Key("Escape");  // leaves the search
  t.WaitForText("2 of 2 sessions");
  // Tab: a preview of the selected session's conversation.
  t.Key("Tab");
  t.WaitForText("  plain answer");
  t.Key("Tab");
  // s: sorted by creation.
  t.Type("s");
  t.WaitForText("(by creation)");
  // A: every directory's sessions (the directory column appears).
  t.Type("A");
  t.WaitForText("s sort · A this directory");
  // t: the whole transcript, then the list again.
  t.Type("t");
  t.WaitForText("any key: back to the list");
  CHECK(t.Text().find("› beta question") != std::string::npos);
  t.Type("x");
  t.WaitFor(
      [&](const std::string&) { return t.Screen().find("Resume a session") != std::string::npos; });
  // a: archive the selected one; it leaves the list.
  t.Type("a");
  t.WaitForText("archived ");
  t.WaitForText("1 of 1 sessions");
  t.Key("Escape");
  auto list = RunOk(*env, {"sessions", "list"});
  CHECK(list.out.find("beta question") == std::string::npos);
  CHECK(list.out.find("alpha question") != std::string::npos);
}

TEST_CASE("in tmux: an answer streamed at 60 columns takes the new width after a resize") {
  if (Skip()) return;
  std::string answer;
  for (int p = 1; p <= 12; ++p) {
    if (p > 1) answer += "\n\n";
    answer += "para" + std::to_string(p);
    for (int w = 1; w <= 14; ++w) answer += " word" + std::to_string(w);
  }
  nlohmann::json script = {
      {"responses", {{{"message", answer}, {"pause_after", 5}, {"pause_ms", 4000}}}}};
  auto env = MakeEnv(script.dump());
  TmuxCodex t(*env, {}, 60, 60);
  t.WaitForText("›");
  t.Submit("explain");
  t.WaitForText("para2");
  t.Resize(120);
  t.WaitForText("para12");
  WaitIdle(t);
  const std::string text = t.Text();
  INFO(text);
  // Every paragraph after the resize is one row (about 100 columns), not
  // two rows of at most 60 as the first ones.
  int wide = 0;
  for (int p = 5; p <= 12; ++p) {
    const std::string start = "para" + std::to_string(p) + " ";
    const size_t at = text.find(start);
    REQUIRE(at != std::string::npos);
    const std::string row = text.substr(at, text.find('\n', at) - at);
    if (row.find("word14") != std::string::npos) ++wide;
  }
  CHECK(wide == 8);
  t.Key("C-d");
}

// The contents of $CODEX_HOME/config.toml.
std::string ConfigText(CodexTestEnv& env) { return ReadFile(env.codex_home() / "config.toml"); }

// A test env whose work directory has no trust decision recorded.
std::unique_ptr<CodexTestEnv> UndecidedEnv(const std::string& script, std::string extra = {}) {
  CodexTestEnvOptions options;
  options.workdir_trust = "";
  options.extra_config = std::move(extra);
  return MakeEnv(script, std::move(options));
}

TEST_CASE("in tmux: the first start asks 'Trust this folder?'; the answer is Codex's record") {
  if (Skip()) return;
  auto env = UndecidedEnv(R"({"responses": ["first", "second", "third"]})");
  const std::string work = std::filesystem::canonical(env->workdir()).string();
  const std::string record = "[projects.\"" + work + "\"]\ntrust_level = \"trusted\"\n";
  {
    TmuxCodex t(*env, {}, 160, 30);
    t.WaitForText("Trust this folder?");
    t.WaitForText(work);
    CHECK(t.Text().find("›") == t.Text().find("› 1. Yes"));  // no composer before the answer
    CHECK(env->server().requests_to("/responses").empty());
    t.Key("Enter");
    t.WaitForText("approval on-request · sandbox workspace-write");
    t.WaitForText("trusted " + work);
    t.WaitFor([&](const std::string& text) {
      return text.find("Trust this folder?") == std::string::npos;
    });
    t.Submit("hi");
    t.WaitForText("first");
    WaitIdle(t);
    t.Key("C-d");
  }
  // Recorded as Codex writes it; the rest of the file is untouched.
  const std::string config = ConfigText(*env);
  INFO(config);
  CHECK(config.find(record) != std::string::npos);
  CHECK(config.find("[model_providers.scripted]") != std::string::npos);
  {
    // Started again: nothing asked, the recorded trust holds.
    TmuxCodex t(*env, {}, 160, 30);
    t.WaitForText("approval on-request · sandbox workspace-write");
    t.WaitForText("›");
    CHECK(t.Text().find("Trust this folder?") == std::string::npos);
    t.Key("C-d");
  }
  // A subdirectory of a git work tree asks for, and records, the tree's top.
  std::filesystem::create_directories(env->workdir() / "repo" / ".git");
  std::filesystem::create_directories(env->workdir() / "repo" / "src");
  std::ofstream(env->workdir() / "repo" / ".git" / "HEAD") << "ref: refs/heads/main\n";
  {
    TmuxCodex t(*env, {"-C", (env->workdir() / "repo" / "src").string()}, 160, 30);
    t.WaitForText("Trust this folder?");
    t.WaitForText(work + "/repo\n");
    t.Key("2");  // not trusted: read-only, and still on-request
    t.WaitForText("approval on-request · sandbox read-only");
    t.WaitForText("›");
    t.Key("C-d");
  }
  CHECK(ConfigText(*env).find("[projects.\"" + work + "/repo\"]\ntrust_level = \"untrusted\"\n") !=
        std::string::npos);
  CHECK(ConfigText(*env).find(record) != std::string::npos);
}

TEST_CASE("in tmux: flags and config.toml skip the trust question; exec never asks") {
  if (Skip()) return;
  {
    // A flag names the sandbox: no question, the flag wins, the unnamed
    // approval is on-request; nothing is recorded.
    auto env = UndecidedEnv(R"({"responses": ["x"]})");
    TmuxCodex t(*env, {"-s", "danger-full-access"}, 160, 30);
    t.WaitForText("approval on-request · sandbox danger-full-access");
    t.WaitForText("›");
    CHECK(t.Text().find("Trust this folder?") == std::string::npos);
    t.Key("C-d");
    CHECK(ConfigText(*env).find("[projects.") == std::string::npos);
  }
  {
    // config.toml names the approval: no question; the sandbox follows the
    // (absent) trust: read-only.
    auto env = UndecidedEnv(R"({"responses": ["x"]})", "approval_policy = \"never\"\n");
    TmuxCodex t(*env, {}, 160, 30);
    t.WaitForText("approval never · sandbox read-only");
    t.WaitForText("›");
    CHECK(t.Text().find("Trust this folder?") == std::string::npos);
    t.Key("C-d");
  }
  {
    // A recorded trust with a flag: the flag wins for what it names.
    auto env = MakeEnv(R"({"responses": ["x"]})");  // recorded "untrusted"
    TmuxCodex t(*env, {"-a", "untrusted"}, 160, 30);
    t.WaitForText("approval untrusted · sandbox read-only");
    t.Key("C-d");
  }
  {
    // codex exec in an undecided folder: no question, exec's defaults, and
    // nothing recorded.
    auto env = UndecidedEnv(R"({"responses": ["exec answer"]})");
    auto run = RunOk(*env, {"exec", "hello"});
    CHECK(run.out.find("exec answer") != std::string::npos);
    CHECK(run.err.find("Trust") == std::string::npos);
    CHECK(run.err.find("sandbox read-only") != std::string::npos);
    CHECK(ConfigText(*env).find("[projects.") == std::string::npos);
  }
}

}  // namespace
}  // namespace codex::testing
