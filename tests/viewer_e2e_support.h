// Shared by the session viewer's end-to-end tests (viewer_e2e_test on
// SQLite, viewer_postgres_e2e_test on the private PostgreSQL server): the
// sessions they make with real `codex exec` runs, starting `codex sessions
// serve` and reading its URL, HTTP and headless-Chromium helpers.
// Header-only; include only from Catch2 tests.
#pragma once

#include <httplib.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <regex>
#include <string>

#include "testing/skip.h"
#include "testing/temp_dir.h"
#include "tests/e2e_checks.h"
#include "tests/e2e_support.h"

namespace codex::testing::viewer {

inline constexpr char kHostile[] = "<script>alert(1)</script> list the zebra files";

// Two sessions and a fork: A (turns 1 and 2), B forked from A after turn 1
// (one turn of its own), C (one turn, then compacted). Every response states
// its usage, so the sums are known.
inline constexpr char kScript[] = R"({"responses": [
  {"output": [{"reasoning": "Looking around"}, {"shell": ["printf", "zebra stripes\ndiff --git a/z.txt b/z.txt\n--- a/z.txt\n+++ b/z.txt\n@@ -1 +1 @@\n-old stripe\n+new stripe\n"]}],
   "usage": {"input_tokens": 1000, "cached_tokens": 400, "output_tokens": 50, "reasoning_tokens": 20}},
  {"message": "**Done**: listed `zebra`.\n\n<script>alert(2)</script>",
   "usage": {"input_tokens": 1300, "cached_tokens": 1000, "output_tokens": 30, "reasoning_tokens": 0}},
  {"output": [{"custom_tool_call": "apply_patch",
               "input": "*** Begin Patch\n*** Add File: hello.txt\n+hi there\n*** End Patch\n"}],
   "usage": {"input_tokens": 2000, "cached_tokens": 1500, "output_tokens": 40, "reasoning_tokens": 10}},
  {"message": "patched",
   "usage": {"input_tokens": 2100, "cached_tokens": 2000, "output_tokens": 5, "reasoning_tokens": 0}},
  {"message": "branch answer",
   "usage": {"input_tokens": 700, "cached_tokens": 600, "output_tokens": 7, "reasoning_tokens": 3}},
  {"message": "third answer",
   "usage": {"input_tokens": 2500, "cached_tokens": 0, "output_tokens": 9, "reasoning_tokens": 0}},
  {"message": "SUMMARY of the third session",
   "usage": {"input_tokens": 600, "cached_tokens": 0, "output_tokens": 11, "reasoning_tokens": 0}}
]})";

struct Sessions {
  std::string a, b, c;
};

inline Sessions MakeSessions(CodexTestEnv& env) {
  Sessions s;
  auto first = e2e::Run(env, {"exec", kHostile});
  REQUIRE(first.exit_code == 0);
  s.a = e2e::SessionIdFromBanner(first.err);
  REQUIRE(s.a.size() == 36);
  auto second = e2e::Run(env, {"exec", "resume", s.a, "now add hello.txt"});
  REQUIRE(second.exit_code == 0);
  auto fork = e2e::Run(env, {"fork", s.a, "--at-turn", "1"});
  REQUIRE(fork.exit_code == 0);
  s.b = fork.out.substr(0, fork.out.find('\n'));
  REQUIRE(s.b.size() == 36);
  auto branch = e2e::Run(env, {"exec", "resume", s.b, "take the other branch"});
  REQUIRE(branch.exit_code == 0);
  auto third = e2e::Run(env, {"exec", "a third question"});
  REQUIRE(third.exit_code == 0);
  s.c = e2e::SessionIdFromBanner(third.err);
  // Between half the limit and the limit: `codex compact` compacts it.
  // (The sub-agent tools off: their definitions alone are ~900 of the 5000.)
  auto compact = e2e::Run(env, {"-c", "model_auto_compact_token_limit=5000", "--disable",
                                "multi_agent", "compact", s.c});
  INFO("compact: " << compact.out << compact.err);
  REQUIRE(compact.exit_code == 0);
  return s;
}

// The viewer process and where it listens.
struct Viewer {
  std::unique_ptr<ChildProcess> process;
  int port = 0;
  std::string token;
  std::string url;  // http://127.0.0.1:PORT/TOKEN/
};

inline Viewer StartViewer(CodexTestEnv& env) {
  auto child = ChildProcess::Spawn(env.CodexCommand({"sessions", "serve"}));
  REQUIRE(child.ok());
  Viewer v;
  v.process = std::move(*child);
  auto line = v.process->ReadStdoutLine(std::chrono::seconds(30));
  REQUIRE(line.ok());
  std::smatch m;
  const std::regex re(R"(^codex sessions viewer: (http://127\.0\.0\.1:(\d+)/([0-9a-f]{32})/)$)");
  INFO("line: " << *line);
  REQUIRE(std::regex_match(*line, m, re));
  v.url = m[1];
  v.port = std::stoi(m[2]);
  v.token = m[3];
  return v;
}

inline httplib::Result Get(const Viewer& v, const std::string& path,
                           httplib::Headers headers = {}) {
  httplib::Client client("127.0.0.1", v.port);
  client.set_read_timeout(30, 0);
  return client.Get(path, headers);
}

inline void CheckSecurityHeaders(const httplib::Response& res) {
  const std::string csp = res.get_header_value("Content-Security-Policy");
  CHECK(csp.find("default-src 'none'") != std::string::npos);
  CHECK(csp.find("script-src 'self'") != std::string::npos);
  CHECK(csp.find("frame-ancestors 'none'") != std::string::npos);
  CHECK(csp.find("unsafe-inline") == std::string::npos);
  CHECK(res.get_header_value("X-Content-Type-Options") == "nosniff");
  CHECK(res.get_header_value("Referrer-Policy") == "no-referrer");
}

inline Json GetJson(const Viewer& v, const std::string& route) {
  auto res = Get(v, "/" + v.token + "/" + route);
  REQUIRE(res);
  INFO(route << " -> " << res->status << " " << res->body.substr(0, 500));
  REQUIRE(res->status == 200);
  CheckSecurityHeaders(*res);
  CHECK(res->get_header_value("Content-Type").rfind("application/json", 0) == 0);
  return Json::parse(res->body);
}

// Headless Chromium, or "" (then: a failure under CI=true, else a skip).
inline std::string ChromiumPath() {
  for (const char* dir : {"/usr/bin", "/usr/local/bin", "/snap/bin"}) {
    for (const char* name : {"chromium", "chromium-browser"}) {
      const std::filesystem::path p = std::filesystem::path(dir) / name;
      if (::access(p.c_str(), X_OK) == 0) return p.string();
    }
  }
  return "";
}

// The DOM of `url` after the page script has rendered it.
inline std::string DumpDom(const std::string& url) {
  const std::string chromium = ChromiumPath();
  if (chromium.empty()) {
    const char* ci = std::getenv("CI");
    if (ci != nullptr && std::string(ci) == "true") {
      FAIL("chromium is not installed (scripts/install-deps.sh installs it); CI must run this");
    }
    SkipTest("chromium is not installed; apt-get install chromium to drive the viewer page");
  }
  TempDir profile;
  ProcessOptions options;
  options.argv = {chromium,
                  "--headless",
                  "--no-sandbox",
                  "--disable-gpu",
                  "--disable-background-networking",
                  "--disable-component-update",
                  "--disable-sync",
                  "--no-first-run",
                  "--user-data-dir=" + profile.path().string(),
                  "--virtual-time-budget=10000",
                  "--dump-dom",
                  url};
  options.timeout = std::chrono::seconds(90);
  auto run = RunProcess(options);
  REQUIRE(run.ok());
  INFO("chromium stderr: " << run->err.substr(0, 2000));
  REQUIRE(run->exit_code == 0);
  INFO("dom: " << run->out.substr(0, 4000));
  REQUIRE(run->out.find("data-ready=\"1\"") != std::string::npos);
  return run->out;
}

inline size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
  return n;
}

}  // namespace codex::testing::viewer
