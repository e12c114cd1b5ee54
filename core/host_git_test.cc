#include "core/host_git.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <string>

using namespace codex::core;

namespace {

std::map<std::string, std::string> AsMap(
    const std::vector<std::pair<std::string, std::string>>& v) {
  std::map<std::string, std::string> m;
  for (const auto& [k, val] : v) m[k] = val;
  return m;
}

}  // namespace

TEST_CASE("HostGitOverrides empties every program a repository's config can name") {
  using namespace std::string_literals;
  // `git config --list -z`: "key\nvalue\0" entries; driver names may hold dots
  // and the section name any case.
  const std::string listing =
      "core.fsmonitor\ntouch /tmp/x\0"s
      "filter.evil.clean\ntouch /tmp/y\0"s
      "FILTER.Mixed.Case.smudge\nx\0"s
      "filter.a.b.c.process\nx\0"s
      "diff.tc.textconv\nx\0"s
      "user.name\nme\0"s;
  const auto m = AsMap(HostGitOverrides(listing));
  CHECK(m.at("core.fsmonitor") == "false");
  CHECK(m.at("core.hooksPath") == "/dev/null");
  CHECK(m.at("core.pager") == "cat");
  CHECK(m.at("core.sshCommand") == "false");
  CHECK(m.at("credential.helper").empty());
  CHECK(m.at("gpg.program") == "false");
  CHECK(m.at("protocol.allow") == "never");
  CHECK(m.at("diff.external").empty());
  CHECK(m.at("safe.bareRepository") == "explicit");
  for (const std::string name : {"evil", "Mixed.Case", "a.b.c"}) {
    INFO(name);
    for (const char* var : {"clean", "smudge", "process"}) {
      CHECK(m.at("filter." + name + "." + var).empty());
    }
    CHECK(m.at("filter." + name + ".required") == "false");
  }
  CHECK(m.count("user.name") == 0);
}

TEST_CASE("diff arguments disable external diff and textconv") {
  const auto args = HostGitDiffArgs();
  for (const char* a : {"--no-ext-diff", "--no-textconv", "--ignore-submodules=all"}) {
    CHECK(std::find(args.begin(), args.end(), a) != args.end());
  }
}
