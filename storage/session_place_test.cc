// Where a session was made: its host and project (storage/project_identity.h),
// and the directory filter of list, latest, search and purge across machines
// whose checkouts of one repository live at different paths. Runs against
// both backends (testing/store_test_support.h).
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "core/item.h"
#include "core/session_lease.h"
#include "storage/project_identity.h"
#include "testing/files.h"
#include "testing/store_test_support.h"
#include "testing/temp_dir.h"

using codex::core::ListQuery;
using codex::core::NewSession;
using codex::core::SessionInfo;
using codex::storage::NormalizeRemoteUrl;
using codex::storage::ProjectKey;
using codex::storage::SessionDatabase;
using codex::storage::testing::OpenStore;
using codex::storage::testing::StoreDir;
using codex::testing::TempDir;
using codex::testing::WriteFile;
namespace fs = std::filesystem;

namespace {

// A checkout at `dir` whose config holds `config`.
void Checkout(const fs::path& dir, const std::string& config) {
  WriteFile(dir / ".git" / "config", config);
  WriteFile(dir / ".git" / "HEAD", "ref: refs/heads/main\n");
}

std::string Origin(const std::string& url) {
  return "[core]\n\trepositoryformatversion = 0\n[remote \"origin\"]\n\turl = " + url +
         "\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n";
}

std::vector<std::string> Ids(const std::vector<SessionInfo>& sessions) {
  std::vector<std::string> out;
  for (const SessionInfo& s : sessions) out.push_back(s.id);
  return out;
}

}  // namespace

TEST_CASE("A remote URL names the same repository however it is spelled") {
  const std::string want = "github.com/team/codex";
  CHECK(NormalizeRemoteUrl("git@github.com:team/codex.git") == want);
  CHECK(NormalizeRemoteUrl("https://github.com/team/codex") == want);
  CHECK(NormalizeRemoteUrl("https://alice:token@GitHub.com/team/codex.git/") == want);
  CHECK(NormalizeRemoteUrl("ssh://git@github.com:22/team/codex.git") == want);
  CHECK(NormalizeRemoteUrl("git://github.com//team/codex") == want);
  CHECK(NormalizeRemoteUrl("  github.com:team/codex.git \n") == want);
  CHECK(NormalizeRemoteUrl("https://github.com/team/codex-other") != want);
  CHECK(NormalizeRemoteUrl("https://gitlab.com/team/codex") != want);
  // A shared absolute path is the same on machines that mount it; a relative
  // one means nothing elsewhere.
  CHECK(NormalizeRemoteUrl("/srv/git/codex.git") == "/srv/git/codex");
  CHECK(NormalizeRemoteUrl("file:///srv/git/codex.git") == "/srv/git/codex");
  CHECK(NormalizeRemoteUrl("../codex") == "");
  CHECK(NormalizeRemoteUrl("") == "");
  CHECK(NormalizeRemoteUrl("https://github.com/") == "");
}

TEST_CASE("A directory's project key: remote plus the path inside the checkout") {
  TempDir tmp;
  const fs::path laptop = fs::path(tmp.path()) / "home/alice/src/codex";
  Checkout(laptop, "[remote \"upstream\"]\n\turl = https://example.org/fork/codex\n" +
                       Origin("git@github.com:team/codex.git"));
  fs::create_directories(laptop / "src/lib");
  CHECK(ProjectKey(laptop.string()) == "github.com/team/codex");
  CHECK(ProjectKey((laptop / "src/lib").string()) == "github.com/team/codex//src/lib");
  CHECK(ProjectKey((laptop / "src/lib/").string()) == "github.com/team/codex//src/lib");
  // A linked worktree: `.git` is a file naming its git dir, whose commondir
  // holds the shared config.
  const fs::path wt = fs::path(tmp.path()) / "wt/feature";
  WriteFile(laptop / ".git/worktrees/feature/commondir", "../..\n");
  WriteFile(wt / ".git", "gitdir: " + (laptop / ".git/worktrees/feature").string() + "\n");
  CHECK(ProjectKey(wt.string()) == "github.com/team/codex");
  // Without "origin", the first remote.
  const fs::path other = fs::path(tmp.path()) / "other";
  Checkout(other, "[remote \"mirror\"]\n\turl = https://example.org/x/y.git\n");
  CHECK(ProjectKey(other.string()) == "example.org/x/y");
  // No remote, no checkout, a relative path: no key.
  const fs::path local = fs::path(tmp.path()) / "local";
  Checkout(local, "[core]\n\tbare = false\n");
  CHECK(ProjectKey(local.string()) == "");
  CHECK(ProjectKey(tmp.str()) == "");
  CHECK(ProjectKey("relative/dir") == "");
  CHECK(ProjectKey("") == "");
}

TEST_CASE("A session records its host; --cwd matches the same project at another path") {
  StoreDir dir;
  auto opened = OpenStore(dir.Store("s.db"));
  INFO(opened.status().ToString());
  REQUIRE(opened.ok());
  SessionDatabase& store = **opened;
  // Two "machines" with checkouts of one repository at different paths, and
  // an unrelated checkout.
  const fs::path root(dir.path());
  const fs::path laptop = root / "home/alice/src/codex";
  const fs::path ci = root / "builds/runner-7/team/codex-ci";
  const fs::path unrelated = root / "home/alice/src/other";
  Checkout(laptop, Origin("git@github.com:team/codex.git"));
  Checkout(ci, Origin("https://github.com/team/codex"));
  Checkout(unrelated, Origin("git@github.com:team/other.git"));
  auto create = [&](const fs::path& cwd, const std::string& host, const std::string& text) {
    NewSession spec;
    spec.cwd = cwd.string();
    spec.host = host;
    spec.items = {codex::core::UserMessage(text)};
    auto s = store.CreateSession(spec);
    INFO(s.status().ToString());
    REQUIRE(s.ok());
    return *s;
  };
  const SessionInfo top = create(laptop, "laptop", "quokka at the top");
  const SessionInfo sub = create(laptop / "docs", "laptop", "quokka in docs");
  const SessionInfo other = create(unrelated, "laptop", "quokka elsewhere");
  const SessionInfo here = create(root / "no-checkout/codex", "", "quokka without git");
  CHECK(top.host == "laptop");
  CHECK(top.project == "github.com/team/codex");
  CHECK(sub.project == "github.com/team/codex//docs");
  CHECK(here.project == "");
  // No host given: this machine's, as the lease records it.
  CHECK(here.host == codex::core::CurrentProcessHolder().host);
  CHECK(store.FindSession(top.id)->host == "laptop");
  CHECK(store.FindSession(top.id)->project == "github.com/team/codex");

  auto list = [&](const fs::path& cwd) {
    ListQuery q;
    q.cwd = cwd.string();
    auto page = store.ListSessions(q);
    INFO(page.status().ToString());
    REQUIRE(page.ok());
    return Ids(page->sessions);
  };
  // On the CI machine, its checkout's top and docs/ find the laptop's sessions.
  CHECK(list(ci) == std::vector<std::string>{top.id});
  CHECK(list(ci / "docs") == std::vector<std::string>{sub.id});
  CHECK(list(laptop) == std::vector<std::string>{top.id});
  // The exact path of another machine works too, and a path without a
  // checkout matches by path only.
  CHECK(list(root / "no-checkout/codex") == std::vector<std::string>{here.id});
  CHECK(list(root / "elsewhere/codex").empty());
  CHECK(list(unrelated) == std::vector<std::string>{other.id});
  auto latest = store.LatestSession(ci.string());
  REQUIRE(latest.ok());
  CHECK(latest->id == top.id);

  // Search scoped to the CI checkout finds the laptop's session, not the others.
  codex::storage::SearchQuery sq;
  sq.text = "quokka";
  sq.cwd = ci.string();
  auto hits = store.Search(sq);
  INFO(hits.status().ToString());
  REQUIRE(hits.ok());
  REQUIRE(hits->size() == 1);
  REQUIRE(hits->at(0).sessions.size() == 1);
  CHECK(hits->at(0).sessions[0].session.id == top.id);

  // Purge scopes alike (what list shows is what purge removes).
  codex::storage::PurgeQuery pq;
  pq.updated_before_ms = INT64_MAX;
  pq.cwd = ci.string();
  pq.dry_run = true;
  auto would = store.Purge(pq, nullptr);
  REQUIRE(would.ok());
  CHECK(Ids(*would) == std::vector<std::string>{top.id});

  // A fork belongs where its parent does, whoever forks it.
  auto fork = store.Fork(top.id, std::nullopt);
  REQUIRE(fork.ok());
  CHECK(fork->host == "laptop");
  CHECK(fork->project == top.project);
  CHECK(store.FindSession(fork->id)->host == "laptop");
  CHECK(list(ci).size() == 2);
}

TEST_CASE("Checkouts without a remote never match each other") {
  StoreDir dir;
  auto opened = OpenStore(dir.Store("s.db"));
  REQUIRE(opened.ok());
  SessionDatabase& store = **opened;
  const fs::path a = fs::path(dir.path()) / "a/app";
  const fs::path b = fs::path(dir.path()) / "b/app";
  Checkout(a, "[core]\n\tbare = false\n");
  Checkout(b, "[core]\n\tbare = false\n");
  NewSession spec;
  spec.cwd = a.string();
  spec.items = {codex::core::UserMessage("hello")};
  REQUIRE(store.CreateSession(spec).ok());
  ListQuery q;
  q.cwd = b.string();
  auto page = store.ListSessions(q);
  REQUIRE(page.ok());
  CHECK(page->sessions.empty());
  q.cwd = a.string();
  CHECK(store.ListSessions(q)->sessions.size() == 1);
}
