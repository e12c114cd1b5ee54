// The interactive terminal UI on a pseudo-terminal against the scripted
// server: control sequences in a tool's output, in the command and in the
// model's text reach the terminal only as visible text (issue 10).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "tests/e2e_checks.h"
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

// A rollout of one session with id ...0000000000NN.
std::string SmallRollout(int n) {
  char id[64];
  std::snprintf(id, sizeof id, "01900000-0000-7000-8000-0000000000%02d", n);
  return std::string(
             R"({"timestamp":"2026-01-02T03:04:05.000Z","type":"session_meta","payload":{"id":")") +
         id + R"(","cwd":"/x"}})" + "\n" +
         R"({"timestamp":"2026-01-02T03:04:06.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"hello"}]}})" +
         "\n";
}

// `codex sessions import` of 8 small rollouts (one with an escape sequence in its name) on a
// pty of 30 x 20 with TERM=`term`, started while the store's write lock is held by a process
// that is not codex (the first rollout was imported beforehand, so the store exists).
struct LockedRun {
  std::unique_ptr<CodexTestEnv> env;
  std::unique_ptr<e2e::Db> lock;
  std::unique_ptr<PtyProcess> pty;
};

// A new codex environment, no lock taken and nothing started yet.
LockedRun NewRun() {
  LockedRun out;
  auto env = CodexTestEnv::Create(R"(["unused"])");
  REQUIRE(env.ok());
  out.env = std::move(*env);
  return out;
}

// A process that is not codex takes the write lock of `out`'s store, then `command` starts on a
// pty of 30 x `columns` and waits for that lock.
void StartWhileLocked(LockedRun& out, const ProcessOptions& command, int columns) {
  out.lock =
      std::make_unique<e2e::Db>(out.env->codex_home() / "sessions.db", e2e::Db::Access::kReadWrite);
  REQUIRE(out.lock->ok());
  out.lock->Query("BEGIN IMMEDIATE");
  REQUIRE(out.lock->error().empty());
  auto p = PtyProcess::Spawn(command, 30, columns);
  REQUIRE(p.ok());
  out.pty = std::move(*p);
  REQUIRE(out.pty->WaitForText("waiting for", 20s).ok());
}

// Lets `run` have the lock and waits for it to end with `expected`: its output.
std::string ReleaseAndWait(LockedRun& run, int expected) {
  run.lock->Query("ROLLBACK");
  auto code = run.pty->WaitExit(60s);
  const std::string& raw = run.pty->raw();
  INFO("raw: " << raw);
  REQUIRE(code.ok());
  CHECK(*code == expected);
  return raw;
}

// Lets `run` go 2.5 s after it started waiting (past the 2 s before the first progress report,
// however fast the machine is) and waits for it to end with 0: its output.
std::string ReleaseAfterFirstReport(LockedRun& run) {
  std::this_thread::sleep_for(2500ms);
  return ReleaseAndWait(run, 0);
}

// Ctrl-C while `run` waits for the lock, then the lock let go: its output (exit 130 checked).
std::string InterruptWhileLocked(LockedRun& run) {
  REQUIRE(run.pty->Write("\x03").ok());
  // The terminal echoes ^C where it sends SIGINT: after that, the signal is there.
  REQUIRE(run.pty->WaitForText("^C", 20s).ok());
  return ReleaseAndWait(run, 130);
}

// A rollout of SmallRollout(n) (a session_meta and a message) and `answers` more messages.
void WriteBigRollout(const std::filesystem::path& file, int n, int answers) {
  std::ofstream big(file);
  big << SmallRollout(n);
  for (int i = 0; i < answers; ++i) {
    big << R"({"timestamp":"2026-01-02T03:04:07.000Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"item )"
        << i << R"("}]}})"
        << "\n";
  }
}

LockedRun StartLockedImport(const std::string& term) {
  LockedRun out = NewRun();
  const std::filesystem::path dir = out.env->root() / "rollouts";
  std::filesystem::create_directories(dir);
  std::vector<std::string> args = {"sessions", "import"};
  for (int i = 0; i < 8; ++i) {
    const std::string name =
        i == 4 ? "t\x1b]0;pwned\x07.jsonl" : "r" + std::to_string(i) + ".jsonl";
    std::ofstream(dir / name) << SmallRollout(i);
    args.push_back((dir / name).string());
  }
  auto first = RunProcess(out.env->CodexCommand({"sessions", "import", args[2]}));
  REQUIRE(first.ok());
  REQUIRE(first->exit_code == 0);
  ProcessOptions command = out.env->CodexCommand(args);
  command.env["TERM"] = term;
  StartWhileLocked(out, command, 20);
  return out;
}

// StartLockedImport, the lock released after 2.5 s: the run outlasts the 2 s before the first
// progress report however fast the machine is.
std::unique_ptr<PtyProcess> SlowImportOnPty(const std::string& term) {
  LockedRun run = StartLockedImport(term);
  const std::string raw = ReleaseAfterFirstReport(run);
  INFO("raw: " << raw);
  CHECK(raw.find("7 imported, 1 already present, 0 failed") != std::string::npos);
  // The escape sequence in a file name is shown, not obeyed.
  CHECK(raw.find("\x1b]0;pwned") == std::string::npos);
  CHECK(raw.find("^[]0;pwned^G") != std::string::npos);
  return std::move(run.pty);
}

TEST_CASE("sessions import: Ctrl-C stops after the file in hand; what was imported stays") {
  LockedRun run = StartLockedImport("xterm-256color");
  const std::string raw = InterruptWhileLocked(run);  // the first file waits for the lock
  INFO("raw: " << raw);
  CHECK(raw.find("interrupted after 1 of 8 files: 0 imported, 0 extended, 1 already present, 0 "
                 "failed; what was imported stays, run the same command again") !=
        std::string::npos);
  // The rerun imports the rest.
  auto again = RunProcess(
      run.env->CodexCommand({"sessions", "import", (run.env->root() / "rollouts").string()}));
  REQUIRE(again.ok());
  INFO(again->err);
  CHECK(again->exit_code == 0);
  CHECK(again->err.find("7 imported, 1 already present, 0 failed") != std::string::npos);
}

TEST_CASE("sessions purge: Ctrl-C before the commit removes nothing and says so") {
  auto env = CodexTestEnv::Create(R"(["unused"])");
  REQUIRE(env.ok());
  const std::filesystem::path dir = (*env)->root() / "rollouts";
  std::filesystem::create_directories(dir);
  for (int i = 0; i < 3; ++i)
    std::ofstream(dir / ("r" + std::to_string(i) + ".jsonl")) << SmallRollout(i);
  auto imported = RunProcess((*env)->CodexCommand({"sessions", "import", dir.string()}));
  REQUIRE(imported.ok());
  REQUIRE(imported->exit_code == 0);
  // A process that is not codex holds the write lock: purge waits for it, Ctrl-C lands there.
  e2e::Db lock((*env)->codex_home() / "sessions.db", e2e::Db::Access::kReadWrite);
  REQUIRE(lock.ok());
  lock.Query("BEGIN IMMEDIATE");
  REQUIRE(lock.error().empty());
  auto p = PtyProcess::Spawn(
      (*env)->CodexCommand({"sessions", "purge", "--all", "--older-than", "30d", "--yes"}));
  REQUIRE(p.ok());
  REQUIRE((*p)->WaitForText("waiting for", 20s).ok());
  REQUIRE((*p)->Write("\x03").ok());
  REQUIRE((*p)->WaitForText("^C", 20s).ok());
  lock.Query("ROLLBACK");
  auto code = (*p)->WaitExit(60s);
  INFO("raw: " << (*p)->raw());
  REQUIRE(code.ok());
  CHECK(*code == 130);
  CHECK((*p)->raw().find("error: interrupted: nothing was removed (a purge removes all of its "
                         "sessions in one transaction, or none); run it again to purge") !=
        std::string::npos);
  auto listed = RunProcess((*env)->CodexCommand({"sessions", "list", "--all", "--json"}));
  REQUIRE(listed.ok());
  CHECK(std::count(listed->out.begin(), listed->out.end(), '\n') == 3);
}

TEST_CASE("sessions import: the progress bar fits a 20-column terminal and never glues to a line") {
  auto p = SlowImportOnPty("xterm-256color");
  const std::string& raw = p->raw();
  const std::string text = p->screen().Text();
  INFO("raw: " << raw);
  INFO("screen:\n" << text);
  // The bar was drawn and every redraw fit in 19 columns.
  REQUIRE(raw.find("\r\x1b[2Kimporting") != std::string::npos);
  for (size_t at = raw.find("\r\x1b[2Kimporting"); at != std::string::npos;
       at = raw.find("\r\x1b[2Kimporting", at + 1)) {
    const size_t start = at + 5;
    const size_t end = raw.find_first_of("\r\n", start);
    CHECK((end == std::string::npos ? raw.size() : end) - start <= 19);
  }
  // What the user sees: the file lines and the summary, no trace of the bar.
  CHECK(text.find("importing") == std::string::npos);
  CHECK(text.find("files") == std::string::npos);
}

TEST_CASE("sessions import of one big rollout: the bar moves while its items are stored") {
  LockedRun run = NewRun();
  const std::filesystem::path dir = run.env->root() / "rollouts";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "first.jsonl") << SmallRollout(1);
  WriteBigRollout(dir / "big.jsonl", 2, 2000);
  auto first =
      RunProcess(run.env->CodexCommand({"sessions", "import", (dir / "first.jsonl").string()}));
  REQUIRE(first.ok());
  REQUIRE(first->exit_code == 0);
  // The only file waits for the lock: the first report then comes while its items are stored.
  StartWhileLocked(run, run.env->CodexCommand({"sessions", "import", (dir / "big.jsonl").string()}),
                   100);
  const std::string raw = ReleaseAfterFirstReport(run);
  INFO("raw: " << raw);
  CHECK(raw.find("\r\x1b[2Kimporting [") != std::string::npos);
  CHECK(raw.find("]  0/1 files  ") != std::string::npos);  // drawn before the file was done
}

// A store holding one session of 4,501 items (SmallRollout(2) and 4,500 answers), and
// `codex sessions rm` of it started on a pty, waiting for a lock a non-codex process holds.
LockedRun StartLockedRm() {
  LockedRun out = NewRun();
  const std::filesystem::path file = out.env->root() / "big.jsonl";
  WriteBigRollout(file, 2, 4500);
  auto imported = RunProcess(out.env->CodexCommand({"sessions", "import", file.string()}));
  REQUIRE(imported.ok());
  REQUIRE(imported->exit_code == 0);
  StartWhileLocked(
      out, out.env->CodexCommand({"sessions", "rm", "01900000-0000-7000-8000-000000000002"}), 100);
  return out;
}

TEST_CASE("sessions rm of a big session: the bar counts its items as they go") {
  LockedRun run = StartLockedRm();
  // The first report comes after the first batch of items.
  const std::string raw = ReleaseAfterFirstReport(run);
  INFO("raw: " << raw);
  CHECK(raw.find("\r\x1b[2Kremoving [") != std::string::npos);
  CHECK(raw.find("]  2000/4501 items  ") != std::string::npos);  // drawn before the end
  CHECK(raw.find("removed session 01900000-0000-7000-8000-000000000002 (4501 items deleted") !=
        std::string::npos);
}

TEST_CASE("sessions rm: Ctrl-C before the commit removes nothing and says so") {
  LockedRun run = StartLockedRm();
  const std::string raw = InterruptWhileLocked(run);
  INFO("raw: " << raw);
  CHECK(raw.find("error: interrupted: nothing was removed (a session's items are removed in one "
                 "transaction, or none); run it again to remove it") != std::string::npos);
  auto shown = RunProcess(run.env->CodexCommand(
      {"sessions", "show", "01900000-0000-7000-8000-000000000002", "--json"}));
  REQUIRE(shown.ok());
  CHECK(shown->exit_code == 0);
  CHECK(shown->out.find("item 4499") != std::string::npos);  // every item still there
}

TEST_CASE("sessions import: TERM=dumb gets plain progress lines, no erase sequences") {
  auto p = SlowImportOnPty("dumb");
  const std::string& raw = p->raw();
  INFO("raw: " << raw);
  CHECK(raw.find("\x1b[") == std::string::npos);
  CHECK(raw.find("importing: 1/8 files, ") != std::string::npos);
}

}  // namespace
}  // namespace codex::testing
