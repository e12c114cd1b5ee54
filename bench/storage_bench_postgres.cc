// storage_bench --backend postgresql: the PostgreSQL store on a private
// server (testing/pg_test_server.h, Unix socket on loopback, fsync off)
// started by the bench itself. Prints wall-clock figures (the work happens
// in the server process, so the caller's CPU time says little):
//   append latency per item, sessions list first page at 100,000 sessions,
//   resume of a 10,000-item session, search.
#include <libpq-fe.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "bench/rollout_corpus.h"
#include "core/item.h"
#include "storage/postgres_session_store.h"
#include "storage/rollout.h"
#include "testing/pg_test_server.h"

namespace core = codex::core;
using codex::bench::BenchTurn;
using codex::bench::Die;
using codex::storage::PostgresSessionStore;

namespace {

using Clock = std::chrono::steady_clock;

double WallMs(const std::function<void()>& fn) {
  const auto t0 = Clock::now();
  fn();
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(p * static_cast<double>(v.size() - 1))];
}

void Sql(const std::string& url, const std::string& sql) {
  PGconn* c = PQconnectdb(url.c_str());
  PGresult* r = PQexec(c, sql.c_str());
  const ExecStatusType st = PQresultStatus(r);
  if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
    std::fprintf(stderr, "storage_bench: %s\n", PQresultErrorMessage(r));
    std::exit(1);
  }
  PQclear(r);
  PQfinish(c);
}

int64_t SqlInt(const std::string& url, const std::string& sql) {
  PGconn* c = PQconnectdb(url.c_str());
  PGresult* r = PQexec(c, sql.c_str());
  if (PQresultStatus(r) != PGRES_TUPLES_OK) {
    std::fprintf(stderr, "storage_bench: %s\n", PQresultErrorMessage(r));
    std::exit(1);
  }
  const int64_t v = std::stoll(PQgetvalue(r, 0, 0));
  PQclear(r);
  PQfinish(c);
  return v;
}

// The corpus of Codex-like rollouts (bench/rollout_corpus.h) imported into a
// new database: its size against the JSONL, where the bytes are, search at depth.
void CorpusFigures(codex::storage::testing::PgTestServer& server, int sessions) {
  const std::string url = server.NewDatabase();
  auto opened = PostgresSessionStore::Open(url);
  if (!opened.ok()) Die(opened.status(), "open");
  auto store = std::move(opened).value();
  char tmpl[] = "/tmp/storage-bench-pg-XXXXXX";
  if (!mkdtemp(tmpl)) Die(codex::InternalError("mkdtemp"), "corpus");
  const std::string dir = tmpl;
  const auto corpus = codex::bench::WriteRolloutCorpus(dir, sessions, 27);
  Sql(url, "VACUUM ANALYZE");
  const int64_t before = SqlInt(url, "SELECT pg_database_size(current_database())");
  codex::bench::ImportCorpus(*store, corpus);
  std::filesystem::remove_all(dir);
  Sql(url, "VACUUM ANALYZE");
  const int64_t bytes = SqlInt(url, "SELECT pg_database_size(current_database())") - before;
  const int64_t items = SqlInt(url, "SELECT count(*) FROM items");
  codex::bench::PrintCorpusSize(corpus, items, bytes, "PostgreSQL after import (VACUUM ANALYZE)",
                                "1.5x", "tables with TOAST, indexes");
  {
    PGconn* c = PQconnectdb(url.c_str());
    PGresult* r = PQexec(c,
                         "SELECT c.relname, CASE WHEN c.relkind = 'r' THEN"
                         " pg_table_size(c.oid) ELSE pg_relation_size(c.oid) END AS b"
                         " FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace"
                         " WHERE n.nspname = 'public' AND c.relkind IN ('r', 'i')"
                         " ORDER BY b DESC");
    for (int i = 0; i < PQntuples(r); ++i) {
      const double b = std::stod(PQgetvalue(r, i, 1));
      if (b > 100'000) std::printf(" %s %.1f MB", PQgetvalue(r, i, 0), b / 1e6);
    }
    PQclear(r);
    PQfinish(c);
  }
  std::printf("\n");
  codex::bench::PrintCorpusSearch(*store);
}

}  // namespace

int RunPostgresBench(int corpus_sessions, bool corpus_only) {
  std::string why;
  auto* server = codex::storage::testing::PgTestServer::Get(&why);
  if (!server) {
    std::fprintf(stderr, "storage_bench: no PostgreSQL server: %s\n", why.c_str());
    return 4;
  }
  std::printf("storage_bench --backend postgresql (private server, Unix socket, fsync off)\n\n");
  CorpusFigures(*server, corpus_sessions);
  if (corpus_only) return 0;
  std::printf("\n");
  const std::string url = server->NewDatabase();
  auto opened = PostgresSessionStore::Open(url);
  if (!opened.ok()) Die(opened.status(), "open");
  auto store = std::move(opened).value();
  std::printf("Times are wall ms of one call, client and server together.\n\n");

  // --- append one item, 2,000 times ---
  {
    core::NewSession spec;
    spec.items = {core::UserMessage("append bench")};
    auto s = store->CreateSession(spec);
    if (!s.ok()) Die(s.status(), "create");
    std::optional<int64_t> head = s->head_item_id;
    std::vector<double> times;
    for (int i = 0; i < 2'000; ++i) {
      std::vector<int64_t> ids;
      times.push_back(WallMs([&] {
        auto r =
            store->Append(s->id, head, "t", {core::AssistantMessage("item " + std::to_string(i))});
        if (!r.ok()) Die(r.status(), "append");
        ids = *r;
      }));
      head = ids.back();
    }
    std::printf("append one item (2,000 appends): median %.3f ms, p99 %.3f ms\n",
                Percentile(times, 0.5), Percentile(times, 0.99));
  }

  // --- resume of a 10,000-item session ---
  std::string big_id;
  {
    Sql(url, "VACUUM ANALYZE");
    const int64_t before = SqlInt(url, "SELECT pg_database_size(current_database())");
    core::NewSession spec;
    spec.items = {core::UserMessage("resume bench")};
    auto s = store->CreateSession(spec);
    if (!s.ok()) Die(s.status(), "create");
    big_id = s->id;
    std::optional<int64_t> head = s->head_item_id;
    for (int t = 0; t < 2'500; ++t) {
      auto r = store->Append(s->id, head, "t" + std::to_string(t), BenchTurn(t));
      if (!r.ok()) Die(r.status(), "append");
      head = r->back();
    }
    {
      Sql(url, "VACUUM ANALYZE");
      const int64_t after = SqlInt(url, "SELECT pg_database_size(current_database())");
      auto jsonl =
          codex::storage::ExportSession(*store, big_id, codex::storage::ExportFormat::kJsonl);
      if (!jsonl.ok()) Die(jsonl.status(), "export");
      const double items = 10'001.0;
      std::printf(
          "bytes per stored item: %.0f; the same session as Codex JSONL: %.0f bytes per item;"
          " database / JSONL = %.2fx   (target <= 1.5x)\n",
          static_cast<double>(after - before) / items, static_cast<double>(jsonl->size()) / items,
          static_cast<double>(after - before) / static_cast<double>(jsonl->size()));
      // Where the bytes are: each table of the store (with its TOAST) and each index.
      std::string where = " ";
      for (const char* rel : {"items", "items_pkey", "items_parent", "items_session", "items_tsv",
                              "items_refold", "item_usage", "events", "sessions"}) {
        const std::string r(rel);
        where +=
            " " + r + " " +
            std::to_string(SqlInt(url, "SELECT pg_relation_size('" + r +
                                           "') + COALESCE((SELECT pg_relation_size(reltoastrelid)"
                                           " FROM pg_class WHERE relname = '" +
                                           r + "' AND reltoastrelid <> 0), 0)"));
      }
      std::printf("%s\n", where.c_str());
    }
    std::vector<double> times;
    size_t n = 0;
    for (int i = 0; i < 11; ++i) {
      times.push_back(WallMs([&] {
        auto found = store->FindSession(big_id);
        if (!found.ok()) Die(found.status(), "find");
        auto transcript = store->LoadTranscript(*found);
        if (!transcript.ok()) Die(transcript.status(), "load");
        n = transcript->size();
      }));
    }
    std::printf(
        "resume (find + load transcript) of a %zu-item session: median %.2f ms"
        "   (target <= 100 ms)\n",
        n, Percentile(times, 0.5));
  }

  // --- list first page at 100,000 sessions ---
  {
    // Bulk rows straight in SQL: the bench measures reading, not 100k commits.
    Sql(url,
        "INSERT INTO sessions(id, cwd, title, created_at_ms, updated_at_ms)"
        " SELECT '01900000-0000-7000-8000-' || lpad(to_hex(g), 12, '0'), '/work/p' || (g % 50),"
        " 'bench session ' || g, 1700000000000 + g, 1700000000000 + g"
        " FROM generate_series(1, 100000) AS g");
    Sql(url, "ANALYZE");
    for (const bool by_cwd : {false, true}) {
      core::ListQuery q;
      q.limit = 20;
      if (by_cwd) q.cwd = "/work/p7";
      std::vector<double> times;
      for (int i = 0; i < 51; ++i) {
        times.push_back(WallMs([&] {
          auto page = store->ListSessions(q);
          if (!page.ok() || page->sessions.size() != 20) Die(page.status(), "list");
        }));
      }
      std::printf(
          "sessions list first page of 20 at 100,002 sessions%s: median %.2f ms"
          "   (target <= 10 ms)\n",
          by_cwd ? " (one cwd)" : "", Percentile(times, 0.5));
    }
  }

  // --- search at depth: the rows storage_bench (SQLite) prints ---
  for (int limit : {20, 200, 2'000, 10'000}) {
    std::vector<double> times;
    size_t hits = 0;
    for (int i = 0; i < 3; ++i) {
      times.push_back(WallMs([&] {
        codex::storage::SearchQuery q;
        q.text = "src";
        q.limit = limit;
        auto r = store->Search(q);
        if (!r.ok()) Die(r.status(), "search");
        hits = r->size();
      }));
    }
    std::printf("search depth: 'src' --limit %-6d %5zu hits: wall %.2f ms\n", limit, hits,
                Percentile(times, 0.5));
  }

  // --- search ---
  {
    struct Case {
      const char* label;
      const char* query;
    };
    for (const Case& c :
         {Case{"word (10,000 matching items)", "TODOs"}, Case{"rare word", "\"turn 1234\""},
          Case{"prefix", "tid*"}, Case{"no match", "walrus"}}) {
      std::vector<double> times;
      size_t hits = 0;
      for (int i = 0; i < 11; ++i) {
        times.push_back(WallMs([&] {
          codex::storage::SearchQuery q;
          q.text = c.query;
          auto r = store->Search(q);
          if (!r.ok()) Die(r.status(), "search");
          hits = r->size();
        }));
      }
      std::printf("sessions search %-30s %2zu hits: median %.2f ms\n", c.label, hits,
                  Percentile(times, 0.5));
    }
  }
  return 0;
}
