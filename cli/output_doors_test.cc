// The terminal-safe text rule has one home (cli/terminal_text.h) and no file
// of cli/ writes to stdout or stderr around it: a plain output goes through
// PrintText / PrintF (neutralised on a terminal, exact on a pipe). The styled
// writers that compose escape sequences of their own (the exec progress
// printer and the interactive UI's Terminal) neutralise each untrusted field
// before styling it, and tests/trust_boundary_e2e_test walks their doors.
// A new printf of a session title, a file name or a tool's output therefore
// fails here before it can reach a user's terminal raw.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

TEST_CASE("cli/ writes text only through the terminal-safe rule") {
  // The rule itself; completion scripts (fixed text of ours); the styled
  // writers described above; the progress bar of long commands (its verb,
  // unit and figures are ours, never store text).
  const std::set<std::string> allowed = {"terminal_text.cc", "completion_cmd.cc",
                                         "progress_printer.cc", "interactive/terminal.cc",
                                         "work_progress.cc"};
  const std::regex raw_write(
      R"((std::)?\b(printf|fprintf|vprintf|vfprintf|fputs|puts|fwrite|putchar|fputc)\s*\(|std::(cout|cerr|clog)\b|\bwrite\s*\(\s*(1|2|STDOUT_FILENO|STDERR_FILENO)\b)");
  std::vector<std::string> hits;
  // A raw write of fixed text (a signal handler, a forked child) says so in
  // a comment on the line above: "terminal-safe: WHY".
  std::string previous;
  const fs::path root = fs::path(CODEX_SOURCE_DIR) / "cli";
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    const fs::path& p = entry.path();
    if (p.extension() != ".cc" && p.extension() != ".h") continue;
    if (p.filename().string().find("test") != std::string::npos) continue;
    const std::string rel = fs::relative(p, root).string();
    if (allowed.count(rel) != 0) continue;
    std::ifstream in(p);
    std::string line;
    int n = 0;
    while (std::getline(in, line)) {
      ++n;
      const std::string code = line.substr(0, line.find("//"));
      const bool vouched = previous.find("// terminal-safe: ") != std::string::npos;
      if (std::regex_search(code, raw_write) && !vouched) {
        hits.push_back(rel + ":" + std::to_string(n));
      }
      previous = line;
    }
  }
  INFO("raw writes (use PrintText / PrintF of cli/terminal_text.h): "
       << Catch::Detail::stringify(hits));
  CHECK(hits.empty());
}
