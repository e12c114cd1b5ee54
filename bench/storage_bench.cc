// storage_bench: figures for the SQLite session store (ARCHITECTURE.md).
//   - `sessions list` first page at 1k / 10k / 100k sessions (target <= 10 ms, flat)
//   - resuming a 10,000-item session up to the loaded transcript (target <= 30 ms)
//   - forking it (target <= 5 ms and <= 16 KB of database growth)
//   - append latency and bytes per stored item
//   - peak memory of a process resuming the 10,000-item session (target <= 30 MB)
//   - `sessions search` over 300,000 items (target <= 50 ms)
// Usage: storage_bench [DIR]   (a scratch directory; default: a new one in /tmp)
#include <SQLiteCpp/SQLiteCpp.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "bench/rollout_corpus.h"
#include "core/item.h"
#include "core/uuid.h"
#include "storage/rollout.h"
#include "storage/sqlite_session_store.h"
#include "testing/store_test_support.h"
#include "testing/temp_dir.h"

namespace {

using codex::storage::SqliteSessionStore;
using codex::storage::testing::OpenOrDie;
namespace core = codex::core;
using codex::bench::BenchTurn;
using codex::bench::Die;
using Clock = std::chrono::steady_clock;

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

double CpuMs() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

// Median CPU time of `runs` calls of `fn`, in ms. CPU time, not wall time:
// on a shared, loaded machine wall time mostly measures the scheduler.
// `wall` (optional) receives the median wall time.
double Median(int runs, const std::function<void()>& fn, double* wall = nullptr) {
  std::vector<double> t, w;
  for (int i = 0; i < runs; ++i) {
    const auto start = Clock::now();
    const double cpu = CpuMs();
    fn();
    t.push_back(CpuMs() - cpu);
    w.push_back(Ms(Clock::now() - start));
  }
  std::sort(t.begin(), t.end());
  std::sort(w.begin(), w.end());
  if (wall) *wall = w[w.size() / 2];
  return t[t.size() / 2];
}

// Database bytes after folding the WAL into the main file.
int64_t DbBytes(const std::string& path) {
  SQLite::Database db(path, SQLite::OPEN_READWRITE);
  db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  return db.execAndGet("PRAGMA page_count").getInt64() *
         db.execAndGet("PRAGMA page_size").getInt64();
}

// Adds sessions [from, to) straight through SQL in one transaction (setup only).
void AddSessions(const std::string& path, int from, int to) {
  SQLite::Database db(path, SQLite::OPEN_READWRITE);
  SQLite::Transaction txn(db);
  SQLite::Statement ins(db,
                        "INSERT INTO sessions(id, cwd, model, provider, title, source,"
                        " created_at_ms, updated_at_ms) VALUES (?, ?, 'gpt-5', 'openai', ?,"
                        " 'exec', ?, ?)");
  const int64_t base = 1'700'000'000'000;
  for (int i = from; i < to; ++i) {
    const int64_t ms = base + int64_t{i} * 1000;
    ins.reset();
    ins.bind(1, core::NewUuidV7(ms));
    ins.bind(2, "/home/user/project" + std::to_string(i % 100));
    ins.bind(3, "Fix the flaky test number " + std::to_string(i));
    ins.bind(4, ms);
    ins.bind(5, ms);
    ins.exec();
  }
  txn.commit();
}

// The child side of the peak-memory figure: resume session `id` of `path`
// (open, find, load the transcript) and exit.
int ResumeOnce(const std::string& path, const std::string& id) {
  auto store = OpenOrDie<SqliteSessionStore>(path);
  auto s = store->FindSession(id);
  if (!s.ok()) Die(s.status(), "find");
  auto transcript = store->LoadTranscript(*s);
  if (!transcript.ok()) Die(transcript.status(), "load");
  return transcript->size() > 0 ? 0 : 1;
}

// Peak RSS (KB) of a fresh process of this program running ResumeOnce.
long PeakRssOfResume(const char* self, const std::string& path, const std::string& id) {
  std::vector<std::string> args = {self, "--resume-once", path, id};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  if (posix_spawn(&pid, self, nullptr, nullptr, argv.data(), environ) != 0) return -1;
  int status = 0;
  rusage usage{};
  if (::wait4(pid, &status, 0, &usage) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return -1;
  }
  return usage.ru_maxrss;
}

// 300,000 items: 3,000 sessions of 25 turns (4 items each), one in ten
// forked after turn 10 and continued by 5 turns of its own.
void BuildSearchCorpus(const std::string& path) {
  auto store = OpenOrDie<SqliteSessionStore>(path);
  const char* words[] = {"parser", "linker", "socket", "cache",  "widget",
                         "thread", "buffer", "kernel", "schema", "router"};
  int64_t items = 0;
  for (int s = 0; s < 3'000; ++s) {
    core::NewSession spec;
    spec.cwd = "/home/user/project" + std::to_string(s % 100);
    for (int t = 0; t < 25; ++t) {
      auto turn = BenchTurn(s * 25 + t);
      turn[0] = core::UserMessage(std::string("Look at the ") + words[(s + t) % 10] + " in module" +
                                  std::to_string(s) + " turn " + std::to_string(t));
      for (auto& i : turn) spec.items.push_back(std::move(i));
    }
    auto created = store->CreateSession(spec);
    if (!created.ok()) Die(created.status(), "create");
    items += 100;
    if (s % 10 == 0) {
      auto f = store->Fork(created->id, 10);
      if (!f.ok()) Die(f.status(), "fork");
      std::optional<int64_t> head = f->head_item_id;
      std::vector<core::Item> own;
      for (int t = 0; t < 5; ++t) {
        for (auto& i : BenchTurn(900'000 + s * 5 + t)) own.push_back(std::move(i));
      }
      auto ids = store->Append(f->id, head, "fork", own);
      if (!ids.ok()) Die(ids.status(), "append");
      items += 20;
    }
  }
  std::printf("search corpus: %lld items in 3,000 sessions and 300 forks\n",
              static_cast<long long>(items));
}

// The corpus of Codex-like rollouts (bench/rollout_corpus.h) imported into a
// new database: its size against the JSONL, where the bytes are (dbstat),
// and search at depth.
// `corpus` imported into a new store at `path`, then vacuumed: the bytes
// the database grew by.
int64_t ImportedBytes(const std::string& path, const codex::bench::RolloutCorpus& corpus) {
  std::filesystem::remove(path);
  const int64_t empty_bytes = [&] {
    OpenOrDie(path);
    return DbBytes(path);
  }();
  {
    auto store = OpenOrDie(path);
    codex::bench::ImportCorpus(*store, corpus);
  }
  {
    SQLite::Database db(path, SQLite::OPEN_READWRITE);
    db.exec("VACUUM");
  }
  return DbBytes(path) - empty_bytes;
}

void CorpusFigures(const std::string& dir, int sessions) {
  const std::string path = dir + "/corpus.db";
  const auto corpus = codex::bench::WriteRolloutCorpus(dir + "/corpus", sessions, 27);
  const int64_t bytes = ImportedBytes(path, corpus);
  SQLite::Database db(path, SQLite::OPEN_READONLY);
  const int64_t items = db.execAndGet("SELECT count(*) FROM items").getInt64();
  codex::bench::PrintCorpusSize(corpus, items, bytes, "SQLite after import (vacuumed)", "1.0x",
                                "dbstat");
  SQLite::Statement where(db,
                          "SELECT name, sum(pgsize) FROM dbstat GROUP BY name"
                          " HAVING sum(pgsize) > 100000 ORDER BY 2 DESC");
  while (where.executeStep()) {
    std::printf(" %s %.1f MB", where.getColumn(0).getText(),
                static_cast<double>(where.getColumn(1).getInt64()) / 1e6);
  }
  std::printf("\n");
  auto store = OpenOrDie(path);
  codex::bench::PrintCorpusSearch(*store);
  // The worst case of the size figure: tool outputs whose tokens never repeat.
  std::printf("  stress contents (tool outputs of tokens that never repeat; no target):\n");
  for (const auto& [content, name] : codex::bench::kStressContents) {
    const auto rollouts = codex::bench::WriteRolloutCorpus(
        dir + "/stress-" + std::to_string(static_cast<int>(content)), 50, 27, content);
    codex::bench::PrintStressSize(name, rollouts, ImportedBytes(dir + "/stress.db", rollouts));
  }
}

}  // namespace

int RunPostgresBench(int corpus_sessions, bool corpus_only);  // storage_bench_postgres.cc

int main(int argc, char** argv) {
  if (argc == 4 && std::string(argv[1]) == "--resume-once") return ResumeOnce(argv[2], argv[3]);
  // --corpus-only: only the Codex-like corpus figures (size, where the bytes
  // are, search depth). CODEX_BENCH_CORPUS_SESSIONS sets its size.
  const char* self = argv[0];
  bool corpus_only = false;
  bool postgres = false;
  std::string given_dir;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--corpus-only") {
      corpus_only = true;
    } else if (a == "--backend" && i + 1 < argc && std::string(argv[i + 1]) == "postgresql") {
      postgres = true;
      ++i;
    } else if (a.empty() || a[0] == '-' || !given_dir.empty()) {
      // A flag it does not know is not a directory to write into.
      std::fprintf(stderr,
                   "storage_bench: unknown argument '%s'; usage: storage_bench [--corpus-only] "
                   "[--backend postgresql | DIR]\n",
                   a.c_str());
      return 2;
    } else {
      given_dir = a;
    }
  }
  const char* sessions_env = std::getenv("CODEX_BENCH_CORPUS_SESSIONS");
  const int corpus_sessions = sessions_env ? std::atoi(sessions_env) : 1'000;
  if (postgres) return RunPostgresBench(corpus_sessions, corpus_only);
  // A directory given on the command line is kept; the default scratch one
  // is removed at the end.
  std::optional<codex::testing::TempDir> scratch;
  std::string dir;
  if (!given_dir.empty()) {
    dir = given_dir;
    std::filesystem::create_directories(dir);
  } else {
    dir = scratch.emplace("storage-bench-").str();
  }
  std::printf("storage_bench (scratch: %s)\n\n", dir.c_str());
  if (corpus_only) {
    CorpusFigures(dir, corpus_sessions);
    return 0;
  }

  // --- sessions list ---
  {
    const std::string path = dir + "/list.db";
    std::filesystem::remove(path);
    { OpenOrDie<SqliteSessionStore>(path); }
    std::printf("Times are median CPU ms of the calling process (wall ms where shown).\n\n");
    std::printf("sessions list, first page of 20 (median of 51 runs):\n");
    int have = 0;
    for (int target : {1'000, 10'000, 100'000}) {
      AddSessions(path, have, target);
      have = target;
      core::ListQuery all;
      core::ListQuery cwd;
      cwd.cwd = "/home/user/project7";
      core::ListQuery page2;
      auto store = OpenOrDie<SqliteSessionStore>(path);
      page2.cursor = (*store->ListSessions(all)).next_cursor;
      const double t_open_list = Median(51, [&] {
        auto s = OpenOrDie<SqliteSessionStore>(path);
        if (!s->ListSessions(all).ok()) Die(codex::InternalError("list"), "list");
      });
      const double t_all = Median(51, [&] { (void)store->ListSessions(all); });
      const double t_cwd = Median(51, [&] { (void)store->ListSessions(cwd); });
      const double t_next = Median(51, [&] { (void)store->ListSessions(page2); });
      std::printf(
          "  %7d sessions: open+list %.2f ms | list all %.3f ms | list --cwd %.3f ms | "
          "page 2 %.3f ms   (target <= 10 ms, flat)\n",
          target, t_open_list, t_all, t_cwd, t_next);
    }
    std::printf("\n");
  }

  // --- a 10,000-item session: append, resume, fork ---
  {
    const std::string path = dir + "/resume.db";
    std::filesystem::remove(path);
    std::string id;
    int64_t body_bytes = 0;
    const int64_t empty_bytes = [&] {
      OpenOrDie<SqliteSessionStore>(path);
      return DbBytes(path);
    }();
    {
      auto store = OpenOrDie<SqliteSessionStore>(path);
      auto s = store->CreateSession({});
      if (!s.ok()) Die(s.status(), "create");
      id = s->id;
      std::optional<int64_t> head;
      std::vector<double> per_append;
      for (int t = 0; t < 2'500; ++t) {
        auto items = BenchTurn(t);
        for (const auto& i : items) body_bytes += static_cast<int64_t>(i.body.size());
        // One append per committed item, as the turn loop does.
        for (auto& item : items) {
          const auto start = Clock::now();
          auto ids = store->Append(id, head, "turn" + std::to_string(t), {item});
          per_append.push_back(Ms(Clock::now() - start));
          if (!ids.ok()) Die(ids.status(), "append");
          head = ids->back();
        }
      }
      std::sort(per_append.begin(), per_append.end());
      std::printf("append one item (10,000 appends): median %.3f ms, p99 %.3f ms\n",
                  per_append[per_append.size() / 2], per_append[per_append.size() * 99 / 100]);
    }
    const int64_t full_bytes = DbBytes(path);
    std::printf(
        "bytes per stored item: %.0f (average JSON body %.0f bytes; includes indexes and "
        "the full-text index)\n",
        static_cast<double>(full_bytes - empty_bytes) / 10'000.0,
        static_cast<double>(body_bytes) / 10'000.0);
    {
      auto store = OpenOrDie<SqliteSessionStore>(path);
      auto jsonl = codex::storage::ExportSession(*store, id, codex::storage::ExportFormat::kJsonl);
      if (!jsonl.ok()) Die(jsonl.status(), "export");
      std::printf(
          "the same session as Codex JSONL: %.0f bytes per item; database / JSONL = %.2fx"
          "   (target <= 1.0x)\n",
          static_cast<double>(jsonl->size()) / 10'000.0,
          static_cast<double>(full_bytes - empty_bytes) / static_cast<double>(jsonl->size()));
    }

    size_t loaded = 0;
    double wall = 0;
    const double t_resume = Median(
        21,
        [&] {
          auto store = OpenOrDie<SqliteSessionStore>(path);
          auto s = store->FindSession(id);
          if (!s.ok()) Die(s.status(), "find");
          auto transcript = store->LoadTranscript(*s);
          if (!transcript.ok()) Die(transcript.status(), "load");
          loaded = transcript->size();
        },
        &wall);
    std::printf(
        "resume a 10,000-item session (open + find + load transcript of %zu items): "
        "%.2f ms (wall %.2f)   (target <= 30 ms)\n",
        loaded, t_resume, wall);

    const long peak_kb = PeakRssOfResume(self, path, id);
    std::printf(
        "peak memory of a process resuming it (open + find + load): %.1f MB   (target <= 30 MB)\n",
        static_cast<double>(peak_kb) / 1024.0);

    {
      auto store = OpenOrDie<SqliteSessionStore>(path);
      codex::storage::SearchQuery q;
      q.text = "TODOs";  // in every turn: the top 20 each walk to the head
      q.limit = 20;
      const double t_deep = Median(
          11, [&] { (void)store->Search(q); }, &wall);
      std::printf(
          "search a word in every turn of the 10,000-item session (20 hits): %.2f ms (wall %.2f)"
          "   (target <= 50 ms)\n",
          t_deep, wall);
      // Depth: the same word in every item of every turn ("src"), pages of
      // growing size; storage_bench --backend postgresql prints the same rows.
      codex::bench::PrintSearchDepth(*store);
    }

    auto store = OpenOrDie<SqliteSessionStore>(path);
    const int64_t before = DbBytes(path);
    const double t_fork = Median(
        201,
        [&] {
          auto f = store->Fork(id, std::nullopt);
          if (!f.ok()) Die(f.status(), "fork");
        },
        &wall);
    const int64_t after = DbBytes(path);
    std::printf(
        "fork at the head: %.3f ms (wall %.3f); database growth %.0f bytes per fork "
        "(201 forks: %lld bytes)   (target <= 5 ms, <= 16 KB)\n",
        t_fork, wall, static_cast<double>(after - before) / 201.0,
        static_cast<long long>(after - before));
    const double t_at = Median(
        5,
        [&] {
          auto f = store->Fork(id, 1'250);
          if (!f.ok()) Die(f.status(), "fork --at-turn");
        },
        &wall);
    std::printf("fork --at-turn 1250 (walks the 10,000-item history): %.2f ms (wall %.2f)\n", t_at,
                wall);
    {
      // Every hit is now held by the session and 206 forks of it.
      codex::storage::SearchQuery q;
      q.text = "TODOs";
      q.limit = 20;
      size_t holders = 0;
      const double t_forked = Median(
          11,
          [&] {
            auto r = store->Search(q);
            if (!r.ok()) Die(r.status(), "search");
            holders = r->empty() ? 0 : r->front().sessions.size();
          },
          &wall);
      std::printf(
          "the same search after those forks (%zu sessions hold each hit): %.2f ms (wall %.2f)"
          "   (target <= 50 ms)\n",
          holders, t_forked, wall);
    }
  }

  // --- search over 300,000 items ---
  {
    const std::string path = dir + "/search.db";
    std::filesystem::remove(path);
    BuildSearchCorpus(path);
    auto store = OpenOrDie<SqliteSessionStore>(path);
    struct Case {
      const char* label;
      const char* text;
      bool all;
    };
    const Case cases[] = {
        {"rare word (one session)", "module1234", true},
        {"common word (7,500 matches), top 20", "parser", true},
        {"prefix query", "sock*", true},
        {"phrase", "\"the linker in\"", true},
        {"tool output word (76,500 matches)", "tidy", true},
        {"common word, one directory (--cwd)", "widget", false},
        {"no match", "zyzzyva", true},
    };
    std::printf("sessions search over the corpus (median of 21 runs):\n");
    for (const Case& c : cases) {
      codex::storage::SearchQuery q;
      q.text = c.text;
      q.limit = 20;
      if (!c.all) q.cwd = "/home/user/project7";
      size_t hits = 0;
      double wall = 0;
      const double t = Median(
          21,
          [&] {
            auto r = store->Search(q);
            if (!r.ok()) Die(r.status(), "search");
            hits = r->size();
          },
          &wall);
      std::printf("  %-40s %2zu hits: %.2f ms (wall %.2f)   (target <= 50 ms)\n", c.label, hits, t,
                  wall);
    }
  }
  // Last: the resume's peak memory above is read from a process spawned from
  // this one, which starts from this process's size (posix_spawn shares it
  // until exec), so the corpus must not be in memory yet.
  std::printf("\n");
  CorpusFigures(dir, corpus_sessions);
  return 0;
}
