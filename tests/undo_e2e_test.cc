// /undo end to end (issue 26, point 3), in tmux on a real terminal against the
// scripted Responses server: a scripted model edits files with apply_patch in
// one turn and with a command (unified exec's exec_command, the one-shot
// shell) in the next; /undo restores the second turn, /undo again the first,
// the next request tells the model, and the user's own git state (index,
// branches, HEAD, stash, reflogs) is byte-identical throughout. A file the
// user changed since is not overwritten without a "y", and the snapshots
// outlive the process (codex resume).
#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "testing/files.h"
#include "testing/git_repo.h"
#include "testing/skip.h"
#include "tests/e2e_checks.h"
#include "tests/e2e_support.h"
#include "tests/tmux_support.h"

namespace codex::testing {
namespace {

namespace fs = std::filesystem;
using e2e::MakeEnv;

// The texts of the developer messages of a recorded request.
std::vector<std::string> DeveloperTexts(const RecordedRequest& request) {
  std::vector<std::string> out;
  for (const Json& item : ItemsOfType(request, "message")) {
    if (item.value("role", "") != "developer") continue;
    for (const Json& part : item["content"]) out.push_back(part.value("text", ""));
  }
  return out;
}

std::string UndoMessages(const RecordedRequest& request) {
  std::string all;
  for (const auto& t : DeveloperTexts(request)) {
    if (t.rfind("<undo>", 0) == 0) all += t + "\n";
  }
  return all;
}

bool NeedTmux() { return !TmuxCodex::Missing("/undo cannot be tested on a terminal"); }

}  // namespace

TEST_CASE("/undo walks back an exec_command turn, then an apply_patch turn; git state untouched") {
  if (!NeedTmux()) return;
  const nlohmann::json script = {
      {"responses",
       {{{"output",
          {{{"custom_tool_call", "apply_patch"},
            {"call_id", "p1"},
            {"input",
             "*** Begin Patch\n*** Update File: notes.txt\n@@\n-line one\n+line ONE\n"
             "*** Add File: src/new.txt\n+added by the patch\n"
             "*** Delete File: old.txt\n*** End Patch\n"}}}}},
        "Patched.",
        {{"output",
          {{{"function_call", "exec_command"},
            {"call_id", "x1"},
            {"arguments",
             {{"cmd",
               "echo appended >> notes.txt && rm keep.txt && printf 'made' > shell-made.txt"},
              {"login", false},
              {"yield_time_ms", 5000}}}}}}},
        "Ran it.",
        "I see the undo."}}};
  auto env = MakeEnv(script.dump(),
                     "approval_policy = \"never\"\nsandbox_mode = \"workspace-write\"\n"
                     "[features]\nunified_exec = true\n");
  const fs::path work = env->workdir();
  Git(work, "init -q");
  WriteFile(work / "notes.txt", "line one\nline two\n");
  WriteFile(work / "old.txt", "old file\n");
  WriteFile(work / "keep.txt", "keep me\n");
  Git(work, "add -A");
  Git(work, "commit -q -m base");
  WriteFile(work / "notes.txt", "stashed change\n");
  Git(work, "stash -q");
  Git(work, "branch feature");
  WriteFile(work / "staged.txt", "staged\n");
  Git(work, "add staged.txt");
  const auto git_before = UserGitState(work);

  TmuxCodex t(*env, {}, 110, 50);
  t.WaitForText("›");
  t.Submit("patch the notes");
  t.WaitForText("Patched.");
  CHECK(ReadFile(work / "notes.txt") == "line ONE\nline two\n");
  CHECK(!fs::exists(work / "old.txt"));
  t.WaitStill();
  t.Submit("now run a command");
  t.WaitForText("Ran it.");
  CHECK(ReadFile(work / "notes.txt") == "line ONE\nline two\nappended\n");
  CHECK(!fs::exists(work / "keep.txt"));
  CHECK(ReadFile(work / "shell-made.txt") == "made");
  t.WaitStill();

  // /undo: the command's turn.
  t.Submit("/undo");
  t.WaitForText("removed shell-made.txt (the turn created it)");
  CHECK(t.Text().find("restored keep.txt (the turn deleted it)") != std::string::npos);
  CHECK(t.Text().find("/undo again undoes the turn before (1 left)") != std::string::npos);
  CHECK(ReadFile(work / "notes.txt") == "line ONE\nline two\n");
  CHECK(ReadFile(work / "keep.txt") == "keep me\n");
  CHECK(!fs::exists(work / "shell-made.txt"));
  CHECK(ReadFile(work / "src/new.txt") == "added by the patch\n");  // turn 1's, still there

  // /undo again: the patch's turn.
  t.WaitStill();
  t.Submit("/undo");
  t.WaitForText("no earlier turn to undo");
  CHECK(ReadFile(work / "notes.txt") == "line one\nline two\n");
  CHECK(ReadFile(work / "old.txt") == "old file\n");
  CHECK(!fs::exists(work / "src"));
  t.WaitStill();
  t.Submit("/undo");
  t.WaitForText("nothing to undo");

  // The model is told, in order, with the next request.
  t.WaitStill();
  t.Submit("what happened?");
  t.WaitForText("I see the undo.");
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 5);
  CHECK(UndoMessages(requests[3]).empty());
  const std::string told = UndoMessages(requests[4]);
  INFO(told);
  CHECK(told.find("- shell-made.txt (that turn created it; it is removed)") != std::string::npos);
  CHECK(told.find("- keep.txt (that turn deleted it; it is back)") != std::string::npos);
  CHECK(told.find("- notes.txt (that turn modified it; its earlier content is back)") !=
        std::string::npos);
  CHECK(told.find("- old.txt (that turn deleted it; it is back)") != std::string::npos);
  CHECK(told.find("- src/new.txt (that turn created it; it is removed)") != std::string::npos);
  CHECK(told.find("shell-made.txt") < told.find("src/new.txt"));  // turn 2 undone first

  // The user's git state is byte-identical; codex's refs are gone with the undos.
  CHECK(UserGitState(work) == git_before);
  CHECK(Git(work, "for-each-ref refs/codex/").empty());
  CHECK(Git(work, "stash list").find("stash@{0}") != std::string::npos);
}

TEST_CASE("/undo after resume: a file the user changed since is overwritten only after 'y'") {
  if (!NeedTmux()) return;
  auto env = MakeEnv(R"({"responses": [
    {"output": [{"shell": ["bash", "-c", "printf 'model\n' > a.txt; printf 'new\n' > b.txt"],
                 "call_id": "s1"}]},
    "Edited."]})",
                     "approval_policy = \"never\"\nsandbox_mode = \"workspace-write\"\n");
  const fs::path work = env->workdir();  // not a git repository: copies under CODEX_HOME
  WriteFile(work / "a.txt", "original\n");
  std::string session;
  {
    TmuxCodex t(*env, {}, 110, 40);
    t.WaitForText("›");
    t.Submit("edit a.txt");
    t.WaitForText("Edited.");
    t.WaitStill();
    t.Submit("/quit");
    t.WaitForText("codex resume ");
    const std::string text = t.Text();
    const size_t at = text.rfind("codex resume ");
    session = text.substr(at + 13, 36);
  }
  CHECK(ReadFile(work / "a.txt") == "model\n");
  CHECK(fs::exists(env->codex_home() / "undo/copy/sessions" / session));
  // The user edits the file the turn wrote, outside codex.
  WriteFile(work / "a.txt", "the user's own edit\n");

  TmuxCodex t(*env, {"resume", session}, 110, 40);
  t.WaitForText("›");
  t.WaitStill();
  t.Submit("/undo");
  t.WaitForText("overwrite them? [y/N]");
  CHECK(t.Text().find("changed since that turn") != std::string::npos);
  CHECK(t.Text().find("  a.txt") != std::string::npos);
  t.Type("n");
  t.WaitForText("nothing was restored");
  CHECK(t.Text().find("› n") != std::string::npos);
  CHECK(ReadFile(work / "a.txt") == "the user's own edit\n");
  CHECK(ReadFile(work / "b.txt") == "new\n");
  t.WaitStill();
  t.Submit("/undo");
  t.WaitFor([](const std::string& s) {
    size_t first = s.find("overwrite them? [y/N]");
    return first != std::string::npos &&
           s.find("overwrite them? [y/N]", first + 1) != std::string::npos;
  });
  t.Type("y");
  t.WaitForText("removed b.txt (the turn created it)");
  CHECK(ReadFile(work / "a.txt") == "original\n");
  CHECK(!fs::exists(work / "b.txt"));
}

}  // namespace codex::testing
