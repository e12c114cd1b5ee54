// `codex sessions serve` and `codex sessions usage` end to end: sessions made
// by real `codex exec` runs against the scripted server (a hostile title, a
// shell call, an apply_patch, a fork, a compaction), then
//  - usage: the sums per session, model and in total equal what the scripted
//    server reported, and a [model_prices] table prices them;
//  - the viewer: the token rule (none, wrong, a prefix of it: refused; a
//    rebound Host: refused; anything but GET: refused), the security headers
//    on every response, each route's JSON, and the page itself driven in
//    headless Chromium: the list, a search with highlighted hits, a session
//    transcript (Markdown, folded tool calls, a coloured diff, fork and
//    compaction markers), the fork tree and the usage chart; the hostile
//    title stays text everywhere; Ctrl-C stops it with exit 0.
#include <httplib.h>
#include <signal.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <string>
#include <thread>

#include "testing/files.h"
#include "tests/e2e_checks.h"
#include "tests/viewer_e2e_support.h"

namespace codex::testing {
namespace {

using e2e::MakeEnv;
using e2e::Run;
using namespace viewer;

}  // namespace

TEST_CASE("usage: sums per session, model and in total equal what the server reported") {
  auto env = MakeEnv(kScript);
  const Sessions s = MakeSessions(*env);

  auto by_session = Run(*env, {"sessions", "usage", "--by", "session", "--json"});
  INFO("usage: " << by_session.out << by_session.err);
  REQUIRE(by_session.exit_code == 0);
  const Json report = Json::parse(by_session.out);
  std::map<std::string, Json> groups;
  for (const auto& g : report["groups"]) groups[g["key"].get<std::string>()] = g;
  REQUIRE(groups.count(s.a) == 1);
  REQUIRE(groups.count(s.b) == 1);
  // A: responses 1-4 (turn 1 of A is not counted again for its fork B).
  CHECK(groups[s.a]["input_tokens"] == 6400);
  CHECK(groups[s.a]["cached_input_tokens"] == 4900);
  CHECK(groups[s.a]["output_tokens"] == 125);
  CHECK(groups[s.a]["reasoning_output_tokens"] == 30);
  CHECK(groups[s.a]["requests"] == 4);
  CHECK(groups[s.a]["turns"] == 2);
  CHECK(groups[s.b]["input_tokens"] == 700);
  CHECK(groups[s.b]["cached_input_tokens"] == 600);
  CHECK(groups[s.b]["output_tokens"] == 7);
  CHECK(groups[s.b]["reasoning_output_tokens"] == 3);
  CHECK(groups[s.b]["requests"] == 1);
  CHECK(groups[s.a]["cost_usd"].is_null());  // no price table yet
  // C's turn at least (the compaction's own request may be recorded too).
  REQUIRE(groups.count(s.c) == 1);
  CHECK(groups[s.c]["input_tokens"].get<int64_t>() >= 2500);
  const Json& total = report["total"];
  CHECK(total["input_tokens"] == 6400 + 700 + groups[s.c]["input_tokens"].get<int64_t>());
  CHECK(total["requests"] == 5 + groups[s.c]["requests"].get<int64_t>());

  // Priced: the model's table prices every turn; --by model has one group.
  REQUIRE(
      env->WriteConfig("[model_prices.gpt-test]\ninput = 2.0\ncached_input = 0.5\noutput = 10.0\n")
          .ok());
  auto by_model = Run(*env, {"sessions", "usage", "--by", "model", "--json", "--since", "1d"});
  REQUIRE(by_model.exit_code == 0);
  const Json priced = Json::parse(by_model.out);
  REQUIRE(priced["groups"].size() == 1);
  CHECK(priced["groups"][0]["key"] == "gpt-test");
  const Json& t = priced["total"];
  const double expected = (static_cast<double>(t["input_tokens"].get<int64_t>() -
                                               t["cached_input_tokens"].get<int64_t>()) *
                               2.0 +
                           static_cast<double>(t["cached_input_tokens"].get<int64_t>()) * 0.5 +
                           static_cast<double>(t["output_tokens"].get<int64_t>()) * 10.0) /
                          1e6;
  CHECK(t["cost_usd"].get<double>() == Approx(expected));
  CHECK(t["unpriced_turns"] == 0);

  // The table: a TOTAL line with the requests and a cost.
  auto table = Run(*env, {"sessions", "usage", "--by", "day"});
  REQUIRE(table.exit_code == 0);
  CHECK(table.out.find("DAY") != std::string::npos);
  CHECK(
      std::regex_search(table.out, std::regex(R"(\nTOTAL +\d+ +\d+ +\d+ +\d+ +\d+ +\$[0-9.]+\n)")));

  // A window before every turn sums nothing; bad arguments are one clear line.
  auto future = Run(*env, {"sessions", "usage", "--since", "0s", "--json"});
  REQUIRE(future.exit_code == 0);
  CHECK(Json::parse(future.out)["groups"].empty());
  auto bad = Run(*env, {"sessions", "usage", "--since", "7days"});
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("--since '7days' is not a duration") != std::string::npos);
  auto bad_by = Run(*env, {"sessions", "usage", "--by", "week"});
  CHECK(bad_by.exit_code == 2);
}

TEST_CASE("serve: the token rule, headers and JSON of every route, then the page in Chromium") {
  auto env = MakeEnv(kScript);
  const Sessions s = MakeSessions(*env);
  Viewer v = StartViewer(*env);

  SECTION("nothing without the token, from another Host, or by another method") {
    for (const std::string& path :
         {std::string("/"), std::string("/index.html"), std::string("/app.js"),
          std::string("/api/sessions"), "/" + v.token.substr(0, 31) + "/", "/" + v.token + "0/",
          "/" + std::string(32, '0') + "/", "/" + std::string(32, '0') + "/app.js",
          "/" + std::string(32, '0') + "/api/sessions",
          "/" + std::string(32, '0') + "/api/session/" + s.a}) {
      auto res = Get(v, path);
      REQUIRE(res);
      INFO(path << " -> " << res->status << " " << res->body);
      CHECK(res->status == 404);
      CHECK(res->body.find(s.a) == std::string::npos);
      CHECK(res->body.find("zebra") == std::string::npos);
      CheckSecurityHeaders(*res);
    }
    auto rebound = Get(v, "/" + v.token + "/api/sessions",
                       {{"Host", "attacker.example:" + std::to_string(v.port)}});
    REQUIRE(rebound);
    CHECK(rebound->status == 403);
    CHECK(rebound->body.find(s.a) == std::string::npos);
    httplib::Client client("127.0.0.1", v.port);
    for (const auto& res : {client.Post("/" + v.token + "/api/sessions", "{}", "application/json"),
                            client.Delete("/" + v.token + "/api/session/" + s.a),
                            client.Put("/" + v.token + "/", "x", "text/plain")}) {
      REQUIRE(res);
      CHECK(res->status == 405);
    }
    auto still = Run(*env, {"sessions", "list", "--all", "--json"});
    CHECK(still.out.find(s.a) != std::string::npos);  // nothing was removed
  }

  SECTION("every route answers, with the store's strings as data") {
    auto page = Get(v, "/" + v.token + "/");
    REQUIRE(page);
    CHECK(page->status == 200);
    CheckSecurityHeaders(*page);
    CHECK(page->body.find("<script src=\"app.js\"") != std::string::npos);
    CHECK(page->body.find("<script>") == std::string::npos);  // no inline script
    for (const char* asset : {"app.js", "style.css"}) {
      auto res = Get(v, "/" + v.token + "/" + asset);
      REQUIRE(res);
      CHECK(res->status == 200);
      CHECK(res->body.size() > 500);
      CheckSecurityHeaders(*res);
    }
    CHECK(Get(v, "/" + v.token + "/nothing.js")->status == 404);

    const Json list = GetJson(v, "api/sessions?limit=2");
    REQUIRE(list["sessions"].size() == 2);
    CHECK_FALSE(list["next_cursor"].get<std::string>().empty());
    const Json rest =
        GetJson(v, "api/sessions?limit=2&cursor=" + list["next_cursor"].get<std::string>());
    REQUIRE(rest["sessions"].size() == 1);
    CHECK(rest["next_cursor"] == "");
    CHECK(GetJson(v, "api/sessions?archived=1")["sessions"].empty());
    CHECK(GetJson(v, "api/sessions?cwd=/nowhere")["sessions"].empty());
    CHECK(Get(v, "/" + v.token + "/api/sessions?limit=0")->status == 400);
    CHECK(Get(v, "/" + v.token + "/api/sessions?cursor=garbage")->status == 400);

    const Json hits = GetJson(v, "api/search?q=zebra");
    REQUIRE_FALSE(hits["hits"].empty());
    bool highlighted = false;
    for (const auto& hit : hits["hits"]) {
      for (const auto& part : hit["parts"]) {
        if (part["hit"] == true) {
          CHECK(part["text"] == "zebra");
          highlighted = true;
        }
      }
    }
    CHECK(highlighted);
    CHECK(Get(v, "/" + v.token + "/api/search?q=%22unbalanced")->status == 400);

    const Json a = GetJson(v, "api/session/" + s.a);
    CHECK(a["session"]["title"] == kHostile);  // as data: the page sets it as text
    CHECK(a["forks"].size() == 1);
    CHECK(a["forks"][0]["id"] == s.b);
    CHECK(a["turns"].size() == 2);
    bool patch = false, markdown = false;
    for (const auto& item : a["items"]) {
      if (item["type"] == "call" && item["name"] == "apply_patch") patch = item["patch"] == true;
      if (item["type"] == "message" && item["role"] == "assistant" &&
          item["text"].get<std::string>().find("Done") != std::string::npos) {
        const std::string html = item["html"];
        markdown = html.find("<strong>Done</strong>") != std::string::npos;
        CHECK(html.find("<script>") == std::string::npos);
        CHECK(html.find("&lt;script&gt;alert(2)") != std::string::npos);
      }
    }
    CHECK(patch);
    CHECK(markdown);
    const Json c = GetJson(v, "api/session/" + s.c.substr(0, 13));  // a prefix resolves
    bool checkpoint = false;
    for (const auto& item : c["items"]) checkpoint = checkpoint || item["type"] == "checkpoint";
    CHECK(checkpoint);
    CHECK(Get(v, "/" + v.token + "/api/session/ffffffff-0000")->status == 404);

    const Json tree = GetJson(v, "api/tree/" + s.b);
    REQUIRE(tree["nodes"].size() == 2);
    CHECK(tree["nodes"][0]["id"] == s.a);
    CHECK(tree["nodes"][0]["depth"] == 0);
    CHECK(tree["nodes"][1]["id"] == s.b);
    CHECK(tree["nodes"][1]["depth"] == 1);
    CHECK(tree["current"] == s.b);
  }

  SECTION("the page in headless Chromium: list, search, session, tree, chart") {
    const std::string list = DumpDom(v.url + "#/");
    CHECK(Count(list, "data-session=\"") >= 3);
    CHECK(list.find("data-session=\"" + s.a + "\"") != std::string::npos);
    // The hostile title is text in the DOM, never an element.
    CHECK(list.find("&lt;script&gt;alert(1)&lt;/script&gt; list the zebra files") !=
          std::string::npos);
    CHECK(list.find("<script>alert(1)") == std::string::npos);
    CHECK(Count(list, "<script") == 1);  // app.js alone

    const std::string paged = DumpDom(v.url + "#/?limit=1");
    CHECK(Count(paged, "<tr data-id=") == 1);
    CHECK(paged.find("id=\"next-page\"") != std::string::npos);

    const std::string search = DumpDom(v.url + "#/search?q=zebra");
    CHECK(search.find("<mark>zebra</mark>") != std::string::npos);
    CHECK(search.find("data-session=\"" + s.a + "\"") != std::string::npos);

    const std::string session = DumpDom(v.url + "#/s/" + s.a);
    CHECK(session.find(
              "<h1 id=\"title\">&lt;script&gt;alert(1)&lt;/script&gt; list the zebra files") !=
          std::string::npos);
    CHECK(session.find("<strong>Done</strong>") != std::string::npos);
    CHECK(session.find("&lt;script&gt;alert(2)&lt;/script&gt;") != std::string::npos);
    CHECK(session.find("<details class=\"item call\"") != std::string::npos);
    CHECK(session.find("<span class=\"add\">+hi there</span>") != std::string::npos);
    // The shell's output is a unified diff: coloured as well.
    CHECK(session.find("<span class=\"add\">+new stripe</span>") != std::string::npos);
    CHECK(session.find("<span class=\"del\">-old stripe</span>") != std::string::npos);
    CHECK(session.find("data-fork=\"" + s.b + "\"") != std::string::npos);
    CHECK(session.find("id=\"usage-chart\"") != std::string::npos);
    CHECK(Count(session, "<rect class=\"output\"") == 2);             // one bar per turn
    CHECK(session.find("data-value=\"3500\"") != std::string::npos);  // turn 2's cached input
    CHECK(Count(session, "<script") == 1);

    const std::string fork = DumpDom(v.url + "#/s/" + s.b);
    CHECK(fork.find("id=\"forked-from\"") != std::string::npos);
    CHECK(fork.find("class=\"item user inherited\"") != std::string::npos);

    const std::string compacted = DumpDom(v.url + "#/s/" + s.c);
    CHECK(compacted.find("marker compaction") != std::string::npos);

    const std::string tree = DumpDom(v.url + "#/tree/" + s.b);
    CHECK(tree.find("<ul class=\"tree\" id=\"tree\">") != std::string::npos);
    CHECK(tree.find("<li class=\"current\" data-depth=\"1\"><a href=\"#/s/" + s.b) !=
          std::string::npos);
    CHECK(tree.find("data-depth=\"0\"><a href=\"#/s/" + s.a) != std::string::npos);
  }

  REQUIRE(v.process->Signal(SIGINT).ok());
  auto done = v.process->Wait(std::chrono::seconds(30));
  REQUIRE(done.ok());
  INFO("serve stderr: " << done->err);
  CHECK(done->exit_code == 0);
  CHECK(done->err.find("viewer stopped") != std::string::npos);
}

TEST_CASE("serve --open hands the URL to xdg-open, or says it is not installed") {
  auto env = MakeEnv(kScript);
  // The user's xdg-open lies outside every directory a sandboxed command may
  // write (not under /tmp: sandbox/host_path.h skips those PATH entries).
  if (std::filesystem::current_path().string().rfind("/tmp/", 0) == 0) {
    WARN("the test runs under /tmp, a writable root: no place for xdg-open; skipped");
    return;
  }
  TempDir bin("codex-xdg-", std::filesystem::current_path());
  const std::string seen = bin.File("seen-url");
  {
    std::ofstream script(bin.File("xdg-open"));
    script << "#!/bin/sh\nprintf '%s' \"$1\" > '" << seen << ".tmp' && mv '" << seen << ".tmp' '"
           << seen << "'\n";
  }
  std::filesystem::permissions(bin.File("xdg-open"), std::filesystem::perms::owner_all);
  ProcessOptions with = env->CodexCommand({"sessions", "serve", "--open"});
  with.env["PATH"] = bin.str() + ":/usr/bin:/bin";
  auto child = ChildProcess::Spawn(with);
  REQUIRE(child.ok());
  auto line = (*child)->ReadStdoutLine(std::chrono::seconds(30));
  REQUIRE(line.ok());
  const std::string url = line->substr(line->find("http://"));
  for (int i = 0; i < 200 && !std::filesystem::exists(seen); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::string opened = ReadFile(seen);
  CHECK(opened == url);
  REQUIRE((*child)->Signal(SIGINT).ok());
  auto done = (*child)->Wait(std::chrono::seconds(30));
  REQUIRE(done.ok());
  CHECK(done->exit_code == 0);

  TempDir empty;
  ProcessOptions without = env->CodexCommand({"sessions", "serve", "--open"});
  without.env["PATH"] = empty.str();
  auto plain = ChildProcess::Spawn(without);
  REQUIRE(plain.ok());
  auto printed = (*plain)->ReadStdoutLine(std::chrono::seconds(30));
  REQUIRE(printed.ok());
  CHECK(printed->find("http://127.0.0.1:") != std::string::npos);
  REQUIRE((*plain)->Signal(SIGTERM).ok());
  auto stopped = (*plain)->Wait(std::chrono::seconds(30));
  REQUIRE(stopped.ok());
  INFO("signal " << stopped->term_signal << " stderr: " << stopped->err);
  CHECK(stopped->exit_code == 0);
  CHECK(stopped->err.find("xdg-open is not installed; open the URL above in a browser") !=
        std::string::npos);
}

TEST_CASE("serve: a port already taken is one clear error") {
  auto env = MakeEnv(kScript);
  Viewer v = StartViewer(*env);
  auto second = Run(*env, {"sessions", "serve", "--port", std::to_string(v.port)});
  CHECK(second.exit_code != 0);
  CHECK(second.err.find("cannot listen on 127.0.0.1:" + std::to_string(v.port)) !=
        std::string::npos);
  REQUIRE(v.process->Signal(SIGTERM).ok());
  auto done = v.process->Wait(std::chrono::seconds(30));
  REQUIRE(done.ok());
  CHECK(done->exit_code == 0);
}

TEST_CASE("serve: Ctrl-C the moment the URL is printed still stops it") {
  auto env = MakeEnv(kScript);
  for (int i = 0; i < 5; ++i) {
    Viewer v = StartViewer(*env);
    REQUIRE(v.process->Signal(SIGINT).ok());
    auto done = v.process->Wait(std::chrono::seconds(30));
    REQUIRE(done.ok());
    INFO("run " << i << " signal " << done->term_signal << " stderr: " << done->err);
    CHECK(done->exit_code == 0);
    CHECK_FALSE(done->timed_out);
  }
}

}  // namespace codex::testing
