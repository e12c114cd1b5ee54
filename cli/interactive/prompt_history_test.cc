#include "cli/interactive/prompt_history.h"

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "testing/temp_dir.h"

namespace codex::cli {
namespace {

using codex::testing::TempDir;

TEST_CASE("append then load round-trips texts, newest last") {
  TempDir dir;
  std::string path = dir.File("history.jsonl");
  PromptHistory h(path);
  CHECK(h.Load().empty());  // absent file
  REQUIRE(h.Append("s1", "first", 100).ok());
  REQUIRE(h.Append("s1", "multi\nline \"quoted\"", 101).ok());
  REQUIRE(h.Append("s2", "   ", 102).ok());  // blank: ignored
  CHECK(h.Load() == std::vector<std::string>{"first", "multi\nline \"quoted\""});
  struct stat st {};
  REQUIRE(stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  CHECK(line == R"({"session_id":"s1","text":"first","ts":100})");
  std::filesystem::remove_all(std::filesystem::path(path).parent_path());
}

TEST_CASE("an append after a line cut by a crash starts a line of its own") {
  // A process killed inside the write of a long prompt (a write of many
  // pages stops between two) leaves its line without the newline; the next
  // entry glued to it was one bad line, and lost with it.
  TempDir dir;
  std::string path = dir.File("history.jsonl");
  PromptHistory h(path);
  REQUIRE(h.Append("s1", "kept", 100).ok());
  std::ofstream(path, std::ios::app) << R"({"session_id":"s1","ts":101,"text":"a long prompt cu)";
  REQUIRE(h.Append("s2", "after the crash", 102).ok());
  CHECK(h.Load() == std::vector<std::string>{"kept", "after the crash"});
  // With a byte limit (the trimming path) too.
  std::ofstream(path, std::ios::app) << R"({"session_id":"s3","ts":103,"te)";
  PromptHistory limited(path, 1 << 20);
  REQUIRE(limited.Append("s3", "again", 104).ok());
  CHECK(limited.Load() == std::vector<std::string>{"kept", "after the crash", "again"});
}

TEST_CASE("load skips bad lines and repeats, and keeps the newest entries") {
  TempDir dir;
  std::string path = dir.File("history.jsonl");
  {
    std::ofstream out(path);
    out << "not json\n"
        << R"({"text": 5})"
        << "\n"
        << R"({"session_id":"a","ts":1,"text":"one"})"
        << "\n"
        << R"({"session_id":"a","ts":2,"text":"one"})"
        << "\n"
        << R"({"session_id":"a","ts":3,"text":"two"})"
        << "\n"
        << R"({"session_id":"a","ts":4,"text":"three"})"
        << "\n";
  }
  PromptHistory h(path);
  CHECK(h.Load() == std::vector<std::string>{"one", "two", "three"});
  CHECK(h.Load(2) == std::vector<std::string>{"two", "three"});
  std::filesystem::remove_all(std::filesystem::path(path).parent_path());
}

TEST_CASE("an unwritable history names the file") {
  PromptHistory h("/nonexistent-dir/history.jsonl");
  Status s = h.Append("s", "text", 1);
  CHECK(!s.ok());
  CHECK(s.message().find("/nonexistent-dir/history.jsonl") != std::string::npos);
}

}  // namespace
}  // namespace codex::cli

TEST_CASE("history.max_bytes: an append over the limit drops the oldest entries") {
  const auto dir =
      std::filesystem::temp_directory_path() / ("prompt_history_max." + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "history.jsonl").string();
  codex::cli::PromptHistory history(path, 200);
  for (int i = 0; i < 20; ++i) {
    REQUIRE(history.Append("s", "prompt number " + std::to_string(i), 1).ok());
    CHECK(std::filesystem::file_size(path) <= 200);
  }
  const auto kept = history.Load();
  REQUIRE(kept.size() >= 2);
  CHECK(kept.back() == "prompt number 19");                             // the newest stays, whole
  CHECK(kept.front() != "prompt number 0");                             // the oldest went
  for (const auto& k : kept) CHECK(k.rfind("prompt number ", 0) == 0);  // whole lines only
  codex::cli::PromptHistory unlimited(path);
  for (int i = 0; i < 20; ++i) REQUIRE(unlimited.Append("s", "more", 1).ok());
  CHECK(std::filesystem::file_size(path) > 200);
  std::filesystem::remove_all(dir);
}
