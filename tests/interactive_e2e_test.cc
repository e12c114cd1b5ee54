// End-to-end tests of the interactive session: the real codex binary on a
// pseudo-terminal (pty_support.h) against the scripted Responses server,
// asserting on the screen a user would see; plus the plain (non-TTY) mode
// and `codex completion`.
#include <fcntl.h>
#include <linux/landlock.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <thread>

#include "testing/eventually.h"
#include "testing/files.h"
#include "testing/skip.h"
#include "tests/e2e_checks.h"
#include "tests/e2e_support.h"
#include "tests/pty_support.h"
#include "tests/tmux_support.h"

namespace codex::testing {
namespace {

using namespace std::chrono_literals;
using e2e::MakeEnv;

constexpr auto kWait = 20s;

std::unique_ptr<PtyProcess> SpawnTui(CodexTestEnv& env, std::vector<std::string> args,
                                     std::map<std::string, std::string> extra_env = {}) {
  ProcessOptions options = env.CodexCommand(std::move(args));
  for (auto& [k, v] : extra_env) options.env[k] = v;
  auto p = PtyProcess::Spawn(options);
  REQUIRE(p.ok());
  return std::move(*p);
}

void Expect(const Status& s) {
  INFO(s.message());
  REQUIRE(s.ok());
}

// Waits for a turn's completion line ("2,226 tokens · 99% context left") at
// or after byte `from` of the screen's text. Not "context left" alone: the
// footer under the composer says that during the turn too, and a key typed
// then steers the running turn instead of starting the next one.
void WaitTurnEnd(PtyProcess& p, size_t from = 0) {
  static const std::regex kDone("[0-9,]+ tokens( \\([0-9,]+ cached\\))? · [0-9]+% context left");
  Expect(p.WaitFor(
      [from](const Screen& s) {
        std::string text = s.Text();
        return text.size() > from &&
               std::regex_search(text.cbegin() + static_cast<std::ptrdiff_t>(from), text.cend(),
                                 kDone);
      },
      kWait));
}

// The session id printed in the last "resume this session with: codex resume <id>".
std::string ResumeHint(const std::string& text) {
  std::smatch m;
  std::regex re("codex resume ([0-9a-f-]{36})");
  std::string last;
  auto begin = text.cbegin();
  while (std::regex_search(begin, text.cend(), m, re)) {
    last = m[1];
    begin = m.suffix().first;
  }
  return last;
}

TEST_CASE("a two-turn conversation: streamed Markdown, a tool call, history, Ctrl-D") {
  auto env = MakeEnv(R"({"responses": [
    {"message": "# Plan\n\nThis is **bold** and `code`.\n\n- first item\n- second item\n"},
    {"output": [{"shell": ["bash", "-c", "echo tool-output-line"]}]},
    "All done after the tool."
  ]})");
  auto p = SpawnTui(*env, {});
  Expect(p->WaitForText("›", kWait));
  Expect(p->Write("show me a plan\r"));
  Expect(p->WaitForText("second item", kWait));
  Expect(p->WaitForText(" tokens · ", kWait));  // the turn's usage line: it has ended
  std::string text = p->screen().Text();
  CHECK(text.find("› show me a plan") != std::string::npos);
  CHECK(text.find("\nPlan\n") != std::string::npos);  // heading styled, not "# Plan"
  CHECK(text.find("This is bold and code.") != std::string::npos);
  CHECK(text.find("• first item") != std::string::npos);
  CHECK(p->raw().find("\x1b[1m") != std::string::npos);  // colour is on

  Expect(p->Write("now run it\r"));
  Expect(p->WaitForText("All done after the tool.", kWait));
  text = p->screen().Text();
  CHECK(text.find("• Running echo tool-output-line") != std::string::npos);  // as typed
  CHECK(text.find("bash -c") == std::string::npos);
  CHECK(text.find("└ tool-output-line") != std::string::npos);
  CHECK(text.find("✓ exit 0") != std::string::npos);

  // Up recalls the previous prompt.
  Expect(p->Write("\x1b[A"));
  Expect(p->WaitFor(
      [](const Screen& s) {
        return s.Visible().find("› now run it") != std::string::npos && s.cursor_col() == 12;
      },
      kWait));
  Expect(p->Write("\x15\x04"));  // Ctrl-U, Ctrl-D
  auto code = p->WaitExit(kWait);
  REQUIRE(code.ok());
  CHECK(*code == 0);

  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 3);
  CHECK(Contains(UserTexts(requests[2]), "show me a plan"));
  CHECK(Contains(UserTexts(requests[2]), "now run it"));

  std::ifstream history(env->codex_home() / "history.jsonl");
  std::string line;
  std::vector<std::string> entries;
  while (std::getline(history, line)) entries.push_back(nlohmann::json::parse(line)["text"]);
  CHECK(entries == std::vector<std::string>{"show me a plan", "now run it"});
}

// Counts occurrences of `needle` in `hay`.
size_t Count(const std::string& hay, std::string_view needle) {
  size_t n = 0;
  for (size_t pos = hay.find(needle); pos != std::string::npos; pos = hay.find(needle, pos + 1)) {
    ++n;
  }
  return n;
}

// The output text a call got, from the last recorded request.
std::string CallOutput(const RecordedRequest& request, std::string_view call_id) {
  for (const Json& item : ItemsOfType(request, "function_call_output")) {
    if (item.value("call_id", "") == call_id) {
      return item["output"].is_string() ? item["output"].get<std::string>() : item["output"].dump();
    }
  }
  return "";
}

TEST_CASE("approvals: once, skip and let the model go on, for the session, no and stop") {
  auto env = MakeEnv(R"({"responses": [
    {"output": [{"shell": ["bash", "-c", "touch one.txt && echo made-one"], "call_id": "c1"}]},
    {"output": [{"shell": ["bash", "-c", "touch two.txt"], "call_id": "c2"}]},
    "Understood, I will not create two.txt.",
    {"output": [{"shell": ["bash", "-c", "touch three.txt"], "call_id": "c3"}]},
    {"output": [{"shell": ["bash", "-c", "touch three.txt"], "call_id": "c4"}]},
    "Created three.txt twice.",
    {"output": [{"shell": ["bash", "-c", "rm -f one.txt"], "call_id": "c5"}]},
    "this answer is never requested"
  ]})",
                     "approval_policy = \"untrusted\"\nsandbox_mode = \"danger-full-access\"\n");
  auto p = SpawnTui(*env, {});
  Expect(p->WaitForText("›", kWait));
  Expect(p->Write("make two files\r"));
  Expect(p->WaitForText("Allow this command?", kWait));
  Expect(p->WaitForText("$ touch one.txt && echo made-one", kWait));
  Expect(p->WaitForText("Yes, and don't ask again for this command (a)", kWait));
  Expect(p->Write("y"));
  Expect(p->WaitForText("✔ command approved", kWait));
  Expect(p->WaitForText("└ made-one", kWait));
  // Where the first command's output is drawn: what follows comes after it.
  // (Not the text's size: the next approval menu may already be drawn, and
  // erasing it later shortens the text.)
  size_t mark = p->screen().Text().find("└ made-one");
  Expect(p->WaitForText("$ touch two.txt", kWait));
  Expect(p->Write("d"));
  Expect(p->WaitForText("✗ command denied; codex continues without it", kWait));
  // Shown as denied, not as a command that failed.
  Expect(p->WaitForText("• Denied touch two.txt", kWait, mark));
  Expect(p->WaitForText("✗ denied by you (not run)", kWait, mark));
  Expect(p->WaitForText("Understood, I will not create two.txt.", kWait, mark));
  CHECK(std::filesystem::exists(env->workdir() / "one.txt"));
  CHECK(!std::filesystem::exists(env->workdir() / "two.txt"));
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 3);
  // Codex's words and shape for a denied command.
  CHECK(CallOutput(requests[2], "c2") == "exec command rejected by user");

  // Approved for the session: the same command runs again without asking.
  WaitTurnEnd(*p, mark);
  size_t asked = Count(p->screen().Text(), "Allow this command?");
  Expect(p->Write("three please\r"));
  Expect(p->WaitForText("$ touch three.txt", kWait));
  // Move to the second option with the arrow key and choose it with Enter.
  Expect(p->Write("\x1b[B"));
  Expect(p->WaitFor(
      [](const Screen& s) {
        return s.Visible().find("› 2. Yes, and don't ask again") != std::string::npos;
      },
      kWait));
  Expect(p->Write("\r"));
  Expect(p->WaitForText("Created three.txt twice.", kWait));
  CHECK(Count(p->screen().Text(), "Allow this command?") == asked + 1);
  CHECK(Count(p->screen().Text(), "• Running touch three.txt") == 2);
  CHECK(p->screen().Text().find("✗ failed") == std::string::npos);

  // Esc denies and stops the turn: no further request is made.
  WaitTurnEnd(*p, p->screen().Text().find("Created three.txt twice."));
  Expect(p->Write("clean up\r"));
  Expect(p->WaitForText("$ rm -f one.txt", kWait));
  Expect(p->Write("\x1b"));
  Expect(
      p->WaitForText("✗ command denied; turn stopped: tell codex what to do differently", kWait));
  Expect(p->WaitForText("• Denied rm -f one.txt", kWait));
  Expect(p->WaitFor(
      [](const Screen& s) {
        std::string v = s.Visible();
        return v.rfind("›") != std::string::npos && v.rfind("›") > v.rfind("turn stopped");
      },
      kWait));
  CHECK(std::filesystem::exists(env->workdir() / "one.txt"));
  CHECK(env->server().requests_to("/responses").size() == 7);
  Expect(p->Write("\x04"));
  auto code = p->WaitExit(kWait);
  REQUIRE(code.ok());
  CHECK(*code == 0);
}

TEST_CASE("approvals: two calls of one response are asked one at a time, in call order") {
  // The calls run together (exec_command is parallel-capable), but the user
  // gets one question at a time: the second only once the first is answered.
  // A no to the first leaves the second to be asked and run.
  auto env = MakeEnv(R"({"responses": [
    {"output": [
      {"function_call": "exec_command", "call_id": "c1", "arguments": {"cmd": "touch one.txt"}},
      {"function_call": "exec_command", "call_id": "c2", "arguments": {"cmd": "touch two.txt"}}]},
    "Made two.txt only."
  ]})",
                     "approval_policy = \"untrusted\"\nsandbox_mode = \"danger-full-access\"\n");
  auto p = SpawnTui(*env, {});
  Expect(p->WaitForText("›", kWait));
  Expect(p->Write("make both\r"));
  Expect(p->WaitForText("Allow this command?", kWait));
  Expect(p->WaitForText("touch one.txt", kWait));
  CHECK(p->screen().Text().find("touch two.txt") == std::string::npos);
  Expect(p->Write("d"));
  Expect(p->WaitForText("✗ command denied; codex continues without it", kWait));
  const size_t mark = p->screen().Text().find("✗ command denied");
  Expect(p->WaitForText("touch two.txt", kWait, mark));
  CHECK(Count(p->screen().Text(), "Allow this command?") == 2);
  Expect(p->Write("y"));
  Expect(p->WaitForText("Made two.txt only.", kWait));
  Expect(p->WaitForText("• Denied", kWait));
  CHECK_FALSE(std::filesystem::exists(env->workdir() / "one.txt"));
  CHECK(std::filesystem::exists(env->workdir() / "two.txt"));
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 2);
  CHECK(CallOutput(requests[1], "c1") == "exec command rejected by user");
  CHECK(CallOutput(requests[1], "c2").find("Process exited with code 0") != std::string::npos);
  Expect(p->Write("\x04"));
  auto code = p->WaitExit(kWait);
  REQUIRE(code.ok());
  CHECK(*code == 0);
}

TEST_CASE("Ctrl-C interrupts a turn; the session resumes with what was said") {
  auto env = MakeEnv(R"({"responses": [
    {"message": "this answer never arrives", "delay_ms": 30000},
    "Picking up where we left off."
  ]})");
  auto p = SpawnTui(*env, {});
  Expect(p->WaitForText("›", kWait));
  Expect(p->Write("a long task\r"));
  Expect(p->WaitForText("Esc to interrupt", kWait));
  // Interrupt only once the server holds the request: an earlier Ctrl-C
  // would leave the delayed answer to the resumed session's request.
  for (int i = 0; i < 400 && env->server().requests_to("/responses").empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  REQUIRE(env->server().requests_to("/responses").size() == 1);
  Expect(p->Write("\x03"));
  Expect(p->WaitForText("■ Interrupted.", kWait));
  // The prompt is back; Ctrl-D leaves.
  Expect(p->WaitFor(
      [](const Screen& s) {
        std::string v = s.Visible();
        return v.rfind("›") != std::string::npos && v.rfind("›") > v.rfind("Interrupted");
      },
      kWait));
  Expect(p->Write("\x04"));
  auto code = p->WaitExit(kWait);
  REQUIRE(code.ok());
  CHECK(*code == 0);
  std::string id = ResumeHint(p->screen().Text());
  REQUIRE(!id.empty());

  auto r = SpawnTui(*env, {"resume", id});
  Expect(r->WaitForText("resumed session " + id, kWait));
  Expect(r->WaitForText("› a long task", kWait));  // the transcript is replayed
  Expect(r->Write("go on\r"));
  Expect(r->WaitForText("Picking up where we left off.", kWait));
  Expect(r->Write("/quit\r"));
  code = r->WaitExit(kWait);
  REQUIRE(code.ok());
  CHECK(*code == 0);
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 2);
  CHECK(Contains(UserTexts(requests[1]), "a long task"));
  CHECK(Contains(UserTexts(requests[1]), "go on"));
}

TEST_CASE("Ctrl-C right after an interrupted turn warns; the next exits, restoring the terminal") {
  auto env = MakeEnv(R"({"responses": [{"message": "never", "delay_ms": 30000}]})");
  auto p = SpawnTui(*env, {});
  Expect(p->WaitForText("›", kWait));
  Expect(p->Write("wait forever\r"));
  Expect(p->WaitForText("Esc to interrupt", kWait));
  Expect(p->Write("\x03"));
  Expect(p->WaitForText("■ Interrupted.", kWait));
  Expect(p->WaitFor(
      [](const Screen& s) {
        std::string v = s.Visible();
        return v.rfind("›") != std::string::npos && v.rfind("›") > v.rfind("Interrupted");
      },
      kWait));
  Expect(p->Write("\x03"));
  // Not gone at once (as Codex): the user is told first.
  Expect(p->WaitForText("Press Ctrl-C again to quit", kWait));
  // Still running: what leaving prints does not come.
  CHECK(!p->WaitForText("resume this session", std::chrono::milliseconds(400)).ok());
  Expect(p->Write("\x03"));
  auto code = p->WaitExit(kWait);
  INFO((code.ok() ? std::string() : code.status().message()));
  REQUIRE(code.ok());
  CHECK(*code == 0);
  CHECK(p->raw().rfind("\x1b[?2004l") > p->raw().rfind("\x1b[?2004h"));  // paste mode off again
}

TEST_CASE("at the prompt, Ctrl-C clears the line, twice on an empty line quits") {
  auto env = MakeEnv(R"([])");
  auto p = SpawnTui(*env, {});
  Expect(p->WaitForText("›", kWait));
  Expect(p->Write("some draft"));
  Expect(p->WaitForText("› some draft", kWait));
  Expect(p->Write("\x03"));
  Expect(p->WaitFor(
      [](const Screen& s) { return s.Visible().find("some draft") == std::string::npos; }, kWait));
  Expect(p->Write("\x03"));
  Expect(p->WaitForText("Press Ctrl-C again to quit", kWait));
  Expect(p->Write("\x03"));
  auto code = p->WaitExit(kWait);
  REQUIRE(code.ok());
  CHECK(*code == 0);
  CHECK(env->server().requests_to("/responses").empty());
}

TEST_CASE("/compact, /status and /fork continue in a branch") {
  // The server counts the second turn at 100k tokens: over half the limit, so
  // /compact has something to do (under half it says so and does nothing).
  auto env = MakeEnv(R"({"responses": ["answer one",
    {"message": "answer two", "usage": {"input_tokens": 100000, "output_tokens": 10}},
    "answer three", "answer four"]})");
  auto p = SpawnTui(*env, {"-c", "model_providers.scripted.supports_compact=true"});
  Expect(p->WaitForText("›", kWait));
  Expect(p->Write("first question\r"));
  Expect(p->WaitForText("answer one", kWait));
  Expect(p->Write("second question\r"));
  Expect(p->WaitForText("answer two", kWait));
  std::string original = FirstId(p->screen().Text(), "session ");
  REQUIRE(!original.empty());

  Expect(p->Write("/compact\r"));
  Expect(p->WaitForText("compacted; context", kWait));
  CHECK(env->server().compactions_served() == 1);
  CHECK(p->screen().Text().find("Compacted the conversation") != std::string::npos);
  // The compaction line says what the execution frontier kept: both questions, answered.
  CHECK(p->screen().Text().find("kept: 2 tasks (2 answered)") != std::string::npos);

  Expect(p->Write("/status\r"));
  Expect(p->WaitForText("context     ", kWait));
  std::string text = p->screen().Text();
  CHECK(text.find("model       gpt-test") != std::string::npos);
  CHECK(text.find("provider    scripted") != std::string::npos);
  CHECK(text.find("session     " + original) != std::string::npos);
  CHECK(text.find("over this session's requests") != std::string::npos);
  CHECK(text.find("% of the window left · the next request sends ~") != std::string::npos);

  Expect(p->Write("/fork 1\r"));
  Expect(p->WaitForText("after turn 1 into", kWait));
  std::string branch = FirstId(p->screen().Text(), "after turn 1 into ");
  REQUIRE(!branch.empty());
  CHECK(branch != original);
  Expect(p->Write("third question\r"));
  Expect(p->WaitForText("answer three", kWait));
  auto requests = env->server().requests_to("/responses");
  // Two turns, the inline compaction (the trigger last), the branch's turn.
  REQUIRE(requests.size() == 4);
  REQUIRE_FALSE(requests[2].InputItems().empty());
  CHECK(requests[2].InputItems().back().value("type", "") == "compaction_trigger");
  auto users = UserTexts(requests[3]);
  CHECK(Contains(users, "first question"));
  CHECK(!Contains(users, "second question"));
  CHECK(Contains(users, "third question"));

  Expect(p->Write("/sessions\r"));
  Expect(p->WaitForText("/resume ID switches to one", kWait));
  text = p->screen().Text();
  CHECK(text.find("* " + branch) != std::string::npos);
  CHECK(text.find("  " + original) != std::string::npos);
  Expect(p->Write("/nope\r"));
  Expect(p->WaitForText("error: unknown command '/nope'", kWait));
  Expect(p->Write("/quit\r"));
  auto code = p->WaitExit(kWait);
  REQUIRE(code.ok());
  CHECK(*code == 0);
  CHECK(ResumeHint(p->screen().Text()) == branch);
}

// Runs `codex exec PROMPT` (in `dir` when given) and returns the session id.
std::string ExecSession(CodexTestEnv& env, const std::string& prompt,
                        const std::filesystem::path& dir = {}) {
  ProcessOptions options = env.CodexCommand({"exec", prompt});
  if (!dir.empty()) options.cwd = dir;
  auto run = RunProcess(options);
  REQUIRE(run.ok());
  INFO(run->err);
  REQUIRE(run->exit_code == 0);
  std::string id = FirstId(run->err, "session ");
  REQUIRE(!id.empty());
  return id;
}

TEST_CASE("codex resume opens a picker: arrows, / to filter, Enter; --all for every directory") {
  auto env = MakeEnv(R"({"responses": [], "default": "ok {{n}}"})");
  std::string alpha = ExecSession(*env, "alpha project setup");
  std::string beta = ExecSession(*env, "beta bug hunt");
  std::filesystem::create_directories(env->workdir() / "elsewhere");
  std::string gamma = ExecSession(*env, "gamma in another directory", env->workdir() / "elsewhere");

  auto p = SpawnTui(*env, {"resume"});
  Expect(p->WaitForText("Resume a session", kWait));
  Expect(p->WaitForText("2 of 2 sessions", kWait));
  std::string visible = p->screen().Visible();
  CHECK(visible.find("alpha project setup") != std::string::npos);
  CHECK(visible.find("› ") != std::string::npos);
  CHECK(visible.find("gamma") == std::string::npos);
  // Newest first: beta is selected; Down moves to alpha.
  CHECK(visible.find("› just now  beta bug hunt") != std::string::npos);
  Expect(p->Write("\x1b[B"));
  Expect(p->WaitFor(
      [](const Screen& s) { return s.Visible().find("› just now  alpha") != std::string::npos; },
      kWait));
  Expect(p->Write("/bug"));
  Expect(p->WaitForText("1 of 2 sessions", kWait));
  CHECK(p->screen().Visible().find("alpha project setup") == std::string::npos);
  Expect(p->Write("\r"));
  Expect(p->WaitForText("resumed session " + beta, kWait));
  Expect(p->WaitForText("› beta bug hunt", kWait));
  CHECK(p->screen().Text().find("Resume a session") == std::string::npos);  // the picker is erased
  Expect(p->Write("\x04"));
  auto code = p->WaitExit(kWait);
  REQUIRE(code.ok());
  CHECK(*code == 0);

  auto all = SpawnTui(*env, {"resume", "--all"});
  Expect(all->WaitForText("3 of 3 sessions", kWait));
  CHECK(all->screen().Visible().find("gamma in another") != std::string::npos);  // cut to fit
  CHECK(all->screen().Visible().find(alpha) != std::string::npos);
  CHECK(all->screen().Visible().find(gamma) != std::string::npos);
  Expect(all->Write("\x1b"));  // Esc cancels
  code = all->WaitExit(kWait);
  REQUIRE(code.ok());
  CHECK(*code == 0);
  CHECK(all->screen().Text().find("no session chosen") != std::string::npos);
}

TEST_CASE("multi-line input: Alt-Enter, a trailing backslash and bracketed paste") {
  // The first turn stays open for a second after its answer is drawn (the
  // stream pauses before response.completed), as a loaded machine's store
  // writes at a turn's end once made it: the paste must still be the next
  // turn, which the test only sends once this one has ended.
  auto env = MakeEnv(R"({"responses": [{"message": "one", "pause_after": 9, "pause_ms": 1500},
                                       "two"]})");
  auto p = SpawnTui(*env, {});
  Expect(p->WaitForText("›", kWait));
  Expect(p->Write("line one\x1b\rline two\\\rline three\r"));
  Expect(p->WaitForText("line three\ncodex\none\n", kWait));
  WaitTurnEnd(*p);  // the paste is the next turn, not a message steered into this one
  Expect(p->Write("\x1b[200~pasted\r\nblock\x1b[201~\r"));
  Expect(p->WaitForText("block\ncodex\ntwo\n", kWait));
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 2);
  auto users = UserTexts(requests[1]);
  CHECK(Contains(users, "line one\nline two\nline three"));
  CHECK(Contains(users, "pasted\nblock"));
}

// True when `raw` holds an SGR (colour/attribute) escape sequence.
bool HasSgr(const std::string& raw) {
  return std::regex_search(raw, std::regex("\x1b\\[[0-9;]*m"));
}

TEST_CASE("NO_COLOR keeps the terminal UI without colours; TERM=dumb gets plain lines") {
  auto env = MakeEnv(R"({"responses": ["# Title\n\n**plain** text", "dumb answer"]})");
  auto p = SpawnTui(*env, {}, {{"NO_COLOR", "1"}});
  Expect(p->WaitForText("›", kWait));
  Expect(p->Write("hi\r"));
  Expect(p->WaitForText("plain text", kWait));
  CHECK(p->screen().Text().find("# Title") != std::string::npos);
  Expect(p->Write("\x04"));
  REQUIRE(p->WaitExit(kWait).ok());
  CHECK(!HasSgr(p->raw()));

  auto d = SpawnTui(*env, {}, {{"TERM", "dumb"}});
  Expect(d->WaitForText("›", kWait));
  Expect(d->Write("hello\n"));
  Expect(d->WaitForText("dumb answer", kWait));
  Expect(d->WaitForText("›", kWait, d->screen().Text().find("dumb answer")));
  CHECK(Count(d->screen().Text(), "dumb answer") == 1);  // printed once, not also as progress
  Expect(d->Write("\x04"));
  auto code = d->WaitExit(kWait);
  REQUIRE(code.ok());
  CHECK(*code == 0);
  CHECK(d->raw().find('\x1b') == std::string::npos);
}

TEST_CASE("without a terminal: one turn per stdin line, slash commands, no escape codes") {
  auto env = MakeEnv(R"({"responses": ["first **answer**", "second answer"]})");
  auto run = env->RunCodex({}, "hello there\n/status\n/bogus\nmore\\\nlines\n");
  REQUIRE(run.ok());
  INFO(run->err);
  CHECK(run->exit_code == 0);
  CHECK(run->out.find("first **answer**\n") != std::string::npos);
  CHECK(run->out.find("second answer\n") != std::string::npos);
  CHECK(run->out.find("model       gpt-test") != std::string::npos);
  CHECK(run->err.find("error: unknown command '/bogus'") != std::string::npos);
  CHECK(run->out.find('\x1b') == std::string::npos);
  CHECK(run->err.find('\x1b') == std::string::npos);
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 2);
  CHECK(Contains(UserTexts(requests[1]), "more\nlines"));

  // The picker needs a terminal.
  auto resume = env->RunCodex({"resume"}, "");
  REQUIRE(resume.ok());
  CHECK(resume->exit_code == 2);
  CHECK(resume->err.find("needs a session id or --last") != std::string::npos);
}

TEST_CASE("approvals without a terminal are read from stdin") {
  auto env = MakeEnv(R"({"responses": [
    {"output": [{"shell": ["bash", "-c", "touch piped.txt"], "call_id": "c1"}]},
    "done"
  ]})",
                     "approval_policy = \"untrusted\"\nsandbox_mode = \"danger-full-access\"\n");
  auto run = env->RunCodex({}, "make it\ny\n");
  REQUIRE(run.ok());
  INFO(run->err);
  CHECK(run->exit_code == 0);
  CHECK(run->err.find("Allow this command?") != std::string::npos);
  CHECK(run->err.find("command approved") != std::string::npos);
  CHECK(std::filesystem::exists(env->workdir() / "piped.txt"));
  CHECK(run->out == "done\n");
}

TEST_CASE("codex completion prints scripts that complete subcommands, flags and values") {
  auto env = MakeEnv(R"([])");
  auto bash = env->RunCodex({"completion", "bash"});
  REQUIRE(bash.ok());
  REQUIRE(bash->exit_code == 0);
  auto script = env->root() / "codex.bash";
  std::ofstream(script) << bash->out;
  auto complete = [&](const std::string& words) {
    ProcessOptions o;
    o.argv = {"bash", "-c",
              "source '" + script.string() + "'; COMP_WORDS=(" + words +
                  "); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _codex; echo \"${COMPREPLY[*]}\""};
    auto r = RunProcess(o);
    REQUIRE(r.ok());
    INFO(r->err);
    REQUIRE(r->exit_code == 0);
    return r->out;
  };
  CHECK(complete("codex ex") == "exec\n");
  CHECK(complete("codex res") == "resume\n");
  CHECK(complete("codex exec --sa") == "--sandbox\n");
  CHECK(complete("codex exec --sandbox wo") == "workspace-write\n");
  CHECK(complete("codex resume --la") == "--last\n");
  CHECK(complete("codex completion z") == "zsh\n");
  CHECK(complete("codex -a on-r") == "on-request\n");

  for (std::string shell : {"zsh", "fish"}) {
    auto r = env->RunCodex({"completion", shell});
    REQUIRE(r.ok());
    CHECK(r->exit_code == 0);
    CHECK(r->out.find("exec") != std::string::npos);
    CHECK(r->out.find("resume") != std::string::npos);
    CHECK(r->out.find("workspace-write") != std::string::npos);
  }
  auto bad = env->RunCodex({"completion", "tcsh"});
  REQUIRE(bad.ok());
  CHECK(bad->exit_code == 2);
  CHECK(bad->err.find("unknown shell 'tcsh'") != std::string::npos);
}

TEST_CASE("a patch approval shows the diff; approved for the session it is not asked again") {
  auto env = MakeEnv(R"({"responses": [
    {"output": [{"custom_tool_call": "apply_patch", "call_id": "p1",
      "input": "*** Begin Patch\n*** Add File: notes.txt\n+first line\n+second line\n*** End Patch\n"}]},
    {"output": [{"custom_tool_call": "apply_patch", "call_id": "p2",
      "input": "*** Begin Patch\n*** Update File: notes.txt\n@@\n-first line\n+changed line\n*** End Patch\n"}]},
    "Patched twice."
  ]})",
                     "approval_policy = \"untrusted\"\nsandbox_mode = \"workspace-write\"\n");
  auto p = SpawnTui(*env, {});
  Expect(p->WaitForText("›", kWait));
  Expect(p->Write("write notes\r"));
  Expect(p->WaitForText("Allow these changes?", kWait));
  Expect(p->WaitForText("+first line", kWait));
  Expect(p->WaitForText("Yes, and don't ask again for these files (a)", kWait));
  CHECK(!std::filesystem::exists(env->workdir() / "notes.txt"));
  Expect(p->Write("a"));
  Expect(p->WaitForText("✔ changes approved for the session", kWait));
  Expect(p->WaitForText("Patched twice.", kWait));
  std::string text = p->screen().Text();
  CHECK(Count(text, "Allow these changes?") == 1);
  CHECK(text.find("A notes.txt") != std::string::npos);
  CHECK(text.find("M notes.txt") != std::string::npos);
  std::string content = ReadFile(env->workdir() / "notes.txt");
  CHECK(content == "changed line\nsecond line\n");
}

TEST_CASE("/help, /model, /approvals, /new, /resume ID and /diff") {
  auto env = MakeEnv(R"({"responses": [], "default": "reply {{n}}"})");
  auto p = SpawnTui(*env, {});
  Expect(p->WaitForText("›", kWait));
  std::string first = FirstId(p->screen().Text(), "session ");
  REQUIRE(!first.empty());

  Expect(p->Write("/help\r"));
  Expect(p->WaitForText("Ctrl-D quit", kWait));
  std::string text = p->screen().Text();
  for (const char* name :
       {"/status", "/compact", "/fork [TURN]", "/sessions", "/resume [ID]",
        "/model [NAME [EFFORT]]", "/approvals [POLICY]", "/diff", "/new", "/quit"}) {
    CHECK(text.find(name) != std::string::npos);
  }

  Expect(p->Write("/model gpt-other\r"));
  Expect(p->WaitForText("model set to gpt-other", kWait));
  Expect(p->Write("/approvals sometimes\r"));
  Expect(p->WaitForText("error: 'sometimes' is not one of untrusted, on-failure, on-request, never",
                        kWait));
  Expect(p->Write("/approvals on-request\r"));
  Expect(p->WaitForText("approval policy set to on-request", kWait));
  Expect(p->Write("/status\r"));
  Expect(p->WaitForText("context     ", kWait));
  text = p->screen().Text();
  CHECK(text.find("model       gpt-other") != std::string::npos);
  CHECK(text.find("approval    on-request") != std::string::npos);
  CHECK(text.find("session     " + first) != std::string::npos);
  Expect(p->Write("hello\r"));
  Expect(p->WaitForText("reply 1", kWait));
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 1);
  CHECK(requests[0].body["model"] == "gpt-other");

  // /diff outside a repository, then in one (tracked change and untracked file).
  Expect(p->Write("/diff\r"));
  Expect(p->WaitForText("is not inside a git repository", kWait));
  ProcessOptions git;
  git.cwd = env->workdir();
  git.argv = {"sh", "-c",
              "git init -q . && git config user.email t@e && git config user.name t && "
              "echo old > tracked.txt && git add tracked.txt && git commit -qm init && "
              "echo new > tracked.txt && echo fresh > untracked.txt"};
  auto g = RunProcess(git);
  REQUIRE(g.ok());
  INFO(g->err);
  REQUIRE(g->exit_code == 0);
  Expect(p->Write("/diff\r"));
  Expect(p->WaitForText("+fresh", kWait));
  text = p->screen().Text();
  CHECK(text.find("-old") != std::string::npos);
  CHECK(text.find("+new") != std::string::npos);
  CHECK(text.find("untracked.txt") != std::string::npos);

  Expect(p->Write("/new\r"));
  Expect(p->WaitFor(
      [&](const Screen& s) {
        std::string id = ResumeHint(
            "codex resume " + FirstId(s.Text().substr(s.Text().rfind(">_ codex")), "session "));
        return !id.empty() && id != first;
      },
      kWait));
  Expect(p->Write("/resume " + first + "\r"));
  Expect(p->WaitForText("resumed session " + first, kWait));
  Expect(p->WaitForText("› hello", kWait));
  Expect(p->Write("/resume nosuchsession\r"));
  Expect(p->WaitForText("error: no session 'nosuchsession'", kWait));
  Expect(p->Write("/quit\r"));
  auto code = p->WaitExit(kWait);
  REQUIRE(code.ok());
  CHECK(*code == 0);
  CHECK(ResumeHint(p->screen().Text()) == first);
}

TEST_CASE("codex PROMPT starts with that prompt; codex resume --last PROMPT continues") {
  auto env = MakeEnv(R"({"responses": ["first reply", "follow-up reply"]})");
  auto p = SpawnTui(*env, {"start with this"});
  Expect(p->WaitForText("› start with this", kWait));
  Expect(p->WaitForText("first reply", kWait));
  WaitTurnEnd(*p);
  Expect(p->Write("\x04"));
  REQUIRE(p->WaitExit(kWait).ok());
  std::string id = ResumeHint(p->screen().Text());

  auto r = SpawnTui(*env, {"resume", "--last", "and then this"});
  Expect(r->WaitForText("resumed session " + id, kWait));
  Expect(r->WaitForText("follow-up reply", kWait));
  Expect(r->Write("\x04"));
  REQUIRE(r->WaitExit(kWait).ok());
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 2);
  std::vector<std::string> typed;  // without the injected <environment_context> and the like
  for (const auto& t : UserTexts(requests[1])) {
    if (t.rfind("<", 0) != 0 && t.rfind("#", 0) != 0) typed.push_back(t);
  }
  CHECK(typed == std::vector<std::string>{"start with this", "and then this"});
}

// Waits until no turn runs: the spinner is gone and the prompt is drawn.
void WaitIdle(PtyProcess& p) {
  Expect(p.WaitFor(
      [](const Screen& s) {
        std::string v = s.Visible();
        return v.find("Esc to interrupt") == std::string::npos && v.rfind("›") != std::string::npos;
      },
      kWait));
}

TEST_CASE("TERM=dumb prints each assistant message once, the one before a tool call too") {
  auto env = MakeEnv(R"({"responses": [
    {"output": [{"message": "Let me look first."}, {"shell": ["bash", "-c", "echo looked"]}]},
    "Final answer here."
  ]})");
  auto d = SpawnTui(*env, {}, {{"TERM", "dumb"}});
  Expect(d->WaitForText("›", kWait));
  Expect(d->Write("go\n"));
  Expect(d->WaitForText("Final answer here.", kWait));
  Expect(d->WaitForText("›", kWait, d->screen().Text().find("Final answer here.")));
  std::string text = d->screen().Text();
  CHECK(Count(text, "Let me look first.") == 1);
  CHECK(Count(text, "Final answer here.") == 1);
  CHECK(text.find("looked") != std::string::npos);
  Expect(d->Write("\x04"));
  REQUIRE(d->WaitExit(kWait).ok());
  CHECK(d->raw().find('\x1b') == std::string::npos);
}

TEST_CASE("a long paragraph streams by screen line; reasoning streams dim; type-ahead, Esc") {
  // The stream stalls after the reasoning and half of the message: what is
  // on the screen then is what streamed, not what a finished message shows.
  nlohmann::json script = {
      {"responses",
       {{{"output",
          {{{"reasoning", "**Checking files**\n\nI am looking at the layout of the tree."}}}},
         {"message", LongParagraph()},
         {"pause_after", 15},
         {"pause_ms", 60000}},
        "Answer to the retyped message."}}};
  auto env = MakeEnv(script.dump());
  auto p = SpawnTui(*env, {});
  Expect(p->WaitForText("›", kWait));
  Expect(p->Write("explain\r"));
  Expect(p->WaitForText("word01 word02", kWait));
  std::string text = p->screen().Text();
  CHECK(text.find("I am looking at the layout of the tree.") != std::string::npos);
  CHECK(text.find("I am looking") < text.find("word01"));
  CHECK(p->raw().find("\x1b[2m\x1b[3mI am looking") != std::string::npos);  // dim italic
  CHECK(text.find("word40") == std::string::npos);      // the stream has stalled half-way
  CHECK(text.find(" tokens · ") == std::string::npos);  // no usage line: the turn goes on

  // The composer is live: typed text shows under the spinner; Tab queues it.
  Expect(p->Write("a follow-up"));
  Expect(p->WaitForText("› a follow-up", kWait));
  CHECK(p->screen().Visible().find("Esc to interrupt") != std::string::npos);
  Expect(p->Write("\t"));
  Expect(p->WaitForText("↳ queued: a follow-up", kWait));
  // Esc interrupts like Ctrl-C; the queued message is not sent but comes back.
  Expect(p->Write("\x1b"));
  Expect(p->WaitForText("■ Interrupted.", kWait));
  Expect(p->WaitFor(
      [](const Screen& s) {
        std::string v = s.Visible();
        return v.rfind("› a follow-up") != std::string::npos &&
               v.rfind("› a follow-up") > v.rfind("Interrupted") &&
               v.find("queued") == std::string::npos;
      },
      kWait));
  CHECK(env->server().requests_to("/responses").size() == 1);
  Expect(p->Write("\r"));
  Expect(p->WaitForText("Answer to the retyped message.", kWait));
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 2);
  CHECK(Contains(UserTexts(requests[1]), "a follow-up"));
}

// Every OSC 8 sequence in `raw` opens a link to `scheme`://file/… or closes one.
bool OnlyOurHyperlinks(const std::string& raw, const std::string& scheme) {
  for (size_t at = raw.find("\x1b]8;;"); at != std::string::npos;
       at = raw.find("\x1b]8;;", at + 1)) {
    const std::string_view rest = std::string_view(raw).substr(at + 5);
    if (rest.rfind(scheme + "://file/", 0) != 0 && rest.rfind("\x1b\\", 0) != 0) return false;
  }
  return true;
}

TEST_CASE("show_raw_agent_reasoning and file_opener in the interactive UI") {
  // A message citing a file, and model text that tries to plant its own
  // hyperlink; the reasoning item carries raw reasoning_text (streamed as
  // response.reasoning_text.delta) besides its summary.
  nlohmann::json turn = {
      {"output", {{{"reasoning", "summary words"}, {"content", "raw chain of thought"}}}},
      {"message",
       "See [main.rs](src/main.rs:12) and \x1b]8;;https://evil.example/\x07"
       "click\x1b]8;;\x07 done."}};
  struct Case {
    std::string config;
    std::map<std::string, std::string> env;
    std::string scheme;  // "" = no hyperlink expected
    bool raw_shown;
  };
  for (const Case& c : std::vector<Case>{
           {"", {}, "vscode", false},  // the defaults: Codex's vscode, no raw reasoning
           {"show_raw_agent_reasoning = true\nfile_opener = \"cursor\"\n", {}, "cursor", true},
           {"file_opener = \"none\"\n", {}, "", false},
           {"", {{"NO_COLOR", "1"}}, "", false},
       }) {
    INFO("config: " << c.config << " env: " << c.env.size());
    nlohmann::json script = {{"responses", {turn}}};
    auto env = MakeEnv(script.dump());
    if (!c.config.empty()) Expect(env->WriteConfig(c.config));
    auto p = SpawnTui(*env, {}, c.env);
    Expect(p->WaitForText("›", kWait));
    Expect(p->Write("look\r"));
    WaitTurnEnd(*p);
    const std::string text = p->screen().Text();
    CHECK(text.find("summary words") != std::string::npos);
    CHECK((text.find("raw chain of thought") != std::string::npos) == c.raw_shown);
    CHECK(p->raw().find("evil.example/\x07") == std::string::npos);
    if (c.scheme.empty()) {
      CHECK(p->raw().find("\x1b]8;") == std::string::npos);
      continue;
    }
    const std::string work = std::filesystem::canonical(env->workdir()).string();
    CHECK_THAT(p->raw(),
               Catch::Contains("\x1b]8;;" + c.scheme + "://file" + work + "/src/main.rs:12\x1b\\"));
    CHECK(OnlyOurHyperlinks(p->raw(), c.scheme));
  }
}

TEST_CASE("Tab during a turn queues the message; it is sent when the turn ends") {
  nlohmann::json script = {{"responses",
                            {{{"message", LongParagraph()}, {"pause_after", 6}, {"pause_ms", 6000}},
                             "Second answer.",
                             "Third answer."}}};
  auto env = MakeEnv(script.dump());
  auto p = SpawnTui(*env, {});
  Expect(p->WaitForText("›", kWait));
  Expect(p->Write("first\r"));
  Expect(p->WaitForText("word01", kWait));
  Expect(p->Write("second\t"));
  Expect(p->WaitForText("↳ queued: second", kWait));
  Expect(p->Write("/status\r"));  // Enter on a slash command queues it, to run in order
  Expect(p->WaitForText("↳ queued: /status", kWait));
  Expect(p->WaitForText("Second answer.", kWait));
  Expect(p->WaitForText("model       gpt-test", kWait));
  std::string text = p->screen().Text();
  // The whole first answer, then the queued message as a prompt, then its answer.
  size_t first_end = text.find("word40");
  REQUIRE(first_end != std::string::npos);
  CHECK(text.find("› second", first_end) < text.find("Second answer."));
  CHECK(text.find("› /status") > text.find("Second answer."));
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 2);
  CHECK(Contains(UserTexts(requests[1]), "first"));
  CHECK(Contains(UserTexts(requests[1]), "second"));
  Expect(p->Write("\x04"));
  REQUIRE(p->WaitExit(kWait).ok());
}

TEST_CASE("a multi-line message typed during a stream queues whole and is sent whole") {
  nlohmann::json script = {
      {"responses",
       {{{"message", LongParagraph()}, {"pause_after", 6}, {"pause_ms", 4000}}, "Second answer."}}};
  auto env = MakeEnv(script.dump());
  auto p = SpawnTui(*env, {});
  Expect(p->WaitForText("›", kWait));
  Expect(p->Write("first\r"));
  Expect(p->WaitForText("word01", kWait));
  // Alt-Enter inserts a line break; the composer grows under the spinner.
  Expect(p->Write("line one\x1b\rline two"));
  Expect(p->WaitForText("  line two", kWait));
  CHECK(p->screen().Visible().find("Esc to interrupt") < p->screen().Visible().find("› line one"));
  Expect(p->Write("\t"));
  Expect(p->WaitForText("↳ queued: line one…", kWait));  // its first line, marked as cut
  Expect(p->WaitForText("Second answer.", kWait));
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 2);
  CHECK(Contains(UserTexts(requests[1]), "line one\nline two"));
  // Echoed as sent: both lines, once.
  std::string text = p->screen().Text();
  CHECK(Count(text, "› line one\n  line two") == 1);
  CHECK(p->screen().Visible().find("queued") == std::string::npos);  // no longer queued
}

TEST_CASE("Esc-Esc reaches back past a compaction; the edit forks before the first message") {
  auto env = MakeEnv(R"({"responses": ["answer one",
    {"message": "answer two", "usage": {"input_tokens": 100000, "output_tokens": 10}},
    "answer three", "answer to the edit"]})");
  auto p = SpawnTui(*env, {"-c", "model_providers.scripted.supports_compact=true"});
  Expect(p->WaitForText("›", kWait));
  Expect(p->Write("first question\r"));
  Expect(p->WaitForText("answer one", kWait));
  Expect(p->Write("second question\r"));
  Expect(p->WaitForText("answer two", kWait));
  Expect(p->Write("/compact\r"));
  Expect(p->WaitForText("compacted; context", kWait));
  Expect(p->Write("third question\r"));
  Expect(p->WaitForText("answer three", kWait));
  WaitIdle(*p);
  Expect(p->Write("\x1b"));
  Expect(p->WaitForText("Esc again", kWait));
  Expect(p->Write("\x1b"));
  Expect(p->WaitForText("editing message 3 of 3", kWait));  // the summary is not one of them
  Expect(p->Write("\x1b"));
  Expect(p->WaitForText("editing message 2 of 3", kWait));
  Expect(p->Write("\x1b"));
  Expect(p->WaitForText("editing message 1 of 3", kWait));
  Expect(p->WaitForText("› first question", kWait));
  Expect(p->Write(" (edited)\r"));
  Expect(p->WaitForText("answer to the edit", kWait));
  auto requests = env->server().requests_to("/responses");
  REQUIRE(!requests.empty());
  std::vector<std::string> users = UserTexts(requests.back());  // the edit's request
  CHECK(Contains(users, "first question (edited)"));
  CHECK(!Contains(users, "first question"));
  CHECK(!Contains(users, "second question"));
  CHECK(!Contains(users, "third question"));
  for (const auto& u : users) CHECK(u.find("answer two") == std::string::npos);
}

TEST_CASE("Markdown tables, nested lists and code blocks render as such") {
  auto env = MakeEnv(R"({"responses": [
    "| name | size |\n|---|---:|\n| alpha | 1 |\n| beta gamma | 12345 |\n\n1. one\n   - inner\n     - deeper\n2. two\n\n```sh\nmake test\n```\n"
  ]})");
  auto p = SpawnTui(*env, {});
  Expect(p->WaitForText("›", kWait));
  Expect(p->Write("show\r"));
  Expect(p->WaitForText("make test", kWait));
  std::string text = p->screen().Text();
  CHECK(text.find("name       │  size") != std::string::npos);
  CHECK(text.find("───────────┼──────") != std::string::npos);
  CHECK(text.find("alpha      │     1") != std::string::npos);
  CHECK(text.find("beta gamma │ 12345") != std::string::npos);
  CHECK(text.find("|---") == std::string::npos);
  CHECK(text.find("1. one\n   • inner\n     ◦ deeper\n2. two") != std::string::npos);
  CHECK(text.find("    make test") != std::string::npos);
  CHECK(text.find("```") == std::string::npos);
}

TEST_CASE("grapheme clusters edit as one character; wide characters keep the cursor right") {
  auto env = MakeEnv(R"({"responses": ["ok one", "ok two"]})");
  auto p = SpawnTui(*env, {});
  Expect(p->WaitForText("›", kWait));
  // 👍🏽 then Backspace: the thumb and its skin tone go together.
  Expect(p->Write("a\xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD"));
  Expect(
      p->Write("\x7f"
               "b\r"));
  Expect(p->WaitForText("ok one", kWait));
  // A ZWJ family, then Left over it and over 日, and an insert between 日 and 本.
  Expect(p->Write("日本\xF0\x9F\x91\xA8\xE2\x80\x8D\xF0\x9F\x91\xA9\xE2\x80\x8D\xF0\x9F\x91\xA7"));
  Expect(p->Write("\x1b[D\x1b[Dx\r"));
  Expect(p->WaitForText("ok two", kWait));
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 2);
  CHECK(Contains(UserTexts(requests[0]), "ab"));
  CHECK(Contains(UserTexts(requests[1]),
                 "日x本\xF0\x9F\x91\xA8\xE2\x80\x8D\xF0\x9F\x91\xA9\xE2\x80\x8D\xF0\x9F\x91\xA7"));
}

TEST_CASE("a resize redraws the composer once, wrapped to the new width") {
  auto env = MakeEnv(R"({"responses": ["fine"]})");
  auto p = SpawnTui(*env, {});
  Expect(p->WaitForText("›", kWait));
  std::string draft = "a draft that is long enough to need two rows once the window is narrow";
  Expect(p->Write(draft));
  Expect(p->WaitForText("› " + draft, kWait));
  Expect(p->Resize(30, 40));
  Expect(p->Write(" END"));
  Expect(p->WaitFor([](const Screen& s) { return s.Visible().find("END") != std::string::npos; },
                    kWait));
  std::string visible = p->screen().Visible();
  CHECK(Count(visible, "› ") == 1);  // the prompt is drawn once
  CHECK(Count(visible, "a draft that") == 1);
  CHECK(visible.find("codex") != std::string::npos);  // the banner above is intact
  Expect(p->Write("\r"));
  Expect(p->WaitForText("fine", kWait));
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 1);
  CHECK(Contains(UserTexts(requests[0]), draft + " END"));
}

TEST_CASE("'/' opens a filtered command popup; Enter runs the chosen command") {
  auto env = MakeEnv(R"([])");
  auto p = SpawnTui(*env, {});
  Expect(p->WaitForText("›", kWait));
  Expect(p->Write("/"));
  Expect(p->WaitForText("/compact", kWait));
  std::string visible = p->screen().Visible();
  CHECK(visible.find("/status") != std::string::npos);
  CHECK(visible.find("summarise the conversation to free context") != std::string::npos);
  Expect(p->Write("st"));
  Expect(p->WaitFor(
      [](const Screen& s) { return s.Visible().find("/compact") == std::string::npos; }, kWait));
  CHECK(p->screen().Visible().find("› /status") != std::string::npos);  // the popup's choice
  Expect(p->Write("\r"));
  Expect(p->WaitForText("model       gpt-test", kWait));
  // Esc closes the popup and leaves the text; Tab completes a command that takes an argument.
  Expect(p->Write("/mo"));
  Expect(p->WaitForText("show or change the model", kWait));
  Expect(p->Write("\t"));
  Expect(p->Write("gpt-picked\r"));
  Expect(p->WaitForText("model set to gpt-picked", kWait));
  Expect(p->Write("\x04"));
  REQUIRE(p->WaitExit(kWait).ok());
}

TEST_CASE("'@' searches the workspace's files (respecting .gitignore) and inserts the path") {
  auto env = MakeEnv(R"({"responses": ["seen"]})");
  ProcessOptions git;
  git.cwd = env->workdir();
  git.argv = {"sh", "-c",
              "git init -q . && mkdir -p src/deep secret && echo x > src/deep/alpha_module.cc && "
              "echo x > beta.txt && echo x > secret/alpha_key.txt && echo secret/ > .gitignore"};
  auto g = RunProcess(git);
  REQUIRE(g.ok());
  REQUIRE(g->exit_code == 0);
  auto p = SpawnTui(*env, {});
  Expect(p->WaitForText("›", kWait));
  Expect(p->Write("look at @alpmod"));
  Expect(p->WaitForText("src/deep/alpha_module.cc", kWait));
  CHECK(p->screen().Visible().find("alpha_key") == std::string::npos);  // ignored by git
  Expect(p->Write("\t"));
  Expect(p->WaitForText("› look at src/deep/alpha_module.cc", kWait));
  Expect(p->Write("please\r"));
  Expect(p->WaitForText("seen", kWait));
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 1);
  CHECK(Contains(UserTexts(requests[0]), "look at src/deep/alpha_module.cc please"));
}

TEST_CASE("Ctrl-R searches prompt history; /approvals opens a picker") {
  auto env = MakeEnv(R"({"responses": [], "default": "reply {{n}}"})",
                     "approval_policy = \"untrusted\"\n");
  auto p = SpawnTui(*env, {});
  Expect(p->WaitForText("›", kWait));
  Expect(p->Write("the first unique prompt\r"));
  Expect(p->WaitForText("reply 1", kWait));
  Expect(p->Write("another one\r"));
  Expect(p->WaitForText("reply 2", kWait));
  Expect(p->Write("\x12"));  // Ctrl-R
  Expect(p->WaitForText("history search", kWait));
  Expect(p->Write("uniq"));
  Expect(p->WaitFor(
      [](const Screen& s) {
        std::string v = s.Visible();
        size_t popup = v.find("history search");
        return popup != std::string::npos && v.find("› uniq") != std::string::npos &&
               v.find("› the first unique prompt", popup) != std::string::npos &&
               v.find("another one", popup) == std::string::npos;
      },
      kWait));
  Expect(p->Write("\r"));  // takes the entry into the composer
  Expect(p->WaitFor(
      [](const Screen& s) { return s.Visible().find("history search") == std::string::npos; },
      kWait));
  Expect(p->Write("\r"));
  Expect(p->WaitForText("reply 3", kWait));
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 3);
  std::vector<std::string> typed;
  for (const auto& t : UserTexts(requests[2])) {
    if (t.rfind("<", 0) != 0 && t.rfind("#", 0) != 0) typed.push_back(t);
  }
  CHECK(typed == std::vector<std::string>{"the first unique prompt", "another one",
                                          "the first unique prompt"});

  Expect(p->Write("/approvals\r"));
  Expect(p->WaitForText("› 1. /approvals untrusted", kWait));  // the current one is selected
  Expect(p->WaitForText("/approvals on-failure", kWait));      // the whole picker, drawn at once
  Expect(p->Write("\x1b[B"));
  Expect(p->WaitForText("› 2. /approvals on-request", kWait));
  Expect(p->Write("\r"));
  Expect(p->WaitForText("approval policy set to on-request", kWait));
  Expect(p->Write("/status\r"));
  Expect(p->WaitForText("approval    on-request", kWait));
}

TEST_CASE("Esc-Esc walks back through the user's messages; sending an edit forks there") {
  auto env = MakeEnv(
      R"({"responses": ["answer one", "answer two", "answer to the edit", "answer after"]})");
  auto p = SpawnTui(*env, {});
  Expect(p->WaitForText("›", kWait));
  std::string original = FirstId(p->screen().Text(), "session ");
  Expect(p->Write("first question\r"));
  Expect(p->WaitForText("answer one", kWait));
  Expect(p->Write("second question\r"));
  Expect(p->WaitForText("answer two", kWait));
  WaitIdle(*p);
  Expect(p->Write("\x1b"));
  Expect(p->WaitForText("Esc again to edit a previous message", kWait));
  Expect(p->Write("\x1b"));
  Expect(p->WaitForText("editing message 2 of 2", kWait));
  Expect(p->WaitFor(
      [](const Screen& s) {
        std::string v = s.Visible();
        return v.rfind("› second question") > v.rfind("editing message 2 of 2");
      },
      kWait));
  Expect(p->Write("\x1b"));
  Expect(p->WaitForText("editing message 1 of 2", kWait));
  Expect(p->Write(", edited\r"));
  Expect(p->WaitForText("answer to the edit", kWait));
  std::string text = p->screen().Text();
  INFO(text);
  std::string branch = FirstId(text, "before that message into ");
  REQUIRE(!branch.empty());
  CHECK(branch != original);
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 3);
  auto users = UserTexts(requests[2]);
  CHECK(Contains(users, "first question, edited"));
  CHECK(!Contains(users, "first question"));
  CHECK(!Contains(users, "second question"));
  // The next turn continues the branch; the old one still holds both turns.
  Expect(p->Write("more\r"));
  Expect(p->WaitForText("answer after", kWait));
  requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 4);
  CHECK(Contains(UserTexts(requests[3]), "first question, edited"));
  CHECK(Contains(UserTexts(requests[3]), "more"));
  Expect(p->Write("\x04"));
  REQUIRE(p->WaitExit(kWait).ok());
  CHECK(ResumeHint(p->screen().Text()) == branch);

  auto tree = env->RunCodex({"sessions", "tree", original});
  REQUIRE(tree.ok());
  INFO(tree->err);
  CHECK(tree->exit_code == 0);
  CHECK(tree->out.find(original) != std::string::npos);
  CHECK(tree->out.find(branch) != std::string::npos);
  // The branch is titled by its edited message, the old one keeps its title.
  auto shown = env->RunCodex({"sessions", "show", branch});
  REQUIRE(shown.ok());
  CHECK(shown->out.find("title    first question, edited\n") != std::string::npos);
  shown = env->RunCodex({"sessions", "show", original});
  REQUIRE(shown.ok());
  CHECK(shown->out.find("title    first question\n") != std::string::npos);
  auto r = SpawnTui(*env, {"resume", original});
  Expect(r->WaitForText("› second question", kWait));  // the old branch is intact
  Expect(r->Write("\x04"));
  REQUIRE(r->WaitExit(kWait).ok());
}

TEST_CASE("a command the sandbox refuses: the retry question shows the refusal; 'a' holds") {
  if (::syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION) < 1) {
    codex::testing::SkipPart(
        "Landlock is missing on this kernel: the sandboxed run cannot be tested here");
    return;
  }
  auto env = MakeEnv(R"({"responses": [
    {"output": [{"shell": ["bash", "-lc", "touch made.txt"], "call_id": "c1"}]},
    {"output": [{"shell": ["bash", "-lc", "touch made.txt"], "call_id": "c2"}]},
    "Made it twice."
  ]})",
                     "approval_policy = \"untrusted\"\nsandbox_mode = \"read-only\"\n");
  auto p = SpawnTui(*env, {});
  Expect(p->WaitForText("›", kWait));
  Expect(p->Write("make it\r"));
  Expect(p->WaitForText("$ touch made.txt", kWait));
  Expect(p->Write("y"));
  // Sandboxed, touch fails; the question now says why, in the sandbox's words.
  Expect(p->WaitForText("run it again without the sandbox?", kWait));
  Expect(p->WaitForText("│ touch: cannot touch 'made.txt'", kWait));
  CHECK(p->screen().Text().find("outside the sandbox") != std::string::npos);
  CHECK(!std::filesystem::exists(env->workdir() / "made.txt"));
  Expect(p->Write("a"));
  Expect(p->WaitForText("Made it twice.", kWait));
  CHECK(std::filesystem::exists(env->workdir() / "made.txt"));
  // The second identical command ran outside the sandbox without a question.
  CHECK(Count(p->screen().Text(), "Allow this command?") == 2);
}

TEST_CASE("!cmd runs the user's own command, unsandboxed; the model sees it next") {
  auto env = MakeEnv(R"({"responses": ["first reply", "second reply"]})");
  auto p = SpawnTui(*env, {});
  Expect(p->WaitForText("›", kWait));
  Expect(p->Write("hello\r"));
  Expect(p->WaitForText("first reply", kWait));
  WaitIdle(*p);
  Expect(p->Write("!echo local-out; touch made.txt; false\r"));
  Expect(p->WaitForText("• Running echo local-out; touch made.txt; false", kWait));
  Expect(p->WaitForText("└ local-out", kWait));
  Expect(p->WaitForText("✗ exit 1", kWait));
  // The session's sandbox is read-only; what the user typed runs as the user.
  CHECK(std::filesystem::exists(env->workdir() / "made.txt"));
  CHECK(env->server().requests_to("/responses").size() == 1);  // nothing sent for it
  WaitIdle(*p);
  Expect(p->Write("what did I run?\r"));
  Expect(p->WaitForText("second reply", kWait));
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 2);
  std::string record;
  for (const auto& t : UserTexts(requests[1])) {
    if (t.rfind("<user_shell_command>", 0) == 0) record = t;
  }
  CHECK(record.find("<command>\necho local-out; touch made.txt; false\n</command>") !=
        std::string::npos);
  CHECK(record.find("Exit code: 1") != std::string::npos);
  CHECK(record.find("local-out") != std::string::npos);
  auto users = UserTexts(requests[1]);
  CHECK(std::find(users.begin(), users.end(), record) <
        std::find(users.begin(), users.end(), "what did I run?"));
  // Not a message of the user's to edit: Esc-Esc offers the typed ones only.
  WaitIdle(*p);
  Expect(p->Write("\x1b"));
  Expect(p->WaitForText("Esc again", kWait));
  Expect(p->Write("\x1b"));
  Expect(p->WaitForText("editing message 2 of 2", kWait));
}

TEST_CASE("approve by prefix: later commands starting with it run; chained ones still ask") {
  auto env = MakeEnv(R"({"responses": [
    {"output": [{"shell": ["bash", "-lc", "mkdir -p d1"], "call_id": "c1"}]},
    {"output": [{"shell": ["bash", "-lc", "mkdir -p d2"], "call_id": "c2"}]},
    {"output": [{"shell": ["bash", "-lc", "mkdir -p d3 && touch chained.txt"], "call_id": "c3"}]},
    {"output": [{"shell": ["mkdir", "-p", "d4"], "call_id": "c4"}]},
    "Done."
  ]})",
                     "approval_policy = \"untrusted\"\nsandbox_mode = \"danger-full-access\"\n");
  auto p = SpawnTui(*env, {});
  Expect(p->WaitForText("›", kWait));
  Expect(p->Write("make dirs\r"));
  Expect(p->WaitForText("$ mkdir -p d1", kWait));
  Expect(p->WaitForText("3. Yes, and don't ask again for commands that start with `mkdir -p` (p)",
                        kWait));
  Expect(p->Write("p"));
  Expect(p->WaitForText("every command starting with `mkdir -p` for the session", kWait));
  // d2 runs without a question; the chained command is asked about.
  Expect(p->WaitForText("$ mkdir -p d3 && touch chained.txt", kWait));
  CHECK(std::filesystem::exists(env->workdir() / "d2"));
  CHECK(p->screen().Text().find("commands that start with `mkdir -p d3") == std::string::npos);
  Expect(p->Write("d"));
  Expect(p->WaitForText("Done.", kWait));
  CHECK(!std::filesystem::exists(env->workdir() / "chained.txt"));
  CHECK(std::filesystem::exists(env->workdir() / "d4"));  // the same words without a shell
  CHECK(Count(p->screen().Text(), "Allow this command?") == 2);
}

TEST_CASE("Esc while a command runs stops it; the command is shown as interrupted") {
  auto env = MakeEnv(R"({"responses": [
    {"output": [{"shell": ["bash", "-c", "echo started; sleep 60"], "call_id": "c1"}]},
    "after the interrupt"
  ]})",
                     "sandbox_mode = \"danger-full-access\"\n");
  auto p = SpawnTui(*env, {});
  Expect(p->WaitForText("›", kWait));
  Expect(p->Write("run it\r"));
  Expect(p->WaitForText("• Running echo started; sleep 60", kWait));
  Expect(p->WaitForText("└ started", kWait));  // streamed while it runs
  Expect(p->Write("\x1b"));
  Expect(p->WaitForText("✗ interrupted (stopped)", kWait));
  Expect(p->WaitForText("■ Interrupted.", kWait));
  // What it printed stays in the transcript, once, above the mark.
  std::string text = p->screen().Text();
  CHECK(Count(text, "started") == 2);  // "Running echo started; …" and the output
  CHECK(text.find("└ started") < text.find("✗ interrupted"));
  WaitIdle(*p);
  Expect(p->Write("go on\r"));
  Expect(p->WaitForText("after the interrupt", kWait));
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 2);
  CHECK(CallOutput(requests[1], "c1").find("aborted") != std::string::npos);
}

TEST_CASE("calls running together: the live view shows the one printing, named; not the last") {
  // exec_command calls of one response run together. The first prints a
  // line every 0.1 s; the second, started last, prints nothing until the
  // test creates `go`. The live view shows the busy one, under a row naming
  // it (another runs beside it), not the silent one started last.
  auto env = MakeEnv(R"json({"responses": [
    {"output": [
      {"function_call": "exec_command", "call_id": "c1", "arguments": {"cmd":
        "i=0; while [ ! -e go ]; do i=$((i+1)); echo busy-$i; sleep 0.1; done; echo busy-$((0+0))"}},
      {"function_call": "exec_command", "call_id": "c2", "arguments": {"cmd":
        "while [ ! -e go ]; do sleep 0.1; done; echo quiet-$((1+1))"}}]},
    "both ran"
  ]})json",
                     "sandbox_mode = \"danger-full-access\"\n");
  auto p = SpawnTui(*env, {});
  Expect(p->WaitForText("›", kWait));
  Expect(p->Write("run both\r"));
  Expect(p->WaitForText("└ busy-", kWait));
  Expect(p->WaitForText("⋯ i=0; while", kWait));
  {
    std::string text = p->screen().Text();
    INFO(text);
    const size_t title = text.find("⋯ i=0; while");
    CHECK(title > text.find("• Running while [ ! -e go ]"));  // both headers printed first
    CHECK(title < text.find("└ busy-"));
    CHECK(text.find("└ busy-") < text.find("Esc to interrupt"));
  }
  std::ofstream(env->workdir() / "go").put('1');
  Expect(p->WaitForText("both ran", kWait));
  WaitIdle(*p);
  std::string text = p->screen().Text();
  INFO(text);
  // Each output stays in the transcript; the live rows and their title went.
  CHECK(text.find("busy-0") != std::string::npos);
  CHECK(text.find("quiet-2") != std::string::npos);
  CHECK(Count(text, "⋯ ") == 0);
  CHECK(Count(text, "✓ exit 0") == 2);
}

TEST_CASE("a command still running when its call returns is shown running, not as exit 0") {
  auto env = MakeEnv(R"json({"responses": [
    {"output": [
      {"function_call": "exec_command", "call_id": "c1", "arguments": {"cmd":
        "echo started-$((3+3)); sleep 30", "yield_time_ms": 250}}]},
    "left it running"
  ]})json",
                     "sandbox_mode = \"danger-full-access\"\n");
  auto p = SpawnTui(*env, {});
  Expect(p->WaitForText("›", kWait));
  Expect(p->Write("start it\r"));
  Expect(p->WaitForText("left it running", kWait));
  std::string text = p->screen().Text();
  INFO(text);
  CHECK(text.find("└ started-6") < text.find("↻ running in the background (session 1000)"));
  CHECK(text.find("✓ exit") == std::string::npos);
  Expect(p->Write("\x04"));
  auto code = p->WaitExit(kWait);
  REQUIRE(code.ok());
  CHECK(*code == 0);
}

TEST_CASE("Esc while calls run together: each is shown interrupted, with what it printed") {
  auto env = MakeEnv(R"json({"responses": [
    {"output": [
      {"function_call": "exec_command", "call_id": "c1", "arguments": {"cmd":
        "echo first-$((1+1)); touch f1; sleep 60"}},
      {"function_call": "exec_command", "call_id": "c2", "arguments": {"cmd":
        "echo second-$((2+2)); touch f2; sleep 60"}}]},
    "after the interrupt"
  ]})json",
                     "sandbox_mode = \"danger-full-access\"\n");
  auto p = SpawnTui(*env, {});
  Expect(p->WaitForText("›", kWait));
  Expect(p->Write("run both\r"));
  Expect(p->WaitForText("• Running echo second-", kWait));
  // Both have printed, and codex has read it: the live view shows one.
  REQUIRE(Eventually([&] {
    return std::filesystem::exists(env->workdir() / "f1") &&
           std::filesystem::exists(env->workdir() / "f2");
  }));
  Expect(p->WaitForText("└ ", kWait));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  Expect(p->Write("\x1b"));
  Expect(p->WaitForText("■ Interrupted.", kWait));
  std::string text = p->screen().Text();
  INFO(text);
  CHECK(Count(text, "✗ interrupted (stopped)") == 2);
  CHECK(Count(text, "└ first-2") == 1);
  CHECK(Count(text, "└ second-4") == 1);
  CHECK(text.find("└ first-2") < text.find("■ Interrupted."));
  CHECK(text.find("└ second-4") < text.find("■ Interrupted."));
  WaitIdle(*p);
  Expect(p->Write("go on\r"));
  Expect(p->WaitForText("after the interrupt", kWait));
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 2);
  CHECK(CallOutput(requests[1], "c1").find("aborted") != std::string::npos);
  CHECK(CallOutput(requests[1], "c2").find("aborted") != std::string::npos);
}

}  // namespace
}  // namespace codex::testing

namespace codex::testing {

TEST_CASE("between turns, a session another process advanced is reloaded, and said so") {
  auto env = MakeEnv(R"({"responses": [], "default": "reply {{n}}"})");
  auto first = env->RunCodex({"exec", "first"});
  REQUIRE(first.ok());
  REQUIRE(first->exit_code == 0);
  const std::string id = FirstId(first->err, "session ");
  REQUIRE(!id.empty());
  auto p = SpawnTui(*env, {"resume", id});
  Expect(p->WaitForText("›", kWait));
  auto other = env->RunCodex({"exec", "resume", id, "from elsewhere"});
  REQUIRE(other.ok());
  REQUIRE(other->exit_code == 0);
  Expect(p->Write("mine\r"));
  Expect(p->WaitForText("was continued by another codex process", kWait));
  Expect(p->WaitForText("reply 3", kWait));
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 3);
  auto texts = UserTexts(requests[2]);
  auto at = [&](std::string_view s) { return std::find(texts.begin(), texts.end(), s); };
  REQUIRE(at("from elsewhere") != texts.end());
  REQUIRE(at("mine") != texts.end());
  CHECK(at("from elsewhere") < at("mine"));
}

}  // namespace codex::testing

namespace codex::testing {
namespace {

TEST_CASE("a running command's output streams in a bounded live view; head and tail stay") {
  // The command prints 30 lines, then waits for the test to look at the
  // screen (the file `go`), then prints one more line.
  auto env = MakeEnv(R"({"responses": [
    {"output": [{"shell": ["bash", "-c",
      "for i in $(seq 1 30); do echo out-$i; done; while [ ! -e go ]; do sleep 0.1; done; echo final-line"],
      "call_id": "c1"}]},
    "after the command"
  ]})",
                     "sandbox_mode = \"danger-full-access\"\n");
  auto p = SpawnTui(*env, {});
  Expect(p->WaitForText("›", kWait));
  Expect(p->Write("run it\r"));
  Expect(p->WaitForText("out-30", kWait));
  {
    // Live: the last five lines, under the command and above the spinner.
    std::string text = p->screen().Text();
    INFO(text);
    CHECK(text.find("out-26") != std::string::npos);
    CHECK(text.find("out-25") == std::string::npos);
    CHECK(text.find("out-1\n") == std::string::npos);
    CHECK(text.find("• Running for i in") < text.find("out-26"));
    CHECK(text.find("out-30") < text.find("Esc to interrupt"));
    CHECK(text.find("final-line") == std::string::npos);
  }
  // The composer under it stays live: typing shows at once.
  Expect(p->Write("typed meanwhile"));
  Expect(p->WaitForText("› typed meanwhile", kWait));
  CHECK(p->screen().Text().find("out-30") < p->screen().Text().find("› typed meanwhile"));
  std::ofstream(env->workdir() / "go").put('1');
  Expect(p->WaitForText("after the command", kWait));
  WaitIdle(*p);
  // Still there once the turn's last redraw lands (under load the check can
  // otherwise read the screen between erasing the live rows and drawing the
  // composer again).
  Expect(p->WaitFor(
      [](const Screen& s) { return s.Visible().find("› typed meanwhile") != std::string::npos; },
      kWait));
  std::string text = p->screen().Text();
  INFO(text);
  // Kept: the head and the tail, with the count of lines between.
  CHECK(text.find("└ out-1\n    out-2\n    … +26 lines\n    out-29\n    out-30\n    final-line\n"
                  "  ✓ exit 0") != std::string::npos);
  CHECK(Count(text, "out-30") == 1);  // the live rows were replaced, not left behind
  CHECK(text.find("out-26") == std::string::npos);
  // The model got the captured output, every line of it.
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 2);
  std::string output = CallOutput(requests[1], "c1");
  CHECK(output.find("out-1\\nout-2") != std::string::npos);
  CHECK(output.find("out-15") != std::string::npos);
  CHECK(output.find("final-line") != std::string::npos);
}

TEST_CASE("a long output stays bounded on screen; a progress bar redraws its line") {
  auto env = MakeEnv(R"({"responses": [
    {"output": [{"shell": ["bash", "-c",
      "printf 'p 10%%\\rp 50%%\\rp 99%%\\r'; while [ ! -e go ]; do sleep 0.1; done; seq 1 200000"],
      "call_id": "c1"}]},
    "after the command"
  ]})",
                     "sandbox_mode = \"danger-full-access\"\n");
  auto p = SpawnTui(*env, {});
  Expect(p->WaitForText("›", kWait));
  Expect(p->Write("run it\r"));
  Expect(p->WaitForText("└ p 99%", kWait));
  CHECK(p->screen().Text().find("└ p 50%") == std::string::npos);  // redrawn over
  std::ofstream(env->workdir() / "go").put('1');
  Expect(p->WaitForText("after the command", kWait));
  std::string text = p->screen().Text();
  INFO(text);
  CHECK(text.find("    200000\n  ✓ exit 0") != std::string::npos);
  CHECK(Count(text, "\n    1") < 10);  // not 200000 rows
}

TEST_CASE("!cmd streams too, and what it printed stays when Esc stops it") {
  auto env =
      MakeEnv(R"({"responses": ["first reply"]})", "sandbox_mode = \"danger-full-access\"\n");
  auto p = SpawnTui(*env, {});
  Expect(p->WaitForText("›", kWait));
  Expect(p->Write("!echo local-start; sleep 60\r"));
  Expect(p->WaitForText("└ local-start", kWait));
  Expect(p->Write("\x1b"));
  Expect(p->WaitForText("✗ interrupted (stopped)", kWait));
  std::string text = p->screen().Text();
  INFO(text);
  CHECK(text.find("└ local-start") < text.find("✗ interrupted"));
  CHECK(text.find("error:") == std::string::npos);
  WaitIdle(*p);
  Expect(p->Write("hello\r"));
  Expect(p->WaitForText("first reply", kWait));
}

}  // namespace
}  // namespace codex::testing

namespace codex::testing {
namespace {

TEST_CASE("in tmux (lines re-wrap on resize): narrowing and widening leave one composer") {
  if (TmuxCodex::Missing("the re-wrapping terminal cannot be tested here")) return;
  auto env = MakeEnv(R"({"responses": ["fine"]})");
  TmuxCodex t(*env, {}, 100, 30);
  t.WaitForText("›");  // capture-pane drops trailing blanks
  const std::string draft =
      "a draft that is long enough to need two rows once the window is narrow";
  t.Type(draft);
  t.WaitForText("› " + draft);
  int n = 0;
  for (int cols : {40, 100, 33, 120, 25}) {
    t.Resize(cols);
    const std::string mark = " M" + std::to_string(n++);
    t.Type(mark);  // drawn after the resize was handled
    t.WaitFor([&](const std::string& s) { return s.find(mark) != std::string::npos; });
    std::string text = t.Text();
    INFO("width " << cols << "\n" << text);
    CHECK(Count(text, "› a draft") == 1);  // the composer's first line, once
    CHECK(Count(text, "a draft") == 1);
    CHECK(text.find("codex") != std::string::npos);  // the banner is still there
  }
  t.Key("Enter");
  t.WaitForText("fine");
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 1);
  CHECK(Contains(UserTexts(requests[0]), draft + " M0 M1 M2 M3 M4"));
}

// A turn whose answer streams six words of LongParagraph() and then pauses
// for a minute, the spinner ticking: the stage of the resize cases.
std::string PausedStreamScript() {
  nlohmann::json script = {
      {"responses",
       {{{"message", LongParagraph()}, {"pause_after", 6}, {"pause_ms", 60000}}, "second"}}};
  return script.dump();
}

// Sends "explain" and waits until the first word streamed and the spinner runs.
void StartPausedStream(TmuxCodex& t) {
  t.WaitForText("›");
  t.Submit("explain");
  t.WaitForText("word01");
  t.WaitForText("Esc to interrupt");
}

TEST_CASE("in tmux: resizing while a turn streams leaves one spinner and one composer") {
  if (TmuxCodex::Missing("the re-wrapping terminal cannot be tested here")) return;
  auto env = MakeEnv(PausedStreamScript());
  TmuxCodex t(*env, {}, 100, 30, 40);
  StartPausedStream(t);
  // A draft long enough to wrap when narrow, the cursor 12 characters from its end.
  const std::string draft = "typed while it streams, long enough to take two rows when narrow";
  t.Type(draft);
  t.WaitFor([&](const std::string&) { return t.Joined().find("› " + draft) != std::string::npos; });
  for (int i = 0; i < 12; ++i) t.Key("Left");
  const std::string right = draft.substr(draft.size() - 12);
  int n = 0;
  std::string marks;
  // Narrow, then wide, then both again: the spinner ticks between them.
  for (int cols : {40, 120, 45, 90}) {
    t.Resize(cols);
    t.WaitStill();  // the spinner thread draws on its own after the resize
    std::string text = t.Screen();
    INFO("width " << cols << "\n" << text);
    CHECK(Count(text, "Esc to interrupt") == 1);  // no stale spinner row
    CHECK(Count(text, "› typed") == 1);           // the composer once
    CHECK(Count(text, "word01") == 1);            // the streamed text once
    std::string at = t.AtCursor();
    CHECK((!at.empty() && right.compare(0, at.size(), at) == 0));  // the cursor stayed
    const std::string mark = "<" + std::to_string(n++) + ">";
    marks += mark;
    t.Type(mark);
    t.WaitFor([&](const std::string&) { return t.Joined().find(marks) != std::string::npos; });
  }
  t.Key("Escape");
  t.WaitForText("■ Interrupted.");
  // The spinner spins until the turn's thread has wound down, which on a
  // loaded machine can be a while after "Interrupted" was printed; WaitStill
  // takes a spinning spinner for a still screen.
  t.WaitFor([&](const std::string&) { return Count(t.Screen(), "Esc to interrupt") == 0; });
  t.WaitStill();
  std::string text = t.Screen();
  INFO(text);
  CHECK(Count(text, "Esc to interrupt") == 0);  // the spinner is gone, all of it
  CHECK(Count(text, "› typed") == 1);
  const std::string typed = draft.substr(0, draft.size() - 12) + marks + right;
  CHECK(t.Joined().find("› " + typed) != std::string::npos);
}

// tmux re-wraps its screen and then reads what codex had already written:
// a spinner frame laid out for a narrow window, with a composer of many
// wrapped rows under it, lands on a screen where those rows were joined, and
// its cursor motions reach above the spinner into the streamed lines. Widened
// again and again while the spinner ticks, the lines above stay whole.
TEST_CASE("in tmux: widening again and again while the spinner ticks keeps the streamed lines") {
  if (TmuxCodex::Missing("the re-wrapping terminal cannot be tested here")) return;
  auto env = MakeEnv(PausedStreamScript());
  TmuxCodex t(*env, {}, 100, 30, 40);
  StartPausedStream(t);
  t.WaitStill();
  // The last word streamed so far: the line it ends is right above the spinner.
  std::string streamed = t.Joined();
  std::string last;
  const std::regex word("word[0-9]{2}");
  for (std::sregex_iterator it(streamed.begin(), streamed.end(), word), end; it != end; ++it) {
    last = it->str();
  }
  REQUIRE(!last.empty());
  // A draft of three rows at 40 columns and one at 140, the cursor at its
  // end: a tick laid out at 40 moves up two rows too many at 140, onto the
  // streamed lines (40 columns still show the whole spinner line).
  std::string draft = "a draft";
  for (int i = 0; draft.size() < 100; ++i) draft += " part" + std::to_string(i);
  t.Type(draft);
  t.WaitFor([&](const std::string&) { return t.Joined().find("› " + draft) != std::string::npos; });
  for (int round = 0; round < 8; ++round) {
    t.Resize(40);
    t.WaitStill();
    t.Resize(140);
    t.WaitStill();  // the spinner ticks on, at the new width
    std::string text = t.Screen();
    INFO("round " << round << ", last streamed word " << last << "\n" << text);
    CHECK(Count(text, "Esc to interrupt") == 1);
    CHECK(Count(text, "word01") == 1);
    CHECK(Count(text, last) == 1);  // the line above the spinner is whole
    CHECK(Count(text, "› explain") == 1);
    CHECK(Count(text, "› a draft") == 1);
  }
  t.Key("Escape");
  t.WaitForText("■ Interrupted.");
  // The spinner spins until the turn's thread has wound down, which on a
  // loaded machine can be a while after "Interrupted" was printed; WaitStill
  // takes a spinning spinner for a still screen.
  t.WaitFor([&](const std::string&) { return Count(t.Screen(), "Esc to interrupt") == 0; });
  t.WaitStill();
  std::string text = t.Screen();
  INFO(text);
  CHECK(Count(text, "Esc to interrupt") == 0);
  CHECK(Count(text, last) == 1);
  CHECK(t.Joined().find("› " + draft) != std::string::npos);  // the draft is kept
}

TEST_CASE("in tmux: a command's live output and a resize mid-run leave no stale rows") {
  if (TmuxCodex::Missing("the re-wrapping terminal cannot be tested here")) return;
  auto env = MakeEnv(R"({"responses": [
    {"output": [{"shell": ["bash", "-c",
      "for i in $(seq 1 12); do echo live-output-line-$i-with-some-length-to-wrap-when-narrow; done; while [ ! -e go ]; do sleep 0.1; done; echo final-line"],
      "call_id": "c1"}]},
    "after the command"
  ]})",
                     "sandbox_mode = \"danger-full-access\"\n");
  TmuxCodex t(*env, {}, 100, 30, 40);
  t.WaitForText("›");
  t.Submit("run it");
  t.WaitForText("live-output-line-12");
  for (int cols : {40, 110, 50}) {
    t.Resize(cols);
    t.Type("x");
    t.WaitFor([&](const std::string&) { return t.Screen().find("› x") != std::string::npos; });
    t.WaitStill();
    std::string text = t.Screen();
    INFO("width " << cols << "\n" << text);
    CHECK(Count(text, "Esc to interrupt") == 1);
    CHECK(Count(text, "live-output-line-12") == 1);  // the live rows once, cut to the width
    CHECK(Count(text, "› x") == 1);
    t.Key("BSpace");
    t.WaitFor([&](const std::string&) { return t.Screen().find("› x") == std::string::npos; });
  }
  std::ofstream(env->workdir() / "go").put('1');
  t.WaitForText("after the command");
  t.WaitStill();
  std::string text = t.Joined();
  INFO(text);
  CHECK(Count(text, "Esc to interrupt") == 0);
  CHECK(Count(text, "final-line") == 2);           // in the command, and the kept output
  CHECK(Count(text, "live-output-line-1-") == 1);  // the kept head, once
}

TEST_CASE("in tmux: the cursor in the middle of a long line stays on its character") {
  if (TmuxCodex::Missing("the re-wrapping terminal cannot be tested here")) return;
  auto env = MakeEnv(R"({"responses": ["fine"]})");
  TmuxCodex t(*env, {}, 100, 30, 40);
  t.WaitForText("›");
  std::string draft;
  for (int i = 10; i < 40; ++i)
    draft += (draft.empty() ? "" : " ") + std::string("w") + std::to_string(i);
  t.Type(draft);
  t.WaitFor([&](const std::string&) { return t.Joined().find("› " + draft) != std::string::npos; });
  for (int i = 0; i < 40; ++i) t.Key("Left");
  const std::string right = draft.substr(draft.size() - 40);
  t.WaitFor([&](const std::string&) {
    std::string at = t.AtCursor();
    return !at.empty() && right.compare(0, at.size(), at) == 0 && at.size() < right.size() + 1;
  });
  std::string marks;
  int n = 0;
  for (int cols : {37, 120, 52, 23, 100}) {
    t.Resize(cols);
    const std::string mark = "<" + std::to_string(n++) + ">";
    marks += mark;
    t.Type(mark);  // typed at the cursor: the text right of it is unchanged
    t.WaitFor([&](const std::string&) { return t.Joined().find(marks) != std::string::npos; });
    t.WaitStill();
    std::string text = t.Screen();
    std::string at = t.AtCursor();
    INFO("width " << cols << "\n" << text << "\nat cursor: " << at);
    REQUIRE(!at.empty());
    CHECK(right.compare(0, at.size(), at) == 0);  // the cursor is on the character it was
    CHECK(Count(text, "› w10") == 1);
  }
  t.Key("Enter");
  t.WaitForText("fine");
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 1);
  CHECK(Contains(UserTexts(requests[0]), draft.substr(0, draft.size() - 40) + marks + right));
}

TEST_CASE("in tmux: a wide character at the wrap column: the cursor is where it is drawn") {
  if (TmuxCodex::Missing("the re-wrapping terminal cannot be tested here")) return;
  auto env = MakeEnv(R"({"responses": ["fine"]})");
  // 41 columns: "› " and 19 × 日 fill 40; the 20th does not fit in the last
  // column and starts the second row, leaving that column blank.
  TmuxCodex t(*env, {}, 41, 30, 40);
  t.WaitForText("›");
  std::string draft;
  for (int i = 0; i < 30; ++i) draft += "日";
  draft += "end";
  t.Type(draft);
  t.WaitFor([&](const std::string&) { return t.Joined().find("日end") != std::string::npos; });
  for (int i = 0; i < 14; ++i) t.Key("Left");  // over "end" and 11 × 日: before the 20th
  t.WaitFor([&](const std::string&) { return t.AtCursor().rfind("日日日", 0) == 0; });
  std::string pos = t.AtCursor();
  CHECK(pos.rfind("日日日", 0) == 0);  // on the next row's first 日, not the blank column
  // Other widths, odd and even: still on that character.
  for (int cols : {37, 60, 23}) {
    t.Resize(cols);
    t.WaitStill();
    std::string at = t.AtCursor();
    INFO("width " << cols << "\n" << t.Screen() << "\nat cursor: " << at);
    CHECK(at.rfind("日", 0) == 0);
    CHECK(Count(t.Screen(), "› 日") == 1);
  }
  t.Submit("x");
  t.WaitForText("fine");
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 1);
  std::string sent;
  for (int i = 0; i < 19; ++i) sent += "日";
  sent += "x";
  for (int i = 0; i < 11; ++i) sent += "日";
  CHECK(Contains(UserTexts(requests[0]), sent + "end"));
}

TEST_CASE("in tmux: pickers and popups are laid out again on a resize") {
  if (TmuxCodex::Missing("the re-wrapping terminal cannot be tested here")) return;
  auto env = MakeEnv(R"({"responses": [], "default": "ok {{n}}"})");
  ExecSession(*env, "alpha project setup");
  ExecSession(*env, "beta bug hunt");
  {
    // The resume picker: its rows are wider than a narrow window.
    TmuxCodex t(*env, {"resume"}, 120, 30, 40);
    t.WaitForText("2 of 2 sessions");
    for (int cols : {50, 130, 70}) {
      t.Resize(cols);
      t.Key("Down");  // drawn after the resize
      t.WaitStill();
      std::string text = t.Screen();
      INFO("width " << cols << "\n" << text);
      CHECK(Count(text, "Resume a session") == 1);
      CHECK(Count(text, "alpha pro") == 1);
      CHECK(Count(text, "beta bug") == 1);
      CHECK(Count(text, "2 of 2 sessions") == 1);
    }
    t.Key("Escape");
    t.WaitForText("no session chosen");
    CHECK(Count(t.Text(), "Resume a session") == 0);
  }
  TmuxCodex t(*env, {}, 100, 30, 40);
  t.WaitForText("›");
  // The slash popup, the /model picker and the @ popup under the composer.
  const std::vector<std::pair<std::string, std::string>> popups = {
      {"/", "/compact"}, {"/model\r", "gpt-5-mini"}, {"@READ", "README"}};
  std::ofstream(env->workdir() / "README.md") << "x\n";
  for (const auto& [keys, shown] : popups) {
    if (keys.back() == '\r') {
      t.Type(keys.substr(0, keys.size() - 1));
      t.WaitForText("show or change the model");
      t.Key("Enter");
    } else {
      t.Type(keys);
    }
    t.WaitForText(shown);
    for (int cols : {30, 110, 45}) {
      t.Resize(cols);
      t.Key("Down");
      t.WaitStill();
      std::string text = t.Screen();
      INFO(keys << " at width " << cols << "\n" << text);
      CHECK(Count(text, shown) == 1);
    }
    t.Key("Escape");  // closes the popup (the text stays)
    t.WaitFor([&](const std::string&) { return t.Screen().find(shown) == std::string::npos; });
    t.Key("C-u");
  }
}

}  // namespace
}  // namespace codex::testing

namespace codex::testing {
namespace {

TEST_CASE("a fork is titled 'fork of …' until its first own message names it") {
  auto env = MakeEnv(R"({"responses": [], "default": "reply {{n}}"})");
  auto first = env->RunCodex({"exec", "the original question"});
  REQUIRE(first.ok());
  REQUIRE(first->exit_code == 0);
  const std::string parent = FirstId(first->err, "session ");
  REQUIRE(!parent.empty());
  auto title = [&](const std::string& id) {
    auto r = env->RunCodex({"sessions", "show", id});
    REQUIRE(r.ok());
    INFO(r->err);
    REQUIRE(r->exit_code == 0);
    size_t at = r->out.find("title    ");
    REQUIRE(at != std::string::npos);
    return r->out.substr(at + 9, r->out.find('\n', at) - at - 9);
  };
  auto fork = env->RunCodex({"fork", parent});
  REQUIRE(fork.ok());
  INFO(fork->err);
  REQUIRE(fork->exit_code == 0);
  const std::string branch = FirstId(fork->out, "");
  REQUIRE(!branch.empty());
  CHECK(title(branch) == "fork of the original question");
  auto next = env->RunCodex({"exec", "resume", branch, "a new direction"});
  REQUIRE(next.ok());
  REQUIRE(next->exit_code == 0);
  CHECK(title(branch) == "a new direction");
  CHECK(title(parent) == "the original question");
  auto later = env->RunCodex({"exec", "resume", branch, "something else"});
  REQUIRE(later.ok());
  REQUIRE(later->exit_code == 0);
  CHECK(title(branch) == "a new direction");  // named once
  // A fork of the fork, before its own message.
  auto again = env->RunCodex({"fork", branch});
  REQUIRE(again.ok());
  CHECK(title(FirstId(again->out, "")) == "fork of a new direction");
  // The picker lists each under its own title.
  auto p = SpawnTui(*env, {"resume"});
  Expect(p->WaitForText("fork of a new direction", kWait));
  std::string text = p->screen().Text();
  CHECK(Count(text, "a new direction") == 2);
  CHECK(Count(text, "the original question") == 1);
}

TEST_CASE("--help names the program codex, not the path it was started by") {
  auto env = MakeEnv(R"([])");
  for (std::vector<std::string> args :
       {std::vector<std::string>{"--help"}, std::vector<std::string>{"exec", "--help"}}) {
    auto r = env->RunCodex(args);
    REQUIRE(r.ok());
    INFO(r->out);
    CHECK(r->exit_code == 0);
    CHECK(r->out.find("codex") != std::string::npos);
    CHECK(r->out.find("/codex") == std::string::npos);  // no directory before it
    CHECK(r->out.find("Usage: codex") != std::string::npos);
  }
}

}  // namespace
}  // namespace codex::testing

namespace codex::testing {

// Issue 23: `!cmd` is a door of the workspace policy too. In a workspace that
// is not a repository, the user's own command (or one the model talked them
// into) cannot plant a .git (core.fsmonitor for the next host git) or a
// .codex/config.toml, in workspace-write.
}  // namespace codex::testing

namespace codex::testing {
namespace {

// Twelve paragraphs, each `para<NN>` then 30 numbered words then `end<NN>`:
// every word is unique, so a word cut by a line break or printed twice shows.
std::string TwelveParagraphs() {
  std::string text;
  for (int p = 1; p <= 12; ++p) {
    char head[16];
    std::snprintf(head, sizeof head, "para%02d", p);
    text += head;
    for (int w = 1; w <= 30; ++w) text += " w" + std::to_string(p) + "x" + std::to_string(w);
    char end[16];
    std::snprintf(end, sizeof end, " end%02d", p);
    text += end;
    text += p < 12 ? "\n\n" : "";
  }
  return text;
}

// The longest row of each of the first `paragraphs` paragraphs in `text` (rows from the para<NN>
// row to the end<NN> row), and whether every word of every paragraph is there once.
std::vector<int> ParagraphWidths(const std::string& text, bool* words_once, int paragraphs = 12) {
  std::vector<std::string> rows;
  std::istringstream in(text);
  for (std::string row; std::getline(in, row);) rows.push_back(row);
  std::vector<int> widths;
  *words_once = true;
  std::map<std::string, int> seen;
  std::istringstream words(text);
  for (std::string w; words >> w;) ++seen[w];
  for (int p = 1; p <= paragraphs; ++p) {
    char head[16], end[16];
    std::snprintf(head, sizeof head, "para%02d", p);
    std::snprintf(end, sizeof end, "end%02d", p);
    int widest = 0;
    bool in_para = false;
    for (const std::string& row : rows) {
      if (row.find(head) != std::string::npos) in_para = true;
      if (in_para) widest = std::max(widest, static_cast<int>(row.size()));
      if (in_para && row.find(end) != std::string::npos) break;
    }
    widths.push_back(widest);
    if (seen[head] != 1 || seen[end] != 1) *words_once = false;
    for (int w = 1; w <= 30; ++w) {
      if (seen["w" + std::to_string(p) + "x" + std::to_string(w)] != 1) *words_once = false;
    }
  }
  return widths;
}

TEST_CASE("in tmux: a resize lays an answer already printed out again at the new width") {
  if (TmuxCodex::Missing("the re-wrapping terminal cannot be tested here")) return;
  nlohmann::json script = {{"responses", {TwelveParagraphs(), "second answer"}}};
  auto env = MakeEnv(script.dump());
  TmuxCodex t(*env, {}, 60, 30);
  t.WaitForText("›");
  t.Submit("explain");
  t.WaitForText("end12");
  t.WaitStill();
  bool once = false;
  std::vector<int> widths = ParagraphWidths(t.Text(), &once);
  {
    INFO(t.Text());
    CHECK(once);
    for (int w : widths) CHECK(w <= 60);
  }
  // Widened: every paragraph takes the new width (tmux does not join rows
  // that codex ended itself, so only a new layout makes them longer).
  t.Resize(120);
  t.WaitFor([&](const std::string& s) {
    bool all = false;
    std::vector<int> now = ParagraphWidths(s, &all);
    return all && *std::min_element(now.begin(), now.end()) > 60;
  });
  t.WaitStill();
  std::string text = t.Text();
  widths = ParagraphWidths(text, &once);
  {
    INFO(text);
    CHECK(once);  // no paragraph lost or printed twice, no word cut
    for (int w : widths) {
      CHECK(w > 60);
      CHECK(w <= 120);
    }
    CHECK(Count(text, "› explain") == 1);  // the question, once
    CHECK(Count(text, "para01") == 1);
  }
  // The composer works after: the next message is sent.
  t.Type("next one");
  t.WaitForText("› next one");
  t.Key("Enter");
  t.WaitForText("second answer");
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 2);
  CHECK(Contains(UserTexts(requests[1]), "next one"));
  // Narrowed again: re-wrapped at 60 columns, no word cut by the terminal.
  t.Resize(60);
  t.WaitFor([&](const std::string& s) {
    bool all = false;
    std::vector<int> now = ParagraphWidths(s, &all);
    return all && *std::max_element(now.begin(), now.end()) <= 60;
  });
  t.WaitStill();
  text = t.Text();
  widths = ParagraphWidths(text, &once);
  INFO(text);
  CHECK(once);
  for (int w : widths) CHECK(w <= 60);
  CHECK(Count(text, "second answer") == 1);
  CHECK(Count(text, "› next one") == 1);
  CHECK(Count(text, "› explain") == 1);
}

// While a turn streams: the answers printed before it are laid out again, and
// the one streaming keeps every word it printed.
TEST_CASE("in tmux: a resize while a turn streams lays out the earlier answer again") {
  if (TmuxCodex::Missing("the re-wrapping terminal cannot be tested here")) return;
  nlohmann::json script = {
      {"responses",
       {TwelveParagraphs(),
        {{"message", LongParagraph()}, {"pause_after", 6}, {"pause_ms", 60000}}}}};
  auto env = MakeEnv(script.dump());
  TmuxCodex t(*env, {}, 60, 30);
  t.WaitForText("›");
  t.Submit("explain");
  t.WaitForText("end12");
  t.WaitStill();
  t.Submit("more");
  t.WaitForText("word01");
  t.WaitForText("Esc to interrupt");
  t.WaitStill();
  std::string before = t.Joined();
  std::string last;
  const std::regex word("word[0-9]{2}");
  for (std::sregex_iterator it(before.begin(), before.end(), word), end; it != end; ++it) {
    last = it->str();
  }
  REQUIRE(!last.empty());
  t.Resize(120);
  t.WaitFor([&](const std::string& s) {
    bool all = false;
    std::vector<int> now = ParagraphWidths(s, &all);
    return all && *std::min_element(now.begin(), now.end()) > 60;
  });
  t.WaitStill();
  std::string text = t.Text();
  bool once = false;
  std::vector<int> widths = ParagraphWidths(text, &once);
  INFO(text);
  CHECK(once);
  for (int w : widths) CHECK(w > 60);
  CHECK(Count(text, "› explain") == 1);
  CHECK(Count(text, "› more") == 1);
  CHECK(Count(text, "word01") == 1);  // the answer streaming keeps what it printed
  CHECK(Count(text, last) == 1);
  CHECK(Count(t.Screen(), "Esc to interrupt") == 1);
  t.Key("Escape");
  t.WaitForText("■ Interrupted.");
}

}  // namespace
}  // namespace codex::testing
