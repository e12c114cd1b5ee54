// viewer_bench: how `codex sessions serve` answers on a store of 20,000
// sessions (issue 28: "stays fast at 20k sessions"). Seeds a SQLite store
// through the store API (each session a user message and an answer; one in
// ten forked with a turn of its own, so trees are not trivial), starts the
// real binary on it, and prints the median and max wall time of each route
// over N requests: the page, the first session page, pages deep into the
// list (by cursor), a search, one session, one fork tree. Every route is one
// bounded query, so the figures should not grow with the store.
//
// Usage: viewer_bench [--sessions N (default 20000)] [--runs N (default 21)]
#include <httplib.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "testing/store_test_support.h"
#include "testing/temp_dir.h"
#include "tests/e2e_support.h"

namespace {

using Clock = std::chrono::steady_clock;
using codex::testing::ChildProcess;
using codex::testing::ProcessOptions;

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "viewer_bench: %s\n", what.c_str());
  std::exit(1);
}

struct Figure {
  double median = 0;
  double max = 0;
};

Figure Time(int runs, const std::function<void()>& f) {
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) {
    const auto start = Clock::now();
    f();
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
  }
  std::sort(ms.begin(), ms.end());
  return {ms[ms.size() / 2], ms.back()};
}

}  // namespace

int main(int argc, char** argv) {
  int sessions = 20'000;
  int runs = 21;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--sessions") sessions = std::atoi(argv[i + 1]);
    if (flag == "--runs") runs = std::atoi(argv[i + 1]);
  }
  codex::testing::TempDir dir("viewer-bench-");
  const std::string home = dir.File("codex_home");
  std::filesystem::create_directories(home);
  const std::string db = home + "/sessions.db";
  std::string some_id;
  std::string forked_parent;
  {
    const auto start = Clock::now();
    auto store = codex::storage::testing::OpenOrDie(db);
    const char* words[] = {"parser", "linker", "socket", "cache",  "widget",
                           "thread", "buffer", "kernel", "schema", "router"};
    for (int s = 0; s < sessions; ++s) {
      codex::core::NewSession spec;
      spec.cwd = "/home/user/project" + std::to_string(s % 100);
      spec.model = "gpt-5-codex";
      spec.items = {codex::core::UserMessage(std::string("Fix the ") + words[s % 10] +
                                             " bug number " + std::to_string(s)),
                    codex::core::AssistantMessage("Fixed the **" + std::string(words[s % 10]) +
                                                  "** bug; ran the tests.")};
      auto created = store->CreateSession(spec);
      if (!created.ok()) Die(created.status().message());
      some_id = created->id;
      codex::core::TurnRecord turn;
      turn.session_id = created->id;
      turn.turn_id = "t1";
      turn.started_at_ms = created->created_at_ms;
      turn.ended_at_ms = created->created_at_ms + 1;
      turn.usage = {.input_tokens = 1000 + s % 7,
                    .cached_input_tokens = 500,
                    .output_tokens = 40,
                    .reasoning_output_tokens = 10,
                    .total_tokens = 1040 + s % 7};
      if (auto st = store->RecordTurn(turn); !st.ok()) Die(st.message());
      if (s % 10 == 0) {
        auto fork = store->Fork(created->id, std::nullopt);
        if (!fork.ok()) Die(fork.status().message());
        auto ids = store->Append(fork->id, fork->head_item_id, "t2",
                                 {codex::core::UserMessage("try another way"),
                                  codex::core::AssistantMessage("Done another way.")});
        if (!ids.ok()) Die(ids.status().message());
        forked_parent = created->id;
      }
    }
    std::printf("seeded %d sessions (+%d forks) in %.1f s\n", sessions, sessions / 10,
                std::chrono::duration<double>(Clock::now() - start).count());
  }

  ProcessOptions options;
  options.argv = {codex::testing::CodexBinaryPath(), "sessions", "serve"};
  options.env = {{"CODEX_HOME", home}};
  auto child = ChildProcess::Spawn(options);
  if (!child.ok()) Die(child.status().message());
  auto line = (*child)->ReadStdoutLine(std::chrono::seconds(30));
  if (!line.ok()) Die("serve printed no URL: " + line.status().message());
  std::smatch m;
  if (!std::regex_match(
          *line, m,
          std::regex(R"(^codex sessions viewer: http://127\.0\.0\.1:(\d+)(/[0-9a-f]{32}/)$)"))) {
    Die("unexpected line: " + *line);
  }
  const int port = std::stoi(m[1]);
  const std::string base = m[2];
  httplib::Client client("127.0.0.1", port);
  client.set_keep_alive(true);
  client.set_tcp_nodelay(true);
  auto get = [&](const std::string& path) {
    auto res = client.Get(base + path);
    if (!res || res->status != 200) {
      Die("GET " + path + " failed" + (res ? ": " + std::to_string(res->status) : ""));
    }
    return res->body;
  };
  // The cursor of page 100 (limit 50: sessions 4,951-5,000 of the newest first).
  std::string deep_cursor;
  {
    std::string cursor;
    for (int page = 1; page < 100; ++page) {
      auto j = nlohmann::json::parse(get("api/sessions?limit=50&cursor=" + cursor));
      cursor = j["next_cursor"];
      if (cursor.empty()) break;
    }
    deep_cursor = cursor;
  }
  std::printf("\nwall ms per request over %d runs (median / max), %d sessions:\n", runs, sessions);
  auto report = [&](const char* what, const std::string& path) {
    const Figure f = Time(runs, [&] { (void)get(path); });
    std::printf("  %-42s %7.2f / %7.2f\n", what, f.median, f.max);
  };
  report("page (index.html)", "");
  report("api/sessions first page (50)", "api/sessions?limit=50");
  report("api/sessions page 100 by cursor", "api/sessions?limit=50&cursor=" + deep_cursor);
  report("api/sessions --cwd one project", "api/sessions?limit=50&cwd=/home/user/project7");
  report("api/search 'kernel' (50 hits)", "api/search?q=kernel&limit=50");
  report("api/search 'number 12345'", "api/search?q=%22number%2012345%22");
  report("api/session/ID", "api/session/" + some_id);
  report("api/tree/ID (a parent with a fork)", "api/tree/" + forked_parent);
  (void)(*child)->Signal(SIGINT);
  // The usage report reads every session with a turn in the window.
  for (const char* by : {"day", "model", "session"}) {
    ProcessOptions usage;
    usage.argv = {codex::testing::CodexBinaryPath(), "sessions", "usage", "--json", "--by", by};
    usage.env = {{"CODEX_HOME", home}};
    const Figure f = Time(3, [&] {
      auto run = codex::testing::RunProcess(usage);
      if (!run.ok() || run->exit_code != 0) Die("sessions usage failed");
    });
    std::printf("  %-42s %7.1f / %7.1f\n", (std::string("codex sessions usage --by ") + by).c_str(),
                f.median, f.max);
  }
  auto done = (*child)->Wait(std::chrono::seconds(30));
  if (!done.ok() || done->exit_code != 0) Die("serve did not stop cleanly on SIGINT");
  return 0;
}
