// `codex review` / `codex exec review` end to end (issue 25 point 4): the three
// targets (uncommitted changes, a base branch, a commit) and custom
// instructions, sent as Codex 0.169 sends a review (no base instructions; the
// guidelines with the findings schema as the first developer message; one user
// message saying what to review), the findings shown as Codex renders them,
// usage errors that send nothing, and the git codex runs on the workspace
// going through core/host_git.h (a planted core.fsmonitor never runs).
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "testing/files.h"
#include "testing/skip.h"
#include "tests/e2e_checks.h"
#include "tests/e2e_support.h"
#include "tests/tmux_support.h"

namespace codex::testing {
namespace {

namespace fs = std::filesystem;
using e2e::ErrorLines;
using e2e::JsonLines;
using e2e::MakeEnv;
using e2e::Run;
using e2e::RunOk;

std::string Git(const fs::path& cwd, std::vector<std::string> args) {
  ProcessOptions p;
  p.argv = {"git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"};
  p.argv.insert(p.argv.end(), args.begin(), args.end());
  p.cwd = cwd;
  auto r = RunProcess(p);
  REQUIRE(r.ok());
  INFO("git " << args[0] << ": " << r->err);
  REQUIRE(r->exit_code == 0);
  std::string out = r->out;
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

// The workspace: main with one commit, branch `feature` with a second, then
// an unstaged edit and an untracked file.
struct Repo {
  std::string base_sha;     // main's commit (the merge base of feature and main)
  std::string feature_sha;  // feature's commit
};
Repo MakeRepo(const fs::path& dir) {
  Git(dir, {"init", "-q"});
  WriteFile(dir / "a.txt", "one\ntwo\n");
  Git(dir, {"add", "a.txt"});
  Git(dir, {"commit", "-qm", "first"});
  Repo repo;
  repo.base_sha = Git(dir, {"rev-parse", "HEAD"});
  Git(dir, {"checkout", "-qb", "feature"});
  WriteFile(dir / "a.txt", "one\ntwo\nthree\n");
  Git(dir, {"commit", "-qam", "add three"});
  repo.feature_sha = Git(dir, {"rev-parse", "HEAD"});
  WriteFile(dir / "a.txt", "one\ntwo\nthree\nfour\n");
  WriteFile(dir / "new.txt", "new\n");
  return repo;
}

// The model's answer: two findings in the review JSON, as a JSON string.
const char* kTwoFindings =
    R"({"findings":[{"title":"[P1] Off by one","body":"Reads past the end.\nTwice.","confidence_score":0.8,"priority":1,"code_location":{"absolute_file_path":"/w/a.txt","line_range":{"start":3,"end":4}}},{"title":"[P3] Name","body":"Unclear.","confidence_score":0.4,"code_location":{"absolute_file_path":"/w/b.c","line_range":{"start":7,"end":7}}}],"overall_correctness":"patch is incorrect","overall_explanation":"One real bug.","overall_confidence_score":0.7})";
// How Codex 0.169 shows it (captured from `codex exec review`).
const char* kTwoFindingsShown =
    "One real bug.\n\nFull review comments:\n\n"
    "- [P1] Off by one — /w/a.txt:3-4\n  Reads past the end.\n  Twice.\n\n"
    "- [P3] Name — /w/b.c:7-7\n  Unclear.\n";

std::string Script(const std::string& answer) { return Json::array({answer}).dump(); }

std::string LastUserText(const RecordedRequest& r) {
  std::string text;
  for (const auto& item : r.InputItems()) {
    if (item.value("role", "") == "user") {
      text.clear();
      for (const auto& part : item["content"]) text += part.value("text", "");
    }
  }
  return text;
}

// The review session's shape, as Codex 0.169 sends it.
void CheckReviewRequest(const RecordedRequest& r) {
  INFO(r.body.dump().substr(0, 3000));
  CHECK_FALSE(r.body.contains("instructions"));
  const Json input = r.InputItems();
  REQUIRE(input.size() >= 3);
  CHECK(input[0].value("role", "") == "developer");
  const std::string guidelines = input[0]["content"][0].value("text", "");
  for (const char* field : {"\"findings\"", "\"code_location\"", "\"absolute_file_path\"",
                            "\"line_range\"", "\"overall_correctness\"", "\"overall_explanation\"",
                            "\"overall_confidence_score\"", "\"priority\"", "patch is incorrect"}) {
    CHECK_THAT(guidelines, Catch::Contains(field));
  }
  // The usual context follows: permissions, then the environment.
  CHECK_THAT(input[1]["content"][0].value("text", ""), Catch::Contains("<permissions"));
  CHECK(r.body["store"] == false);
}

TEST_CASE(
    "review --uncommitted: Codex's review request, the findings rendered as Codex shows them") {
  auto env = MakeEnv(Script(kTwoFindings));
  MakeRepo(env->workdir());
  const fs::path last = env->root() / "last.txt";
  auto run = RunOk(*env, {"review", "--uncommitted", "-o", last.string()});
  CHECK(run.out == kTwoFindingsShown);
  CHECK(ReadFile(last) + "\n" == kTwoFindingsShown);  // -o: the shown text, as Codex's
  CHECK_THAT(run.err, Catch::Contains("review: current changes"));
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 1);
  CheckReviewRequest(requests[0]);
  CHECK(LastUserText(requests[0]) ==
        "Review the current code changes (staged, unstaged and untracked files) and report "
        "prioritized, actionable findings.");
  // The session is stored like any other, with the model's own answer.
  auto list = RunOk(*env, {"sessions", "list", "--json"});
  CHECK_THAT(list.out, Catch::Contains("\"review\""));
}

TEST_CASE("exec review --json: the agent_message is the rendered review") {
  auto env = MakeEnv(Script(kTwoFindings));
  MakeRepo(env->workdir());
  auto run = RunOk(*env, {"exec", "--json", "review", "--uncommitted"});
  std::string shown;
  for (const Json& e : JsonLines(run.out)) {
    if (e.value("type", "") == "item.completed" && e["item"].value("type", "") == "agent_message") {
      shown = e["item"].value("text", "");
    }
  }
  CHECK(shown + "\n" == kTwoFindingsShown);
}

TEST_CASE("review --base BRANCH names the merge base host git found") {
  auto env = MakeEnv(
      R"(["{\"findings\":[],\"overall_correctness\":\"patch is correct\",\"overall_explanation\":\"Looks right.\",\"overall_confidence_score\":0.9}",)"
      R"( "Prose, not JSON."])");
  const Repo repo = MakeRepo(env->workdir());
  auto run = RunOk(*env, {"review", "--base", "main"});
  CHECK(run.out == "Looks right.\n");  // no findings: the explanation alone
  CHECK_THAT(run.err, Catch::Contains("review: changes against 'main'"));
  // A branch this clone lacks: the model is asked to find the base from its upstream.
  auto other = RunOk(*env, {"exec", "review", "--base", "release"});
  CHECK(other.out == "Prose, not JSON.\n");  // a prose answer is shown as it is
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 2);
  CheckReviewRequest(requests[0]);
  const std::string prompt = LastUserText(requests[0]);
  CHECK_THAT(prompt, Catch::Contains("base branch 'main'"));
  CHECK_THAT(prompt, Catch::Contains("`git diff " + repo.base_sha + "`"));
  CHECK_THAT(LastUserText(requests[1]), Catch::Contains("release@{upstream}"));
}

TEST_CASE("review --commit SHA [--title], and custom instructions from stdin") {
  auto env =
      MakeEnv(R"(["Here:\n```json\n{\"findings\":[],\"overall_explanation\":\"Fenced.\"}\n```",
                         "ok", "custom done"])");
  const Repo repo = MakeRepo(env->workdir());
  auto run = RunOk(*env, {"review", "--commit", repo.feature_sha});
  CHECK(run.out == "Fenced.\n");  // a fenced JSON answer is still read
  CHECK_THAT(run.err, Catch::Contains("review: commit " + repo.feature_sha.substr(0, 7)));
  run = RunOk(*env, {"exec", "review", "--commit", repo.feature_sha, "--title", "Add three"});
  CHECK_THAT(run.err,
             Catch::Contains("review: commit " + repo.feature_sha.substr(0, 7) + ": Add three"));
  run = Run(*env, {"review", "-"}, std::string("Only look at security.\n"));
  REQUIRE(run.exit_code == 0);
  CHECK(run.out == "custom done\n");
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 3);
  for (const auto& r : requests) CheckReviewRequest(r);
  CHECK_THAT(LastUserText(requests[0]), Catch::Contains("commit " + repo.feature_sha + "."));
  CHECK_THAT(LastUserText(requests[1]),
             Catch::Contains("commit " + repo.feature_sha + " (\"Add three\")"));
  CHECK(LastUserText(requests[2]) == "Only look at security.\n");
}

TEST_CASE("review usage errors and empty reviews send nothing") {
  auto env = MakeEnv(R"([])");
  MakeRepo(env->workdir());
  struct Case {
    std::vector<std::string> args;
    const char* says;
  };
  for (const Case& c : std::vector<Case>{
           {{"review"}, "review needs --uncommitted, --base BRANCH, --commit SHA, or PROMPT"},
           {{"review", "--base", "main", "extra words"}, "--base and PROMPT were both given"},
           {{"exec", "review", "--uncommitted", "--commit", "HEAD"}, "--uncommitted and --commit"},
           {{"review", "--title", "T", "--uncommitted"}, "--title names the commit of --commit"},
           {{"review", "--base=-x"}, "--base needs a branch name"}}) {
    INFO(c.args.back());
    auto run = Run(*env, c.args);
    CHECK(run.exit_code == 2);
    REQUIRE(ErrorLines(run.err).size() == 1);
    CHECK_THAT(ErrorLines(run.err)[0], Catch::Contains(c.says));
  }
  // A clean work tree: nothing to review, no request spent.
  Git(env->workdir(), {"add", "-A"});
  Git(env->workdir(), {"commit", "-qm", "all"});
  auto clean = Run(*env, {"review", "--uncommitted"});
  CHECK(clean.exit_code != 0);
  REQUIRE(ErrorLines(clean.err).size() == 1);
  CHECK_THAT(ErrorLines(clean.err)[0], Catch::Contains("nothing to review"));
  // Outside a git work tree.
  fs::remove_all(env->workdir() / ".git");
  auto outside = Run(*env, {"review", "--uncommitted"});
  CHECK(outside.exit_code != 0);
  REQUIRE(ErrorLines(outside.err).size() == 1);
  CHECK_THAT(ErrorLines(outside.err)[0], Catch::Contains("needs a git work tree"));
  CHECK(env->server().requests_to("/responses").empty());
}

// The workspace's git config is the model's to write: a planted core.fsmonitor
// (which a plain `git status` runs) must not run when codex looks at the
// repository for a review, in any of the three modes.
TEST_CASE("review's own git runs through host_git: a planted core.fsmonitor never runs") {
  auto env = MakeEnv(R"({"default": "{\"findings\":[],\"overall_explanation\":\"ok\"}"})");
  const Repo repo = MakeRepo(env->workdir());
  const fs::path marker = env->root() / "fsmonitor-ran";
  Git(env->workdir(), {"config", "core.fsmonitor", "touch " + marker.string() + "; false"});
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"review", "--uncommitted"},
        std::vector<std::string>{"review", "--base", "main"},
        std::vector<std::string>{"review", "--commit", repo.feature_sha}}) {
    INFO(args[1]);
    RunOk(*env, args);
    CHECK_FALSE(fs::exists(marker));
  }
  CHECK(env->server().requests_to("/responses").size() == 3);
  // The attack is live: the same repository's plain `git status` runs it.
  ProcessOptions p;
  p.argv = {"git", "status", "--porcelain"};
  p.cwd = env->workdir();
  REQUIRE(RunProcess(p).ok());
  CHECK(fs::exists(marker));
}

// /review in the interactive session, on a terminal (tmux): the review runs as
// a session of its own with Codex's request, its findings drawn rendered, and
// the session the user was in goes on with its own transcript and key.
TEST_CASE("in tmux: /review uncommitted, /review base BRANCH, then the session goes on") {
  if (!TmuxCodex::Available()) {
    SkipPart("tmux is not installed (scripts/install-deps.sh): /review cannot be tested here");
    return;
  }
  auto env =
      MakeEnv(Json{{"responses",
                    {"first answer", kTwoFindings,
                     "{\"findings\":[],\"overall_explanation\":\"Base ok.\"}", "after the review"}}}
                  .dump());
  const Repo repo = MakeRepo(env->workdir());
  TmuxCodex t(*env, {}, 120, 50);
  t.WaitForText("›");
  t.Type("hello");
  t.Key("Enter");
  t.WaitForText("first answer");
  t.Type("/review uncommitted");
  t.Key("Enter");
  t.WaitForText(">> Code review started: current changes <<");
  t.WaitForText("<< Code review finished >>");
  std::string text = t.Joined();
  INFO(text);
  CHECK_THAT(text, Catch::Contains("Full review comments:"));
  CHECK_THAT(text, Catch::Contains("[P1] Off by one — /w/a.txt:3-4"));
  CHECK_THAT(text, Catch::Contains("Reads past the end."));
  CHECK_THAT(text, Catch::Contains("Unclear."));          // the last line too
  CHECK(text.find("\"findings\"") == std::string::npos);  // never the raw JSON
  t.Type("/review base main");
  t.Key("Enter");
  t.WaitForText(">> Code review started: changes against 'main' <<");
  t.WaitForText("Base ok.");
  t.Type("and now?");
  t.Key("Enter");
  t.WaitForText("after the review");
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 4);
  CheckReviewRequest(requests[1]);
  CheckReviewRequest(requests[2]);
  CHECK_THAT(LastUserText(requests[1]), Catch::Contains("current code changes"));
  CHECK_THAT(LastUserText(requests[2]), Catch::Contains("`git diff " + repo.base_sha + "`"));
  // The user's session: its own instructions and key, the review not in it.
  CHECK(requests[3].body.contains("instructions"));
  CHECK(requests[3].body["prompt_cache_key"] == requests[0].body["prompt_cache_key"]);
  CHECK(requests[1].body["prompt_cache_key"] != requests[0].body["prompt_cache_key"]);
  CHECK(requests[3].body.dump().find("Off by one") == std::string::npos);
  CHECK(LastUserText(requests[3]) == "and now?");
}

// /review alone on a terminal: Codex 0.169's presets in the picker (its words
// and order, captured from the real Codex's TUI), then the branches or recent
// commits of the repository (read through host_git: a planted core.fsmonitor
// never runs) or the composer for instructions. Each choice must send exactly
// the request its typed form sends; Esc at each level sends nothing, going back
// from a list to the presets and closing the presets, as Codex 0.169's does;
// typing searches the commit list as Codex's does (a match is what Enter
// reviews; no match shows "no matches" and Enter sends nothing); a commit
// subject holding escape sequences is drawn inert.
TEST_CASE(
    "in tmux: /review's picker sends what the typed modes send; Esc goes back, sends nothing") {
  if (!TmuxCodex::Available()) {
    SkipPart("tmux is not installed (scripts/install-deps.sh): /review cannot be tested here");
    return;
  }
  auto env =
      MakeEnv(R"({"default": "{\"findings\":[],\"overall_explanation\":\"Looked {{n}}.\"}"})");
  const Repo repo = MakeRepo(env->workdir());
  // On top of feature: a commit whose subject tries to retitle the terminal.
  Git(env->workdir(),
      {"commit", "-q", "--allow-empty", "-m", "evil \x1b]2;pwned\x07 \x1b[31mred subject"});
  const std::string evil = Git(env->workdir(), {"log", "-1", "--format=%h"});
  const std::string three = Git(env->workdir(), {"log", "-1", "--format=%h", "HEAD~1"});
  const fs::path marker = env->root() / "fsmonitor-ran";
  Git(env->workdir(), {"config", "core.fsmonitor", "touch " + marker.string() + "; false"});

  // And codex's own environment asks every git to trace itself into a file:
  // host_git builds git's environment from nothing, so no git codex runs
  // writes it (for-each-ref and log never run an fsmonitor, a plain git
  // with this environment would write the trace).
  const fs::path trace = env->root() / "git-trace";
  TmuxCodex t(*env, {}, 120, 60, 0, {{"GIT_TRACE", trace.string()}});
  t.WaitForText("›");
  auto requests = [&] { return env->server().requests_to("/responses"); };
  size_t done = 0;  // reviews finished so far
  // Runs what the keys choose (or the typed command) to its end; its request.
  auto finish = [&] {
    ++done;
    t.WaitForText("Looked " + std::to_string(done) + ".");
    t.WaitForText("<< Code review finished >>");
    REQUIRE(requests().size() == done);
    return requests().back();
  };
  auto typed = [&](const std::string& command) {
    t.Type(command);
    t.Key("Enter");
    return finish();
  };
  auto same = [&](const RecordedRequest& picked, const RecordedRequest& by_hand) {
    CheckReviewRequest(picked);
    INFO("picked: " << picked.InputItems().dump() << "\ntyped: " << by_hand.InputItems().dump());
    CHECK(picked.InputItems() == by_hand.InputItems());
    CHECK(picked.body["tools"] == by_hand.body["tools"]);
  };
  auto open_presets = [&] {
    t.Type("/review");
    t.Key("Enter");
    t.WaitForText("Select a review preset");
    t.WaitForText("Custom review instructions");
  };
  // The open picker as the screen shows it (its title row to the bottom; ""
  // when none is open): the transcript above echoes the same commands.
  auto picker = [&] {
    const std::string now = t.Screen();
    const size_t at = now.rfind("choose with ↑↓");
    if (at == std::string::npos) return std::string();
    const size_t row = now.rfind('\n', at);
    return now.substr(row == std::string::npos ? 0 : row + 1);
  };
  // Waits until the open picker shows `needle` and not `absent`.
  auto picker_shows = [&](const std::string& needle, const std::string& absent) {
    t.WaitFor([&](const std::string&) {
      const std::string now = picker();
      return now.find(needle) != std::string::npos && now.find(absent) == std::string::npos;
    });
  };
  auto picker_closed = [&] { t.WaitFor([&](const std::string&) { return picker().empty(); }); };

  // The presets, in Codex's order and words; Esc closes them, nothing sent.
  open_presets();
  std::string screen = t.Screen();
  INFO(screen);
  const size_t base_row = screen.find("Review against a base branch (PR Style)");
  const size_t uncommitted_row = screen.find("Review uncommitted changes");
  const size_t commit_row = screen.find("Review a commit");
  const size_t custom_row = screen.find("Custom review instructions");
  REQUIRE(custom_row != std::string::npos);
  CHECK(base_row < uncommitted_row);
  CHECK(uncommitted_row < commit_row);
  CHECK(commit_row < custom_row);
  t.Key("Escape");
  picker_closed();
  t.WaitStill();
  CHECK(requests().empty());

  // Against a base branch: the branches, the current one named and last.
  // Esc there goes back to the presets (as in Codex 0.169), the one chosen
  // still selected; nothing is sent.
  open_presets();
  t.Key("Enter");
  t.WaitForText("Select a base branch (current branch: feature)");
  t.WaitForText("/review base feature");
  screen = t.Screen();
  CHECK(screen.find("Type to search branches") != std::string::npos);
  CHECK(screen.find("/review base main") < screen.find("/review base feature"));
  t.Key("Escape");
  picker_shows("› 1. /review base ", "/review base main");
  CHECK_THAT(
      picker(),
      Catch::Contains("Select a review preset: choose with ↑↓ and Enter or a number (Esc closes)"));
  t.WaitStill();
  CHECK(requests().empty());
  t.Key("Enter");  // the same preset again: the branches
  picker_shows("/review base feature", "Select a review preset");
  t.Key("Enter");  // main, the first
  t.WaitForText(">> Code review started: changes against 'main' <<");
  const RecordedRequest picked_base = finish();
  CHECK_THAT(LastUserText(picked_base), Catch::Contains("`git diff " + repo.base_sha + "`"));
  same(picked_base, typed("/review base main"));

  // Back from the branches, a second choice: uncommitted changes.
  open_presets();
  t.Key("Enter");
  picker_shows("/review base feature", "Select a review preset");
  t.Key("Escape");
  picker_shows("Select a review preset", "/review base feature");
  CHECK_THAT(picker(), Catch::Contains("2. /review uncommitted"));
  t.Type("2");  // a row's number chooses it at once, as in Codex's lists
  t.WaitForText(">> Code review started: current changes <<");
  const RecordedRequest picked_uncommitted = finish();
  CHECK_THAT(LastUserText(picked_uncommitted), Catch::Contains("current code changes"));
  same(picked_uncommitted, typed("/review uncommitted"));

  // A commit: the recent ones, newest first, their subjects inert; Esc goes
  // back to the presets, Esc there closes them.
  open_presets();
  t.Key("Down");
  t.Key("Down");
  t.Key("Enter");
  t.WaitForText("Select a commit to review");
  t.WaitForText("/review commit " + three + " add three");
  screen = t.Text();
  CHECK_THAT(screen, Catch::Contains("/review commit " + evil + " evil ^[]2;pwned^G ^[[31mred"));
  CHECK(t.PaneTitle().find("pwned") == std::string::npos);
  t.Key("Escape");
  picker_shows("Select a review preset", "/review commit " + three);
  t.Key("Escape");
  picker_closed();
  t.WaitStill();
  CHECK(requests().size() == done);

  // Typing searches the commits (any case, Backspace edits the query): the
  // one that matches is the one Enter reviews.
  t.Type("/review commit");  // the commit list straight away
  t.Key("Enter");
  t.WaitForText("Type to search commits");
  t.Type("THREx");
  picker_shows("no matches", "/review commit " + three);
  t.Key("BSpace");
  t.Type("E");
  picker_shows("/review commit " + three + " add three", "no matches");
  screen = picker();
  CHECK_THAT(screen, Catch::Contains("search: THREE"));
  CHECK(screen.find("/review commit " + evil) == std::string::npos);
  CHECK(screen.find(" first") == std::string::npos);
  t.Key("Enter");
  t.WaitForText(">> Code review started: commit " + three + ": add three <<");
  const RecordedRequest picked_commit = finish();
  CHECK_THAT(LastUserText(picked_commit), Catch::Contains("commit " + three + " (\"add three\")"));
  same(picked_commit, typed("/review commit " + three + " add three"));

  // A search that matches nothing shows Codex's empty state; Enter then
  // sends nothing and goes back to the presets, as Codex's does.
  open_presets();
  t.Key("Down");
  t.Key("Down");
  t.Key("Enter");
  t.WaitForText("Type to search commits");
  t.Type("no such commit");
  picker_shows("no matches", "/review commit " + three);
  t.Key("Enter");
  picker_shows("Select a review preset", "no matches");
  t.WaitStill();
  CHECK(requests().size() == done);
  t.Key("Escape");
  picker_closed();

  // The evil one picked: its subject reaches the model as written, the screen inert.
  t.Type("/review commit");
  t.Key("Enter");
  t.WaitForText("Select a commit to review");
  t.WaitStill();
  t.Key("Enter");
  t.WaitForText(">> Code review started: commit " + evil + ": evil ^[]2;pwned^G");
  const RecordedRequest picked_evil = finish();
  CHECK_THAT(LastUserText(picked_evil), Catch::Contains("evil \x1b]2;pwned\x07"));
  CHECK(t.PaneTitle().find("pwned") == std::string::npos);

  // Custom instructions: the composer holds "/review " for them.
  open_presets();
  t.Key("Up");
  t.Key("Enter");
  t.WaitForText("Custom review instructions: type them after /review");
  t.Type("look only at error handling");
  t.Key("Enter");
  t.WaitForText(">> Code review started: look only at error handling <<");
  const RecordedRequest picked_custom = finish();
  CHECK(LastUserText(picked_custom) == "look only at error handling");
  same(picked_custom, typed("/review look only at error handling"));

  // None of the picker's git (nor the reviews') ran the planted fsmonitor,
  // and the attack is live: the repository's plain `git status` runs it.
  CHECK_FALSE(fs::exists(marker));
  CHECK_FALSE(fs::exists(trace));
  ProcessOptions p;
  p.argv = {"git", "status", "--porcelain"};
  p.cwd = env->workdir();
  p.env = {{"GIT_TRACE", trace.string()}};
  REQUIRE(RunProcess(p).ok());
  CHECK(fs::exists(marker));
  CHECK(fs::exists(trace));
}

}  // namespace
}  // namespace codex::testing
