// The session viewer and the usage report on a PostgreSQL store (the
// private test server, testing/pg_test_server.h): the same sessions as
// viewer_e2e_test, made by real `codex exec` runs with `session_store` set to
// the database, are listed, searched, shown, drawn as a tree and summed.
// Skipped (exit 4, reason printed) only when the PostgreSQL server binaries
// are absent.
#include <signal.h>

#include <catch2/catch.hpp>
#include <map>
#include <string>

#include "testing/pg_test_server.h"
#include "testing/skip.h"
#include "tests/e2e_checks.h"
#include "tests/viewer_e2e_support.h"

namespace codex::testing {
namespace {

using e2e::MakeEnv;
using e2e::Run;
using namespace viewer;

std::string NewDatabaseUrl() {
  std::string why;
  storage::testing::PgTestServer* server = storage::testing::PgTestServer::Get(&why);
  if (server == nullptr) SkipTest(why);
  return server->NewDatabase();
}

}  // namespace

TEST_CASE("serve and usage on PostgreSQL: every route and the page read the shared database") {
  CodexTestEnvOptions options;
  options.extra_config = "session_store = \"" + NewDatabaseUrl() + "\"\n";
  auto env = MakeEnv(kScript, std::move(options));
  const Sessions s = MakeSessions(*env);
  // Nothing in the SQLite file: the sessions are on the server.
  CHECK_FALSE(std::filesystem::exists(env->codex_home() / "sessions.db"));

  auto usage = Run(*env, {"sessions", "usage", "--by", "session", "--json"});
  REQUIRE(usage.exit_code == 0);
  std::map<std::string, Json> groups;
  INFO("usage: " << usage.out << usage.err);
  const Json report = Json::parse(usage.out);
  for (const auto& g : report["groups"]) groups[g["key"].get<std::string>()] = g;
  REQUIRE(groups.count(s.a) == 1);
  CHECK(groups[s.a]["input_tokens"] == 6400);
  CHECK(groups[s.a]["cached_input_tokens"] == 4900);
  CHECK(groups[s.a]["requests"] == 4);
  CHECK(groups[s.b]["output_tokens"] == 7);

  Viewer v = StartViewer(*env);
  CHECK(Get(v, "/" + std::string(32, 'a') + "/api/sessions")->status == 404);
  const Json list = GetJson(v, "api/sessions?limit=2");
  REQUIRE(list["sessions"].size() == 2);
  const Json rest =
      GetJson(v, "api/sessions?limit=2&cursor=" + list["next_cursor"].get<std::string>());
  CHECK(rest["sessions"].size() == 1);
  const Json hits = GetJson(v, "api/search?q=zebra");
  CHECK_FALSE(hits["hits"].empty());
  const Json a = GetJson(v, "api/session/" + s.a);
  CHECK(a["session"]["title"] == kHostile);
  CHECK(a["forks"].size() == 1);
  const Json tree = GetJson(v, "api/tree/" + s.a);
  CHECK(tree["nodes"].size() == 2);

  const std::string page = DumpDom(v.url + "#/s/" + s.a);
  CHECK(page.find("&lt;script&gt;alert(1)&lt;/script&gt;") != std::string::npos);
  CHECK(page.find("id=\"usage-chart\"") != std::string::npos);
  CHECK(page.find("data-fork=\"" + s.b + "\"") != std::string::npos);
  const std::string search = DumpDom(v.url + "#/search?q=zebra");
  CHECK(search.find("<mark>zebra</mark>") != std::string::npos);

  REQUIRE(v.process->Signal(SIGINT).ok());
  auto done = v.process->Wait(std::chrono::seconds(30));
  REQUIRE(done.ok());
  CHECK(done->exit_code == 0);
}

}  // namespace codex::testing
