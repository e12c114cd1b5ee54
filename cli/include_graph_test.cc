// The include graph inside cli/ (docs/architecture.md, "The command line"),
// as tests/dependency_rule_test does for the modules: main.cc is the one
// registry of the commands, so a command's header (`*_cmd.h`) is included
// only by main.cc, its own .cc and its own test; main.cc includes every one of
// them (no command is registered behind its back); and no include inside cli/
// closes a cycle, which is what an arrow "back up" to a registry would be.
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

// "cli/x.h" -> the "cli/..." files it includes.
using Graph = std::map<std::string, std::vector<std::string>>;

const std::regex& CliIncludeRe() {
  static const std::regex re(R"re(^\s*#\s*include\s*"(cli/[^"]+)")re");
  return re;
}

Graph LoadCliGraph() {
  Graph graph;
  const fs::path source = fs::path(CODEX_SOURCE_DIR);
  for (const auto& entry : fs::recursive_directory_iterator(source / "cli")) {
    const auto ext = entry.path().extension();
    if (ext != ".h" && ext != ".cc") continue;
    const std::string file = entry.path().lexically_relative(source).generic_string();
    auto& edges = graph[file];
    std::ifstream in(entry.path());
    std::string line;
    while (std::getline(in, line)) {
      std::smatch m;
      if (std::regex_search(line, m, CliIncludeRe())) edges.push_back(m[1]);
    }
  }
  return graph;
}

std::string Stem(const std::string& file) { return fs::path(file).stem().string(); }

bool IsCommandHeader(const std::string& file) {
  const std::string name = fs::path(file).filename().string();
  return name.size() > 6 && name.ends_with("_cmd.h");
}

// Includes of a command header from anywhere but main.cc, the command's own
// .cc and its own tests; and command headers main.cc does not include.
std::vector<std::string> RegistryViolations(const Graph& graph) {
  std::vector<std::string> hits;
  const std::string main_file = "cli/main.cc";
  for (const auto& [file, edges] : graph) {
    for (const std::string& target : edges) {
      if (!IsCommandHeader(target) || file == main_file) continue;
      const std::string owner = Stem(target);  // "exec_cmd"
      const std::string stem = Stem(file);
      if (stem == owner || stem.starts_with(owner + "_test")) continue;
      hits.push_back(file + " includes " + target + " (only " + main_file + " registers commands)");
    }
  }
  const auto main_it = graph.find(main_file);
  for (const auto& [file, edges] : graph) {
    if (!IsCommandHeader(file)) continue;
    if (main_it == graph.end() ||
        std::find(main_it->second.begin(), main_it->second.end(), file) == main_it->second.end()) {
      hits.push_back(main_file + " does not include " + file + " (every command registers there)");
    }
  }
  return hits;
}

// One cycle of includes among the files of `graph`, as "a -> b -> a", or "".
std::string FindCycle(const Graph& graph) {
  std::map<std::string, int> state;  // 0 unseen, 1 on the stack, 2 done
  std::vector<std::string> stack;
  std::string cycle;
  std::function<bool(const std::string&)> visit = [&](const std::string& file) {
    state[file] = 1;
    stack.push_back(file);
    const auto it = graph.find(file);
    if (it != graph.end()) {
      for (const std::string& next : it->second) {
        if (state[next] == 1) {
          auto from = std::find(stack.begin(), stack.end(), next);
          for (auto s = from; s != stack.end(); ++s) cycle += *s + " -> ";
          cycle += next;
          return true;
        }
        if (state[next] == 0 && visit(next)) return true;
      }
    }
    stack.pop_back();
    state[file] = 2;
    return false;
  };
  for (const auto& [file, edges] : graph) {
    if (state[file] == 0 && visit(file)) return cycle;
  }
  return "";
}

}  // namespace

TEST_CASE("the cli include graph is read from the tree") {
  const Graph graph = LoadCliGraph();
  // A scanner that finds nothing would pass every rule below.
  REQUIRE(graph.count("cli/main.cc") == 1);
  REQUIRE(graph.count("cli/exec_cmd.h") == 1);
  const auto& main_edges = graph.at("cli/main.cc");
  CHECK(std::find(main_edges.begin(), main_edges.end(), "cli/exec_cmd.h") != main_edges.end());
}

TEST_CASE("only main.cc registers the commands") {
  const auto hits = RegistryViolations(LoadCliGraph());
  INFO(Catch::Detail::stringify(hits));
  CHECK(hits.empty());
}

TEST_CASE("no include inside cli/ points back up") {
  const std::string cycle = FindCycle(LoadCliGraph());
  INFO(cycle);
  CHECK(cycle.empty());
}

TEST_CASE("the shared headers stay below the commands") {
  // The shared options, the run flags and the exit codes are included by the
  // commands; they include no command, and the first two nothing of cli/ at all.
  const Graph graph = LoadCliGraph();
  for (const char* leaf : {"cli/global_options.h", "cli/run_flags.h"}) {
    INFO(leaf);
    REQUIRE(graph.count(leaf) == 1);
    CHECK(graph.at(leaf).empty());
  }
  for (const char* shared : {"cli/exit_codes.h", "cli/config_overrides.h", "cli/engine.h",
                             "cli/session_resolution.h", "cli/store_open.h"}) {
    INFO(shared);
    REQUIRE(graph.count(shared) == 1);
    for (const std::string& target : graph.at(shared)) CHECK_FALSE(IsCommandHeader(target));
  }
}

TEST_CASE("the rules detect a violation") {
  // Guards against rules that can never fail: fixture graphs that break them.
  std::smatch m;
  const std::string line = "#include \"cli/exec_cmd.h\"";
  REQUIRE(std::regex_search(line, m, CliIncludeRe()));
  CHECK(m[1] == "cli/exec_cmd.h");

  Graph graph = {
      {"cli/main.cc", {"cli/exec_cmd.h", "cli/sessions_cmd.h"}},
      {"cli/exec_cmd.h", {"cli/global_options.h"}},
      {"cli/exec_cmd.cc", {"cli/exec_cmd.h", "cli/engine.h"}},
      {"cli/exec_cmd_test.cc", {"cli/exec_cmd.h"}},
      {"cli/sessions_cmd.h", {"cli/global_options.h"}},
      {"cli/global_options.h", {}},
      {"cli/engine.h", {"cli/global_options.h"}},
  };
  CHECK(RegistryViolations(graph).empty());
  CHECK(FindCycle(graph).empty());

  Graph back_up = graph;
  back_up["cli/engine.h"].push_back("cli/sessions_cmd.h");
  CHECK(RegistryViolations(back_up).size() == 1);

  Graph unregistered = graph;
  unregistered["cli/mcp_cmd.h"] = {};
  CHECK(RegistryViolations(unregistered).size() == 1);

  Graph cycle = graph;
  cycle["cli/global_options.h"].push_back("cli/engine.h");
  CHECK(FindCycle(cycle) == "cli/engine.h -> cli/global_options.h -> cli/engine.h");
}
