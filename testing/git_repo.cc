#include "testing/git_repo.h"

#include <cstdio>
#include <cstdlib>

#include "testing/files.h"
#include "testing/skip.h"

namespace codex::testing {

namespace fs = std::filesystem;

bool GitMissing() {
  if (std::system("git --version >/dev/null 2>&1") == 0) return false;
  SkipPart("git is not installed (scripts/install-deps.sh)");
  return true;
}

std::string Git(const fs::path& dir, const std::string& args) {
  const std::string cmd = "git -C '" + dir.string() +
                          "' -c core.hooksPath=/dev/null -c user.name=t -c user.email=t@t "
                          "-c init.defaultBranch=main " +
                          args + " 2>&1";
  std::string out;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) {
    std::fprintf(stderr, "error: a test cannot run: %s\n", cmd.c_str());
    std::abort();
  }
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  const int rc = ::pclose(p);
  if (rc != 0) {
    std::fprintf(stderr, "error: a test's git setup failed (status %d): %s\n%s\n", rc, cmd.c_str(),
                 out.c_str());
    std::abort();
  }
  return out;
}

std::map<std::string, std::string> UserGitState(const fs::path& repo) {
  std::map<std::string, std::string> state;
  for (const auto& e : fs::recursive_directory_iterator(repo / ".git")) {
    if (!e.is_regular_file()) continue;
    const std::string rel = fs::relative(e.path(), repo).string();
    if (rel.rfind(".git/objects/", 0) == 0 || rel.rfind(".git/refs/codex/", 0) == 0) continue;
    state[rel] = ReadFile(e.path());
  }
  state["status"] = Git(repo, "--no-optional-locks status --porcelain=v1 -uall");
  state["stash"] = Git(repo, "stash list");
  return state;
}

}  // namespace codex::testing
