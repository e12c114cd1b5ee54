// The dependency rule of docs/architecture.md: core/ never includes from
// storage/, compaction/, mcp/ or cli/; storage/, compaction/ and mcp/ do not
// know each other and never include cli/; sandbox/ includes nothing of ours
// but itself and base/; base/ (Status) includes nothing else of ours.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

// Every `#include "dir/..."` of the sources under `folder`, as "file: line".
std::vector<std::string> ForbiddenIncludes(const std::string& folder,
                                           const std::vector<std::string>& forbidden) {
  std::vector<std::string> hits;
  const fs::path root = fs::path(CODEX_SOURCE_DIR) / folder;
  const std::regex include_re(R"(^\s*#\s*include\s*"([a-z_]+)/)");
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    const auto ext = entry.path().extension();
    if (ext != ".h" && ext != ".cc") continue;
    std::ifstream in(entry.path());
    std::string line;
    while (std::getline(in, line)) {
      std::smatch m;
      if (!std::regex_search(line, m, include_re)) continue;
      for (const auto& f : forbidden) {
        if (m[1] == f) hits.push_back(entry.path().string() + ": " + line);
      }
    }
  }
  return hits;
}

}  // namespace

TEST_CASE("core depends on nothing above it") {
  auto hits = ForbiddenIncludes("core", {"storage", "compaction", "mcp", "cli", "tests"});
  INFO(Catch::Detail::stringify(hits));
  CHECK(hits.empty());
}

TEST_CASE("storage and compaction do not know each other or the cli") {
  auto storage = ForbiddenIncludes("storage", {"compaction", "mcp", "cli", "tests"});
  INFO(Catch::Detail::stringify(storage));
  CHECK(storage.empty());
  auto compaction = ForbiddenIncludes("compaction", {"storage", "mcp", "cli", "tests"});
  INFO(Catch::Detail::stringify(compaction));
  CHECK(compaction.empty());
}

TEST_CASE("mcp reaches only core and sandbox") {
  auto hits = ForbiddenIncludes("mcp", {"storage", "compaction", "cli", "tests"});
  INFO(Catch::Detail::stringify(hits));
  CHECK(hits.empty());
}

TEST_CASE("sandbox includes only itself and base") {
  auto hits =
      ForbiddenIncludes("sandbox", {"core", "storage", "compaction", "mcp", "cli", "tests"});
  INFO(Catch::Detail::stringify(hits));
  CHECK(hits.empty());
}

TEST_CASE("base includes nothing else of ours") {
  auto hits = ForbiddenIncludes(
      "base", {"sandbox", "core", "storage", "compaction", "mcp", "cli", "tests"});
  INFO(Catch::Detail::stringify(hits));
  CHECK(hits.empty());
}

TEST_CASE("the rule detects a violation") {
  // Guard against a scanner that can never fail: a fixture line must match.
  const std::regex include_re(R"(^\s*#\s*include\s*"([a-z_]+)/)");
  std::smatch m;
  const std::string line = "#include \"storage/sqlite_session_store.h\"";
  REQUIRE(std::regex_search(line, m, include_re));
  CHECK(m[1] == "storage");
}
