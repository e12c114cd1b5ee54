#include "cli/interactive/composer.h"

#include <catch2/catch.hpp>

namespace codex::cli {
namespace {

Composer Make(std::vector<std::string> files = {}) {
  return Composer(Style(Color::kDisabled), [files] { return files; });
}

TEST_CASE("composer: '/' shows matching commands; Enter runs one that needs no argument") {
  Composer c = Make();
  CHECK(c.Feed("/st", false).kind == EditorEventKind::kNone);
  EditorLayout l = c.Layout(80);
  CHECK(l.text.find("› /status") != std::string::npos);  // the popup's selection
  CHECK(l.text.find("/compact") == std::string::npos);
  CHECK(l.rows > 1);
  CHECK(l.cursor_row == 0);  // the cursor stays in the prompt
  EditorEvent ev = c.Feed("\r", false);
  CHECK(ev.kind == EditorEventKind::kSubmit);
  CHECK(ev.text == "/status");
}

TEST_CASE("composer: '@' inserts the chosen path; Esc closes the popup and keeps the text") {
  Composer c = Make({"src/deep/alpha_module.cc", "beta.txt"});
  c.Feed("look at @alpmod", false);
  CHECK(c.Layout(80).text.find("src/deep/alpha_module.cc") != std::string::npos);
  c.Feed("\t", false);
  CHECK(c.editor().buffer() == "look at src/deep/alpha_module.cc ");
  c.Feed("and @bet", false);
  c.Feed("\x1b", true);  // a lone Esc
  CHECK(c.Layout(80).text.find("beta.txt") == std::string::npos);
  CHECK(c.editor().buffer() == "look at src/deep/alpha_module.cc and @bet");
}

TEST_CASE("composer: queued messages show one row each and come back on Unqueue") {
  Composer c = Make();
  c.Queue("first line\nsecond line");
  c.Queue(std::string(200, 'x'));
  c.Feed("draft", false);
  EditorLayout l = c.Layout(40);
  CHECK(l.text.find("↳ queued: first line…") != std::string::npos);
  CHECK(l.cursor_row == 2);                       // under the two queued rows
  CHECK(l.text.substr(l.cursor_offset).empty());  // the cursor after "draft"
  c.Unqueue();
  CHECK(c.editor().buffer() == "first line\nsecond line\n" + std::string(200, 'x') + "\ndraft");
  CHECK(!c.PopQueued());
}

TEST_CASE("composer: Esc-Esc walks back through messages; Enter reports the edit") {
  Composer c = Make();
  CHECK(!c.OnEscape());  // the first arms it
  CHECK(c.Layout(80).text.find("Esc again to edit") != std::string::npos);
  CHECK(c.OnEscape());
  c.StartBacktrack({{"one", std::nullopt}, {"two", 7}});
  CHECK(c.editor().buffer() == "two");
  CHECK(!c.OnEscape());  // an earlier one
  CHECK(c.editor().buffer() == "one");
  c.Feed(" edited", false);
  std::optional<EditTarget> edit = c.TakeEdit();
  REQUIRE(edit);
  CHECK(edit->text == "one");
  CHECK(!edit->parent);
  CHECK(!c.TakeEdit());
  // With nothing to edit, the hint says so.
  Composer empty = Make();
  empty.StartBacktrack({});
  CHECK(empty.Layout(80).text.find("no message to edit yet") != std::string::npos);
}

TEST_CASE("composer: a choice picker submits '/<command> <value>'") {
  Composer c = Make();
  c.OpenChoice({"model", "b", {{"a", ""}, {"b", "the current model"}, {"c", ""}}, "", ""});
  CHECK(c.Layout(80).text.find("› 2. /model b") != std::string::npos);
  c.Feed("\x1b[B", false);  // Down
  EditorEvent ev = c.Feed("\r", false);
  CHECK(ev.kind == EditorEventKind::kSubmit);
  CHECK(ev.text == "/model c");
  CHECK(c.chose_from_picker());
  c.Feed("x", false);  // the next key: the choice's command has run
  CHECK_FALSE(c.chose_from_picker());
}

// The presets and a list chosen from them, as /review opens them.
Composer ReviewLists(const std::string& first = "base") {
  Composer c = Make();
  c.OpenChoice({"review",
                "",
                {{"base", "against a branch"}, {"uncommitted", ""}, {"commit", ""}},
                "Select a review preset",
                ""});
  if (first == "commit") c.Feed("\x1b[B\x1b[B", false);
  EditorEvent ev = c.Feed("\r", false);
  CHECK(ev.text == "/review " + first);
  // The command the choice ran opens the next list: a child of the presets.
  if (first == "base") {
    c.OpenChoice({"review",
                  "",
                  {{"base main", "", "main"},
                   {"base Bugfix-y", "", "Bugfix-y"},
                   {"base feature-x", "", "feature-x"}},
                  "Select a base branch",
                  "Type to search branches"});
  } else {
    c.OpenChoice({"review",
                  "",
                  {{"commit aaa111 fix the parser", "", "aaa111 fix the parser"},
                   {"commit bbb222 Add Tests", "", "bbb222 Add Tests"},
                   {"commit ccc333 parse more", "", "ccc333 parse more"}},
                  "Select a commit to review",
                  "Type to search commits"});
  }
  return c;
}

TEST_CASE("composer: Esc or Ctrl-C in a list chosen from another goes back to it; there, closes") {
  for (const char* key : {"\x1b", "\x03"}) {
    INFO((key[0] == 3 ? "Ctrl-C" : "Esc"));
    Composer c = ReviewLists();
    std::string shown = c.Layout(80).text;
    CHECK(shown.find("Select a base branch: choose with ↑↓ and Enter (Esc goes back)") !=
          std::string::npos);
    CHECK(shown.find("Type to search branches") != std::string::npos);
    CHECK(shown.find("› /review base main") != std::string::npos);
    EditorEvent ev = c.Feed(key, true);
    CHECK(ev.kind == EditorEventKind::kNone);  // nothing sent, no "Ctrl-C again to quit"
    shown = c.Layout(80).text;
    CHECK(shown.find("Select a review preset: choose with ↑↓ and Enter or a number (Esc closes)") !=
          std::string::npos);
    CHECK(shown.find("› 1. /review base") != std::string::npos);  // as it was left
    CHECK(shown.find("/review base main") == std::string::npos);
    // A second choice there sends what it names.
    c.Feed("\x1b[B", false);
    ev = c.Feed("\r", false);
    CHECK(ev.kind == EditorEventKind::kSubmit);
    CHECK(ev.text == "/review uncommitted");
    CHECK(c.Layout(80).text.find("choose with") == std::string::npos);  // closed
  }
  // Esc in the presets closes them; nothing is left to go back to.
  Composer c = ReviewLists();
  c.Feed("\x1b", true);
  CHECK(c.Feed("\x1b", true).kind == EditorEventKind::kNone);
  CHECK(c.Layout(80).text.find("choose with") == std::string::npos);
  c.Feed("hi\r", false);  // the composer is itself again
  CHECK(c.editor().buffer().empty());
  // A list opened by a typed command (no choice just before) closes on Esc.
  Composer typed = Make();
  typed.OpenChoice({"review", "", {{"base main", "", "main"}}, "Select a base branch", "Type"});
  typed.Feed("\x1b", true);
  CHECK(typed.Layout(80).text.find("choose with") == std::string::npos);
}

TEST_CASE("composer: typing searches a searchable list: substring, any case; Backspace edits") {
  Composer c = ReviewLists("commit");
  c.Feed("PARS", false);
  std::string shown = c.Layout(80).text;
  CHECK(shown.find("search: PARS") != std::string::npos);
  CHECK(shown.find("Type to search commits") == std::string::npos);
  CHECK(shown.find("› /review commit aaa111 fix the parser") != std::string::npos);
  CHECK(shown.find("/review commit ccc333 parse more") != std::string::npos);
  CHECK(shown.find("bbb222") == std::string::npos);
  CHECK(c.editor().buffer().empty());  // the query is not the composer's text
  // The selection stays on its item while the item still shows.
  c.Feed("\x1b[B", false);  // ccc333
  c.Feed("e", false);       // "parse": both still match
  CHECK(c.Layout(80).text.find("› /review commit ccc333") != std::string::npos);
  c.Feed(" m", false);  // "parse m": only ccc333
  shown = c.Layout(80).text;
  CHECK(shown.find("aaa111") == std::string::npos);
  // Not fuzzy: the letters in order are not enough.
  c.Feed("\x7f\x7f\x7f\x7f\x7f\x7f\x7f", false);  // Backspace the whole query
  CHECK(c.Layout(80).text.find("Type to search commits") != std::string::npos);
  c.Feed("fxp", false);
  shown = c.Layout(80).text;
  CHECK(shown.find("no matches") != std::string::npos);
  CHECK(shown.find("/review commit") == std::string::npos);
  // Enter with no match sends nothing and goes back to the presets, as Codex does.
  EditorEvent ev = c.Feed("\r", false);
  CHECK(ev.kind == EditorEventKind::kNone);
  CHECK(c.Layout(80).text.find("Select a review preset") != std::string::npos);
  // The id is searched too; Enter sends the match.
  c = ReviewLists("commit");
  c.Feed("BBB2", false);
  ev = c.Feed("\r", false);
  CHECK(ev.kind == EditorEventKind::kSubmit);
  CHECK(ev.text == "/review commit bbb222 Add Tests");
}

TEST_CASE("composer: a list without search is numbered; a row's number chooses it at once") {
  Composer c = Make();
  c.OpenChoice(
      {"approvals", "never", {{"untrusted", ""}, {"on-request", ""}, {"never", ""}}, "", ""});
  const std::string shown = c.Layout(80).text;
  CHECK(shown.find("  1. /approvals untrusted") != std::string::npos);
  CHECK(shown.find("  2. /approvals on-request") != std::string::npos);
  CHECK(shown.find("› 3. /approvals never") != std::string::npos);
  EditorEvent ev = c.Feed("4", false);  // no fourth row: typed into the composer
  CHECK(ev.kind == EditorEventKind::kNone);
  CHECK(c.editor().buffer() == "4");
  ev = c.Feed("2", false);
  CHECK(ev.kind == EditorEventKind::kSubmit);
  CHECK(ev.text == "/approvals on-request");
  CHECK(c.chose_from_picker());
  // Ten rows or more: the numbers line up; past nine only the arrows reach a row.
  Composer many = Make();
  std::vector<Choice> rows;
  for (int i = 0; i < 11; ++i) rows.emplace_back("m" + std::to_string(i));
  many.OpenChoice({"model", "m0", rows, "", ""});
  const std::string drawn = many.Layout(80).text;
  CHECK(drawn.find("›  1. /model m0") != std::string::npos);
  CHECK(drawn.find("  11. /model m10") != std::string::npos);
  // A list that searches takes digits as search text (a commit's id has them).
  Composer r = ReviewLists("commit");
  CHECK(r.Layout(80).text.find("1. /review") == std::string::npos);
  ev = r.Feed("2", false);
  CHECK(ev.kind == EditorEventKind::kNone);
  CHECK(r.Layout(80).text.find("search: 2") != std::string::npos);
  CHECK(r.Layout(80).text.find("› /review commit bbb222 Add Tests") != std::string::npos);
}

TEST_CASE("composer: a list without search leaves typing to the composer; titles are inert") {
  Composer c = Make();
  c.OpenChoice({"approvals", "never", {{"untrusted", ""}, {"never", ""}}, "", ""});
  c.Feed("un", false);
  std::string shown = c.Layout(80).text;
  CHECK(shown.find("/approvals untrusted") != std::string::npos);  // not filtered
  CHECK(shown.find("› 2. /approvals never") != std::string::npos);
  CHECK(shown.find("; current: never") != std::string::npos);
  CHECK(shown.find("no matches") == std::string::npos);
  // A branch name in a title or a query is the repository's (or a paste's) text.
  Composer r = Make();
  r.OpenChoice({"review", "", {{"base x", "", "x"}}, "current: \x1b]2;pwned\x07", "Type"});
  r.Feed("\x1b[200~\x1b[31m\x1b[201~", false);  // a pasted escape sequence as the query
  shown = r.Layout(80).text;
  CHECK(shown.find('\x1b') == std::string::npos);
  CHECK(shown.find("^[]2;pwned^G") != std::string::npos);
}

}  // namespace
}  // namespace codex::cli
