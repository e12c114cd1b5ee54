// End-to-end search through the `codex` binary: text a user saw in a real
// shell tool's output (a word starting its second line) is found with a
// readable snippet, and a fork's inherited text stays findable through the
// fork after its parent is removed.
#include <catch2/catch.hpp>
#include <set>
#include <string>

#include "tests/e2e_checks.h"
#include "tests/e2e_support.h"

namespace codex::testing {
namespace {

using e2e::JsonLines;
using e2e::MakeEnv;
using e2e::Run;
using e2e::SessionIdFromBanner;

}  // namespace

TEST_CASE("search: a word starting the 2nd line of real tool output, then via a fork after rm") {
  auto env = MakeEnv(
      R"({"responses": [{"output": [{"shell": ["printf", "first line\nzebra starts line two\n"]}]},
                        "looked"]})");
  auto first = Run(*env, {"exec", "show me the listing"});
  REQUIRE(first.exit_code == 0);
  const std::string id = SessionIdFromBanner(first.err);
  REQUIRE(id.size() == 36);

  auto found = Run(*env, {"sessions", "search", "zebra"});
  INFO("stdout: " << found.out << "\nstderr: " << found.err);
  REQUIRE(found.exit_code == 0);
  CHECK(found.out.find(id + "  turn 1") != std::string::npos);
  CHECK(found.out.find("[zebra] starts line two") != std::string::npos);
  CHECK(found.out.find("\\n") == std::string::npos);  // decoded, not escaped JSON
  CHECK(found.out.find("exit_code") == std::string::npos);
  // The escaped-JSON spelling of it matches nothing.
  auto escaped = Run(*env, {"sessions", "search", "nzebra"});
  CHECK(escaped.exit_code == 0);
  CHECK(escaped.out.empty());

  auto fork = Run(*env, {"fork", id});
  REQUIRE(fork.exit_code == 0);
  const std::string fork_id = fork.out.substr(0, fork.out.find('\n'));
  REQUIRE(fork_id.size() == 36);
  auto rm = Run(*env, {"sessions", "rm", id});
  INFO("rm stderr: " << rm.err);
  REQUIRE(rm.exit_code == 0);

  auto json = Run(*env, {"sessions", "search", "zebra", "--json"});
  REQUIRE(json.exit_code == 0);
  // The output and the command that printed it (its arguments are text the
  // user saw too), both held by the fork alone now.
  auto lines = JsonLines(json.out);
  REQUIRE(lines.size() == 2);
  std::set<std::string> kinds;
  for (const auto& line : lines) {
    kinds.insert(line.value("kind", ""));
    REQUIRE(line["sessions"].size() == 1);
    CHECK(line["sessions"][0]["id"] == fork_id);
    CHECK(line["sessions"][0]["turn"] == 1);
  }
  CHECK(kinds == std::set<std::string>{"function_call", "function_call_output"});
  // The user's prompt too, and nothing names the removed parent.
  auto prompt = Run(*env, {"sessions", "search", "\"show me the listing\"", "--json"});
  REQUIRE(prompt.exit_code == 0);
  auto prompt_lines = JsonLines(prompt.out);
  REQUIRE(prompt_lines.size() == 1);
  REQUIRE(prompt_lines[0]["sessions"].size() == 1);
  CHECK(prompt_lines[0]["sessions"][0]["id"] == fork_id);
}

}  // namespace codex::testing
