// The dependency rule of docs/architecture.md, read from the build's own
// targets (<build>/codex_targets.txt, written at configure time by
// cmake/BuildSpeed.cmake: each target, its sources and the targets it links):
//  - a file may include a header of ours only when its target links (directly
//    or through what it links) the target that owns the header (the header's
//    .cc twin, else the library with most sources in its folder);
//  - the layers: core/ never includes from storage/, compaction/, mcp/ or
//    cli/; storage/, compaction/ and mcp/ do not know each other and never
//    include cli/; sandbox/ includes nothing of ours but itself and base/;
//    base/ includes nothing else of ours;
//  - codex_testing builds on core and below; no shipped program (codex and
//    the two sandbox programs) links a target of testing/ or tests/.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

struct TargetMap {
  std::map<std::string, std::string> dir;                   // target -> its CMakeLists folder
  std::map<std::string, std::vector<std::string>> sources;  // target -> its sources
  std::map<std::string, std::vector<std::string>> links;    // target -> the targets it links
};

TargetMap ParseTargetMap(std::istream& in) {
  TargetMap map;
  std::string line;
  std::string current;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string kind, name, folder;
    words >> kind >> name;
    if (kind == "target") {
      words >> folder;
      current = name;
      map.dir[current] = folder;
      map.sources[current];
      map.links[current];
    } else if (kind == "source" && !current.empty()) {
      map.sources[current].push_back(name);
    } else if (kind == "link" && !current.empty()) {
      map.links[current].push_back(name);
    }
  }
  return map;
}

const TargetMap& BuildTargets() {
  static const TargetMap map = [] {
    std::ifstream in(CODEX_TARGETS_FILE);
    REQUIRE(in.good());
    return ParseTargetMap(in);
  }();
  return map;
}

// `target` and every target it links, transitively.
std::set<std::string> Closure(const TargetMap& map, const std::string& target) {
  std::set<std::string> seen;
  std::vector<std::string> todo = {target};
  while (!todo.empty()) {
    std::string t = todo.back();
    todo.pop_back();
    if (!seen.insert(t).second) continue;
    auto it = map.links.find(t);
    if (it != map.links.end()) todo.insert(todo.end(), it->second.begin(), it->second.end());
  }
  return seen;
}

// The folder of a source path ("core/item.cc" -> "core").
std::string Folder(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}

// The targets owning each header of `headers`: the targets compiling its
// .cc twin; for a header without one, the library (a target something
// links) that compiles every source in the header's folder, if there is
// one. A header owned by no target is not checked.
std::map<std::string, std::set<std::string>> HeaderOwners(const TargetMap& map,
                                                          const std::vector<std::string>& headers) {
  std::set<std::string> libraries;
  for (const auto& [t, links] : map.links) libraries.insert(links.begin(), links.end());
  std::map<std::string, std::set<std::string>> twin;
  std::map<std::string, std::set<std::string>> per_folder;  // folder -> targets with sources there
  for (const auto& [t, sources] : map.sources) {
    for (const std::string& s : sources) {
      if (!s.ends_with(".cc")) continue;
      twin[s.substr(0, s.size() - 3) + ".h"].insert(t);
      per_folder[Folder(s)].insert(t);
    }
  }
  std::map<std::string, std::set<std::string>> owners;
  for (const std::string& h : headers) {
    if (auto it = twin.find(h); it != twin.end()) {
      owners[h] = it->second;
      continue;
    }
    // Its .cc exists but no target of this configuration compiles it (a bench
    // with CODEX_BUILD_BENCH=OFF): its owner is not known here, not the folder's.
    const std::string cc = h.substr(0, h.size() - 2) + ".cc";
    if (std::filesystem::exists(std::filesystem::path(CODEX_SOURCE_DIR) / cc)) continue;
    auto folder = per_folder.find(Folder(h));
    if (folder == per_folder.end()) continue;
    std::set<std::string> libs;
    for (const std::string& t : folder->second) {
      if (libraries.count(t) > 0) libs.insert(t);
    }
    // Test binaries may sit beside a library (core/*_test.cc); another
    // library or program compiling files there makes the folder ambiguous.
    bool sole = libs.size() == 1;
    for (const std::string& t : folder->second) {
      if (libraries.count(t) == 0 && !t.ends_with("_test") && sole) sole = false;
    }
    if (sole) owners[h] = libs;
  }
  return owners;
}

// The `#include "..."` paths of `text`.
std::vector<std::string> IncludesOf(std::istream& text) {
  static const std::regex include_re(R"(^\s*#\s*include\s*"([^"]+)\")");
  std::vector<std::string> out;
  std::string line;
  std::smatch m;
  while (std::getline(text, line)) {
    if (std::regex_search(line, m, include_re)) out.push_back(m[1]);
  }
  return out;
}

// Every include of a file of a target (its sources, and the headers it
// owns) that names a header none of whose owners the target links, as
// "file (target) includes header (owner)". `read` gives a file's includes.
template <typename Read>
std::vector<std::string> Violations(const TargetMap& map,
                                    const std::map<std::string, std::set<std::string>>& owners,
                                    Read read) {
  std::map<std::string, std::set<std::string>> files;  // target -> its files
  for (const auto& [t, sources] : map.sources) files[t].insert(sources.begin(), sources.end());
  for (const auto& [h, ts] : owners) {
    for (const std::string& t : ts) files[t].insert(h);
  }
  std::vector<std::string> out;
  for (const auto& [t, paths] : files) {
    const std::set<std::string> allowed = Closure(map, t);
    for (const std::string& path : paths) {
      for (const std::string& inc : read(path)) {
        auto owner = owners.find(inc);
        if (owner == owners.end()) continue;
        bool linked = false;
        for (const std::string& o : owner->second) linked = linked || allowed.count(o) > 0;
        if (!linked) {
          out.push_back(path + " (" + t + ") includes " + inc + " (" + *owner->second.begin() +
                        ")");
        }
      }
    }
  }
  return out;
}

std::vector<std::string> ReadIncludes(const std::string& path) {
  std::ifstream in(fs::path(CODEX_SOURCE_DIR) / path);
  return IncludesOf(in);
}

// Every header of ours under the source root (build trees left out).
std::vector<std::string> OurHeaders() {
  std::vector<std::string> out;
  const fs::path root(CODEX_SOURCE_DIR);
  for (const char* folder : {"base", "sandbox", "core", "storage", "compaction", "mcp", "cli",
                             "testing", "tests", "bench", "fuzz"}) {
    for (const auto& e : fs::recursive_directory_iterator(root / folder)) {
      if (e.path().extension() == ".h") {
        out.push_back(e.path().lexically_relative(root).generic_string());
      }
    }
  }
  return out;
}

// The includes, by file, of every file under `folder` that name a header in
// one of the `forbidden` folders, as "file: header".
std::vector<std::string> ForbiddenIncludes(const std::string& folder,
                                           const std::vector<std::string>& forbidden) {
  std::vector<std::string> hits;
  const fs::path root(CODEX_SOURCE_DIR);
  for (const auto& e : fs::recursive_directory_iterator(root / folder)) {
    const auto ext = e.path().extension();
    if (ext != ".h" && ext != ".cc") continue;
    const std::string path = e.path().lexically_relative(root).generic_string();
    for (const std::string& inc : ReadIncludes(path)) {
      for (const std::string& f : forbidden) {
        if (inc.starts_with(f + "/")) hits.push_back(path + ": " + inc);
      }
    }
  }
  return hits;
}

}  // namespace

TEST_CASE("every include of ours is of a target its target links") {
  const TargetMap& map = BuildTargets();
  REQUIRE(map.sources.count("codex_core") == 1);
  const auto owners = HeaderOwners(map, OurHeaders());
  // The rule must see the tree: most headers have an owner.
  CHECK(owners.size() > 150);
  CHECK(owners.at("core/item.h") == std::set<std::string>{"codex_core"});
  CHECK(owners.at("base/clock.h") == std::set<std::string>{"codex_base"});  // header only
  CHECK(owners.at("testing/pg_test_server.h") == std::set<std::string>{"codex_storage_testing"});
  const auto hits = Violations(map, owners, ReadIncludes);
  INFO(Catch::Detail::stringify(hits));
  CHECK(hits.empty());
}

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
      "base", {"sandbox", "core", "storage", "compaction", "mcp", "cli", "tests", "testing"});
  INFO(Catch::Detail::stringify(hits));
  CHECK(hits.empty());
}

TEST_CASE("codex_testing builds on core and below; no shipped program links test support") {
  const TargetMap& map = BuildTargets();
  for (const std::string& t : Closure(map, "codex_testing")) {
    INFO(t);
    CHECK(t != "codex_storage");
    CHECK(t != "codex_compaction");
    CHECK(t != "codex_mcp");
    CHECK(t != "codex");
  }
  for (const char* program : {"codex", "codex-sandbox-helper", "codex-sandbox-server"}) {
    REQUIRE(map.dir.count(program) == 1);
    for (const std::string& t : Closure(map, program)) {
      const auto dir = map.dir.find(t);
      if (dir == map.dir.end()) continue;  // a third-party target
      INFO(program << " links " << t << " (" << dir->second << ")");
      CHECK_FALSE(dir->second.starts_with("testing"));
      CHECK_FALSE(dir->second.starts_with("tests"));
    }
  }
}

TEST_CASE("the rule detects a violation") {
  // A core file including a storage header, and a shipped program linking
  // test support: both must be reported by the same functions the real
  // checks use, so the checks above cannot pass by seeing nothing.
  std::istringstream fixture(
      "target codex_core core\nsource core/a.cc\n"
      "target codex_storage storage\nsource storage/b.cc\nlink codex_core\n"
      "target codex_testing testing\nsource testing/t.cc\nlink codex_core\n"
      "target codex cli\nsource cli/main.cc\nlink codex_storage\nlink codex_testing\n");
  const TargetMap map = ParseTargetMap(fixture);
  const auto owners = HeaderOwners(map, {"core/a.h", "storage/b.h", "storage/only_header.h"});
  CHECK(owners.at("storage/b.h") == std::set<std::string>{"codex_storage"});
  CHECK(owners.at("storage/only_header.h") == std::set<std::string>{"codex_storage"});
  const std::map<std::string, std::vector<std::string>> includes = {
      {"core/a.cc", {"core/a.h", "storage/only_header.h"}},
      {"storage/b.cc", {"core/a.h", "storage/b.h"}},
      {"cli/main.cc", {"storage/b.h", "core/a.h"}},
  };
  const auto hits = Violations(map, owners, [&](const std::string& path) {
    auto it = includes.find(path);
    return it == includes.end() ? std::vector<std::string>() : it->second;
  });
  REQUIRE(hits.size() == 1);
  CHECK(hits[0] == "core/a.cc (codex_core) includes storage/only_header.h (codex_storage)");
  CHECK(Closure(map, "codex").count("codex_testing") == 1);
  std::istringstream text("#include \"storage/b.h\"\n  #  include \"core/a.h\"\n#include <x>\n");
  CHECK(IncludesOf(text) == std::vector<std::string>{"storage/b.h", "core/a.h"});
}
