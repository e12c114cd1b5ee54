// The dependency rule of docs/architecture.md: core/ never includes from
// storage/, compaction/, mcp/ or cli/; storage/, compaction/ and mcp/ do not
// know each other and never include cli/; sandbox/ includes nothing of ours
// but itself and base/; base/ (Status) includes nothing else of ours.
// testing/ (test support) builds on core and below; no shipped source (a
// file whose name does not say "test") includes testing/.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

enum class Files { kAll, kShipped };

// True for test code: tests (`*_test.cc`) and test support such as
// storage/store_test_support.* and storage/pg_test_server.*.
bool IsTestCode(const fs::path& file) {
  return file.filename().string().find("test") != std::string::npos;
}

// Every `#include "dir/..."` of the sources under `folder` (with kShipped,
// only of the files that are not test code), as "file: line".
std::vector<std::string> ForbiddenIncludes(const std::string& folder,
                                           const std::vector<std::string>& forbidden,
                                           Files files = Files::kAll) {
  std::vector<std::string> hits;
  const fs::path root = fs::path(CODEX_SOURCE_DIR) / folder;
  const std::regex include_re(R"(^\s*#\s*include\s*"([a-z_]+)/)");
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    const auto ext = entry.path().extension();
    if (ext != ".h" && ext != ".cc") continue;
    if (files == Files::kShipped && IsTestCode(entry.path())) continue;
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

TEST_CASE("testing builds on core and below, and nothing shipped includes it") {
  auto testing =
      ForbiddenIncludes("testing", {"storage", "compaction", "mcp", "cli", "tests", "bench"});
  INFO(Catch::Detail::stringify(testing));
  CHECK(testing.empty());
  for (const char* folder : {"base", "sandbox", "core", "storage", "compaction", "mcp", "cli"}) {
    auto shipped = ForbiddenIncludes(folder, {"testing"}, Files::kShipped);
    INFO(folder << ": " << Catch::Detail::stringify(shipped));
    CHECK(shipped.empty());
  }
}

TEST_CASE("the rule detects a violation") {
  // Guard against a scanner that can never fail: a fixture line must match.
  const std::regex include_re(R"(^\s*#\s*include\s*"([a-z_]+)/)");
  std::smatch m;
  const std::string line = "#include \"storage/sqlite_session_store.h\"";
  REQUIRE(std::regex_search(line, m, include_re));
  CHECK(m[1] == "storage");
  // Test code is told apart from shipped code by its name.
  CHECK(IsTestCode("core/conversation_test.cc"));
  CHECK(IsTestCode("storage/store_test_support.h"));
  CHECK_FALSE(IsTestCode("core/conversation.cc"));
}
