// End-to-end tests of the PostgreSQL session store through the `codex`
// binary: two "machines" (two CODEX_HOMEs, two scripted servers; the second
// one also in its own UTS namespace with another host name where the kernel
// allows it) sharing one database on the private test server
// (testing/pg_test_server.h). Skipped (exit 4, reason printed) only when the
// PostgreSQL server binaries are absent.
#include <libpq-fe.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>

#include "storage/open_database.h"
#include "testing/pg_test_server.h"
#include "testing/skip.h"
#include "testing/store_test_support.h"
#include "tests/e2e_checks.h"
#include "tests/e2e_support.h"

namespace codex::testing {
namespace {

using e2e::ErrorLines;
using e2e::MakeEnv;
using e2e::PairingProblem;
using e2e::Run;
using e2e::SessionIdFromBanner;
using storage::testing::PgTestServer;

PgTestServer& Server() {
  std::string why;
  PgTestServer* server = PgTestServer::Get(&why);
  if (server == nullptr) SkipTest(why);
  return *server;
}

// A "machine": its own CODEX_HOME and scripted server, the shared store.
std::unique_ptr<CodexTestEnv> Machine(const std::string& url, std::string_view script) {
  CodexTestEnvOptions options;
  options.extra_config = "session_store = \"" + url + "\"\n";
  return MakeEnv(script, std::move(options));
}

std::unique_ptr<storage::SessionDatabase> OpenUrl(const std::string& url) {
  core::StoreLocation loc;
  loc.kind = core::StoreLocation::Kind::kPostgres;
  loc.url = url;
  auto db = storage::OpenDatabase(loc);
  INFO(db.status().ToString());
  REQUIRE(db.ok());
  return std::move(*db);
}

// (role, text) of the user and assistant messages of the session's history.
std::vector<std::pair<std::string, std::string>> Messages(const std::string& url,
                                                          const std::string& id) {
  auto store = OpenUrl(url);
  auto s = store->FindSession(id);
  REQUIRE(s.ok());
  auto h = store->LoadHistory(*s);
  REQUIRE(h.ok());
  std::vector<std::pair<std::string, std::string>> out;
  for (const core::StoredItem& it : *h) {
    if (it.item.kind != core::ItemKind::kMessage) continue;
    if (it.item.role != "user" && it.item.role != "assistant") continue;
    const std::string text = core::MessageText(it.item);
    if (it.item.role == "user" && text.rfind("<", 0) == 0) continue;
    out.emplace_back(it.item.role, text);
  }
  return out;
}

// True when unprivileged UTS namespaces work here (`unshare -Ur -u`).
bool CanUseOtherHost() {
  ProcessOptions probe;
  probe.argv = {"unshare", "-Ur", "-u", "sh", "-c", "hostname codex-machine-b"};
  auto r = RunProcess(probe);
  return r.ok() && r->exit_code == 0;
}

// `codex args...` of `env`, run on host "codex-machine-b".
ProcessOptions OnOtherHost(const CodexTestEnv& env, std::vector<std::string> args) {
  ProcessOptions opts = env.CodexCommand(args);
  std::vector<std::string> argv = {
      "unshare", "-Ur", "-u", "sh", "-c", "hostname codex-machine-b && exec \"$0\" \"$@\""};
  for (const std::string& a : opts.argv) argv.push_back(a);
  opts.argv = argv;
  return opts;
}

std::string HostName() {
  char buf[256] = {};
  ::gethostname(buf, sizeof buf - 1);
  return buf;
}

TEST_CASE(
    "postgres: a session made on one machine is listed, shown, resumed and forked on another") {
  const std::string url = Server().NewDatabase();
  auto a = Machine(url, R"(["answer on A"])");
  auto b = Machine(url, R"(["answer on B"])");
  auto made = Run(*a, {"exec", "hello from machine A"});
  INFO(made.err);
  REQUIRE(made.exit_code == 0);
  const std::string id = SessionIdFromBanner(made.err);
  REQUIRE(id.size() == 36);

  auto list = Run(*b, {"sessions", "list", "--all", "--json"});
  CHECK(list.exit_code == 0);
  CHECK(list.out.find(id) != std::string::npos);
  auto show = Run(*b, {"sessions", "show", id.substr(0, 13)});
  CHECK(show.exit_code == 0);
  CHECK(show.out.find("hello from machine A") != std::string::npos);
  CHECK(show.out.find("answer on A") != std::string::npos);
  auto resumed = Run(*b, {"exec", "resume", id, "more from machine B"});
  INFO(resumed.err);
  CHECK(resumed.exit_code == 0);
  // B's request carried A's history.
  auto requests = b->server().requests_to("/responses");
  REQUIRE(requests.size() == 1);
  const std::string input = requests[0].InputItems().dump();
  CHECK(input.find("hello from machine A") != std::string::npos);
  CHECK(input.find("answer on A") != std::string::npos);
  auto fork = Run(*b, {"fork", id});
  CHECK(fork.exit_code == 0);
  const std::string fork_id = fork.out.substr(0, 36);
  auto on_a = Run(*a, {"sessions", "list", "--all", "--json"});
  CHECK(on_a.out.find(fork_id) != std::string::npos);
  auto tree = Run(*a, {"sessions", "tree", id});
  CHECK(tree.out.find(fork_id.substr(0, 8)) != std::string::npos);
  CHECK(Messages(url, id) ==
        std::vector<std::pair<std::string, std::string>>{{"user", "hello from machine A"},
                                                         {"assistant", "answer on A"},
                                                         {"user", "more from machine B"},
                                                         {"assistant", "answer on B"}});
  // Neither machine wrote a SQLite store.
  CHECK_FALSE(std::filesystem::exists(a->codex_home() / "sessions.db"));
  CHECK_FALSE(std::filesystem::exists(b->codex_home() / "sessions.db"));
}

TEST_CASE("postgres: one machine's retention_days never purges the shared database at start") {
  const std::string url = Server().NewDatabase();
  auto b = Machine(url, R"(["kept answer"])");
  auto kept = Run(*b, {"exec", "a teammate's session"});
  REQUIRE(kept.exit_code == 0);
  const std::string id = SessionIdFromBanner(kept.err);
  CodexTestEnvOptions options;
  options.extra_config = "session_store = \"" + url + "\"\n[history]\nretention_days = 0\n";
  auto a = MakeEnv(R"(["answer"])", std::move(options));
  // Last touched two days ago: past any retention_days cutoff machine A could apply.
  REQUIRE(storage::testing::QueryInt(
              url,
              "WITH old AS (UPDATE sessions SET updated_at_ms = updated_at_ms - 172800000"
              " WHERE id = '" +
                  id + "' RETURNING 1) SELECT count(*) FROM old") == 1);
  auto run = Run(*a, {"exec", "hello"});
  INFO(run.err);
  CHECK(run.exit_code == 0);
  CHECK(run.err.find("removed") == std::string::npos);
  auto list = Run(*a, {"sessions", "list", "--all"});
  CHECK(list.out.find(id.substr(0, 8)) != std::string::npos);
}

TEST_CASE("postgres: 8 writers on 2 machines: whole turns only, nothing lost") {
  const std::string url = Server().NewDatabase();
  const std::string script =
      R"({"responses": [], "default": {"message": "answer {{n}}", "delay_ms": 3000}})";
  auto a = Machine(url, script);
  auto b = Machine(url, script);
  auto first = Run(*a, {"exec", "first"});
  REQUIRE(first.exit_code == 0);
  const std::string id = SessionIdFromBanner(first.err);
  std::vector<std::unique_ptr<ChildProcess>> procs;
  for (int i = 0; i < 8; ++i) {
    CodexTestEnv& m = i % 2 == 0 ? *a : *b;
    auto p =
        ChildProcess::Spawn(m.CodexCommand({"exec", "resume", id, "writer " + std::to_string(i)}));
    REQUIRE(p.ok());
    procs.push_back(std::move(*p));
  }
  std::set<std::string> winners, losers;
  for (int i = 0; i < 8; ++i) {
    auto done = procs[static_cast<size_t>(i)]->Wait(std::chrono::seconds(120));
    REQUIRE(done.ok());
    INFO("writer " << i << " exit " << done->exit_code << ": " << done->err);
    if (done->exit_code == 0) {
      winners.insert("writer " + std::to_string(i));
    } else {
      CHECK(done->exit_code == 3);
      auto errors = ErrorLines(done->err);
      REQUIRE(errors.size() == 1);
      CHECK(errors[0].rfind("error: session " + id + " is busy: a turn is running in codex pid ",
                            0) == 0);
      losers.insert("writer " + std::to_string(i));
    }
  }
  CHECK(winners.size() >= 1);
  WARN(winners.size() << " writers ran their turn, " << losers.size() << " were refused");
  auto messages = Messages(url, id);
  std::set<std::string> seen;
  for (size_t k = 0; k < messages.size(); ++k) {
    if (messages[k].first != "user") continue;
    REQUIRE(k + 1 < messages.size());
    CHECK(messages[k + 1].first == "assistant");  // 0 interleaved turns
    CHECK(seen.insert(messages[k].second).second);
  }
  seen.erase("first");
  CHECK(seen == winners);  // 0 lost items, no refused writer's
}

TEST_CASE("postgres: the lease across hosts names the holder's host; taken over after 60 s") {
  const std::string url = Server().NewDatabase();
  auto a = Machine(url, R"([
    "first answer",
    {"output": [{"shell": ["sh", "-c", "while [ ! -e release ]; do sleep 0.05; done; echo ok"],
                 "timeout_ms": 300000}]},
    "never used"])");
  auto b = Machine(url, R"(["taken over"])");
  auto first = Run(*a, {"exec", "first"});
  REQUIRE(first.exit_code == 0);
  const std::string id = SessionIdFromBanner(first.err);
  auto holder = ChildProcess::Spawn(
      a->CodexCommand({"exec", "--json", "--full-auto", "resume", id, "slow turn"}));
  REQUIRE(holder.ok());
  for (bool started = false; !started;) {
    auto line = (*holder)->ReadStdoutLine(std::chrono::seconds(60));
    REQUIRE(line.ok());
    Json e = Json::parse(*line, nullptr, false);
    started = e.is_object() && e.value("type", "") == "item.started";
  }
  const bool other_host = CanUseOtherHost();
  if (!other_host) WARN("unshare -Ur -u is not permitted here: machine B shares the host name");
  auto refuse = [&] {
    ProcessOptions opts = other_host ? OnOtherHost(*b, {"exec", "resume", id, "from B"})
                                     : b->CodexCommand({"exec", "resume", id, "from B"});
    auto r = RunProcess(opts);
    REQUIRE(r.ok());
    return *r;
  };
  auto refused = refuse();
  INFO(refused.err);
  CHECK(refused.exit_code == 3);
  auto errors = ErrorLines(refused.err);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].find("is busy: a turn is running in codex pid " +
                       std::to_string((*holder)->pid()) + " on " + HostName() + " since") !=
        std::string::npos);
  CHECK(b->server().requests_to("/responses").empty());
  if (!other_host) {
    std::ofstream(a->workdir() / "release").put('\n');
    REQUIRE((*holder)->Wait(std::chrono::seconds(60)).ok());
    return;
  }
  // Machine A dies mid-turn: from another host its pid cannot be checked, so
  // the lease is taken over once its heartbeat is older than 60 s. The lease
  // is judged by the server's clock; rather than wait a minute, the dead
  // holder's last heartbeat is moved back, which is the row a holder that
  // died that long ago leaves (nothing else in it changes).
  REQUIRE((*holder)->Signal(SIGKILL).ok());
  REQUIRE((*holder)->Wait(std::chrono::seconds(30)).ok());
  auto still = refuse();
  CHECK(still.exit_code == 3);  // the heartbeat is still fresh
  auto age_heartbeat_by = [&](int64_t ms) {
    REQUIRE(
        storage::testing::QueryInt(
            url, "WITH aged AS (UPDATE session_leases SET heartbeat_at_ms = heartbeat_at_ms - " +
                     std::to_string(ms) + " WHERE session_id = '" + id +
                     "' RETURNING 1) SELECT count(*) FROM aged") == 1);
  };
  age_heartbeat_by(50'000);
  auto at_50s = refuse();
  INFO(at_50s.err);
  CHECK(at_50s.exit_code == 3);  // 50 s without a heartbeat: still live
  age_heartbeat_by(11'000);      // 61 s: the holder is gone
  auto taken = refuse();
  INFO(taken.err);
  CHECK(taken.exit_code == 0);
  CHECK(taken.out.find("taken over") != std::string::npos);
  auto requests = b->server().requests_to("/responses");
  REQUIRE(requests.size() == 1);
  CHECK(PairingProblem(requests[0].InputItems()) == "");  // the killed turn's call is paired
}

TEST_CASE("postgres: server down at start is one line; lost mid-turn fails cleanly, resume valid") {
  PgTestServer& server = Server();
  {
    // Nothing listens there: one line naming the server (password redacted), no request.
    auto env = Machine("postgresql://bob:hunter2@/codex?host=" +
                           (std::filesystem::temp_directory_path() / "no-such-pg").string(),
                       R"(["unused"])");
    auto run = Run(*env, {"exec", "hi"});
    CHECK(run.exit_code != 0);
    auto errors = ErrorLines(run.err);
    REQUIRE(errors.size() == 1);
    CHECK(errors[0].find("PostgreSQL") != std::string::npos);
    CHECK(run.err.find("hunter2") == std::string::npos);
    CHECK(env->server().requests_to("/responses").empty());
    auto list = Run(*env, {"sessions", "list"});
    CHECK(list.exit_code != 0);
    CHECK(ErrorLines(list.err).size() == 1);
  }
  const std::string url = server.NewDatabase();
  auto a = Machine(url, R"([
    "first answer",
    {"output": [{"shell": ["sh", "-c", "while [ ! -e release ]; do sleep 0.05; done; echo ok"],
                 "timeout_ms": 300000}]},
    "after the outage"])");
  auto first = Run(*a, {"exec", "first"});
  REQUIRE(first.exit_code == 0);
  const std::string id = SessionIdFromBanner(first.err);
  auto turn = ChildProcess::Spawn(
      a->CodexCommand({"exec", "--json", "--full-auto", "resume", id, "during the outage"}));
  REQUIRE(turn.ok());
  for (bool started = false; !started;) {
    auto line = (*turn)->ReadStdoutLine(std::chrono::seconds(60));
    REQUIRE(line.ok());
    Json e = Json::parse(*line, nullptr, false);
    started = e.is_object() && e.value("type", "") == "item.started";
  }
  REQUIRE(server.Stop());
  std::ofstream(a->workdir() / "release").put('\n');
  auto failed = (*turn)->Wait(std::chrono::seconds(120));
  REQUIRE(failed.ok());
  INFO(failed->err);
  CHECK(failed->exit_code != 0);
  CHECK(ErrorLines(failed->err).size() == 1);
  CHECK(failed->err.find("PostgreSQL") != std::string::npos);
  REQUIRE(server.Start());
  // What was committed before the outage is there; resuming sends a valid history.
  auto messages = Messages(url, id);
  REQUIRE(messages.size() >= 2);
  CHECK(messages[0].second == "first");
  auto resumed = Run(*a, {"exec", "resume", id, "after"});
  INFO(resumed.err);
  CHECK(resumed.exit_code == 0);
  auto requests = a->server().requests_to("/responses");
  REQUIRE(requests.size() >= 3);
  CHECK(PairingProblem(requests.back().InputItems()) == "");
}

}  // namespace
}  // namespace codex::testing

namespace codex::testing {
namespace {

// A checkout of github.com/team/codex at `dir` (only what codex reads of it).
void Checkout(const std::filesystem::path& dir, const std::string& url) {
  std::filesystem::create_directories(dir / ".git");
  std::ofstream(dir / ".git" / "config") << "[remote \"origin\"]\n\turl = " << url << "\n";
  std::ofstream(dir / ".git" / "HEAD") << "ref: refs/heads/main\n";
}

ProcessResult RunIn(const ProcessOptions& opts) {
  auto r = RunProcess(opts);
  REQUIRE(r.ok());
  return *r;
}

TEST_CASE("postgres: --cwd scoping finds the same project checked out at another path") {
  const std::string url = Server().NewDatabase();
  auto a = Machine(url, R"(["answer on A", "answer in other"])");
  auto b = Machine(url, R"(["answer on B", "answer 2 on B"])");
  // Machine A's checkout is at A's work dir, machine B's at a different path
  // (its own work dir), cloned with another spelling of the same remote.
  Checkout(a->workdir(), "git@github.com:team/codex.git");
  Checkout(b->workdir(), "https://github.com/team/codex");
  const std::filesystem::path b_other = b->root() / "other-project";
  Checkout(b_other, "https://github.com/team/other");
  REQUIRE(a->workdir() != b->workdir());

  const bool other_host = CanUseOtherHost();
  if (!other_host) WARN("unshare -Ur -u is not permitted here: machine A shares the host name");
  const std::string a_host = other_host ? "codex-machine-b" : HostName();
  auto made = RunIn(other_host ? OnOtherHost(*a, {"exec", "question from A"})
                               : a->CodexCommand({"exec", "question from A"}));
  INFO(made.err);
  REQUIRE(made.exit_code == 0);
  const std::string id = SessionIdFromBanner(made.err);
  // Then B works on another project: its newest session is not A's.
  ProcessOptions in_other = b->CodexCommand({"exec", "unrelated work on B"});
  in_other.cwd = b_other;
  auto unrelated = RunIn(in_other);
  REQUIRE(unrelated.exit_code == 0);
  const std::string unrelated_id = SessionIdFromBanner(unrelated.err);

  // In B's checkout, the default scope (this directory) lists A's session,
  // naming A's host; not the other project's.
  auto list = Run(*b, {"sessions", "list"});
  INFO(list.out << list.err);
  CHECK(list.exit_code == 0);
  CHECK(list.out.find(id) != std::string::npos);
  CHECK(list.out.find(a_host.substr(0, 15)) != std::string::npos);  // the HOST column
  CHECK(list.out.find(unrelated_id) == std::string::npos);
  auto json = Run(*b, {"sessions", "list", "--json"});
  auto line = Json::parse(json.out.substr(0, json.out.find('\n')), nullptr, false);
  REQUIRE(line.is_object());
  CHECK(line["id"] == id);
  CHECK(line["host"] == a_host);
  CHECK(line["cwd"] == a->workdir().string());
  CHECK(line["project"] == "github.com/team/codex");
  auto show = Run(*b, {"sessions", "show", id});
  CHECK(show.out.find("host     " + a_host) != std::string::npos);
  // A's exact path names it from B too (`--cwd` with the other machine's path).
  auto by_path = Run(*b, {"sessions", "list", "--cwd", a->workdir().string()});
  CHECK(by_path.out.find(id) != std::string::npos);
  CHECK(by_path.out.find(unrelated_id) == std::string::npos);
  // Search scoped to B's checkout finds A's words.
  auto search = Run(*b, {"sessions", "search", "question"});
  CHECK(search.out.find(id) != std::string::npos);

  // `resume --last` in B's checkout continues A's session, not B's newer one.
  auto resumed = Run(*b, {"exec", "resume", "--last", "follow-up from B"});
  INFO(resumed.err);
  REQUIRE(resumed.exit_code == 0);
  CHECK(SessionIdFromBanner(resumed.err) == id);
  CHECK(Messages(url, id) ==
        std::vector<std::pair<std::string, std::string>>{{"user", "question from A"},
                                                         {"assistant", "answer on A"},
                                                         {"user", "follow-up from B"},
                                                         {"assistant", "answer 2 on B"}});
}

}  // namespace
}  // namespace codex::testing

namespace codex::testing {

TEST_CASE("postgres: rm, archive and purge from another machine refuse a session mid-turn") {
  const std::string url = Server().NewDatabase();
  auto a = Machine(url, R"([
    "first answer",
    {"output": [{"shell": ["sh", "-c", "while [ ! -e release ]; do sleep 0.05; done; echo ok"],
                 "timeout_ms": 120000}]},
    "tool done"])");
  auto b = Machine(url, R"(["b's answer"])");
  auto first = Run(*a, {"exec", "first"});
  REQUIRE(first.exit_code == 0);
  const std::string id = SessionIdFromBanner(first.err);
  auto old = Run(*b, {"exec", "b's old session"});
  REQUIRE(old.exit_code == 0);
  const std::string other = SessionIdFromBanner(old.err);
  auto holder =
      ChildProcess::Spawn(a->CodexCommand({"exec", "--full-auto", "resume", id, "long tool"}));
  REQUIRE(holder.ok());
  REQUIRE(e2e::WaitForRequests(*a, 2));

  const std::string busy = "error: session " + id + " is busy: a turn is running in codex pid " +
                           std::to_string((*holder)->pid()) + " on ";
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"sessions", "rm", id}, {"sessions", "archive", id}}) {
    auto r = Run(*b, args);
    INFO(args[1] << ": " << r.err);
    CHECK(r.exit_code == 3);
    auto errors = ErrorLines(r.err);
    REQUIRE(errors.size() == 1);
    CHECK(errors[0].rfind(busy, 0) == 0);
    CHECK(r.err == errors[0] + "\n");
  }
  auto purge = Run(*b, {"sessions", "purge", "--all", "--older-than", "0s", "--yes"});
  INFO(purge.err);
  CHECK(purge.exit_code == 3);
  auto errors = ErrorLines(purge.err);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].rfind(busy, 0) == 0);
  CHECK(errors[0].find("purge skipped it") != std::string::npos);
  {
    auto store = OpenUrl(url);
    CHECK(store->FindSession(other).status().code() == StatusCode::kNotFound);
    auto kept = store->FindSession(id);
    REQUIRE(kept.ok());
    CHECK_FALSE(kept->archived);
  }

  std::ofstream(a->workdir() / "release").put('\n');
  auto done = (*holder)->Wait(std::chrono::seconds(60));
  REQUIRE(done.ok());
  INFO(done->err);
  CHECK(done->exit_code == 0);
  CHECK(done->out == "tool done\n");
  CHECK(Messages(url, id) ==
        std::vector<std::pair<std::string, std::string>>{{"user", "first"},
                                                         {"assistant", "first answer"},
                                                         {"user", "long tool"},
                                                         {"assistant", "tool done"}});
  CHECK(Run(*b, {"sessions", "rm", id}).exit_code == 0);
}

TEST_CASE("postgres: exec resume --last never continues a teammate's session elsewhere") {
  const std::string url = Server().NewDatabase();
  auto teammate = Machine(url, R"(["teammate's answer"])");
  auto me = Machine(url, R"({"responses": [], "default": {"message": "my answer {{n}}"}})");
  auto theirs = Run(*teammate, {"exec", "the teammate's private notes"});
  REQUIRE(theirs.exit_code == 0);
  const std::string their_id = SessionIdFromBanner(theirs.err);
  // My directory has no session: a new one; their words never reach my provider.
  auto mine = Run(*me, {"exec", "resume", "--last", "my question"});
  INFO(mine.err);
  REQUIRE(mine.exit_code == 0);
  CHECK(SessionIdFromBanner(mine.err) != their_id);
  auto requests = me->server().requests_to("/responses");
  REQUIRE(requests.size() == 1);
  CHECK(requests[0].body.dump().find("private notes") == std::string::npos);
  CHECK(Messages(url, their_id).size() == 2);  // their session untouched
  // --all widens on purpose: the newest of the whole store (mine, just made).
  auto wide = Run(*me, {"exec", "resume", "--last", "--all", "wider"});
  CHECK(wide.exit_code == 0);
  CHECK(SessionIdFromBanner(wide.err) == SessionIdFromBanner(mine.err));
}

TEST_CASE("postgres: import of a cut rollout, again, then the completed file: one session") {
  const std::string url = Server().NewDatabase();
  auto m = Machine(url, R"(["unused"])");
  const std::string id = "01900000-0000-7000-8000-00000000beef";
  auto line = [](int sec, const std::string& type, const std::string& payload) {
    return R"({"timestamp":"2026-01-02T03:04:)" + std::to_string(10 + sec) + R"(.000Z","type":")" +
           type + R"(","payload":)" + payload + "}\n";
  };
  auto msg = [&](int sec, const std::string& role, const std::string& text) {
    return line(sec, "response_item",
                R"({"type":"message","role":")" + role + R"(","content":[{"type":")" +
                    (role == "user" ? "input_text" : "output_text") + R"(","text":")" + text +
                    R"("}]})");
  };
  const std::string head = line(0, "session_meta", R"({"id":")" + id + R"(","cwd":"/x"})") +
                           line(1, "event_msg", R"({"type":"task_started","turn_id":"t1"})") +
                           msg(2, "user", "first question") + msg(3, "assistant", "first answer");
  const std::string last = msg(4, "assistant", "a striped zébra");
  const std::string full =
      head + last + line(5, "event_msg", R"({"type":"task_complete","turn_id":"t1"})");
  const auto dir = m->root() / "rollouts";
  std::filesystem::create_directories(dir);
  // Cut inside the 'é' of the last answer: half a UTF-8 character, no newline.
  {
    std::ofstream(dir / "cut.jsonl", std::ios::binary) << head + last.substr(0, last.find("é") + 1);
  }
  { std::ofstream(dir / "full.jsonl", std::ios::binary) << full; }
  for (int i = 0; i < 2; ++i) {
    auto r = Run(*m, {"sessions", "import", (dir / "cut.jsonl").string()});
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.err.find("cut.jsonl:5: the last line was cut off") != std::string::npos);
  }
  auto r = Run(*m, {"sessions", "import", "--json", (dir / "full.jsonl").string()});
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(nlohmann::json::parse(r.out)["extended"] == 1);
  r = Run(*m, {"sessions", "import", (dir / "full.jsonl").string()});
  CHECK(r.out.find("skipped " + id) != std::string::npos);
  r = Run(*m, {"sessions", "search", "--all", "--json", "zébra"});
  CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 1);
  // Equal to the completed file imported alone, into a SQLite store.
  const std::string grown = Run(*m, {"sessions", "export", id}).out;
  const auto clean = m->root() / "clean.db";
  const std::vector<std::string> use_clean = {"-c", "session_store=sqlite:" + clean.string()};
  std::vector<std::string> args = use_clean;
  for (const char* a : {"sessions", "import"}) args.push_back(a);
  args.push_back((dir / "full.jsonl").string());
  REQUIRE(Run(*m, args).exit_code == 0);
  args = use_clean;
  for (const char* a : {"sessions", "export"}) args.push_back(a);
  args.push_back(id);
  CHECK(grown == Run(*m, args).out);
  CHECK(Messages(url, id).size() == 3);
}

TEST_CASE("postgres: Ctrl-C during import stops after the file in hand; the rerun finishes") {
  const std::string url = Server().NewDatabase();
  auto m = Machine(url, R"(["unused"])");
  const auto dir = m->root() / "rollouts";
  std::filesystem::create_directories(dir);
  for (int i = 0; i < 6; ++i) {
    std::ofstream(dir / ("r" + std::to_string(i) + ".jsonl"))
        << R"({"timestamp":"2026-01-02T03:04:05.000Z","type":"session_meta","payload":{"id":"01900000-0000-7000-8000-0000000000c)"
        << i << R"(","cwd":"/x"}})"
        << "\n";
  }
  REQUIRE(Run(*m, {"sessions", "import", (dir / "r0.jsonl").string()}).exit_code == 0);
  // Another program holds the sessions table: the first file's transaction waits for it.
  PGconn* holder = PQconnectdb(url.c_str());
  REQUIRE(PQstatus(holder) == CONNECTION_OK);
  PQclear(PQexec(holder, "BEGIN"));
  PQclear(PQexec(holder, "LOCK TABLE sessions IN EXCLUSIVE MODE"));
  auto child = ChildProcess::Spawn(m->CodexCommand({"sessions", "import", dir.string()}));
  REQUIRE(child.ok());
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  bool waiting = false;
  while (!waiting && std::chrono::steady_clock::now() < until) {
    waiting =
        storage::testing::QueryInt(url, "SELECT count(*) FROM pg_locks WHERE NOT granted") > 0;
    if (!waiting) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  REQUIRE(waiting);
  REQUIRE((*child)->Signal(SIGINT).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  PQclear(PQexec(holder, "ROLLBACK"));
  PQfinish(holder);
  auto stopped = (*child)->Wait(std::chrono::seconds(60));
  REQUIRE(stopped.ok());
  INFO(stopped->err);
  CHECK(stopped->exit_code == 130);
  CHECK(stopped->err.find("interrupted after 1 of 6 files: 0 imported, 0 extended, 1 already "
                          "present, 0 failed; what was imported stays") != std::string::npos);
  auto rerun = Run(*m, {"sessions", "import", dir.string()});
  INFO(rerun.err);
  CHECK(rerun.exit_code == 0);
  CHECK(rerun.err.find("5 imported, 1 already present, 0 failed") != std::string::npos);
}

TEST_CASE("postgres: a store of schema version 4 is upgraded at the first open; same search") {
  const std::string url = Server().NewDatabase();
  {
    auto store = OpenUrl(url);
    for (int k = 0; k < 3; ++k) {
      core::NewSession spec;
      spec.cwd = "/w";
      spec.items = {core::UserMessage("okapi session " + std::to_string(k))};
      auto s = store->CreateSession(spec);
      REQUIRE(s.ok());
      std::optional<int64_t> head = s->head_item_id;
      for (int t = 0; t < 25; ++t) {
        auto ids = store->Append(s->id, head, "t" + std::to_string(t),
                                 {core::UserMessage("okapi turn " + std::to_string(t)),
                                  core::AssistantMessage("no match here " + std::to_string(t))});
        REQUIRE(ids.ok());
        head = ids->back();
      }
    }
  }
  auto m = Machine(url, R"(["unused"])");
  const std::vector<std::string> search = {"sessions", "search",  "okapi", "--all",
                                           "--json",   "--limit", "100"};
  auto before = Run(*m, search);
  INFO(before.err);
  REQUIRE(before.exit_code == 0);
  REQUIRE(std::count(before.out.begin(), before.out.end(), '\n') == 3 * 26);

  storage::testing::TakePostgresBackToSchema4(url);
  REQUIRE(storage::testing::QueryInt(url, "SELECT max(version) FROM schema_migrations") == 4);
  // The first command brings the store up to date, then answers as before.
  auto after = Run(*m, search);
  INFO(after.err);
  CHECK(after.exit_code == 0);
  CHECK(after.out == before.out);
  CHECK(storage::testing::QueryInt(url, "SELECT max(version) FROM schema_migrations") > 4);
  // sessions migrate reads the upgraded store whole: every item, verified.
  const auto dest = m->root() / "copy.db";
  auto copy = Run(*m, {"sessions", "migrate", "--json", "--to", "sqlite:" + dest.string()});
  INFO(copy.err);
  CHECK(copy.exit_code == 0);
  auto summary = nlohmann::json::parse(copy.out);
  CHECK(summary["copied"] == 3);
  CHECK(summary["verified"] == true);
  CHECK(summary["destination"]["items"] == 3 * 51);
  auto copied = Run(*m, {"-c", "session_store=sqlite:" + dest.string(), "sessions", "search",
                         "okapi", "--all", "--json", "--limit", "100"});
  CHECK(copied.exit_code == 0);
  CHECK(std::count(copied.out.begin(), copied.out.end(), '\n') == 3 * 26);
}

}  // namespace codex::testing
