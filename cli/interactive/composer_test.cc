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
  c.OpenChoice("model", "b", {{"a", ""}, {"b", "the current model"}, {"c", ""}});
  CHECK(c.Layout(80).text.find("› /model b") != std::string::npos);
  c.Feed("\x1b[B", false);  // Down
  EditorEvent ev = c.Feed("\r", false);
  CHECK(ev.kind == EditorEventKind::kSubmit);
  CHECK(ev.text == "/model c");
}

}  // namespace
}  // namespace codex::cli
