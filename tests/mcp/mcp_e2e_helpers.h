// Helpers shared by the MCP end-to-end tests (tests/mcp_e2e_test.cc,
// tests/mcp_npm_e2e_test.cc): config tables for mcp-test-server, running
// codex, reading what the model was sent. Header-only; Catch2 tests only.
#pragma once

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tests/e2e_checks.h"
#include "tests/e2e_support.h"

namespace codex::testing::mcp_e2e {

namespace fs = std::filesystem;
using e2e::JsonLines;
using e2e::OutputFor;

inline std::string Quoted(const std::string& s) { return Json(s).dump(); }

inline std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// A [mcp_servers.NAME] table running mcp-test-server with `args`.
inline std::string TestServer(const std::string& name, const std::vector<std::string>& args,
                              const std::string& extra = "") {
  std::string a = "[";
  for (size_t i = 0; i < args.size(); ++i) a += (i ? ", " : "") + Quoted(args[i]);
  a += "]";
  return "[mcp_servers." + name + "]\ncommand = " + Quoted(MCP_TEST_SERVER) + "\nargs = " + a +
         "\n" + extra + "\n";
}

inline std::unique_ptr<CodexTestEnv> MakeEnv(std::string_view script, const std::string& config) {
  CodexTestEnvOptions options;
  options.extra_config = config;
  auto env = CodexTestEnv::Create(script, options);
  REQUIRE(env.ok());
  return std::move(*env);
}

inline ProcessResult Run(CodexTestEnv& env, std::vector<std::string> args,
                         std::map<std::string, std::string> extra_env = {}) {
  ProcessOptions p = env.CodexCommand(std::move(args));
  for (auto& [k, v] : extra_env) p.env[k] = v;
  auto run = RunProcess(p);
  REQUIRE(run.ok());
  INFO("stdout: " << run->out << "\nstderr: " << run->err);
  REQUIRE_FALSE(run->timed_out);
  return *run;
}

inline std::string ModelOutput(CodexTestEnv& env, const std::string& call_id) {
  auto requests = env.server().requests_to("/responses");
  REQUIRE_FALSE(requests.empty());
  return OutputFor(requests.back().InputItems(), call_id);
}

inline std::vector<std::string> ToolNames(const RecordedRequest& r) {
  std::vector<std::string> names;
  for (const auto& t : r.body.value("tools", Json::array())) names.push_back(t.value("name", ""));
  return names;
}

inline std::vector<Json> CompletedItems(const std::string& out, const std::string& type) {
  std::vector<Json> items;
  for (const auto& e : JsonLines(out)) {
    if (e.is_object() && e.value("type", "") == "item.completed" &&
        e["item"].value("type", "") == type) {
      items.push_back(e["item"]);
    }
  }
  return items;
}

inline int CountLines(const std::string& text, const std::string& needle) {
  int n = 0;
  size_t pos = 0;
  while ((pos = text.find(needle, pos)) != std::string::npos) {
    ++n;
    pos += needle.size();
  }
  return n;
}

}  // namespace codex::testing::mcp_e2e
