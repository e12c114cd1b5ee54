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
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "bench/rollout_corpus.h"
#include "core/item.h"
#include "storage/postgres_session_store.h"
#include "storage/rollout.h"
#include "storage/sqlite_session_store.h"
#include "testing/pg_test_server.h"
#include "testing/store_test_support.h"

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

// The bytes of each table (with its TOAST, free space and visibility maps)
// and each index of the store, by name.
std::map<std::string, int64_t> RelationBytes(const std::string& url) {
  PGconn* c = PQconnectdb(url.c_str());
  PGresult* r = PQexec(c,
                       "SELECT c.relname, pg_table_size(c.oid) FROM pg_class AS c"
                       " JOIN pg_namespace AS n ON n.oid = c.relnamespace"
                       " WHERE n.nspname = 'public' AND c.relkind IN ('r', 'i')");
  if (PQresultStatus(r) != PGRES_TUPLES_OK) {
    std::fprintf(stderr, "storage_bench: %s\n", PQresultErrorMessage(r));
    std::exit(1);
  }
  std::map<std::string, int64_t> out;
  for (int i = 0; i < PQntuples(r); ++i) out[PQgetvalue(r, i, 0)] = std::stoll(PQgetvalue(r, i, 1));
  PQclear(r);
  PQfinish(c);
  return out;
}

// Where a database's growth went, in bytes per item: each relation that
// grew, largest first, and the rest of the database (catalogs, ...).
void PrintGrowth(const std::map<std::string, int64_t>& before,
                 const std::map<std::string, int64_t>& after, int64_t database_growth,
                 double items) {
  std::vector<std::pair<int64_t, std::string>> grew;
  int64_t sum = 0;
  for (const auto& [name, bytes] : after) {
    auto was = before.find(name);
    const int64_t delta = bytes - (was == before.end() ? 0 : was->second);
    sum += delta;
    if (delta != 0) grew.emplace_back(delta, name);
  }
  std::sort(grew.rbegin(), grew.rend());
  std::string line = "  where (bytes per item each relation grew):";
  char buf[96];
  for (const auto& [delta, name] : grew) {
    std::snprintf(buf, sizeof buf, " %s %.1f", name.c_str(), static_cast<double>(delta) / items);
    line += buf;
  }
  std::snprintf(buf, sizeof buf, "; the rest of the database %.1f",
                static_cast<double>(database_growth - sum) / items);
  std::printf("%s%s\n", line.c_str(), buf);
}

// A hit as both stores can name it (item ids are each store's own): the
// session it is credited to first and the item's place in that session's
// history (snippets are cut differently by the two backends).
class HitNames {
 public:
  explicit HitNames(codex::storage::SessionDatabase& store) : store_(store) {}
  std::string Of(const codex::storage::SearchHit& h) {
    if (h.sessions.empty()) return "?";
    const core::SessionInfo& s = h.sessions.front().session;
    auto [it, added] = place_.try_emplace(s.id);
    if (added) {
      auto history = store_.LoadHistory(s);
      if (!history.ok()) Die(history.status(), "history");
      for (size_t i = 0; i < history->size(); ++i) it->second[(*history)[i].id] = i;
    }
    auto at = it->second.find(h.item_id);
    return s.id + "#" + (at == it->second.end() ? "?" : std::to_string(at->second));
  }

 private:
  codex::storage::SessionDatabase& store_;
  std::map<std::string, std::map<int64_t, size_t>> place_;
};

// The same searches on PostgreSQL and on a SQLite store of the same
// corpus: how many of PostgreSQL's hits SQLite also returns, and whether
// the two lists are in the same order (both rank best first by the one BM25
// of storage/search_rank.h, so they should be: 20 of 20, same order).
void CompareWithSqlite(codex::storage::SessionDatabase& pg, codex::storage::SessionDatabase& lite) {
  std::printf("  search results against SQLite's for the same corpus:\n");
  HitNames pg_names(pg);
  HitNames lite_names(lite);
  struct Case {
    const char* query;
    int limit;
  };
  for (const Case& c :
       {Case{codex::bench::kCorpusCommonWord, 20}, Case{codex::bench::kCorpusCommonWord, 10'000},
        Case{"sess*", 20}, Case{"session store", 20}, Case{"\"the session\"", 20}}) {
    codex::storage::SearchQuery q;
    q.text = c.query;
    q.limit = c.limit;
    auto a = pg.Search(q);
    if (!a.ok()) Die(a.status(), "search");
    auto b = lite.Search(q);
    if (!b.ok()) Die(b.status(), "search");
    std::vector<std::string> ka;
    std::vector<std::string> kb;
    for (const auto& h : *a) ka.push_back(pg_names.Of(h));
    for (const auto& h : *b) kb.push_back(lite_names.Of(h));
    std::vector<std::string> sa = ka;
    std::vector<std::string> sb = kb;
    std::sort(sa.begin(), sa.end());
    std::sort(sb.begin(), sb.end());
    std::vector<std::string> both;
    std::set_intersection(sa.begin(), sa.end(), sb.begin(), sb.end(), std::back_inserter(both));
    size_t first_difference = 0;
    while (first_difference < std::min(ka.size(), kb.size()) &&
           ka[first_difference] == kb[first_difference]) {
      ++first_difference;
    }
    std::printf(
        "    '%s' --limit %-6d PostgreSQL %zu hits, SQLite %zu, in both %zu; same order: %s\n",
        c.query, c.limit, ka.size(), kb.size(), both.size(),
        ka == kb ? "yes"
                 : ("no (first difference at hit " + std::to_string(first_difference + 1) + ")")
                       .c_str());
  }
}

// The corpus of Codex-like rollouts (bench/rollout_corpus.h) imported into a
// new database: its size against the JSONL, where the bytes are, search at
// depth, and the results against SQLite's.
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
  auto lite =
      codex::storage::testing::OpenOrDie<codex::storage::SqliteSessionStore>(dir + "/corpus.db");
  codex::bench::ImportCorpus(*lite, corpus);
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
  codex::bench::PrintCorpusSearchAgainst(*store, "PostgreSQL", *lite, "SQLite");
  CompareWithSqlite(*store, *lite);
  // The worst case of the size figure: tool outputs whose tokens never repeat.
  std::printf("  stress contents (tool outputs of tokens that never repeat; no target):\n");
  for (const auto& [content, name] : codex::bench::kStressContents) {
    const std::string stress_url = server.NewDatabase();
    auto stress = PostgresSessionStore::Open(stress_url);
    if (!stress.ok()) Die(stress.status(), "open");
    const auto rollouts = codex::bench::WriteRolloutCorpus(
        dir + "/stress-" + std::to_string(static_cast<int>(content)), 50, 27, content);
    Sql(stress_url, "VACUUM ANALYZE");
    const int64_t empty = SqlInt(stress_url, "SELECT pg_database_size(current_database())");
    codex::bench::ImportCorpus(**stress, rollouts);
    Sql(stress_url, "VACUUM ANALYZE");
    codex::bench::PrintStressSize(
        name, rollouts, SqlInt(stress_url, "SELECT pg_database_size(current_database())") - empty);
  }
  // The upgrade to the BM25 ranking's schema (migration 0008) on this
  // corpus: taken back to schema 7, then opened (the migrations 0008 and
  // 0009, then the re-index of the items 0008 lists, all under the migration
  // lock).
  store.reset();
  codex::storage::testing::TakePostgresBackToSchema7(url);
  const int64_t listed =
      SqlInt(url, "SELECT count(*) FROM items WHERE tsv IS NULL AND kind NOT IN (9, 10)");
  const auto start = std::chrono::steady_clock::now();
  auto upgraded = PostgresSessionStore::Open(url);
  if (!upgraded.ok()) Die(upgraded.status(), "upgrade");
  std::printf(
      "  upgrade from schema 7 (migrations 0008 and 0009, the re-index of %lld items without "
      "lexemes): "
      "%.2f s\n",
      static_cast<long long>(listed),
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  lite.reset();
  std::filesystem::remove_all(dir);
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

  // --- open an existing store (what every PostgreSQL command starts with) ---
  {
    std::vector<double> times;
    for (int i = 0; i < 41; ++i) {
      times.push_back(WallMs([&] {
        auto again = PostgresSessionStore::Open(url);
        if (!again.ok()) Die(again.status(), "open");
      }));
    }
    std::printf(
        "open the store at the current schema (connect, schema check; 41 opens): median %.2f ms,"
        " p90 %.2f ms\n",
        Percentile(times, 0.5), Percentile(times, 0.9));
  }

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
    const int64_t sessions_before = SqlInt(url, "SELECT pg_total_relation_size('sessions')");
    const std::map<std::string, int64_t> sizes_before = RelationBytes(url);
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
      // The session's row changes at every append (head, time, tokens). Until
      // migration 0009 none of those updates was HOT (the time and the head
      // were indexed): each left a dead row version and a new entry in every
      // index of sessions, which VACUUM frees for reuse but does not give
      // back. Now they are in place but for the first of each 10-second slot.
      std::printf(
          "  of which sessions (the row and its indexes, after 2,500 updates without a VACUUM"
          " between them): %.0f bytes per item\n",
          static_cast<double>(SqlInt(url, "SELECT pg_total_relation_size('sessions')") -
                              sessions_before) /
              items);
      PrintGrowth(sizes_before, RelationBytes(url), after - before, items);
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

  // --- the same session, VACUUM of sessions between appends ---
  // A real session gets a turn every few seconds at most, and autovacuum
  // (threshold: 50 changed rows plus 20% of the table) frees the session
  // row's dead versions between them, which later updates reuse; the burst
  // above has no VACUUM in it. The same 2,500 appends in a new database, with
  // `VACUUM sessions` every 50.
  {
    const std::string paced_url = server->NewDatabase();
    auto paced_opened = PostgresSessionStore::Open(paced_url);
    if (!paced_opened.ok()) Die(paced_opened.status(), "open");
    auto paced = std::move(paced_opened).value();
    Sql(paced_url, "VACUUM ANALYZE");
    const int64_t before = SqlInt(paced_url, "SELECT pg_database_size(current_database())");
    const std::map<std::string, int64_t> sizes_before = RelationBytes(paced_url);
    core::NewSession spec;
    spec.items = {core::UserMessage("resume bench")};
    auto s = paced->CreateSession(spec);
    if (!s.ok()) Die(s.status(), "create");
    std::optional<int64_t> head = s->head_item_id;
    for (int t = 0; t < 2'500; ++t) {
      auto r = paced->Append(s->id, head, "t" + std::to_string(t), BenchTurn(t));
      if (!r.ok()) Die(r.status(), "append");
      head = r->back();
      if (t % 50 == 49) Sql(paced_url, "VACUUM sessions");
    }
    Sql(paced_url, "VACUUM ANALYZE");
    const int64_t after = SqlInt(paced_url, "SELECT pg_database_size(current_database())");
    auto jsonl = codex::storage::ExportSession(*paced, s->id, codex::storage::ExportFormat::kJsonl);
    if (!jsonl.ok()) Die(jsonl.status(), "export");
    std::printf(
        "the same session with VACUUM of sessions every 50 appends: %.0f bytes per item;"
        " database / JSONL = %.2fx\n",
        static_cast<double>(after - before) / 10'001.0,
        static_cast<double>(after - before) / static_cast<double>(jsonl->size()));
    PrintGrowth(sizes_before, RelationBytes(paced_url), after - before, 10'001.0);
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
      // The next page (from the first page's cursor), and resume --last.
      auto first = store->ListSessions(q);
      if (!first.ok()) Die(first.status(), "list");
      core::ListQuery next = q;
      next.cursor = first->next_cursor;
      std::vector<double> next_times;
      std::vector<double> latest_times;
      for (int i = 0; i < 51; ++i) {
        next_times.push_back(WallMs([&] {
          auto page = store->ListSessions(next);
          if (!page.ok() || page->sessions.size() != 20) Die(page.status(), "list");
        }));
        latest_times.push_back(WallMs([&] {
          auto latest = store->LatestSession(q.cwd);
          if (!latest.ok()) Die(latest.status(), "latest");
        }));
      }
      std::printf("  its next page (--cursor): median %.2f ms; latest session%s: median %.2f ms\n",
                  Percentile(next_times, 0.5), by_cwd ? " in that cwd" : "",
                  Percentile(latest_times, 0.5));
    }
  }

  // --- search at depth: the rows storage_bench (SQLite) prints ---
  codex::bench::PrintSearchDepth(*store);

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
