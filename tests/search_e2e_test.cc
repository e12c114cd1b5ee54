// End-to-end search through the `codex` binary: text a user saw in a real
// shell tool's output (a word starting its second line) is found with a
// readable snippet, and a fork's inherited text stays findable through the
// fork after its parent is removed; --cursor pages on both backends.
#include <algorithm>
#include <catch2/catch.hpp>
#include <functional>
#include <map>
#include <set>
#include <string>

#include "storage/open_database.h"
#include "testing/pg_test_server.h"
#include "testing/skip.h"
#include "tests/e2e_checks.h"
#include "tests/e2e_support.h"

namespace codex::testing {
namespace {

using e2e::ErrorLines;
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

namespace {

std::unique_ptr<storage::SessionDatabase> OpenLocation(const core::StoreLocation& location) {
  auto db = storage::OpenDatabase(location);
  INFO(db.status().ToString());
  REQUIRE(db.ok());
  return std::move(*db);
}

core::SessionInfo AddSession(storage::SessionDatabase& store, const CodexTestEnv& env,
                             const std::string& text) {
  core::NewSession spec;
  spec.cwd = env.workdir().string();
  spec.items = {core::UserMessage(text)};
  auto s = store.CreateSession(spec);
  REQUIRE(s.ok());
  return *s;
}

// The item ids of a --json search, and its next_cursor ("" when none).
std::pair<std::vector<int64_t>, std::string> JsonPage(CodexTestEnv& env,
                                                      std::vector<std::string> args) {
  args.insert(args.begin(), {"sessions", "search"});
  args.push_back("--json");
  auto r = Run(env, args);
  INFO("stderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  std::vector<int64_t> ids;
  std::string next;
  for (const auto& line : JsonLines(r.out)) {
    if (line.contains("next_cursor")) {
      CHECK(next.empty());  // one, the last line
      CHECK(line.size() == 1);
      next = line["next_cursor"];
    } else {
      CHECK(next.empty());
      // The fields docs/json-output.md names, in its order.
      std::vector<std::string> keys;
      for (const auto& [key, value] : line.items()) keys.push_back(key);
      CHECK(keys == std::vector<std::string>{"item_id", "kind", "role", "snippet", "sessions"});
      for (const auto& w : line["sessions"]) {
        CHECK(w["turn"].is_number_integer());
        CHECK(w["archived"].is_boolean());
      }
      ids.push_back(line["item_id"]);
    }
  }
  return {ids, next};
}

// Every page of `args` (--limit `page`), following next_cursor; `between`
// runs after each page.
std::vector<int64_t> AllPages(CodexTestEnv& env, std::vector<std::string> args, int page,
                              const std::function<void()>& between = {}) {
  args.push_back("--limit");
  args.push_back(std::to_string(page));
  std::vector<int64_t> out;
  std::string cursor;
  for (int n = 0; n < 100; ++n) {
    std::vector<std::string> a = args;
    if (!cursor.empty()) {
      a.push_back("--cursor");
      a.push_back(cursor);
    }
    auto [ids, next] = JsonPage(env, a);
    out.insert(out.end(), ids.begin(), ids.end());
    if (next.empty()) return out;
    if (between) between();
    cursor = next;
  }
  FAIL("the pages never end");
  return out;
}

// A refused search: one error line, the usage exit code, nothing on stdout,
// no control character, short (nothing long of the command line repeated).
std::string CheckOneErrorLine(CodexTestEnv& env, std::vector<std::string> args) {
  args.insert(args.begin(), {"sessions", "search"});
  auto r = Run(env, args);
  INFO("stderr: " << r.err.substr(0, 400));
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(ErrorLines(r.err).size() == 1);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK(r.err.size() < 300);
  for (char c : r.err) CHECK(static_cast<bool>(static_cast<unsigned char>(c) >= 0x20 || c == '\n'));
  return r.err;
}

// A refused --cursor: that, naming --cursor and the way out, nothing of the
// cursor repeated.
void CheckRefused(CodexTestEnv& env, std::vector<std::string> args, const std::string& cursor) {
  INFO("cursor: " << cursor.substr(0, 80));
  args.push_back("--cursor");
  args.push_back(cursor);
  const std::string err = CheckOneErrorLine(env, args);
  CHECK(err.find("--cursor") != std::string::npos);
  CHECK(err.find("without --cursor") != std::string::npos);
  if (cursor.size() > 8) CHECK(err.find(cursor.substr(0, 8)) == std::string::npos);
}

// The --cursor promises on one backend; returns a cursor of `heron` for the
// other backend to refuse.
std::string CursorPromises(CodexTestEnv& env, const core::StoreLocation& location,
                           const std::string& foreign_cursor) {
  auto store = OpenLocation(location);
  std::vector<core::SessionInfo> sessions;
  for (int i = 0; i < 9; ++i) {
    std::string text = "heron";
    for (int k = 0; k < i % 4; ++k) text += " heron";
    for (int k = 0; k < i; ++k) text += " mud" + std::to_string(k);
    sessions.push_back(AddSession(*store, env, text + (i % 3 == 0 ? " egret" : "")));
  }
  std::vector<int64_t> first_item;
  for (const auto& s : sessions) first_item.push_back(s.head_item_id.value_or(0));
  REQUIRE(store->Archive(sessions[4].id).ok());
  const std::vector<std::string> heron = {"heron"};
  const auto [whole, none] = JsonPage(env, {"heron", "--limit", "100"});
  REQUIRE(whole.size() == 9);
  CHECK(none.empty());
  // Pages of 1, 2 and 4, concatenated: the one list.
  for (int page : {1, 2, 4}) CHECK(AllPages(env, heron, page) == whole);
  CHECK(AllPages(env, {"heron", "egret"}, 1).size() == 3);
  // The most terms a search takes: its cursors are taken back too.
  CHECK(AllPages(env, std::vector<std::string>(64, "heron"), 4) == whole);
  // The text output: the archived session's hit is marked, and the next page
  // is named on stderr.
  auto text = Run(env, {"sessions", "search", "heron", "--limit", "100"});
  REQUIRE(text.exit_code == 0);
  const size_t archived = text.out.find(sessions[4].id);
  REQUIRE(archived != std::string::npos);
  CHECK(text.out.substr(archived, text.out.find('\n', archived) - archived).find("(archived)") !=
        std::string::npos);
  CHECK(std::count(text.out.begin(), text.out.end(), '(') == 1);  // only that one
  auto first = Run(env, {"sessions", "search", "heron", "--limit", "3"});
  REQUIRE(first.exit_code == 0);
  const std::string hint = "more matches: run the same search with --cursor ";
  const size_t at = first.err.find(hint);
  REQUIRE(at != std::string::npos);
  const std::string cursor =
      first.err.substr(at + hint.size(), first.err.find('\n', at) - at - hint.size());
  // The same words however typed (case, punctuation) continue the search.
  auto second = Run(env, {"sessions", "search", "HERON --", "--limit", "3", "--cursor", cursor});
  REQUIRE(second.exit_code == 0);
  // The second page goes on after the first: no hit of it again.
  // (Each session holds one hit: its id starts the hit's first line.)
  size_t shown = 0;
  for (size_t pos = 0; pos < first.out.size(); pos = first.out.find('\n', pos) + 1) {
    if (first.out[pos] == ' ') continue;
    ++shown;
    CHECK(second.out.find(first.out.substr(pos, 36)) == std::string::npos);
  }
  CHECK(shown == 3);

  // Between pages: a better match arrives, a session is appended to, one
  // already shown and one not shown yet are removed. The pages list each
  // hit once: those of the first page's store that are still there.
  std::vector<std::string> removed;
  const std::vector<int64_t> paged = AllPages(env, heron, 2, [&] {
    if (removed.size() >= 4) return;
    AddSession(*store, env, "heron heron heron heron");
    auto more = store->Append(sessions[1].id, sessions[1].head_item_id, "t",
                              {core::UserMessage("heron again")});
    REQUIRE(more.ok());
    sessions[1].head_item_id = more->back();
    for (const int i : {7, 2, 8, 0}) {
      const std::string id = sessions[static_cast<size_t>(i)].id;
      if (std::find(removed.begin(), removed.end(), id) != removed.end()) continue;
      REQUIRE(store->Remove(id).ok());
      removed.push_back(id);
      break;
    }
  });
  // Each session's hit is its one first item (the append came after).
  std::map<int64_t, std::string> session_of;
  for (size_t i = 0; i < sessions.size(); ++i) session_of[first_item[i]] = sessions[i].id;
  const std::set<int64_t> listed(paged.begin(), paged.end());
  CHECK(listed.size() == paged.size());  // nothing twice
  std::vector<int64_t> in_order;         // `whole` as far as `paged` lists it
  for (int64_t id : whole) {
    if (listed.count(id)) in_order.push_back(id);
    const bool removed_session =
        std::find(removed.begin(), removed.end(), session_of[id]) != removed.end();
    if (!removed_session) CHECK(listed.count(id) == 1);  // nothing that stayed is lost
  }
  CHECK(in_order == paged);  // nothing newer, the first page's order
  CHECK(removed.size() >= 3);

  // Cursors that are not this search's: another query, another directory
  // scope, cut, changed, huge, with escape sequences, of the other backend.
  CheckRefused(env, {"egret"}, cursor);
  CheckRefused(env, {"heron", "--all"}, cursor);
  CheckRefused(env, heron, cursor.substr(0, cursor.size() - 3));
  std::string changed = cursor;
  changed[3] = changed[3] == '1' ? '2' : '1';
  CheckRefused(env, heron, changed);
  CheckRefused(env, heron, "h20");  // the old cursor's form
  CheckRefused(env, heron, std::string(100'000, 'c'));
  CheckRefused(env, heron, "\x1b]0;owned\x07\x1b[2J" + cursor);
  CheckRefused(env, heron, "");
  if (!foreign_cursor.empty()) CheckRefused(env, heron, foreign_cursor);

  // Queries no search can answer, the same on both backends: one line that
  // does not repeat them.
  for (const std::string& bad :
       {std::string(2048, 'q'), std::string(100'000, 'q'), std::string("  "), std::string(""),
        std::string("ze\xFF"
                    "bra"),
        std::string("-- ... ()"), std::string("\"heron")}) {
    INFO("query: " << bad.substr(0, 40));
    const std::string err = CheckOneErrorLine(env, {bad});
    if (bad.size() > 100) CHECK(err.find("qqqqqqqqqq") == std::string::npos);
  }
  return cursor;
}

}  // namespace

TEST_CASE("search --cursor: pages are one list on SQLite and PostgreSQL; others' cursors refused") {
  auto lite = MakeEnv("[]");
  core::StoreLocation lite_store;
  lite_store.path = (lite->codex_home() / "sessions.db").string();
  const std::string lite_cursor = CursorPromises(*lite, lite_store, "");

  std::string why;
  storage::testing::PgTestServer* server = storage::testing::PgTestServer::Get(&why);
  if (server == nullptr) {
    SkipPart(why);
    return;
  }
  core::StoreLocation pg_store;
  pg_store.kind = core::StoreLocation::Kind::kPostgres;
  pg_store.url = server->NewDatabase();
  CodexTestEnvOptions options;
  options.extra_config = "session_store = \"" + pg_store.url + "\"\n";
  auto pg = MakeEnv("[]", std::move(options));
  const std::string pg_cursor = CursorPromises(*pg, pg_store, lite_cursor);
  CheckRefused(*lite, {"heron"}, pg_cursor);
}

}  // namespace codex::testing
