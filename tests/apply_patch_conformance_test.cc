// Conformance of `codex apply-patch`, run as a real process with its cwd in a
// fresh temporary directory:
//  - every scenario in tests/data/conformance/apply_patch/scenarios
//    (input/ copied in, patch.txt passed as the single argument, then the
//    whole tree, directories included, compared byte for byte with expected/);
//  - every case of cli_expectations.json (exit code, exact stdout and stderr,
//    resulting files);
//  - the command-line contract itself (stdin, usage errors).
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "testing/files.h"
#include "testing/temp_dir.h"
#include "testing/test_data.h"
#include "tests/e2e_support.h"

namespace {

namespace fs = std::filesystem;

fs::path DataDir() { return codex::testing::TestData("conformance/apply_patch"); }

using codex::testing::ReadFile;
using codex::testing::TempDir;
using codex::testing::WriteFile;

struct RunResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Runs `codex <args...>` with `cwd` as its working directory, through the
// one process spawner of the tests (tests/e2e_support.h).
RunResult RunCodex(const std::vector<std::string>& args, const fs::path& cwd,
                   const std::optional<std::string>& stdin_text = std::nullopt) {
  codex::testing::ProcessOptions p;
  p.argv = {CODEX_BINARY};
  p.argv.insert(p.argv.end(), args.begin(), args.end());
  p.cwd = cwd;
  p.stdin_text = stdin_text;
  auto run = codex::testing::RunProcess(p);
  INFO(run.status().ToString());
  REQUIRE(run.ok());
  REQUIRE_FALSE(run->timed_out);
  return RunResult{run->exit_code, run->out, run->err};
}

// Relative path -> file bytes, or nullopt for a directory.
using Tree = std::map<std::string, std::optional<std::string>>;

Tree Snapshot(const fs::path& root) {
  Tree tree;
  if (!fs::exists(root)) return tree;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    std::string rel = fs::relative(entry.path(), root).generic_string();
    if (entry.is_directory()) {
      tree[rel] = std::nullopt;
    } else if (entry.is_regular_file()) {
      tree[rel] = ReadFile(entry.path());
    } else {
      tree[rel] = "<not a regular file or directory>";
    }
  }
  return tree;
}

// Copies the contents (not the modes of the checked-out data).
void CopyTree(const fs::path& from, const fs::path& to) {
  for (const auto& [rel, content] : Snapshot(from)) {
    if (content) {
      WriteFile(to / rel, *content);
    } else {
      fs::create_directories(to / rel);
    }
  }
}

std::string Describe(const Tree& tree) {
  std::string out;
  for (const auto& [rel, content] : tree) {
    out += rel + (content ? " = " + nlohmann::json(*content).dump() : "/") + "\n";
  }
  return out;
}

std::string ReplaceAll(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) {
    s.replace(at, from.size(), to);
  }
  return s;
}

const char kAddPatch[] = "*** Begin Patch\n*** Add File: hello.txt\n+Hello\n*** End Patch\n";

}  // namespace

// ---------------------------------------------------------------------------
// The command-line contract (needs no recorded data)

TEST_CASE("codex apply-patch reads the patch from stdin when no argument is given") {
  TempDir dir;
  RunResult r = RunCodex({"apply-patch"}, dir.path(), std::string(kAddPatch));
  CHECK(r.exit_code == 0);
  CHECK(r.out == "Success. Updated the following files:\nA hello.txt\n");
  CHECK(r.err.empty());
  CHECK(ReadFile(dir.path() / "hello.txt") == "Hello\n");
}

TEST_CASE("codex apply-patch: empty stdin prints usage and exits 2") {
  TempDir dir;
  RunResult r = RunCodex({"apply-patch"}, dir.path(), std::string());
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(r.err.starts_with("Usage: codex apply-patch 'PATCH'\n"));
}

TEST_CASE("codex apply-patch: more than one argument exits 2 and changes nothing") {
  TempDir dir;
  RunResult r = RunCodex({"apply-patch", kAddPatch, "extra"}, dir.path());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("exactly one argument") != std::string::npos);
  CHECK(Snapshot(dir.path()).empty());
}

TEST_CASE("codex apply-patch passes the argument through verbatim") {
  TempDir dir;
  // After "--".
  RunResult dashdash = RunCodex({"apply-patch", "--", kAddPatch}, dir.path());
  CHECK(dashdash.exit_code == 0);
  CHECK(ReadFile(dir.path() / "hello.txt") == "Hello\n");
  // Text that looks like an option is a (bad) patch, not an option.
  RunResult dash = RunCodex({"apply-patch", "--not-an-option"}, dir.path());
  CHECK(dash.exit_code == 1);
  CHECK(dash.err == "Invalid patch: The first line of the patch must be '*** Begin Patch'\n");
  // CRLF line endings and a heredoc wrapper are accepted.
  RunResult crlf = RunCodex(
      {"apply-patch",
       "<<'EOF'\r\n*** Begin Patch\r\n*** Add File: w.txt\r\n+w\r\n*** End Patch\r\nEOF\r\n"},
      dir.path());
  CHECK(crlf.exit_code == 0);
  CHECK(ReadFile(dir.path() / "w.txt") == "w\n");
}

TEST_CASE("codex apply-patch refuses paths outside the working directory") {
  TempDir outer;
  fs::create_directory(outer.path() / "ws");
  RunResult r =
      RunCodex({"apply-patch", "*** Begin Patch\n*** Add File: ../escape.txt\n+x\n*** End Patch"},
               outer.path() / "ws");
  CHECK(r.exit_code == 1);
  CHECK(r.err.starts_with("Refusing to touch '../escape.txt'"));
  CHECK_FALSE(fs::exists(outer.path() / "escape.txt"));
}

// ---------------------------------------------------------------------------
// The upstream conformance data (tests/data/conformance/apply_patch)

TEST_CASE("apply_patch scenarios: the final tree matches expected/ exactly") {
  std::vector<fs::path> scenarios;
  for (const auto& entry : fs::directory_iterator(DataDir() / "scenarios")) {
    if (entry.is_directory()) scenarios.push_back(entry.path());
  }
  std::sort(scenarios.begin(), scenarios.end());
  CHECK(scenarios.size() == 23);
  for (const fs::path& scenario : scenarios) {
    DYNAMIC_SECTION(scenario.filename().string()) {
      TempDir dir;
      if (fs::exists(scenario / "input")) CopyTree(scenario / "input", dir.path());
      const std::string patch = ReadFile(scenario / "patch.txt");
      RunResult r = RunCodex({"apply-patch", patch}, dir.path());
      INFO("exit " << r.exit_code << "\nstdout: " << r.out << "\nstderr: " << r.err);
      CHECK((r.exit_code == 0 || r.exit_code == 1));
      Tree expected = Snapshot(scenario / "expected");
      Tree actual = Snapshot(dir.path());
      INFO("expected:\n" << Describe(expected) << "actual:\n" << Describe(actual));
      CHECK(actual == expected);
    }
  }
}

TEST_CASE("apply_patch CLI expectations: exit code, stdout, stderr and files") {
  nlohmann::json doc = nlohmann::json::parse(ReadFile(DataDir() / "cli_expectations.json"));
  const nlohmann::json& cases = doc.at("cases");
  CHECK(cases.size() == 19);
  for (const nlohmann::json& c : cases) {
    DYNAMIC_SECTION(c.at("name").get<std::string>()) {
      TempDir dir;
      const std::string abs = dir.path().string();
      // Bound to locals: items() of a temporary would dangle.
      const nlohmann::json files_before = c.value("files_before", nlohmann::json::object());
      const nlohmann::json dirs_before = c.value("dirs_before", nlohmann::json::array());
      const nlohmann::json files_after = c.value("files_after", nlohmann::json::object());
      const nlohmann::json absent_after = c.value("absent_after", nlohmann::json::array());
      for (const auto& [rel, content] : files_before.items()) {
        WriteFile(dir.path() / rel, content.get<std::string>());
      }
      for (const nlohmann::json& rel : dirs_before) {
        fs::create_directories(dir.path() / rel.get<std::string>());
      }
      RunResult r = RunCodex({"apply-patch", c.at("patch").get<std::string>()}, dir.path());
      INFO("exit " << r.exit_code << "\nstdout: " << r.out << "\nstderr: " << r.err);
      CHECK(r.exit_code == (c.at("exit") == "success" ? 0 : 1));
      if (c.contains("stdout"))
        CHECK(r.out == ReplaceAll(c["stdout"].get<std::string>(), "{ABS}", abs));
      if (c.contains("stderr"))
        CHECK(r.err == ReplaceAll(c["stderr"].get<std::string>(), "{ABS}", abs));
      for (const auto& [rel, content] : files_after.items()) {
        INFO(rel);
        CHECK(fs::is_regular_file(dir.path() / rel));
        CHECK(ReadFile(dir.path() / rel) == content.get<std::string>());
      }
      for (const nlohmann::json& rel : absent_after) {
        INFO(rel.get<std::string>());
        CHECK_FALSE(fs::exists(dir.path() / rel.get<std::string>()));
      }
      for (const nlohmann::json& rel : dirs_before) {
        CHECK(fs::is_directory(dir.path() / rel.get<std::string>()));
      }
    }
  }
}
