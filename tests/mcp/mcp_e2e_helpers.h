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

#include "testing/files.h"
#include "tests/e2e_checks.h"
#include "tests/e2e_support.h"

namespace codex::testing::mcp_e2e {

namespace fs = std::filesystem;
using e2e::CompletedItems;
using e2e::JsonLines;
using e2e::MakeEnv;
using e2e::ModelOutput;
using e2e::OutputFor;

inline std::string Quoted(const std::string& s) { return Json(s).dump(); }

// A [mcp_servers.NAME] table running mcp-test-server with `args`.
inline std::string TestServer(const std::string& name, const std::vector<std::string>& args,
                              const std::string& extra = "") {
  std::string a = "[";
  for (size_t i = 0; i < args.size(); ++i) a += (i ? ", " : "") + Quoted(args[i]);
  a += "]";
  return "[mcp_servers." + name + "]\ncommand = " + Quoted(MCP_TEST_SERVER) + "\nargs = " + a +
         "\n" + extra + "\n";
}

inline ProcessResult Run(CodexTestEnv& env, std::vector<std::string> args,
                         std::map<std::string, std::string> extra_env = {}) {
  ProcessOptions p = env.CodexCommand(std::move(args));
  for (auto& [k, v] : extra_env) p.env[k] = v;
  return e2e::RunChecked(p);
}

// The tool names of a request; a namespace's tools as NAMESPACE__TOOL (so
// Codex's mcp__SERVER namespace holding TOOL reads mcp__SERVER__TOOL).
inline std::vector<std::string> ToolNames(const RecordedRequest& r) {
  std::vector<std::string> names;
  for (const auto& t : r.body.value("tools", Json::array())) {
    if (t.value("type", "") == "namespace") {
      for (const auto& f : t.value("tools", Json::array())) {
        names.push_back(t.value("name", "") + "__" + f.value("name", ""));
      }
    } else {
      names.push_back(t.value("name", ""));
    }
  }
  return names;
}

// The text of an MCP result as the model got it, without Codex's
// "Wall time: S seconds\nOutput:" header: a structured result's JSON, or the
// content blocks' texts joined by "\n" (an image as "<image>"). A non-result
// output (an error) is returned as it is.
inline std::string McpResultText(const std::string& output) {
  static const std::string kWall = "Wall time: ";
  Json j = Json::parse(output, nullptr, false);
  if (j.is_array() && !j.empty() && j[0].value("text", "").rfind(kWall, 0) == 0) {
    std::string text;
    for (size_t i = 1; i < j.size(); ++i) {
      if (i > 1) text += "\n";
      text += j[i].value("type", "") == "input_image" ? "<image>" : j[i].value("text", "");
    }
    return text;
  }
  if (output.rfind(kWall, 0) == 0) {
    const size_t nl = output.find("Output:\n");
    return nl == std::string::npos ? "" : output.substr(nl + 8);
  }
  return output;
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
