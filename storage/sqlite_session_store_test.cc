#include "storage/sqlite_session_store.h"

#include <sys/stat.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <set>

#include "core/item.h"
#include "core/session_store.h"
#include "core/uuid.h"
#include "testing/store_test_support.h"
#include "testing/temp_dir.h"

using codex::StatusCode;
using codex::core::Item;
using codex::core::ItemKind;
using codex::core::ListQuery;
using codex::core::NewSession;
using codex::core::SessionInfo;
using codex::core::StoredItem;
using codex::storage::SessionDatabase;
using codex::storage::testing::OpenOrDie;
using codex::storage::testing::OpenStore;
using codex::storage::testing::StoreDir;
using codex::testing::TempDir;

namespace {

SessionInfo Create(SessionDatabase& store, const std::string& cwd = "/work",
                   int64_t created_at_ms = 0) {
  NewSession spec;
  spec.cwd = cwd;
  spec.model = "gpt-test";
  spec.provider = "fake";
  spec.created_at_ms = created_at_ms;
  auto s = store.CreateSession(spec);
  INFO(s.status().ToString());
  REQUIRE(s.ok());
  return *s;
}

std::vector<int64_t> AppendOrDie(SessionDatabase& store, const std::string& id,
                                 std::optional<int64_t> head, const std::vector<Item>& items,
                                 const std::string& turn = "t") {
  auto ids = store.Append(id, head, turn, items);
  INFO(ids.status().ToString());
  REQUIRE(ids.ok());
  return *ids;
}

SessionInfo Find(SessionDatabase& store, const std::string& id) {
  auto s = store.FindSession(id);
  INFO(s.status().ToString());
  REQUIRE(s.ok());
  return *s;
}

std::vector<std::string> Bodies(const std::vector<StoredItem>& items) {
  std::vector<std::string> out;
  for (const auto& i : items) out.push_back(i.item.body);
  return out;
}

Item Checkpoint() {
  Item item;
  item.kind = ItemKind::kCompactionCheckpoint;
  item.body = R"({"type":"compaction_checkpoint"})";
  return item;
}

}  // namespace

TEST_CASE("Open creates the file 0600 with parent directories, and reopens") {
  CODEX_SQLITE_ONLY();
  StoreDir dir;
  const std::string path = dir.Store("a/b/sessions.db");
  const mode_t old_umask = ::umask(0);
  { auto store = OpenOrDie(path); }
  ::umask(old_umask);
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  // An existing file with loose permissions is tightened.
  REQUIRE(::chmod(path.c_str(), 0644) == 0);
  auto store = OpenOrDie(path);
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
}

TEST_CASE("Open refuses a file that is not a database") {
  CODEX_SQLITE_ONLY();
  StoreDir dir;
  const std::string path = dir.Store("junk.db");
  FILE* f = std::fopen(path.c_str(), "w");
  REQUIRE(f);
  std::fputs("this is not sqlite at all, just some text that is long enough to matter\n", f);
  std::fclose(f);
  auto store = OpenStore(path);
  REQUIRE_FALSE(store.ok());
  CHECK(store.status().message().find(path) != std::string::npos);
}

TEST_CASE("CreateSession, Append and LoadTranscript keep bodies byte for byte") {
  StoreDir dir;
  auto store = OpenOrDie(dir.Store("s.db"));
  SessionInfo s = Create(*store);
  CHECK(codex::core::LooksLikeUuid(s.id));
  CHECK_FALSE(s.head_item_id.has_value());
  CHECK(s.source == "exec");

  Item odd;
  odd.kind = ItemKind::kReasoning;
  // Unusual spacing, key order and escapes must survive untouched.
  odd.body = "{ \"type\" : \"reasoning\",\"encrypted_content\":\"gAAA\\u00e9==\" ,\"summary\":[] }";
  Item not_json;
  not_json.kind = ItemKind::kOther;
  not_json.body = std::string("raw\0bytes\xff", 10);
  std::vector<Item> items = {codex::core::UserMessage("hello there"), odd, not_json,
                             codex::core::AssistantMessage("hi")};
  auto ids = AppendOrDie(*store, s.id, std::nullopt, items, "turn-1");
  REQUIRE(ids.size() == 4);
  CHECK(ids[0] < ids[1]);

  SessionInfo again = Find(*store, s.id);
  REQUIRE(again.head_item_id == ids.back());
  CHECK(again.title == "hello there");
  auto transcript = store->LoadTranscript(again);
  REQUIRE(transcript.ok());
  REQUIRE(transcript->size() == 4);
  for (size_t i = 0; i < items.size(); ++i) {
    CHECK((*transcript)[i].item.body == items[i].body);
    CHECK((*transcript)[i].item.kind == items[i].kind);
    CHECK((*transcript)[i].id == ids[i]);
    CHECK((*transcript)[i].turn_id == "turn-1");
    CHECK((*transcript)[i].session_id == s.id);
  }
  CHECK((*transcript)[0].item.role == "user");
  CHECK_FALSE((*transcript)[0].parent_id.has_value());
  CHECK((*transcript)[1].parent_id == ids[0]);
}

TEST_CASE("Append is compare-and-set on the head") {
  StoreDir dir;
  const std::string path = dir.Store("s.db");
  auto a = OpenOrDie(path);
  auto b = OpenOrDie(path);
  SessionInfo s = Create(*a);
  auto first = AppendOrDie(*a, s.id, std::nullopt, {codex::core::UserMessage("one")});

  // Both processes resumed at `first`; a wins, b must be refused.
  auto ok = a->Append(s.id, first.back(), "t2", {codex::core::AssistantMessage("from a")});
  REQUIRE(ok.ok());
  auto conflict = b->Append(s.id, first.back(), "t2", {codex::core::AssistantMessage("from b")});
  REQUIRE_FALSE(conflict.ok());
  CHECK(conflict.status().code() == StatusCode::kFailedPrecondition);
  CHECK(conflict.status().reason() == codex::core::reason::kSessionAdvanced);
  CHECK(conflict.status().message() ==
        "session " + s.id + " was advanced by another process; use 'codex fork " + s.id + "'");
  // Nothing of b's was written.
  auto history = b->LoadHistory(Find(*b, s.id));
  REQUIRE(history.ok());
  CHECK(Bodies(*history) == std::vector<std::string>{codex::core::UserMessage("one").body,
                                                     codex::core::AssistantMessage("from a").body});
  // A stale nullopt head also conflicts.
  auto stale = b->Append(s.id, std::nullopt, "t", {codex::core::UserMessage("x")});
  CHECK(stale.status().reason() == codex::core::reason::kSessionAdvanced);
  // Unknown session.
  auto missing = b->Append(codex::core::NewUuidV7(), std::nullopt, "t", {});
  CHECK(missing.status().code() == StatusCode::kNotFound);
}

TEST_CASE("Title comes from the first real user message") {
  StoreDir dir;
  auto store = OpenOrDie(dir.Store("s.db"));
  SessionInfo s = Create(*store);
  auto ids = AppendOrDie(*store, s.id, std::nullopt,
                         {codex::core::DeveloperMessage("be nice"),
                          codex::core::UserMessage("<environment_context>\n<cwd>/x</cwd>"),
                          codex::core::UserMessage("# AGENTS.md instructions for /x\n..."),
                          codex::core::UserMessage("<user_instructions>\nfoo")});
  CHECK(Find(*store, s.id).title.empty());
  const std::string long_line(200, 'x');
  ids = AppendOrDie(*store, s.id, ids.back(),
                    {codex::core::UserMessage("\n  Fix the build  \nsecond line"),
                     codex::core::UserMessage("later")});
  CHECK(Find(*store, s.id).title == "Fix the build");
  ids = AppendOrDie(*store, s.id, ids.back(), {codex::core::UserMessage("not the title")});
  CHECK(Find(*store, s.id).title == "Fix the build");

  CHECK(codex::storage::TitleFromText(long_line).size() <= 80 + 3);
  CHECK(codex::storage::TitleFromText(long_line).substr(0, 10) == "xxxxxxxxxx");
  // Cutting never splits a UTF-8 sequence.
  std::string accents;
  for (int i = 0; i < 60; ++i) accents += "é";
  const std::string t = codex::storage::TitleFromText(accents);
  CHECK(t.size() <= 83);
  CHECK(t.substr(t.size() - 3) == "…");
  CHECK((t.size() - 3) % 2 == 0);
}

TEST_CASE("LoadTranscript stops at the newest checkpoint, LoadHistory does not") {
  StoreDir dir;
  auto store = OpenOrDie(dir.Store("s.db"));
  SessionInfo s = Create(*store);
  auto ids = AppendOrDie(*store, s.id, std::nullopt,
                         {codex::core::UserMessage("q1"), codex::core::AssistantMessage("a1")});
  ids =
      AppendOrDie(*store, s.id, ids.back(), {Checkpoint(), codex::core::UserMessage("summary 1")});
  ids = AppendOrDie(*store, s.id, ids.back(),
                    {codex::core::UserMessage("q2"), Checkpoint(),
                     codex::core::UserMessage("summary 2"), codex::core::UserMessage("q3")});
  SessionInfo cur = Find(*store, s.id);
  auto transcript = store->LoadTranscript(cur);
  REQUIRE(transcript.ok());
  CHECK(Bodies(*transcript) == std::vector<std::string>{codex::core::UserMessage("summary 2").body,
                                                        codex::core::UserMessage("q3").body});
  auto history = store->LoadHistory(cur);
  REQUIRE(history.ok());
  REQUIRE(history->size() == 8);
  CHECK(history->front().item.body == codex::core::UserMessage("q1").body);
  CHECK((*history)[2].item.kind == ItemKind::kCompactionCheckpoint);

  // A head that is itself a checkpoint gives an empty transcript.
  ids = AppendOrDie(*store, s.id, cur.head_item_id, {Checkpoint()});
  auto empty = store->LoadTranscript(Find(*store, s.id));
  REQUIRE(empty.ok());
  CHECK(empty->empty());
  // A session with no items.
  SessionInfo fresh = Create(*store);
  CHECK(store->LoadTranscript(fresh)->empty());
  CHECK(store->LoadHistory(fresh)->empty());
}

TEST_CASE("FindSession by id, prefix and name") {
  StoreDir dir;
  auto store = OpenOrDie(dir.Store("s.db"));
  SessionInfo a = Create(*store);
  SessionInfo b = Create(*store);
  CHECK(Find(*store, a.id).id == a.id);
  CHECK(Find(*store, " " + a.id + " ").id == a.id);
  std::string upper = a.id;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  CHECK(Find(*store, upper).id == a.id);

  // Shortest distinguishing prefix of at least 8 characters.
  size_t n = 8;
  while (a.id.substr(0, n) == b.id.substr(0, n)) ++n;
  CHECK(Find(*store, a.id.substr(0, n)).id == a.id);
  if (n > 8) {
    auto amb = store->FindSession(a.id.substr(0, n - 1));
    REQUIRE_FALSE(amb.ok());
    CHECK(amb.status().code() == StatusCode::kInvalidArgument);
    CHECK(amb.status().message().find("ambiguous") != std::string::npos);
  }
  // Two ids sharing a long prefix are ambiguous.
  NewSession spec;
  spec.id = "01900000-0000-7000-8000-000000000001";
  REQUIRE(store->CreateSession(spec).ok());
  spec.id = "01900000-0000-7000-8000-000000000002";
  REQUIRE(store->CreateSession(spec).ok());
  auto amb = store->FindSession("01900000-0000");
  REQUIRE_FALSE(amb.ok());
  CHECK(amb.status().code() == StatusCode::kInvalidArgument);
  CHECK(amb.status().message().find("ambiguous") != std::string::npos);
  // Any unique prefix resolves, however short; an ambiguous one lists the candidates.
  amb = store->FindSession("0190");
  REQUIRE_FALSE(amb.ok());
  CHECK(amb.status().code() == StatusCode::kInvalidArgument);
  CHECK(amb.status().message().find("01900000-0000-7000-8000-000000000001") != std::string::npos);
  CHECK(amb.status().message().find("01900000-0000-7000-8000-000000000002") != std::string::npos);
  NewSession lone;
  lone.id = "0aaaaaaa-0000-7000-8000-000000000003";
  REQUIRE(store->CreateSession(lone).ok());
  CHECK(Find(*store, "0a").id == lone.id);
  CHECK(Find(*store, "0AAA").id == lone.id);
  CHECK(store->FindSession("0191").status().code() == StatusCode::kNotFound);
  CHECK(store->FindSession("nope").status().code() == StatusCode::kNotFound);
  CHECK(store->FindSession("").status().code() == StatusCode::kInvalidArgument);
  // Creating an existing id fails.
  CHECK(store->CreateSession(spec).status().code() == StatusCode::kInvalidArgument);

  REQUIRE(store->Rename(b.id, "my-branch").ok());
  CHECK(Find(*store, "my-branch").id == b.id);
  CHECK(Find(*store, b.id).name == "my-branch");
  auto dup = store->Rename(a.id, "my-branch");
  CHECK(dup.code() == StatusCode::kInvalidArgument);
  REQUIRE(store->Rename(b.id, "").ok());
  CHECK(store->FindSession("my-branch").status().code() == StatusCode::kNotFound);
}

TEST_CASE("a fork is titled 'fork of <title>'; SetTitle replaces a title, one line, cut") {
  TempDir dir;
  const std::string path = dir.File("s.db");
  auto store = OpenOrDie(path);
  SessionInfo a = Create(*store);
  AppendOrDie(*store, a.id, a.head_item_id, {codex::core::UserMessage("\n  the question\nmore")});
  CHECK(Find(*store, a.id).title == "the question");
  auto fork = store->Fork(a.id, std::nullopt);
  REQUIRE(fork.ok());
  CHECK(fork->title == "fork of the question");
  CHECK(Find(*store, fork->id).title == "fork of the question");
  // An untitled parent is named by its id.
  SessionInfo untitled = Create(*store);
  auto fork2 = store->Fork(untitled.id, std::nullopt);
  REQUIRE(fork2.ok());
  CHECK(fork2->title == "fork of " + untitled.id.substr(0, 8));
  // Long titles are cut like any title.
  const int64_t updated = Find(*store, fork->id).updated_at_ms;
  REQUIRE(store->SetTitle(fork->id, "\n" + std::string(200, 'w') + "\nsecond line").ok());
  SessionInfo titled = Find(*store, fork->id);
  CHECK(titled.title == std::string(80, 'w') + "…");
  CHECK(titled.updated_at_ms == updated);
  REQUIRE(store->SetTitle(fork->id, "  a new direction  ").ok());
  CHECK(Find(*store, fork->id).title == "a new direction");
  CHECK(Find(*store, a.id).title == "the question");  // the parent keeps its own
  CHECK(store->SetTitle("no-such-session", "x").code() == StatusCode::kNotFound);
  // Another process sees it.
  auto other = OpenOrDie(path);
  CHECK(Find(*other, fork->id).title == "a new direction");
}

TEST_CASE("LatestSession and ListSessions page newest first") {
  StoreDir dir;
  auto store = OpenOrDie(dir.Store("s.db"));
  CHECK(store->LatestSession(std::nullopt).status().code() == StatusCode::kNotFound);
  std::vector<std::string> ids;  // creation order = update order
  for (int i = 0; i < 25; ++i) {
    ids.push_back(Create(*store, i % 2 ? "/odd" : "/even", 1'700'000'000'000 + i).id);
  }
  CHECK(store->LatestSession(std::nullopt)->id == ids[24]);
  CHECK(store->LatestSession(std::string("/odd"))->id == ids[23]);
  CHECK(store->LatestSession(std::string("/none")).status().code() == StatusCode::kNotFound);

  // Walk every page of 7 over all directories.
  ListQuery q;
  q.limit = 7;
  std::vector<std::string> seen;
  int pages = 0;
  do {
    auto page = store->ListSessions(q);
    REQUIRE(page.ok());
    for (const auto& s : page->sessions) seen.push_back(s.id);
    q.cursor = page->next_cursor;
    ++pages;
  } while (!q.cursor.empty());
  CHECK(pages == 4);
  std::vector<std::string> expected(ids.rbegin(), ids.rend());
  CHECK(seen == expected);

  // Exactly one page's worth: no cursor.
  q = ListQuery{};
  q.cwd = "/odd";
  q.limit = 12;
  auto odd = store->ListSessions(q);
  REQUIRE(odd.ok());
  CHECK(odd->sessions.size() == 12);
  CHECK(odd->next_cursor.empty());
  for (const auto& s : odd->sessions) CHECK(s.cwd == "/odd");

  // Archived sessions move to the archived listing.
  REQUIRE(store->Archive(ids[24]).ok());
  CHECK(store->LatestSession(std::nullopt)->id == ids[23]);
  q = ListQuery{};
  q.archived = true;
  auto archived = store->ListSessions(q);
  REQUIRE(archived.ok());
  REQUIRE(archived->sessions.size() == 1);
  CHECK(archived->sessions[0].archived);
  REQUIRE(store->Unarchive(ids[24]).ok());
  CHECK(store->LatestSession(std::nullopt)->id == ids[24]);

  // Bad cursor and limit.
  q = ListQuery{};
  q.cursor = "garbage";
  CHECK(store->ListSessions(q).status().code() == StatusCode::kInvalidArgument);
  q.cursor.clear();
  q.limit = 0;
  CHECK(store->ListSessions(q).status().code() == StatusCode::kInvalidArgument);

  // Appending moves a session to the front.
  AppendOrDie(*store, ids[0], std::nullopt, {codex::core::UserMessage("bump")});
  CHECK(store->LatestSession(std::nullopt)->id == ids[0]);
}

TEST_CASE(
    "ListSessions and LatestSession keep exact time order, ties by id, across any time span") {
  // Times a millisecond apart, equal, and on either side of every boundary
  // of 1, 10 and 60 seconds (PostgreSQL's recency indexes order by the time
  // in whole slots, migration 0009), created out of order, in two
  // directories; ties are broken by the id, compared byte-wise.
  StoreDir dir;
  auto store = OpenOrDie(dir.Store("s.db"));
  const int64_t base = 1'700'000'040'000;  // a multiple of 10 s and of 60 s
  const std::vector<int64_t> offsets = {9'999,  10'000, 0,       -1,     10'001, 9'999,
                                        59'999, 60'000, 60'001,  19'999, 20'000, 10'000,
                                        999,    1'000,  -10'000, 5,      60'000, 30'000};
  struct Made {
    int64_t at;
    std::string id;
    std::string cwd;
  };
  std::vector<Made> made;
  for (size_t i = 0; i < offsets.size(); ++i) {
    const std::string cwd = i % 3 ? "/a" : "/b";
    made.push_back({base + offsets[i], Create(*store, cwd, base + offsets[i]).id, cwd});
  }
  auto expected = [&](const std::optional<std::string>& cwd) {
    std::vector<Made> sorted;
    for (const Made& m : made) {
      if (!cwd || m.cwd == *cwd) sorted.push_back(m);
    }
    std::sort(sorted.begin(), sorted.end(), [](const Made& x, const Made& y) {
      return x.at != y.at ? x.at > y.at : x.id > y.id;
    });
    std::vector<std::string> ids;
    for (const Made& m : sorted) ids.push_back(m.id);
    return ids;
  };
  for (const std::optional<std::string>& cwd :
       {std::optional<std::string>(), std::optional<std::string>("/a"),
        std::optional<std::string>("/b")}) {
    INFO("cwd " << cwd.value_or("(all)"));
    for (int limit : {1, 2, 3, 5, 100}) {
      INFO("pages of " << limit);
      ListQuery q;
      q.cwd = cwd;
      q.limit = limit;
      std::vector<std::string> seen;
      do {
        auto page = store->ListSessions(q);
        REQUIRE(page.ok());
        for (const auto& s : page->sessions) seen.push_back(s.id);
        q.cursor = page->next_cursor;
      } while (!q.cursor.empty());
      CHECK(seen == expected(cwd));
    }
    auto latest = store->LatestSession(cwd);
    REQUIRE(latest.ok());
    CHECK(latest->id == expected(cwd).front());
  }
  // An append moves a session to the front, and the rest keep their order.
  const std::string oldest = expected(std::nullopt).back();
  AppendOrDie(*store, oldest, std::nullopt, {codex::core::UserMessage("bump")});
  ListQuery all;
  all.limit = 4;
  std::vector<std::string> seen;
  do {
    auto page = store->ListSessions(all);
    REQUIRE(page.ok());
    for (const auto& s : page->sessions) seen.push_back(s.id);
    all.cursor = page->next_cursor;
  } while (!all.cursor.empty());
  std::vector<std::string> want = expected(std::nullopt);
  want.pop_back();
  want.insert(want.begin(), oldest);
  CHECK(seen == want);
  CHECK(store->LatestSession(Find(*store, oldest).cwd)->id == oldest);
}

TEST_CASE("RecordTurn accumulates usage; RecordEvent validates payloads") {
  StoreDir dir;
  auto store = OpenOrDie(dir.Store("s.db"));
  SessionInfo s = Create(*store);
  codex::core::TurnRecord t;
  t.session_id = s.id;
  t.turn_id = "turn-1";
  t.started_at_ms = 10;
  t.ended_at_ms = 20;
  t.usage = {100, 10, 20, 5, 120};
  REQUIRE(store->RecordTurn(t).ok());
  t.turn_id = "turn-2";
  t.status = codex::core::TurnStatus::kFailed;
  t.error = "boom";
  t.usage = {50, 0, 10, 0, 60};
  REQUIRE(store->RecordTurn(t).ok());
  CHECK(Find(*store, s.id).tokens_used == 180);
  // Recording the same turn again replaces, not adds.
  t.usage.total_tokens = 70;
  REQUIRE(store->RecordTurn(t).ok());
  CHECK(Find(*store, s.id).tokens_used == 190);
  auto turns = store->LoadTurns(s.id);
  REQUIRE(turns.ok());
  REQUIRE(turns->size() == 2);
  CHECK((*turns)[0].usage == codex::core::TokenUsage{100, 10, 20, 5, 120});
  CHECK((*turns)[1].status == codex::core::TurnStatus::kFailed);
  CHECK((*turns)[1].error == "boom");

  t.session_id = codex::core::NewUuidV7();
  CHECK(store->RecordTurn(t).code() == StatusCode::kNotFound);

  REQUIRE(store->RecordEvent(s.id, "turn-1", "approval", R"({"decision":"approved"})").ok());
  CHECK(store->RecordEvent(s.id, "turn-1", "bad", "[1,2]").code() == StatusCode::kInvalidArgument);
  CHECK(store->RecordEvent(s.id, "turn-1", "bad", "{not json").code() ==
        StatusCode::kInvalidArgument);
  auto events = store->LoadEvents(s.id);
  REQUIRE(events.ok());
  REQUIRE(events->size() == 1);
  CHECK(events->front().type == "approval");
  CHECK(events->front().payload_json == R"({"decision":"approved"})");
}

TEST_CASE("Store objects outlive nothing: a reopened store sees committed data") {
  StoreDir dir;
  const std::string path = dir.Store("s.db");
  std::string id;
  std::vector<int64_t> ids;
  {
    auto store = OpenOrDie(path);
    id = Create(*store).id;
    ids = AppendOrDie(*store, id, std::nullopt, {codex::core::UserMessage("persist me")});
  }
  auto store = OpenOrDie(path);
  auto s = Find(*store, id);
  CHECK(s.head_item_id == ids.back());
  CHECK(store->LoadTranscript(s)->at(0).item.body == codex::core::UserMessage("persist me").body);
}

TEST_CASE("RecordUsage: the reported total comes back with the item it followed, also in forks") {
  StoreDir dir;
  const std::string path = dir.Store("s.db");
  std::string id;
  int64_t answer_id = 0;
  {
    auto store = OpenOrDie(path);
    SessionInfo s = Create(*store);
    id = s.id;
    auto ids = AppendOrDie(*store, s.id, std::nullopt,
                           {codex::core::UserMessage("q1"), codex::core::AssistantMessage("a1")});
    answer_id = ids.back();
    REQUIRE(store->RecordUsage(answer_id, 30'100).ok());
    REQUIRE(store->RecordUsage(answer_id, 30'200).ok());  // recorded again: replaced
    AppendOrDie(*store, s.id, ids.back(), {codex::core::UserMessage("q2")});
    // An item that does not exist is refused, nothing stored.
    CHECK_FALSE(store->RecordUsage(answer_id + 1000, 5).ok());
  }
  // Another process (a new store object on the same file) reads it back.
  auto store = OpenOrDie(path);
  auto transcript = store->LoadTranscript(Find(*store, id));
  REQUIRE(transcript.ok());
  REQUIRE(transcript->size() == 3);
  CHECK_FALSE((*transcript)[0].reported_total_tokens.has_value());
  CHECK((*transcript)[1].reported_total_tokens == 30'200);
  CHECK_FALSE((*transcript)[2].reported_total_tokens.has_value());
  auto fork = store->Fork(id, std::nullopt);
  REQUIRE(fork.ok());
  auto forked = store->LoadTranscript(*fork);
  REQUIRE(forked.ok());
  REQUIRE(forked->size() == 3);
  CHECK((*forked)[1].reported_total_tokens == 30'200);
  // After a checkpoint the old count is off the view.
  SessionInfo cur = Find(*store, id);
  AppendOrDie(*store, id, cur.head_item_id, {Checkpoint(), codex::core::UserMessage("summary")});
  auto compacted = store->LoadTranscript(Find(*store, id));
  REQUIRE(compacted.ok());
  REQUIRE(compacted->size() == 1);
  CHECK_FALSE(compacted->front().reported_total_tokens.has_value());
}

TEST_CASE("Transcripts follow the chain through forks and abandoned branches of one session") {
  StoreDir dir;
  auto store = OpenOrDie(dir.Store("s.db"));
  auto text = [](const std::vector<StoredItem>& items) {
    std::vector<std::string> out;
    for (const auto& i : items) out.push_back(codex::core::MessageText(i.item));
    return out;
  };
  SessionInfo a = Create(*store);
  auto a1 = AppendOrDie(*store, a.id, std::nullopt,
                        {codex::core::UserMessage("1"), codex::core::AssistantMessage("2")});
  auto b = store->Fork(a.id, std::nullopt);
  REQUIRE(b.ok());
  auto a2 = AppendOrDie(*store, a.id, a1.back(), {codex::core::UserMessage("a3")});
  auto b1 = AppendOrDie(*store, b->id, a1.back(), {codex::core::UserMessage("b3")});
  // a abandons its branch (as an undone compaction does) and continues from "2".
  REQUIRE(store->MoveHead(a.id, a2.back(), a1.back()).ok());
  AppendOrDie(*store, a.id, a1.back(), {codex::core::UserMessage("a4")});
  // A fork of the fork, continued.
  auto c = store->Fork(b->id, std::nullopt);
  REQUIRE(c.ok());
  AppendOrDie(*store, c->id, b1.back(), {codex::core::AssistantMessage("c4")});
  AppendOrDie(*store, b->id, b1.back(), {codex::core::AssistantMessage("b4")});

  CHECK(text(*store->LoadTranscript(Find(*store, a.id))) ==
        std::vector<std::string>{"1", "2", "a4"});
  CHECK(text(*store->LoadTranscript(Find(*store, b->id))) ==
        std::vector<std::string>{"1", "2", "b3", "b4"});
  CHECK(text(*store->LoadHistory(Find(*store, c->id))) ==
        std::vector<std::string>{"1", "2", "b3", "c4"});
  // Search credits only the live sessions whose chain holds the item.
  codex::storage::SearchQuery q;
  q.text = "a3";  // abandoned: on no chain
  auto none = store->Search(q);
  REQUIRE(none.ok());
  CHECK(none->empty());
  q.text = "b3";
  auto hits = store->Search(q);
  REQUIRE(hits.ok());
  REQUIRE(hits->size() == 1);
  std::set<std::string> holders;
  for (const auto& w : hits->front().sessions) holders.insert(w.session.id);
  CHECK(holders == std::set<std::string>{b->id, c->id});
  q.text = "\"1\"";
  hits = store->Search(q);
  REQUIRE(hits.ok());
  REQUIRE(hits->size() == 1);
  CHECK(hits->front().sessions.size() == 3);
}
