// Runs the real codex binary's `sessions ...` and `fork` commands against a
// database seeded through storage::SqliteSessionStore in a temporary
// CODEX_HOME, checking the output contract of cli/sessions_cmd.h.
#include <SQLiteCpp/SQLiteCpp.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "core/item.h"
#include "storage/sqlite_session_store.h"
#include "testing/files.h"
#include "testing/temp_dir.h"
#include "tests/e2e_support.h"

using codex::storage::SqliteSessionStore;
using codex::testing::TempDir;
namespace core = codex::core;

namespace {

struct Run {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// codex ARGS... with CODEX_HOME=home and TZ=UTC, run in `cwd` (through the
// tests' one process spawner, tests/e2e_support.h).
Run Codex(const TempDir& home, const std::string& cwd, std::vector<std::string> args) {
  ::codex::testing::ProcessOptions p;
  p.argv = {CODEX_BINARY};
  p.argv.insert(p.argv.end(), args.begin(), args.end());
  p.cwd = cwd;
  p.env = {{"CODEX_HOME", home.path().string()}, {"TZ", "UTC"}};
  auto run = ::codex::testing::RunProcess(p);
  INFO(run.status().ToString());
  REQUIRE(run.ok());
  REQUIRE_FALSE(run->timed_out);
  Run r;
  r.exit_code = run->exit_code >= 0 ? run->exit_code : 128 + run->term_signal;
  r.out = run->out;
  r.err = run->err;
  return r;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// Seeds `n` sessions in `cwd` (1 s apart), each with two turns and usage.
std::vector<std::string> Seed(const TempDir& home, const std::string& cwd, int n,
                              const std::string& word) {
  auto store = SqliteSessionStore::Open(home.File("sessions.db"));
  REQUIRE(store.ok());
  std::vector<std::string> ids;
  for (int i = 0; i < n; ++i) {
    core::NewSession spec;
    spec.cwd = cwd;
    spec.model = "gpt-test";
    spec.provider = "fake";
    spec.created_at_ms = 1'700'000'000'000 + i * 1000;
    auto s = (*store)->CreateSession(spec);
    REQUIRE(s.ok());
    core::Item call;
    call.kind = core::ItemKind::kFunctionCall;
    call.call_id = "c1";
    call.body =
        R"({"type":"function_call","name":"shell","arguments":"{\"command\":[\"ls\"]}","call_id":"c1"})";
    auto ids1 = (*store)->Append(
        s->id, std::nullopt, "t1",
        {core::UserMessage("task " + std::to_string(i) + " " + word), call,
         core::FunctionCallOutput("c1", "listing-output"), core::AssistantMessage("first answer")});
    REQUIRE(ids1.ok());
    auto ids2 = (*store)->Append(s->id, ids1->back(), "t2",
                                 {core::UserMessage("second"), core::AssistantMessage("ok")});
    REQUIRE(ids2.ok());
    core::TurnRecord t;
    t.session_id = s->id;
    t.turn_id = "t1";
    t.usage = {100, 10, 20, 5, 120};
    REQUIRE((*store)->RecordTurn(t).ok());
    ids.push_back(s->id);
    // Distinct update times: list order (updated_at_ms, then id) is the seeding order.
    std::this_thread::sleep_for(std::chrono::milliseconds(3));
  }
  return ids;
}

}  // namespace

TEST_CASE("sessions list pages newest first in the current directory") {
  TempDir home;
  TempDir work;
  auto ids = Seed(home, work.path(), 5, "alpha");
  Seed(home, "/elsewhere", 1, "beta");

  Run r = Codex(home, work.path(), {"sessions", "list", "--limit", "2"});
  REQUIRE(r.exit_code == 0);
  auto lines = Lines(r.out);
  REQUIRE(lines.size() == 3);  // header, 2 rows; the next-page hint goes to stderr
  CHECK(lines[0].rfind("ID", 0) == 0);
  CHECK(lines[1].rfind(ids[4], 0) == 0);
  CHECK(lines[1].find("task 4 alpha") != std::string::npos);
  CHECK(lines[2].rfind(ids[3], 0) == 0);
  const std::string prefix = "next page: codex sessions list --limit 2 --cursor ";
  auto hint = Lines(r.err);
  REQUIRE(hint.size() == 1);
  REQUIRE(hint[0].rfind(prefix, 0) == 0);
  const std::string cursor = hint[0].substr(prefix.size());

  r = Codex(home, work.path(), {"sessions", "list", "--limit", "2", "--cursor", cursor});
  REQUIRE(r.exit_code == 0);
  lines = Lines(r.out);
  REQUIRE(lines.size() == 3);
  CHECK(lines[1].rfind(ids[2], 0) == 0);

  // JSON Lines, with a final next_cursor object.
  r = Codex(home, work.path(), {"sessions", "list", "--json", "--limit", "4"});
  REQUIRE(r.exit_code == 0);
  lines = Lines(r.out);
  REQUIRE(lines.size() == 5);
  auto first = nlohmann::json::parse(lines[0]);
  CHECK(first["id"] == ids[4]);
  CHECK(first["cwd"] == work.str());
  CHECK(first["tokens_used"] == 120);
  CHECK(nlohmann::json::parse(lines[4]).contains("next_cursor"));

  r = Codex(home, work.path(), {"sessions", "list", "--all", "--json", "--limit", "100"});
  CHECK(Lines(r.out).size() == 6);
  r = Codex(home, "/", {"sessions", "list", "--cwd", "/elsewhere", "--json"});
  CHECK(Lines(r.out).size() == 1);

  r = Codex(home, work.path(), {"sessions", "list", "--cursor", "junk"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.rfind("error: invalid cursor", 0) == 0);
  r = Codex(home, work.path(), {"sessions", "list", "--all", "--cwd", "/x"});
  CHECK(r.exit_code == 2);
}

TEST_CASE("sessions show, fork, tree, rename, search, archive and rm") {
  TempDir home;
  TempDir work;
  const std::string id = Seed(home, work.path(), 1, "zebra").front();

  Run r = Codex(home, work.path(), {"sessions", "show", id.substr(0, 13)});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("── turn 1 ──") != std::string::npos);
  CHECK(r.out.find("── turn 2 ──") != std::string::npos);
  CHECK(r.out.find("tool call shell") != std::string::npos);
  CHECK(r.out.find("listing-output") != std::string::npos);
  CHECK(r.out.find("total 120") != std::string::npos);
  r = Codex(home, work.path(), {"sessions", "show", id, "--json"});
  REQUIRE(r.exit_code == 0);
  auto shown = nlohmann::json::parse(r.out);
  CHECK(shown["items"].size() == 6);
  CHECK(shown["turns"].size() == 1);

  r = Codex(home, work.path(), {"fork", id, "--at-turn", "1"});
  REQUIRE(r.exit_code == 0);
  const std::string fork = Lines(r.out).at(0);
  CHECK(fork.size() == 36);
  r = Codex(home, work.path(), {"fork", id, "--at-turn", "3"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("has 2 turns") != std::string::npos);

  r = Codex(home, work.path(), {"sessions", "tree", fork});
  REQUIRE(r.exit_code == 0);
  {
    auto lines = Lines(r.out);
    REQUIRE(lines.size() == 2);
    CHECK(lines[0].find(id) != std::string::npos);
    CHECK(lines[1].find("└─ * " + fork) != std::string::npos);
  }

  r = Codex(home, work.path(), {"sessions", "rename", fork, "branch-1"});
  REQUIRE(r.exit_code == 0);
  r = Codex(home, work.path(), {"sessions", "show", "branch-1", "--json"});
  REQUIRE(r.exit_code == 0);
  CHECK(nlohmann::json::parse(r.out)["session"]["id"] == fork);

  r = Codex(home, work.path(), {"sessions", "search", "zebra", "--json"});
  REQUIRE(r.exit_code == 0);
  REQUIRE(Lines(r.out).size() == 1);
  CHECK(nlohmann::json::parse(Lines(r.out)[0])["snippet"].get<std::string>().find("[zebra]") !=
        std::string::npos);

  r = Codex(home, work.path(), {"sessions", "archive", id});
  REQUIRE(r.exit_code == 0);
  r = Codex(home, work.path(), {"sessions", "list", "--json"});
  CHECK(Lines(r.out).size() == 1);  // only the fork
  r = Codex(home, work.path(), {"sessions", "list", "--archived", "--json"});
  CHECK(Lines(r.out).size() == 1);
  r = Codex(home, work.path(), {"sessions", "unarchive", id});
  REQUIRE(r.exit_code == 0);

  r = Codex(home, work.path(), {"sessions", "rm", id});
  REQUIRE(r.exit_code == 0);
  r = Codex(home, work.path(), {"sessions", "show", id});
  CHECK(r.exit_code == 4);
  CHECK(r.err.rfind("error: ", 0) == 0);
  // The fork still shows its shared turn.
  r = Codex(home, work.path(), {"sessions", "show", fork});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("listing-output") != std::string::npos);
}

TEST_CASE("sessions export and import round-trip through files") {
  TempDir home;
  TempDir work;
  const std::string id = Seed(home, work.path(), 1, "okapi").front();
  const std::string file = work.File("s.jsonl");
  Run r = Codex(home, work.path(), {"sessions", "export", id, "-o", file});
  REQUIRE(r.exit_code == 0);
  r = Codex(home, work.path(), {"sessions", "export", id, "--format", "markdown"});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("## Turn 1") != std::string::npos);
  r = Codex(home, work.path(), {"sessions", "export", id, "--format", "pdf"});
  CHECK(r.exit_code == 2);

  TempDir other_home;
  r = Codex(other_home, work.path(), {"sessions", "import", work.path()});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("imported " + id) != std::string::npos);
  r = Codex(other_home, work.path(), {"sessions", "import", file});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("skipped " + id) != std::string::npos);
  r = Codex(other_home, work.path(), {"sessions", "export", id});
  REQUIRE(r.exit_code == 0);
  auto a = Lines(::codex::testing::ReadFile(file)), b = Lines(r.out);
  REQUIRE(a.size() == b.size());
  for (size_t i = 1; i < a.size(); ++i) CHECK(a[i] == b[i]);  // all but session_meta

  // A missing path is the operation failing (1), named with the fix, not "unknown session" (4).
  r = Codex(other_home, work.path(), {"sessions", "import", work.File("missing")});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("error: " + work.File("missing") +
                   ": no such file or directory; check the path") != std::string::npos);
}

TEST_CASE("sessions import keeps a crash's cut-off rollout and exits 1 for the files it failed") {
  TempDir home;
  TempDir work;
  const std::string id = Seed(home, work.path(), 1, "okapi").front();
  Run r = Codex(home, work.path(), {"sessions", "export", id});
  REQUIRE(r.exit_code == 0);
  std::string text = r.out;
  REQUIRE(text.size() > 40);
  // A crash while writing the last line: no newline, half a JSON object.
  const size_t last_nl = text.rfind('\n', text.size() - 2);
  REQUIRE(last_nl != std::string::npos);
  const std::string torn = text.substr(0, last_nl + 1 + (text.size() - last_nl) / 2);
  const size_t torn_line = static_cast<size_t>(std::count(torn.begin(), torn.end(), '\n')) + 1;
  TempDir in;
  { std::ofstream(in.File("crash.jsonl"), std::ios::binary) << torn; }
  TempDir other_home;
  r = Codex(other_home, work.path(), {"sessions", "import", in.File("crash.jsonl")});
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("imported " + id) != std::string::npos);
  CHECK(r.err.find(in.File("crash.jsonl") + ":" + std::to_string(torn_line) +
                   ": the last line was cut off") != std::string::npos);
  r = Codex(other_home, work.path(), {"sessions", "show", id});
  CHECK(r.exit_code == 0);
  // --json: one summary object on stdout and nothing else there; the warning stays on stderr.
  TempDir json_home;
  r = Codex(json_home, work.path(), {"sessions", "import", "--json", in.File("crash.jsonl")});
  CHECK(r.exit_code == 0);
  REQUIRE(Lines(r.out).size() == 1);
  auto summary = nlohmann::json::parse(r.out);
  CHECK(summary == nlohmann::json{{"imported", 1},
                                  {"already_present", 0},
                                  {"extended", 0},
                                  {"failed", 0},
                                  {"cut_off_last_lines_dropped", 1},
                                  {"malformed_lines_dropped", 0},
                                  {"interrupted", false}});
  CHECK(r.err.find("the last line was cut off") != std::string::npos);
  CHECK(r.err.find("imported,") == std::string::npos);

  // A crash inside the session_meta line (the only line): named as such, not "not a rollout".
  { std::ofstream(in.File("meta-cut.jsonl"), std::ios::binary) << text.substr(0, 50); }
  r = Codex(json_home, work.path(), {"sessions", "import", in.File("meta-cut.jsonl")});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("error: " + in.File("meta-cut.jsonl") +
                   ":1: the session_meta line was cut off (50 bytes without a newline") !=
        std::string::npos);
  CHECK(r.err.find("not a Codex rollout") == std::string::npos);

  // --help says what is dropped and what each exit status means.
  r = Codex(json_home, work.path(), {"sessions", "import", "--help"});
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("Exit status: 0 every file imported; 1 a path or file failed") !=
        std::string::npos);
  CHECK(r.out.find("130 interrupted") != std::string::npos);

  // Every file bad: the operation failed (1), not a bad command line (2); each is named.
  TempDir bad_only;
  { std::ofstream(bad_only.File("a.jsonl")) << "{oops\n"; }
  { std::ofstream(bad_only.File("b.jsonl")) << "[1]\n"; }
  TempDir third_home;
  r = Codex(third_home, work.path(), {"sessions", "import", bad_only.path()});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find(bad_only.File("a.jsonl") + ":1:") != std::string::npos);
  CHECK(r.err.find(bad_only.File("b.jsonl") + ":1:") != std::string::npos);
  CHECK(r.err.find("0 imported, 0 already present, 2 failed") != std::string::npos);
  // Some good, some bad, one missing: the good are imported, the exit says something failed.
  r = Codex(third_home, work.path(),
            {"sessions", "import", in.File("crash.jsonl"), bad_only.path(), in.File("nope")});
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("imported " + id) != std::string::npos);
  CHECK(r.err.find("1 imported, 0 already present, 3 failed") != std::string::npos);
}

namespace {

// A two-turn Codex rollout whose last answer ends in "zébra"; `cut` is the
// byte offset of that 'é' (the first byte of its two): a crash cutting there
// leaves half a UTF-8 character and no newline.
std::string GrowingRollout(size_t* cut) {
  const std::string line_meta =
      R"({"timestamp":"2026-01-02T03:04:05.000Z","type":"session_meta","payload":{"id":"01900000-0000-7000-8000-00000000c0de","cwd":"/x","timestamp":"2026-01-02T03:04:05.000Z"}})";
  auto msg = [](int sec, const std::string& role, const std::string& text) {
    const std::string kind = role == "user" ? "input_text" : "output_text";
    return R"({"timestamp":"2026-01-02T03:04:)" + std::to_string(10 + sec) +
           R"(.000Z","type":"response_item","payload":{"type":"message","role":")" + role +
           R"(","content":[{"type":")" + kind + R"(","text":")" + text + R"("}]}})";
  };
  auto event = [](int sec, const std::string& type, const std::string& turn) {
    return R"({"timestamp":"2026-01-02T03:04:)" + std::to_string(10 + sec) +
           R"(.000Z","type":"event_msg","payload":{"type":")" + type + R"(","turn_id":")" + turn +
           R"("}})";
  };
  std::string text =
      line_meta + "\n" + event(0, "task_started", "t1") + "\n" + msg(1, "user", "first question") +
      "\n" + msg(2, "assistant", "first answer") + "\n" + event(3, "task_complete", "t1") + "\n" +
      event(4, "task_started", "t2") + "\n" + msg(5, "user", "second question") + "\n";
  const std::string last = msg(6, "assistant", "a striped zébra");
  *cut = text.size() + last.find("é") + 1;
  text += last + "\n" + event(7, "task_complete", "t2") + "\n";
  return text;
}

}  // namespace

TEST_CASE("sessions import of a cut rollout, again, then its completed file: one whole session") {
  TempDir home;
  TempDir work;
  TempDir in;
  size_t cut = 0;
  const std::string full = GrowingRollout(&cut);
  const std::string id = "01900000-0000-7000-8000-00000000c0de";
  { std::ofstream(in.File("cut.jsonl"), std::ios::binary) << full.substr(0, cut); }
  { std::ofstream(in.File("full.jsonl"), std::ios::binary) << full; }
  Run r = Codex(home, work.path(), {"sessions", "import", in.File("cut.jsonl")});
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.err.find(in.File("cut.jsonl") + ":8: the last line was cut off") != std::string::npos);
  r = Codex(home, work.path(), {"sessions", "import", in.File("cut.jsonl")});
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("skipped " + id) != std::string::npos);
  // Codex resumed the file and finished the turn: what it adds lands, once.
  r = Codex(home, work.path(), {"sessions", "import", "--json", in.File("full.jsonl")});
  INFO(r.err);
  CHECK(r.exit_code == 0);
  REQUIRE(Lines(r.out).size() == 1);
  auto summary = nlohmann::json::parse(r.out);
  CHECK(summary["extended"] == 1);
  CHECK(summary["imported"] == 0);
  r = Codex(home, work.path(), {"sessions", "import", in.File("full.jsonl")});
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("skipped " + id) != std::string::npos);
  r = Codex(home, work.path(), {"sessions", "search", "--all", "--json", "zébra"});
  CHECK(r.exit_code == 0);
  CHECK(Lines(r.out).size() == 1);
  // The same session as importing the completed file alone: items, turns, events.
  TempDir clean;
  REQUIRE(Codex(clean, work.path(), {"sessions", "import", in.File("full.jsonl")}).exit_code == 0);
  const Run grown = Codex(home, work.path(), {"sessions", "export", id});
  const Run whole = Codex(clean, work.path(), {"sessions", "export", id});
  REQUIRE(grown.exit_code == 0);
  REQUIRE(whole.exit_code == 0);
  CHECK(grown.out == whole.out);
  const Run shown = Codex(home, work.path(), {"sessions", "show", id});
  CHECK(shown.out.find("a striped zébra") != std::string::npos);
  CHECK(shown.out.find("interrupted") == std::string::npos);  // turn 2 completed

  // Codex resumed the cut file: its next line was glued to the cut one. Codex reads past that
  // line; so does import, naming it, and keeps the lines after it.
  const size_t cut_end = full.find('\n', cut);
  {
    std::ofstream(in.File("glued.jsonl"), std::ios::binary)
        << full.substr(0, cut) + full.substr(cut_end + 1);
  }
  TempDir glued_home;
  r = Codex(glued_home, work.path(), {"sessions", "import", "--json", in.File("glued.jsonl")});
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.err.find("warning: " + in.File("glued.jsonl") +
                   ":8: not a rollout line (a JSON object with \"type\"); the line was dropped, "
                   "the others were imported") != std::string::npos);
  REQUIRE(Lines(r.out).size() == 1);
  CHECK(nlohmann::json::parse(r.out)["malformed_lines_dropped"] == 1);
  CHECK(nlohmann::json::parse(r.out)["imported"] == 1);
  r = Codex(glued_home, work.path(), {"sessions", "show", id});
  CHECK(r.out.find("second question") != std::string::npos);

  // A stored session that went on here since is not the file's prefix: left as it is.
  {
    auto store = SqliteSessionStore::Open(clean.File("sessions.db"));
    REQUIRE(store.ok());
    auto info = (*store)->FindSession(id);
    REQUIRE(info.ok());
    REQUIRE((*store)->Append(id, info->head_item_id, "t3", {core::UserMessage("local")}).ok());
  }
  r = Codex(clean, work.path(), {"sessions", "import", in.File("full.jsonl")});
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("skipped " + id) != std::string::npos);
}

TEST_CASE("sessions import: an unreadable file or directory is named and counted, never skipped") {
  // As root, permissions bind only a process of another user namespace (unshare -U).
  if (std::system("unshare -U true 2>/dev/null") != 0) {
    WARN("skipped: cannot create a user namespace (unshare -U) where permissions bind");
    return;
  }
  TempDir home;
  TempDir in;
  std::filesystem::permissions(home.path(), std::filesystem::perms::all);
  std::filesystem::permissions(in.path(), std::filesystem::perms::all);
  auto rollout = [](const std::string& id) {
    return R"({"timestamp":"2026-01-02T03:04:05.000Z","type":"session_meta","payload":{"id":")" +
           id + R"(","cwd":"/x"}})" + std::string("\n");
  };
  { std::ofstream(in.File("ok.jsonl")) << rollout("01900000-0000-7000-8000-0000000000a1"); }
  { std::ofstream(in.File("locked.jsonl")) << rollout("01900000-0000-7000-8000-0000000000a2"); }
  std::filesystem::create_directory(in.File("sub"));
  { std::ofstream(in.File("sub/hidden.jsonl")) << rollout("01900000-0000-7000-8000-0000000000a3"); }
  std::filesystem::permissions(in.File("locked.jsonl"), std::filesystem::perms::none);
  std::filesystem::permissions(in.File("sub"), std::filesystem::perms::none);
  ::codex::testing::ProcessOptions p;
  p.argv = {"unshare", "-U", CODEX_BINARY, "sessions", "import", in.path().string()};
  p.env = {{"CODEX_HOME", home.path().string()}};
  auto run = ::codex::testing::RunProcess(p);
  std::filesystem::permissions(in.File("sub"), std::filesystem::perms::owner_all);
  REQUIRE(run.ok());
  INFO(run->err);
  CHECK(run->exit_code == 1);
  CHECK(run->out.find("imported 01900000-0000-7000-8000-0000000000a1") != std::string::npos);
  CHECK(run->err.find("error: cannot read " + in.File("locked.jsonl") + ": Permission denied") !=
        std::string::npos);
  CHECK(run->err.find("error: cannot read directory " + in.File("sub") +
                      ": Permission denied; the rollouts in it were not imported") !=
        std::string::npos);
  CHECK(run->err.find("1 imported, 0 already present, 2 failed") != std::string::npos);
}

TEST_CASE("sessions purge reads -p and --strict-config as every command does") {
  TempDir home;
  TempDir work;
  Seed(home, work.path(), 2, "old");
  {
    // Both were last touched in 2023.
    SQLite::Database db(home.File("sessions.db"), SQLite::OPEN_READWRITE);
    db.exec("UPDATE sessions SET updated_at_ms = created_at_ms");
  }
  { std::ofstream(home.File("config.toml")) << "[profiles.tidy.history]\nretention_days = 30\n"; }
  // Without the profile there is no retention_days.
  Run r = Codex(home, work.path(), {"sessions", "purge", "--dry-run"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("retention_days") != std::string::npos);
  // With it, before or after the subcommand, the profile's [history] applies.
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"-p", "tidy", "sessions", "purge", "--dry-run"},
        std::vector<std::string>{"sessions", "purge", "--dry-run", "--profile", "tidy"}}) {
    r = Codex(home, work.path(), args);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.rfind("would remove 2 sessions in " + work.path().string(), 0) == 0);
  }
  // An unknown profile is one error, and nothing is removed.
  r = Codex(home, work.path(), {"-p", "nosuch", "sessions", "purge", "--yes"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.rfind("error: config: profile 'nosuch' is not defined", 0) == 0);
  // --strict-config: an unsupported key stops the purge before anything is removed.
  {
    std::ofstream(home.File("config.toml")) << "no_such_key = 1\n[history]\nretention_days = 30\n";
  }
  r = Codex(home, work.path(), {"--strict-config", "sessions", "purge", "--yes"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.rfind("error: config key 'no_such_key' is not supported (--strict-config)", 0) == 0);
  r = Codex(home, work.path(), {"sessions", "list", "--json"});
  CHECK(Lines(r.out).size() == 2);
}

TEST_CASE("sessions purge takes an age or [history] retention_days") {
  TempDir home;
  TempDir work;
  Seed(home, work.path(), 2, "old");
  const std::string fresh = Seed(home, work.path(), 1, "new").front();
  {
    // The first two were last touched in 2023.
    SQLite::Database db(home.File("sessions.db"), SQLite::OPEN_READWRITE);
    db.exec("UPDATE sessions SET updated_at_ms = created_at_ms WHERE id <> '" + fresh + "'");
  }
  Run r = Codex(home, work.path(), {"sessions", "purge"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("retention_days") != std::string::npos);
  r = Codex(home, work.path(), {"sessions", "purge", "--older-than", "soon"});
  CHECK(r.exit_code == 2);
  { std::ofstream(home.File("config.toml")) << "[history]\nretention_days = 30\n"; }
  // Not on a terminal: refused without --yes, nothing removed.
  r = Codex(home, work.path(), {"sessions", "purge"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("error: purge would remove 2 sessions in " + work.str() + "; pass --yes") == 0);
  // --dry-run lists them and removes nothing.
  r = Codex(home, work.path(), {"sessions", "purge", "--dry-run"});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.rfind("would remove 2 sessions in " + work.str(), 0) == 0);
  CHECK(Lines(r.out).size() == 3);
  // Another directory holds none of them.
  r = Codex(home, work.path(), {"sessions", "purge", "--yes", "--cwd", "/elsewhere"});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("nothing to purge") != std::string::npos);
  r = Codex(home, work.path(), {"sessions", "purge", "--yes"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.rfind("purged 2 sessions", 0) == 0);
  r = Codex(home, work.path(), {"sessions", "list", "--all", "--json"});
  REQUIRE(Lines(r.out).size() == 1);
  CHECK(nlohmann::json::parse(r.out)["id"] == fresh);
}

TEST_CASE("sessions tree draws siblings with ├─/└─ and names each fork's turn") {
  TempDir home;
  TempDir work;
  const std::string id = Seed(home, work.path(), 1, "tree").front();
  Run r = Codex(home, work.path(), {"fork", id, "--at-turn", "1"});
  REQUIRE(r.exit_code == 0);
  const std::string f1 = Lines(r.out).at(0);
  r = Codex(home, work.path(), {"fork", id});
  REQUIRE(r.exit_code == 0);
  const std::string f2 = Lines(r.out).at(0);
  r = Codex(home, work.path(), {"fork", f1});
  REQUIRE(r.exit_code == 0);
  const std::string f11 = Lines(r.out).at(0);
  r = Codex(home, work.path(), {"sessions", "tree", id});
  REQUIRE(r.exit_code == 0);
  auto lines = Lines(r.out);
  INFO(r.out);
  REQUIRE(lines.size() == 4);
  CHECK(lines[0].rfind("* " + id, 0) == 0);
  CHECK(lines[1].rfind("├─   " + f1, 0) == 0);
  CHECK(lines[1].find("(forked after turn 1)") != std::string::npos);
  CHECK(lines[2].rfind("│  └─   " + f11, 0) == 0);
  CHECK(lines[3].rfind("└─   " + f2, 0) == 0);
  CHECK(lines[3].find("(forked after turn 2)") != std::string::npos);
  r = Codex(home, work.path(), {"sessions", "tree", id, "--json"});
  REQUIRE(r.exit_code == 0);
  lines = Lines(r.out);
  REQUIRE(lines.size() == 4);
  CHECK(nlohmann::json::parse(lines[1])["fork_turn"] == 1);
  CHECK(nlohmann::json::parse(lines[0])["fork_turn"].is_null());

  // --at-turn out of range names the range; -1 is not a huge number.
  for (const char* bad : {"3", "-1"}) {
    INFO(bad);
    r = Codex(home, work.path(), {"fork", id, "--at-turn", bad});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("give a number from 0 to 2") != std::string::npos);
    CHECK(Lines(r.err).size() == 1);
  }
  // 0 branches before the first turn (what an Esc-Esc edit of the first
  // message records): the tree says so.
  r = Codex(home, work.path(), {"fork", id, "--at-turn", "0"});
  REQUIRE(r.exit_code == 0);
  const std::string f0 = Lines(r.out).at(0);
  r = Codex(home, work.path(), {"sessions", "tree", id});
  REQUIRE(r.exit_code == 0);
  const std::string tree = r.out;
  const size_t row = tree.find(f0);
  REQUIRE(row != std::string::npos);
  CHECK(tree.substr(row, tree.find('\n', row) - row).find("(forked before turn 1)") !=
        std::string::npos);
}

TEST_CASE("sessions show prints tool output as text, cut unless --full") {
  TempDir home;
  TempDir work;
  std::string id;
  {
    auto store = SqliteSessionStore::Open(home.File("sessions.db"));
    REQUIRE(store.ok());
    std::string out;
    for (int i = 1; i <= 30; ++i) out += "line " + std::to_string(i) + "\n";
    nlohmann::json wrapped = {{"output", out}, {"metadata", {{"exit_code", 0}}}};
    core::Item call;
    call.kind = core::ItemKind::kFunctionCall;
    call.call_id = "c1";
    call.body =
        R"({"type":"function_call","name":"shell","arguments":"{\"command\":[\"seq\",\"30\"]}","call_id":"c1"})";
    core::NewSession spec;
    spec.cwd = work.path();
    spec.items = {core::UserMessage("count"), call, core::FunctionCallOutput("c1", wrapped.dump()),
                  core::AssistantMessage("done")};
    auto s = (*store)->CreateSession(spec);
    REQUIRE(s.ok());
    id = s->id;
  }
  Run r = Codex(home, work.path(), {"sessions", "show", id});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("    line 1\n    line 2\n") != std::string::npos);
  CHECK(r.out.find("\\n") == std::string::npos);
  CHECK(r.out.find("metadata") == std::string::npos);
  CHECK(r.out.find("  $ seq 30") != std::string::npos);
  CHECK(r.out.find("line 30") == std::string::npos);
  CHECK(r.out.find("more lines; --full shows all") != std::string::npos);
  r = Codex(home, work.path(), {"sessions", "show", id, "--full"});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("    line 30\n") != std::string::npos);
}

TEST_CASE("sessions show reads the context window through -c and -p") {
  TempDir home;
  TempDir work;
  const std::string id = Seed(home, work.path(), 1, "window").front();
  auto window = [&](std::vector<std::string> args) {
    Run r = Codex(home, work.path(), std::move(args));
    REQUIRE(r.exit_code == 0);
    const nlohmann::json doc = nlohmann::json::parse(r.out);
    return doc["context"]["context_window"].get<int64_t>();
  };
  const int64_t plain = window({"sessions", "show", id, "--json"});
  CHECK(plain != 54321);
  CHECK(window({"-c", "model_context_window=54321", "sessions", "show", id, "--json"}) == 54321);
  CHECK(window({"sessions", "show", id, "--json", "-c", "model_context_window=54321"}) == 54321);
  {
    std::ofstream config(home.File("config.toml"));
    config << "[profiles.wide]\nmodel_context_window = 65432\n";
  }
  CHECK(window({"sessions", "show", id, "--json"}) == plain);
  CHECK(window({"-p", "wide", "sessions", "show", id, "--json"}) == 65432);
  // The text form prints the same window.
  Run r = Codex(home, work.path(), {"-p", "wide", "sessions", "show", id});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("of the 65432-token window") != std::string::npos);
}

TEST_CASE("sessions search: scope, JSON, phrases, prefixes and clear errors") {
  TempDir home;
  TempDir work;
  const std::string here = Seed(home, work.path(), 1, "marmot").front();
  const std::string there = Seed(home, "/elsewhere", 1, "marmot").front();
  Run r = Codex(home, work.path(), {"sessions", "search", "marmot"});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find(here + "  turn 1") != std::string::npos);
  CHECK(r.out.find(there) == std::string::npos);
  CHECK(r.out.find("[marmot]") != std::string::npos);
  r = Codex(home, work.path(), {"sessions", "search", "--all", "marm*", "--json"});
  REQUIRE(r.exit_code == 0);
  auto lines = Lines(r.out);
  REQUIRE(lines.size() == 2);
  for (const auto& line : lines) {
    auto j = nlohmann::json::parse(line);
    CHECK(j["sessions"].size() == 1);
    CHECK(j["sessions"][0]["turn"] == 1);
    CHECK(j["kind"] == "message");
  }
  r = Codex(home, work.path(), {"sessions", "search", "--cwd", "/elsewhere", "listing-output"});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find(there) != std::string::npos);
  r = Codex(home, work.path(), {"sessions", "search", "--all", "\"task 0 marmot\""});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find(here) != std::string::npos);
  r = Codex(home, work.path(), {"sessions", "search", "\"unclosed"});
  CHECK(r.exit_code == 2);
  CHECK(Lines(r.err).size() == 1);
  CHECK(r.err.rfind("error: search text has an unbalanced", 0) == 0);
  r = Codex(home, work.path(), {"sessions", "search", "nothing-like-this"});
  CHECK(r.exit_code == 0);
  CHECK(r.out.empty());
  CHECK(r.err.find("nothing matches") != std::string::npos);
  // Punctuation alone, and a word longer than the index keeps: one line, the query not echoed.
  r = Codex(home, work.path(), {"sessions", "search", "--", "--"});
  CHECK(r.exit_code == 2);
  CHECK(Lines(r.err).size() == 1);
  CHECK(r.err.find("punctuation is not indexed") != std::string::npos);
  const std::string long_word(2048, 'w');
  r = Codex(home, work.path(), {"sessions", "search", "marmot", long_word});
  CHECK(r.exit_code == 2);
  CHECK(Lines(r.err).size() == 1);
  CHECK(r.err.size() < 200);
}

TEST_CASE("sessions search pages with --cursor and marks archived sessions") {
  TempDir home;
  TempDir work;
  const auto ids = Seed(home, work.path(), 5, "pangolin");
  Run r = Codex(home, work.path(), {"sessions", "archive", ids[2]});
  REQUIRE(r.exit_code == 0);
  // Every page of 2, followed by its cursor, lists each match exactly once.
  std::vector<std::string> seen;
  std::string cursor;
  for (int page = 0; page < 10; ++page) {
    std::vector<std::string> args = {"sessions", "search", "pangolin", "--limit", "2", "--json"};
    if (!cursor.empty()) {
      args.push_back("--cursor");
      args.push_back(cursor);
    }
    r = Codex(home, work.path(), args);
    REQUIRE(r.exit_code == 0);
    cursor.clear();
    for (const auto& line : Lines(r.out)) {
      auto j = nlohmann::json::parse(line);
      if (j.contains("next_cursor")) {
        cursor = j["next_cursor"];
        continue;
      }
      seen.push_back(j["sessions"][0]["id"]);
      CHECK(j["sessions"][0]["archived"] == (seen.back() == ids[2]));
    }
    if (cursor.empty()) break;
  }
  std::vector<std::string> want = ids;
  std::sort(want.begin(), want.end());
  std::sort(seen.begin(), seen.end());
  CHECK(seen == want);
  // Text: the archived session's line says so; the next page is named on stderr.
  r = Codex(home, work.path(), {"sessions", "search", "pangolin"});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find(ids[2] + "  turn 1  task 2 pangolin  (archived)") != std::string::npos);
  CHECK(r.out.find(ids[1] + "  turn 1  task 1 pangolin\n") != std::string::npos);
  r = Codex(home, work.path(), {"sessions", "search", "pangolin", "--limit", "3"});
  REQUIRE(r.exit_code == 0);
  const std::string named = "run the same search with --cursor ";
  const size_t at = r.err.find(named);
  REQUIRE(at != std::string::npos);
  const std::string next =
      r.err.substr(at + named.size(), r.err.find('\n', at) - at - named.size());
  r = Codex(home, work.path(), {"sessions", "search", "pangolin", "--cursor", next});
  REQUIRE(r.exit_code == 0);
  CHECK(Lines(r.out).size() == 4);  // two matches: a session line and a snippet line each
  r = Codex(home, work.path(), {"sessions", "search", "pangolin", "--cursor", "bogus"});
  CHECK(r.exit_code == 2);
  CHECK(Lines(r.err).size() == 1);
  CHECK(r.err.find("--cursor") != std::string::npos);
  CHECK(r.err.find("bogus") == std::string::npos);  // nothing of the cursor echoed
}

TEST_CASE("ids and names: unique prefixes, ambiguity lists candidates, hex names refused") {
  TempDir home;
  TempDir work;
  {
    auto store = SqliteSessionStore::Open(home.File("sessions.db"));
    REQUIRE(store.ok());
    for (const char* id :
         {"01900000-0000-7000-8000-000000000001", "01900000-0000-7000-8000-000000000002",
          "0aaaaaaa-0000-7000-8000-000000000003"}) {
      core::NewSession spec;
      spec.id = id;
      spec.cwd = work.path();
      spec.items = {core::UserMessage(std::string("hello ") + id)};
      REQUIRE((*store)->CreateSession(spec).ok());
    }
  }
  Run r = Codex(home, work.path(), {"sessions", "show", "0a", "--json"});
  REQUIRE(r.exit_code == 0);
  CHECK(nlohmann::json::parse(r.out)["session"]["id"] == "0aaaaaaa-0000-7000-8000-000000000003");
  r = Codex(home, work.path(), {"sessions", "show", "0190"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.rfind("error: session prefix '0190' is ambiguous", 0) == 0);
  CHECK(r.err.find("01900000-0000-7000-8000-000000000001") != std::string::npos);
  CHECK(r.err.find("01900000-0000-7000-8000-000000000002") != std::string::npos);
  r = Codex(home, work.path(), {"sessions", "rename", "0a", "cafe"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("could be read as a session id prefix") != std::string::npos);
  r = Codex(home, work.path(), {"sessions", "rename", "0a", "cafe-2"});
  CHECK(r.exit_code == 2);
  r = Codex(home, work.path(), {"sessions", "rename", "0a", "my-cafe"});
  CHECK(r.exit_code == 0);
}

TEST_CASE("CODEX_HOME is created 0700; a corrupt database says how to recover") {
  TempDir root;
  TempDir work;
  const std::string home = root.File("new-home");
  {
    auto store = codex::storage::OpenSessionStore(home);
    REQUIRE(store.ok());
  }
  struct stat st {};
  REQUIRE(::stat(home.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);

  TempDir broken;
  { std::ofstream(broken.File("sessions.db")) << std::string(8192, 'x'); }
  Run r = Codex(broken, work.path(), {"sessions", "list"});
  CHECK(r.exit_code != 0);
  CHECK(Lines(r.err).size() == 1);
  CHECK(r.err.find("move it aside") != std::string::npos);
  CHECK(r.err.find(".recover") != std::string::npos);
}

TEST_CASE("a locked database: reads go on, a write waits ~10 s once, says so, then one error") {
  TempDir home;
  TempDir work;
  const std::string id = Seed(home, work.path(), 1, "lock").front();
  SQLite::Database locker(home.File("sessions.db"), SQLite::OPEN_READWRITE);
  locker.exec("BEGIN IMMEDIATE");
  Run r = Codex(home, work.path(), {"sessions", "list", "--json"});
  CHECK(r.exit_code == 0);
  CHECK(Lines(r.out).size() == 1);
  CHECK(r.err.find("waiting") == std::string::npos);
  r = Codex(home, work.path(), {"sessions", "search", "lock"});
  CHECK(r.exit_code == 0);
  CHECK(r.err.empty());

  const auto start = std::chrono::steady_clock::now();
  r = Codex(home, work.path(), {"sessions", "rename", id, "locked-name"});
  const auto secs =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - start)
          .count();
  CHECK(r.exit_code == 1);
  auto err = Lines(r.err);
  REQUIRE(err.size() == 2);
  // The holder is this test program, not a codex: named as what it is.
  const std::string holder =
      "another process (sessions_cmd_te, pid " + std::to_string(::getpid()) + ")";
  CHECK(err[0] == "waiting for " + holder + " to release the database…");
  CHECK(err[1].rfind("error: ", 0) == 0);
  CHECK(err[1].find(holder + " kept the database locked") != std::string::npos);
  CHECK(secs >= 9);
  CHECK(secs < 40);  // one bounded wait, not 8 multiplied ones
  locker.exec("ROLLBACK");
  r = Codex(home, work.path(), {"sessions", "rename", id, "locked-name"});
  CHECK(r.exit_code == 0);
}

TEST_CASE("read-only commands on a fresh CODEX_HOME list nothing, without an error") {
  TempDir home;
  TempDir work;
  Run r = Codex(home, work.path(), {"sessions", "list", "--json"});
  CHECK(r.exit_code == 0);
  CHECK(r.out.empty());
  r = Codex(home, work.path(), {"sessions", "search", "--all", "anything"});
  CHECK(r.exit_code == 0);
}

TEST_CASE("sessions database problems are named with their cause and fix") {
  TempDir work;
  {
    // A newer codex's database: writable, but never downgraded.
    TempDir home;
    Seed(home, work.path(), 1, "quokka");
    {
      SQLite::Database db(home.File("sessions.db"), SQLite::OPEN_READWRITE);
      db.exec("INSERT INTO schema_migrations VALUES (999, 'future', 'x', 1)");
    }
    for (const char* cmd : {"list", "search"}) {
      INFO(cmd);
      std::vector<std::string> args = {"sessions", cmd};
      if (std::string(cmd) == "search") args.push_back("quokka");
      Run r = Codex(home, work.path(), args);
      CHECK(r.exit_code == 1);
      CHECK(Lines(r.err).size() == 1);
      CHECK(r.err.find("was written by a newer codex (schema version 999") != std::string::npos);
      CHECK(r.err.find("upgrade codex") != std::string::npos);
      CHECK(r.err.find("read-only") == std::string::npos);
    }
  }
  {
    // A 0-byte file is an empty store, not a read-only one.
    TempDir home;
    { std::ofstream(home.File("sessions.db")); }
    Run r = Codex(home, work.path(), {"sessions", "list", "--all"});
    CHECK(r.exit_code == 0);
    CHECK(r.err.find("no sessions") != std::string::npos);
    r = Codex(home, work.path(), {"sessions", "search", "--all", "anything"});
    CHECK(r.exit_code == 0);
    CHECK(r.err.find("read-only") == std::string::npos);
  }
  {
    // A directory where the file should be.
    TempDir home;
    std::filesystem::create_directory(home.File("sessions.db"));
    TempDir in;
    {
      std::ofstream(in.File("r.jsonl"))
          << R"({"timestamp":"2026-01-02T03:04:05.678Z","type":"session_meta","payload":{"id":"01900000-0000-7000-8000-0000000000ab","cwd":"/x","timestamp":"2026-01-02T03:04:05.000Z"}})"
          << "\n";
    }
    for (const char* cmd : {"list", "import"}) {
      INFO(cmd);
      std::vector<std::string> args = {"sessions", cmd};
      if (std::string(cmd) == "import") args.push_back(in.File("r.jsonl"));
      Run r = Codex(home, work.path(), args);
      CHECK(r.exit_code != 0);
      CHECK(r.err.find(home.File("sessions.db") + " is a directory, not a file") !=
            std::string::npos);
      CHECK(r.err.find("sqlite error") == std::string::npos);
    }
  }
}

TEST_CASE("a full disk is named: no space left on device, and the path") {
  TempDir home;
  TempDir work;
  // A private 1 MiB tmpfs as CODEX_HOME (a user and mount namespace of this test).
  if (std::system("unshare -Urm true 2>/dev/null") != 0) {
    WARN("skipped: cannot create a user and mount namespace (unshare -Urm) for a small tmpfs");
    return;
  }
  std::string text;
  for (int i = 0; text.size() < 3'000'000; ++i) text += "w" + std::to_string(i) + " ";
  {
    std::ofstream out(work.File("big.jsonl"));
    out << R"({"timestamp":"2026-01-02T03:04:05.678Z","type":"session_meta","payload":{"id":"01900000-0000-7000-8000-0000000000ab","cwd":"/x","timestamp":"2026-01-02T03:04:05.000Z"}})"
        << "\n"
        << R"({"timestamp":"2026-01-02T03:04:06.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":")"
        << text << R"("}]}})"
        << "\n";
  }
  const std::string full = home.File("full");
  std::filesystem::create_directory(full);
  const std::string script = "mount -t tmpfs -o size=1m tmpfs '" + full + "' && CODEX_HOME='" +
                             full + "' '" + CODEX_BINARY + "' sessions import '" +
                             work.File("big.jsonl") + "' >'" + home.File("out") + "' 2>'" +
                             home.File("err") + "'; echo \\$? >'" + home.File("rc") + "'";
  REQUIRE(std::system(("unshare -Urm sh -c \"" + script + "\"").c_str()) == 0);
  CHECK(::codex::testing::ReadFile(home.File("rc")) == "1\n");
  const std::string err = ::codex::testing::ReadFile(home.File("err"));
  INFO(err);
  CHECK(err.find("no space left on device") != std::string::npos);
  CHECK(err.find(full + "/sessions.db") != std::string::npos);
  CHECK(err.find("sqlite error") == std::string::npos);
}

TEST_CASE("a store password given on the command line is not in /proc/PID/cmdline") {
  // libpq reads a password up to the '@' before the first '/': '?' and '#' are part of it.
  const std::string password =
      GENERATE(std::string("Sup3rSecretPw"), std::string("Sup3r?Secret#Pw"));
  INFO(password);
  TempDir home;
  TempDir work;
  // A loopback server that accepts and never answers: codex waits in its connect.
  const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(listener >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  REQUIRE(::listen(listener, 4) == 0);
  socklen_t len = sizeof addr;
  REQUIRE(::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
  const std::string url = "postgresql://alice:" + password +
                          "@127.0.0.1:" + std::to_string(ntohs(addr.sin_port)) +
                          "/db?connect_timeout=30";
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, 1);
    ::dup2(null, 2);
    ::setenv("CODEX_HOME", home.path().c_str(), 1);
    std::vector<std::string> args = {CODEX_BINARY, "-c",   "session_store=\"" + url + "\"",
                                     "sessions",   "list", "--all"};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(CODEX_BINARY, argv.data());
    ::_exit(127);
  }
  // Once codex connects, it has long passed the start of main.
  pollfd p{listener, POLLIN, 0};
  REQUIRE(::poll(&p, 1, 20'000) == 1);
  const int conn = ::accept(listener, nullptr, nullptr);
  const std::string cmdline =
      ::codex::testing::ReadFile("/proc/" + std::to_string(pid) + "/cmdline");
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ::close(conn);
  ::close(listener);
  INFO(cmdline);
  CHECK(cmdline.find("session_store") != std::string::npos);
  CHECK(cmdline.find("alice") != std::string::npos);
  CHECK(cmdline.find("127.0.0.1") != std::string::npos);
  CHECK(cmdline.find(password) == std::string::npos);
  CHECK(cmdline.find("Sup3r") == std::string::npos);
  CHECK(cmdline.find("Secret") == std::string::npos);
}

TEST_CASE("sessions purge --json: no progress or listing, one summary object") {
  TempDir home;
  TempDir work;
  const std::vector<std::string> old = Seed(home, work.path(), 3, "old");
  const std::string fresh = Seed(home, work.path(), 1, "new").front();
  {
    SQLite::Database db(home.File("sessions.db"), SQLite::OPEN_READWRITE);
    db.exec("UPDATE sessions SET updated_at_ms = created_at_ms WHERE id <> '" + fresh + "'");
  }
  // It never asks: without --yes (or --dry-run) it is refused, nothing removed.
  Run r = Codex(home, work.path(), {"sessions", "purge", "--older-than", "30d", "--json"});
  CHECK(r.exit_code == 2);
  CHECK(Lines(r.err).size() == 1);
  CHECK(r.err.find("--yes") != std::string::npos);
  CHECK(r.out.empty());
  r = Codex(home, work.path(), {"sessions", "purge", "--older-than", "30d", "--json", "--dry-run"});
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.empty());
  REQUIRE(Lines(r.out).size() == 1);
  auto dry = nlohmann::json::parse(r.out);
  CHECK(dry["dry_run"] == true);
  CHECK(dry["sessions"] == 3);
  std::vector<std::string> listed;
  for (const auto& s : dry["would_remove"]) listed.push_back(s["id"]);
  std::vector<std::string> want = old;
  std::sort(listed.begin(), listed.end());
  std::sort(want.begin(), want.end());
  CHECK(listed == want);
  r = Codex(home, work.path(), {"sessions", "purge", "--older-than", "30d", "--json", "--yes"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.empty());  // no progress, even had it run long
  REQUIRE(Lines(r.out).size() == 1);
  auto done = nlohmann::json::parse(r.out);
  CHECK(done["dry_run"] == false);
  CHECK(done["sessions"] == 3);
  CHECK(done["items"].get<int64_t>() > 0);
  CHECK(done["busy"].empty());
  // Nothing left to purge: still one object.
  r = Codex(home, work.path(), {"sessions", "purge", "--older-than", "30d", "--json", "--yes"});
  REQUIRE(r.exit_code == 0);
  REQUIRE(Lines(r.out).size() == 1);
  CHECK(nlohmann::json::parse(r.out)["sessions"] == 0);
  r = Codex(home, work.path(), {"sessions", "list", "--all", "--json"});
  REQUIRE(Lines(r.out).size() == 1);
  CHECK(nlohmann::json::parse(r.out)["id"] == fresh);
}
