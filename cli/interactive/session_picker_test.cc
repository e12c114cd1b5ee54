#include "cli/interactive/session_picker.h"

#include <catch2/catch.hpp>

#include "base/time.h"

namespace codex::cli {
namespace {

constexpr int64_t kNow = 1'700'000'000'000;

core::SessionInfo Session(std::string id, std::string title, int64_t age_ms,
                          std::string cwd = "/w") {
  core::SessionInfo s;
  s.id = std::move(id);
  s.title = std::move(title);
  s.cwd = std::move(cwd);
  s.updated_at_ms = kNow - age_ms;
  return s;
}

Key Text(std::string t) {
  Key k;
  k.code = KeyCode::kText;
  k.text = std::move(t);
  return k;
}

Key Code(KeyCode c) {
  Key k;
  k.code = c;
  return k;
}

SessionPicker ThreeSessions() {
  return SessionPicker({Session("aaaaaaaa-1", "Fix the parser", 60'000),
                        Session("bbbbbbbb-2", "Write docs", 3'600'000),
                        Session("cccccccc-3", "Parser benchmarks", 2 * 86'400'000, "/other")},
                       kNow, false);
}

TEST_CASE("arrows move the selection within bounds; Enter chooses") {
  SessionPicker p = ThreeSessions();
  CHECK(p.selected() == 0);
  p.HandleKey(Code(KeyCode::kUp));
  CHECK(p.selected() == 0);
  p.HandleKey(Code(KeyCode::kDown));
  p.HandleKey(Text("j"));
  p.HandleKey(Code(KeyCode::kDown));
  CHECK(p.selected() == 2);
  p.HandleKey(Text("k"));
  CHECK(p.HandleKey(Code(KeyCode::kEnter)) == PickerResult::kChosen);
  CHECK(p.chosen().id == "bbbbbbbb-2");
}

TEST_CASE("/ filters by title, id or directory, case-insensitively") {
  SessionPicker p = ThreeSessions();
  p.HandleKey(Text("/"));
  CHECK(p.filtering());
  for (char c : std::string("PARSER")) p.HandleKey(Text(std::string(1, c)));
  CHECK(p.visible() == std::vector<size_t>{0, 2});
  p.HandleKey(Code(KeyCode::kDown));
  CHECK(p.HandleKey(Code(KeyCode::kEnter)) == PickerResult::kChosen);
  CHECK(p.chosen().id == "cccccccc-3");

  SessionPicker q = ThreeSessions();
  q.HandleKey(Text("/"));
  q.HandleKey(Text("/other"));  // pasted text filters too
  CHECK(q.visible() == std::vector<size_t>{2});
  // Nothing matches: Enter does nothing.
  q.HandleKey(Text("zzz"));
  CHECK(q.visible().empty());
  CHECK(q.HandleKey(Code(KeyCode::kEnter)) == PickerResult::kPending);
  // Esc leaves the filter (all rows back); a second Esc cancels.
  CHECK(q.HandleKey(Code(KeyCode::kEsc)) == PickerResult::kPending);
  CHECK(q.visible().size() == 3);
  CHECK(q.HandleKey(Code(KeyCode::kEsc)) == PickerResult::kCancelled);
}

TEST_CASE("Backspace edits the filter, then leaves it") {
  SessionPicker p = ThreeSessions();
  p.HandleKey(Text("/"));
  p.HandleKey(Text("docs"));
  CHECK(p.visible().size() == 1);
  for (int i = 0; i < 4; ++i) p.HandleKey(Code(KeyCode::kBackspace));
  CHECK(p.visible().size() == 3);
  CHECK(p.filtering());
  p.HandleKey(Code(KeyCode::kBackspace));
  CHECK(!p.filtering());
  CHECK(p.HandleKey(Text("q")) == PickerResult::kCancelled);
}

TEST_CASE("render shows age, title, id prefix and the selection marker") {
  SessionPicker p = ThreeSessions();
  p.HandleKey(Code(KeyCode::kDown));
  std::string out = p.Render(Style(Color::kDisabled), 80, 10);
  CHECK(out.find('\x1b') == std::string::npos);
  CHECK(out.find("  1m ago    Fix the parser") != std::string::npos);
  CHECK(out.find("› 1h ago    Write docs") != std::string::npos);
  CHECK(out.find("bbbbbbbb") != std::string::npos);
  CHECK(out.find("3 of 3 sessions") != std::string::npos);
  for (size_t pos = 0; pos < out.size();) {
    size_t nl = out.find("\r\n", pos);
    if (nl == std::string::npos) nl = out.size();
    CHECK(DisplayWidth(out.substr(pos, nl - pos)) < 80);
    pos = nl + 2;
  }
  // Only as many rows as fit, keeping the selection visible.
  SessionPicker q = ThreeSessions();
  q.HandleKey(Code(KeyCode::kEnd));
  std::string small = q.Render(Style(Color::kDisabled), 80, 3);
  CHECK(small.find("Parser benchmarks") != std::string::npos);
  CHECK(small.find("Fix the parser") == std::string::npos);
}

TEST_CASE("ages") {
  CHECK(Ago(kNow, kNow) == "just now");
  CHECK(Ago(kNow - 42'000, kNow) == "42s ago");
  CHECK(Ago(kNow - 5 * 60'000, kNow) == "5m ago");
  CHECK(Ago(kNow - 3 * 3'600'000, kNow) == "3h ago");
  CHECK(Ago(kNow - 2 * 86'400'000, kNow) == "2d ago");
}

}  // namespace
}  // namespace codex::cli
