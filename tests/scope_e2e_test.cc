// End-to-end tests of the scope of `--last` (cli/session_resolution.h)
// through the `codex` binary, as an adversary would try to leak another
// directory's transcript: `exec resume --last`, `codex resume --last` (the
// line-mode interactive session) and `compact --last` in a directory with no
// session of its own, next to one with a secret in its session. Nothing of
// that session may reach any request the server receives unless --all asks
// for it. Projects: two checkouts of different repositories under the same
// directory name are different scopes; two checkouts of one repository are
// one.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/e2e_checks.h"
#include "tests/e2e_support.h"

namespace codex::testing {
namespace {

namespace fs = std::filesystem;
using e2e::ErrorLines;
using e2e::MakeEnv;
using e2e::RunChecked;
using e2e::SessionIdFromBanner;

constexpr const char* kSecret = "the secret of directory A";

// `codex args...` of `env` run in `dir`.
ProcessResult RunIn(CodexTestEnv& env, const fs::path& dir, std::vector<std::string> args,
                    std::optional<std::string> stdin_text = std::nullopt) {
  ProcessOptions opts = env.CodexCommand(std::move(args));
  opts.cwd = dir;
  opts.stdin_text = std::move(stdin_text);
  return RunChecked(opts);
}

// How many requests the server received so far carry `text` anywhere.
size_t RequestsWith(CodexTestEnv& env, const std::string& text) {
  size_t n = 0;
  for (const auto& r : env.server().requests_to("/responses")) {
    if (r.body.dump().find(text) != std::string::npos) ++n;
  }
  return n;
}

// A git checkout at `dir` whose origin is `remote` (what ProjectKey reads).
void MakeCheckout(const fs::path& dir, const std::string& remote) {
  fs::create_directories(dir / ".git");
  std::ofstream(dir / ".git" / "HEAD") << "ref: refs/heads/main\n";
  std::ofstream(dir / ".git" / "config") << "[core]\n\trepositoryformatversion = 0\n"
                                         << "[remote \"origin\"]\n\turl = " << remote << "\n";
}

}  // namespace

TEST_CASE("scope: exec resume --last next to another directory's session starts a new one") {
  auto env = MakeEnv(R"({"responses": [], "default": {"message": "answer {{n}}"}})");
  const fs::path a = env->workdir() / "A";
  const fs::path b = env->workdir() / "B";
  const fs::path sub = a / "sub";
  fs::create_directories(sub);
  fs::create_directories(b);
  auto made = RunIn(*env, a, {"exec", kSecret});
  REQUIRE(made.exit_code == 0);
  const std::string a_id = SessionIdFromBanner(made.err);
  REQUIRE(a_id.size() == 36);

  // B has no session: a new one, and it says so; A's transcript is never sent.
  auto fresh = RunIn(*env, b, {"exec", "resume", "--last", "hello from B"});
  INFO(fresh.err);
  REQUIRE(fresh.exit_code == 0);
  const std::string b_id = SessionIdFromBanner(fresh.err);
  REQUIRE(b_id.size() == 36);
  CHECK(b_id != a_id);
  CHECK_THAT(fresh.err, Catch::Contains("no session in " + b.string() + " to resume"));
  REQUIRE(env->server().requests_to("/responses").size() == 2);
  CHECK_FALSE(env->server().requests_to("/responses")[1].body.dump().find(kSecret) !=
              std::string::npos);
  // The JSON mode too: a new thread, no leak.
  fs::create_directories(env->workdir() / "J");
  auto json = RunIn(*env, env->workdir() / "J", {"exec", "--json", "resume", "--last", "json"});
  REQUIRE(json.exit_code == 0);
  CHECK(json.out.find(a_id) == std::string::npos);
  // A subdirectory of A is not A (the exact cwd, as Codex 0.169 filters).
  auto below = RunIn(*env, sub, {"exec", "resume", "--last", "from below A"});
  REQUIRE(below.exit_code == 0);
  CHECK(SessionIdFromBanner(below.err) != a_id);
  const size_t n = env->server().requests_to("/responses").size();
  CHECK(n == 4);
  CHECK(RequestsWith(*env, kSecret) == 1);

  // --existing: says there is none, exit 4, one line, nothing sent.
  const fs::path c = env->workdir() / "C";
  fs::create_directories(c);
  auto none = RunIn(*env, c, {"exec", "resume", "--last", "--existing", "anything"});
  CHECK(none.exit_code == 4);
  REQUIRE(ErrorLines(none.err).size() == 1);
  CHECK_THAT(none.err, Catch::Contains("no session in " + c.string()));
  CHECK_THAT(none.err, Catch::Contains("--all"));
  CHECK(env->server().requests_to("/responses").size() == n);
  // compact --last: the same scope, no fallback.
  auto compact = RunIn(*env, c, {"compact", "--last"});
  CHECK(compact.exit_code == 4);
  CHECK(env->server().requests_to("/responses").size() == n);
  // The flags belong to --last.
  CHECK(RunIn(*env, c, {"exec", "resume", "--all", a_id, "x"}).exit_code == 2);
  CHECK(RunIn(*env, c, {"exec", "resume", "--existing", a_id, "x"}).exit_code == 2);

  // B now has a session of its own: --last continues it, not A's.
  auto again = RunIn(*env, b, {"exec", "resume", "--last", "again in B"});
  REQUIRE(again.exit_code == 0);
  CHECK(SessionIdFromBanner(again.err) == b_id);
  CHECK(env->server().requests_to("/responses").back().body.dump().find("hello from B") !=
        std::string::npos);
  CHECK(RequestsWith(*env, kSecret) == 1);  // A's own first request, and no other
  // A continues its own.
  auto in_a = RunIn(*env, a, {"exec", "resume", "--last", "back in A"});
  CHECK(SessionIdFromBanner(in_a.err) == a_id);

  // --all widens on purpose: the newest session of every directory (A's, just used).
  auto wide = RunIn(*env, c, {"exec", "resume", "--last", "--all", "from C, widened"});
  REQUIRE(wide.exit_code == 0);
  CHECK(SessionIdFromBanner(wide.err) == a_id);
  CHECK(env->server().requests_to("/responses").back().body.dump().find(kSecret) !=
        std::string::npos);
}

TEST_CASE("scope: codex resume --last (line mode) in a directory without a session starts one") {
  auto env = MakeEnv(R"({"responses": [], "default": {"message": "answer {{n}}"}})");
  const fs::path a = env->workdir() / "A";
  const fs::path b = env->workdir() / "B";
  fs::create_directories(a);
  fs::create_directories(b);
  auto made = RunIn(*env, a, {"exec", kSecret});
  REQUIRE(made.exit_code == 0);
  const std::string a_id = SessionIdFromBanner(made.err);

  auto fresh = RunIn(*env, b, {"resume", "--last"}, std::string("interactive hello\n"));
  INFO(fresh.err);
  CHECK(fresh.exit_code == 0);
  CHECK(fresh.err.find(a_id) == std::string::npos);
  REQUIRE(env->server().requests_to("/responses").size() == 2);
  CHECK(env->server().requests_to("/responses")[1].body.dump().find(kSecret) == std::string::npos);
  CHECK(env->server().requests_to("/responses")[1].body.dump().find("interactive hello") !=
        std::string::npos);

  const fs::path c = env->workdir() / "C";
  fs::create_directories(c);
  auto none = RunIn(*env, c, {"resume", "--last", "--existing"}, std::string("x\n"));
  CHECK(none.exit_code == 4);
  CHECK(ErrorLines(none.err).size() == 1);
  CHECK(env->server().requests_to("/responses").size() == 2);
  CHECK(RunIn(*env, c, {"resume", "--existing", a_id}, std::string("x\n")).exit_code == 2);

  // --all on --last widens (the newest anywhere: B's interactive session).
  auto wide = RunIn(*env, c, {"resume", "--last", "--all"}, std::string("widened\n"));
  CHECK(wide.exit_code == 0);
  REQUIRE(env->server().requests_to("/responses").size() == 3);
  CHECK(env->server().requests_to("/responses")[2].body.dump().find("interactive hello") !=
        std::string::npos);
}

TEST_CASE("scope: same directory name in checkouts of different repositories are apart") {
  auto env = MakeEnv(R"({"responses": [], "default": {"message": "answer {{n}}"}})");
  const fs::path mine = env->workdir() / "x" / "proj";
  const fs::path theirs = env->workdir() / "y" / "proj";
  const fs::path mine_again = env->workdir() / "z" / "proj";
  MakeCheckout(mine, "git@github.com:team/one.git");
  MakeCheckout(theirs, "https://github.com/other/two.git");
  MakeCheckout(mine_again, "https://github.com/team/one");
  auto made = RunIn(*env, mine, {"exec", kSecret});
  REQUIRE(made.exit_code == 0);
  const std::string id = SessionIdFromBanner(made.err);

  // Another repository, same directory name: a new session, nothing leaks.
  auto other = RunIn(*env, theirs, {"exec", "resume", "--last", "in the other repo"});
  REQUIRE(other.exit_code == 0);
  CHECK(SessionIdFromBanner(other.err) != id);
  CHECK(env->server().requests_to("/responses").back().body.dump().find(kSecret) ==
        std::string::npos);
  // Another checkout of the same repository is the same project: it continues.
  auto same = RunIn(*env, mine_again, {"exec", "resume", "--last", "other checkout"});
  REQUIRE(same.exit_code == 0);
  CHECK(SessionIdFromBanner(same.err) == id);
}

}  // namespace codex::testing

namespace codex::testing {

// Issue 29: one path canonicaliser (base/path.h CanonicalPath) where sessions record
// their cwd and where `--cwd DIR` names it, so a symlink finds the session.
TEST_CASE(
    "scope: sessions list/search/purge --cwd through a symlink find the directory's sessions") {
  auto env = MakeEnv(R"({"responses": [], "default": {"message": "answer {{n}}"}})");
  const fs::path real = env->workdir() / "real" / "proj";
  fs::create_directories(real);
  fs::create_directory_symlink(real, env->workdir() / "link");
  fs::create_directory_symlink("real/proj/", env->workdir() / "rel-link");  // relative target
  auto made = RunIn(*env, real, {"exec", "a marmot question"});
  REQUIRE(made.exit_code == 0);
  const std::string id = SessionIdFromBanner(made.err);
  // Through `-C link` the session made in the real directory is "here".
  auto via_c =
      RunIn(*env, env->workdir(),
            {"exec", "-C", (env->workdir() / "link").string(), "resume", "--last", "more"});
  REQUIRE(via_c.exit_code == 0);
  CHECK(SessionIdFromBanner(via_c.err) == id);
  for (const std::string& dir : {(env->workdir() / "link").string(), std::string("rel-link/"),
                                 (env->workdir() / "." / "link" / ".").string()}) {
    INFO("--cwd " << dir);
    auto list = RunIn(*env, env->workdir(), {"sessions", "list", "--cwd", dir, "--json"});
    CHECK(list.exit_code == 0);
    CHECK(list.out.find(id) != std::string::npos);
    auto search = RunIn(*env, env->workdir(), {"sessions", "search", "--cwd", dir, "marmot"});
    CHECK(search.out.find(id) != std::string::npos);
    auto purge = RunIn(*env, env->workdir(),
                       {"sessions", "purge", "--cwd", dir, "--older-than", "0s", "--dry-run"});
    CHECK(purge.out.find(id) != std::string::npos);
  }
  // Another machine's path (absent here) still names its sessions lexically.
  auto absent = RunIn(*env, env->workdir(), {"sessions", "list", "--cwd", "/no/such/dir/"});
  CHECK(absent.exit_code == 0);
  CHECK(absent.out.find(id) == std::string::npos);
}

// Issue 29: the next-page hint of `sessions list` is a command a user pastes
// into a shell. For a directory whose name holds a quote, a space and a `$`,
// the hint run through `sh -c` (codex on PATH) must list the rest of that
// directory's sessions: each session on exactly one of the two pages.
TEST_CASE("scope: the next-page hint of sessions list is valid shell for a directory named it's") {
  auto env = MakeEnv(R"({"responses": [], "default": {"message": "answer {{n}}"}})");
  const fs::path dir = env->workdir() / "it's a $HOME";
  fs::create_directories(dir);
  std::vector<std::string> ids;
  for (int i = 0; i < 3; ++i) {
    auto made = RunIn(*env, dir, {"exec", "question " + std::to_string(i)});
    REQUIRE(made.exit_code == 0);
    ids.push_back(SessionIdFromBanner(made.err));
  }
  auto first =
      RunIn(*env, env->workdir(), {"sessions", "list", "--cwd", dir.string(), "--limit", "2"});
  REQUIRE(first.exit_code == 0);
  const std::string prefix = "next page: ";
  const size_t at = first.err.find(prefix);
  REQUIRE(at != std::string::npos);
  std::string hint = first.err.substr(at + prefix.size());
  hint = hint.substr(0, hint.find('\n'));
  INFO("hint: " << hint);
  REQUIRE(hint.rfind("codex ", 0) == 0);
  const fs::path bin = env->root() / "bin";
  fs::create_directories(bin);
  fs::create_symlink(env->codex_binary(), bin / "codex");
  ProcessOptions sh;
  sh.argv = {"sh", "-c", hint};
  sh.env = env->Env();
  const char* path = std::getenv("PATH");
  sh.env["PATH"] = bin.string() + ":" + (path != nullptr ? path : "/usr/bin:/bin");
  sh.cwd = "/";  // the hint names the directory itself
  auto second = RunChecked(sh);
  CHECK(second.exit_code == 0);
  CHECK(second.err.find("next page") == std::string::npos);
  for (const std::string& id : ids) {
    INFO("session " << id);
    const bool on_first = first.out.find(id) != std::string::npos;
    const bool on_second = second.out.find(id) != std::string::npos;
    CHECK(on_first != on_second);
  }
}

}  // namespace codex::testing
