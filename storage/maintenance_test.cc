// Fork, remove, purge, search, tree and show of SqliteSessionStore.
#include <SQLiteCpp/SQLiteCpp.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include "base/clock.h"
#include "core/cancel.h"
#include "core/item.h"
#include "storage/sqlite_session_store.h"
#include "testing/store_test_support.h"
#include "testing/temp_dir.h"

using codex::StatusCode;
using codex::core::Item;
using codex::core::SessionInfo;
using codex::core::StoredItem;
using codex::storage::SessionDatabase;
using codex::storage::testing::OpenOrDie;
using codex::storage::testing::OpenStore;
using codex::storage::testing::StoreDir;
using codex::testing::TempDir;
namespace core = codex::core;

namespace {

SessionInfo Get(SessionDatabase& store, const std::string& id) {
  auto s = store.FindSession(id);
  INFO(s.status().ToString());
  REQUIRE(s.ok());
  return *s;
}

// A session of `turns` turns: context, then per turn a user message, a
// function call, its output and an assistant answer.
SessionInfo MakeSession(SessionDatabase& store, int turns, const std::string& tag = "") {
  core::NewSession spec;
  spec.cwd = "/w";
  spec.model = "m";
  auto s = store.CreateSession(spec);
  REQUIRE(s.ok());
  std::optional<int64_t> head;
  auto ids = store.Append(s->id, head, "ctx",
                          {core::DeveloperMessage("rules"),
                           core::UserMessage("<environment_context>cwd</environment_context>")});
  REQUIRE(ids.ok());
  head = ids->back();
  for (int t = 1; t <= turns; ++t) {
    Item call;
    call.kind = core::ItemKind::kFunctionCall;
    call.call_id = "call" + std::to_string(t);
    call.body = R"({"type":"function_call","name":"shell","arguments":"{}","call_id":"call)" +
                std::to_string(t) + "\"}";
    ids = store.Append(s->id, head, "turn" + std::to_string(t),
                       {core::UserMessage("question " + std::to_string(t) + " " + tag), call,
                        core::FunctionCallOutput(call.call_id, "output of " + std::to_string(t)),
                        core::AssistantMessage("answer " + std::to_string(t) + " " + tag)});
    REQUIRE(ids.ok());
    head = ids->back();
  }
  return Get(store, s->id);
}

codex::Result<std::vector<codex::storage::SearchHit>> Search(SessionDatabase& store,
                                                             const std::string& text,
                                                             int limit = 20) {
  codex::storage::SearchQuery q;
  q.text = text;
  q.limit = limit;
  return store.Search(q);
}

std::vector<std::string> HitSessions(const codex::storage::SearchHit& hit) {
  std::vector<std::string> out;
  for (const auto& w : hit.sessions) out.push_back(w.session.id);
  std::sort(out.begin(), out.end());
  return out;
}

codex::Result<std::vector<SessionInfo>> Purge(SessionDatabase& store, int64_t before,
                                              codex::storage::RemoveStats* stats,
                                              std::optional<std::string> cwd = std::nullopt,
                                              bool dry_run = false) {
  codex::storage::PurgeQuery q;
  q.updated_before_ms = before;
  q.cwd = std::move(cwd);
  q.dry_run = dry_run;
  return store.Purge(q, stats);
}

int64_t Count(const std::string& path, const std::string& sql) {
  return codex::storage::testing::QueryInt(path, sql);
}

std::vector<std::string> Bodies(const std::vector<StoredItem>& items) {
  std::vector<std::string> out;
  for (const auto& i : items) out.push_back(i.item.body);
  return out;
}

}  // namespace

TEST_CASE("Fork shares items and branches independently") {
  StoreDir dir;
  const std::string path = dir.Store("s.db");
  auto store = OpenOrDie(path);
  SessionInfo parent = MakeSession(*store, 3);
  const int64_t items_before = Count(path, "SELECT count(*) FROM items");

  auto fork = store->Fork(parent.id, std::nullopt);
  REQUIRE(fork.ok());
  CHECK(fork->head_item_id == parent.head_item_id);
  CHECK(fork->forked_from_session == parent.id);
  CHECK(fork->forked_from_item == parent.head_item_id);
  CHECK(fork->source == "fork");
  CHECK(fork->cwd == parent.cwd);
  CHECK(fork->title == "fork of " + parent.title);                   // until its own first message
  CHECK(Count(path, "SELECT count(*) FROM items") == items_before);  // nothing copied

  // Both branches advance without disturbing each other.
  auto a = store->Append(parent.id, parent.head_item_id, "x", {core::UserMessage("parent only")});
  REQUIRE(a.ok());
  auto b = store->Append(fork->id, fork->head_item_id, "x", {core::UserMessage("fork only")});
  REQUIRE(b.ok());
  auto pt = store->LoadTranscript(Get(*store, parent.id));
  auto ft = store->LoadTranscript(Get(*store, fork->id));
  REQUIRE(pt.ok());
  REQUIRE(ft.ok());
  CHECK(pt->back().item.body == core::UserMessage("parent only").body);
  CHECK(ft->back().item.body == core::UserMessage("fork only").body);
  CHECK(pt->size() == ft->size());
  for (size_t i = 0; i + 1 < pt->size(); ++i) CHECK((*pt)[i].id == (*ft)[i].id);
}

TEST_CASE("Fork at a turn ends at the last item of that turn") {
  StoreDir dir;
  auto store = OpenOrDie(dir.Store("s.db"));
  SessionInfo parent = MakeSession(*store, 3);
  auto history = store->LoadHistory(parent);
  REQUIRE(history.ok());
  REQUIRE(history->size() == 2 + 3 * 4);

  auto f1 = store->Fork(parent.id, 1);
  REQUIRE(f1.ok());
  auto t1 = store->LoadTranscript(*f1);
  REQUIRE(t1.ok());
  REQUIRE(t1->size() == 2 + 4);  // context + turn 1
  CHECK(t1->back().item.body == core::AssistantMessage("answer 1 ").body);

  auto f3 = store->Fork(parent.id, 3);
  REQUIRE(f3.ok());
  CHECK(f3->head_item_id == parent.head_item_id);

  // Turn 0 is "before turn 1" (Esc-Esc on the first message, fork --at-turn 0):
  // the session's context and nothing of its turns.
  auto f0 = store->Fork(parent.id, 0);
  REQUIRE(f0.ok());
  auto t0 = store->LoadTranscript(*f0);
  REQUIRE(t0.ok());
  CHECK(t0->size() == 2);

  for (int bad : {4, -1}) {
    auto r = store->Fork(parent.id, bad);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == StatusCode::kInvalidArgument);
    CHECK(r.status().message().find("has 3 turns") != std::string::npos);
  }
  CHECK(store->Fork("01900000-0000-7000-8000-00000000dead", 1).status().code() ==
        StatusCode::kNotFound);
  // A fork of a fork.
  auto f11 = store->Fork(f1->id, 1);
  REQUIRE(f11.ok());
  CHECK(f11->head_item_id == f1->head_item_id);
}

TEST_CASE("MoveHead is compare-and-set and can undo a compaction") {
  StoreDir dir;
  auto store = OpenOrDie(dir.Store("s.db"));
  SessionInfo s = MakeSession(*store, 1);
  const auto before = s.head_item_id;
  Item checkpoint;
  checkpoint.kind = core::ItemKind::kCompactionCheckpoint;
  checkpoint.body = "{}";
  auto ids = store->Append(s.id, before, "c", {checkpoint, core::UserMessage("summary")});
  REQUIRE(ids.ok());
  CHECK(store->LoadTranscript(Get(*store, s.id))->size() == 1);
  CHECK(store->MoveHead(s.id, before, before).code() == StatusCode::kFailedPrecondition);
  REQUIRE(store->MoveHead(s.id, ids->back(), before).ok());
  CHECK(store->LoadTranscript(Get(*store, s.id))->size() == 6);
  CHECK(store->MoveHead(s.id, before, 999'999).code() == StatusCode::kInvalidArgument);
}

TEST_CASE("Remove keeps items other sessions still reach, deletes the rest") {
  StoreDir dir;
  const std::string path = dir.Store("s.db");
  auto store = OpenOrDie(path);
  SessionInfo parent = MakeSession(*store, 3);
  auto fork = store->Fork(parent.id, 1);  // shares context + turn 1 (6 items)
  REQUIRE(fork.ok());
  auto fa = store->Append(fork->id, fork->head_item_id, "f", {core::UserMessage("fork turn")});
  REQUIRE(fa.ok());
  auto fork_transcript = store->LoadTranscript(Get(*store, fork->id));
  REQUIRE(fork_transcript.ok());
  SessionInfo other = MakeSession(*store, 1, "other");
  const int64_t other_items = 2 + 4;

  REQUIRE(store->RecordEvent(parent.id, "turn1", "x", "{}").ok());
  core::TurnRecord turn;
  turn.session_id = parent.id;
  turn.turn_id = "turn1";
  REQUIRE(store->RecordTurn(turn).ok());

  auto stats = store->Remove(parent.id);
  REQUIRE(stats.ok());
  CHECK(stats->sessions == 1);
  CHECK(stats->items == 2 * 4);  // turns 2 and 3
  CHECK(store->FindSession(parent.id).status().code() == StatusCode::kNotFound);
  // The fork is intact, byte for byte.
  auto after = store->LoadTranscript(Get(*store, fork->id));
  REQUIRE(after.ok());
  CHECK(Bodies(*after) == Bodies(*fork_transcript));
  CHECK(Count(path, "SELECT count(*) FROM items") == 7 + other_items);
  CHECK(Count(path, "SELECT count(*) FROM events") == 0);
  CHECK(Count(path, "SELECT count(*) FROM turns") == 0);
  // No orphans: every parent exists, the FTS index matches the items.
  CHECK(Count(path,
              "SELECT count(*) FROM items WHERE parent_id IS NOT NULL AND parent_id NOT IN "
              "(SELECT id FROM items)") == 0);
  CHECK(Count(path, codex::storage::testing::IsPostgres()
                        ? "SELECT count(*) FROM items_refold WHERE item_id NOT IN"
                          " (SELECT id FROM items)"
                        : "SELECT count(*) FROM items_fts_docsize WHERE id NOT IN"
                          " (SELECT id FROM items)") == 0);
  if (!codex::storage::testing::IsPostgres()) {  // PostgreSQL enforces every foreign key itself
    SQLite::Database db(path, SQLite::OPEN_READONLY);
    SQLite::Statement fk(db, "PRAGMA foreign_key_check");
    CHECK_FALSE(fk.executeStep());
  }
  // The fork's own parent link survives as history; tree shows the fork alone.
  auto tree = store->Tree(fork->id);
  REQUIRE(tree.ok());
  REQUIRE(tree->size() == 1);

  // Removing the fork now frees the shared items too; `other` is untouched.
  stats = store->Remove(fork->id);
  REQUIRE(stats.ok());
  CHECK(stats->items == 7);
  CHECK(Count(path, "SELECT count(*) FROM items") == other_items);
  CHECK(store->LoadTranscript(Get(*store, other.id))->size() == static_cast<size_t>(other_items));
  CHECK(store->Remove(fork->id).status().code() == StatusCode::kNotFound);
}

TEST_CASE("Remove with progress goes in batches, newest first; cancelled, it removes nothing") {
  StoreDir dir;
  const std::string path = dir.Store("s.db");
  auto store = OpenOrDie(path);
  // 4,602 items, 4,196 of them its own: three batches, the last one short. A fork shares the first
  // 101 turns (406 items), which must stay.
  SessionInfo big = MakeSession(*store, 1'150);
  auto fork = store->Fork(big.id, 101);
  REQUIRE(fork.ok());
  auto fork_transcript = store->LoadTranscript(Get(*store, fork->id));
  REQUIRE(fork_transcript.ok());
  const int64_t takes = 2 + 4 * 1'150 - (2 + 4 * 101);
  for (const int cancel_after_batches : {0, 1, 2}) {
    INFO("cancelled after " << cancel_after_batches << " batches");
    codex::core::CancelToken token;
    codex::storage::RemoveHooks hooks;
    hooks.cancel = &token;
    int batches = 0;
    hooks.progress = [&](int64_t, int64_t) {
      if (++batches >= cancel_after_batches) token.Cancel();
    };
    if (cancel_after_batches == 0) token.Cancel();
    auto removed = store->Remove(big.id, hooks);
    REQUIRE_FALSE(removed.ok());
    CHECK(removed.status().code() == StatusCode::kCancelled);
    CHECK(removed.status().message().find("nothing was removed") != std::string::npos);
    CHECK(batches == cancel_after_batches);
    CHECK(Count(path, "SELECT count(*) FROM items") == 2 + 4 * 1'150);
    CHECK(store->LoadTranscript(Get(*store, big.id))->size() == static_cast<size_t>(2 + 4 * 1'150));
  }
  // Not cancelled: every batch reported, the last one at the total.
  std::vector<std::pair<int64_t, int64_t>> reports;
  codex::storage::RemoveHooks hooks;
  hooks.progress = [&](int64_t done, int64_t total) { reports.emplace_back(done, total); };
  auto removed = store->Remove(big.id, hooks);
  REQUIRE(removed.ok());
  CHECK(removed->items == takes);
  const auto batches =
      (takes + codex::storage::kRemoveItemBatch - 1) / codex::storage::kRemoveItemBatch;
  REQUIRE(reports.size() == static_cast<size_t>(batches));
  for (size_t i = 0; i < reports.size(); ++i) {
    CHECK(reports[i].second == takes);
    CHECK(reports[i].first ==
          std::min(takes, static_cast<int64_t>(i + 1) * codex::storage::kRemoveItemBatch));
  }
  // The fork is intact, no item lost its parent.
  auto after = store->LoadTranscript(Get(*store, fork->id));
  REQUIRE(after.ok());
  CHECK(Bodies(*after) == Bodies(*fork_transcript));
  CHECK(Count(path, "SELECT count(*) FROM items") == 2 + 4 * 101);
  CHECK(Count(path,
              "SELECT count(*) FROM items WHERE parent_id IS NOT NULL AND parent_id NOT IN "
              "(SELECT id FROM items)") == 0);
  CHECK(store->FindSession(big.id).status().code() == StatusCode::kNotFound);
}

TEST_CASE("Remove keeps an item a surviving branch hangs from even off the head chain") {
  StoreDir dir;
  const std::string path = dir.Store("s.db");
  auto store = OpenOrDie(path);
  SessionInfo a = MakeSession(*store, 2);
  // b forks a at turn 1, then b moves its own head back: b's fork point is the
  // only thing that still needs a's turn-1 items.
  auto b = store->Fork(a.id, 1);
  REQUIRE(b.ok());
  auto extra = store->Append(b->id, b->head_item_id, "b", {core::UserMessage("b1")});
  REQUIRE(extra.ok());
  REQUIRE(store->MoveHead(b->id, extra->back(), std::nullopt).ok());
  REQUIRE(store->Remove(a.id).ok());
  CHECK(Count(path,
              "SELECT count(*) FROM items WHERE parent_id IS NOT NULL AND parent_id NOT IN "
              "(SELECT id FROM items)") == 0);
  // b's dangling item and the fork point's chain are kept.
  CHECK(Count(path, "SELECT count(*) FROM items") == 2 + 4 + 1);
}

TEST_CASE("Purge deletes old sessions only, in one directory or all, or lists them") {
  StoreDir dir;
  const std::string path = dir.Store("s.db");
  auto store = OpenOrDie(path);
  core::NewSession old_spec;
  old_spec.created_at_ms = 1000;
  old_spec.cwd = "/elsewhere";
  old_spec.items = {core::UserMessage("old question")};
  auto old_session = store->CreateSession(old_spec);
  REQUIRE(old_session.ok());
  SessionInfo recent = MakeSession(*store, 1);
  codex::storage::RemoveStats stats;
  // Scoped to /w: the old session lives in /elsewhere.
  auto gone = Purge(*store, 5000, &stats, std::string("/w"));
  REQUIRE(gone.ok());
  CHECK(gone->empty());
  // A dry run lists and changes nothing.
  gone = Purge(*store, 5000, &stats, std::nullopt, /*dry_run=*/true);
  REQUIRE(gone.ok());
  REQUIRE(gone->size() == 1);
  CHECK(gone->at(0).id == old_session->id);
  CHECK(store->FindSession(old_session->id).ok());
  gone = Purge(*store, 5000, &stats);
  REQUIRE(gone.ok());
  CHECK(stats.sessions == 1);
  CHECK(store->FindSession(old_session->id).status().code() == StatusCode::kNotFound);
  CHECK(store->FindSession(recent.id).ok());
  // Sessions updated by an append are not old any more.
  stats = {};
  REQUIRE(Purge(*store, recent.updated_at_ms, &stats).ok());
  CHECK(stats.sessions == 0);
  REQUIRE(Purge(*store, recent.updated_at_ms + 1, &stats, std::string("/w")).ok());
  CHECK(stats.sessions == 1);
  CHECK(stats.items == 6);
  CHECK(Count(path, "SELECT count(*) FROM items") == 0);
  CHECK(Count(path, codex::storage::testing::IsPostgres()
                        ? "SELECT count(*) FROM items_refold"
                        : "SELECT count(*) FROM items_fts_docsize") == 0);
}

TEST_CASE("Search finds messages and tool output, with the sessions that hold them") {
  StoreDir dir;
  auto store = OpenOrDie(dir.Store("s.db"));
  SessionInfo a = MakeSession(*store, 2, "pelican");
  SessionInfo b = MakeSession(*store, 1, "walrus");
  auto hits = Search(*store, "pelican");
  REQUIRE(hits.ok());
  REQUIRE(hits->size() == 4);  // two questions, two answers
  for (const auto& h : *hits) {
    CHECK(HitSessions(h) == std::vector<std::string>{a.id});
    CHECK(h.snippet.find("[pelican]") != std::string::npos);
    CHECK(h.sessions[0].turn >= 1);
  }
  hits = Search(*store, "output");
  REQUIRE(hits.ok());
  CHECK(hits->size() == 3);
  hits = Search(*store, "question walrus");
  REQUIRE(hits.ok());
  REQUIRE(hits->size() == 1);
  CHECK(HitSessions(hits->at(0)) == std::vector<std::string>{b.id});
  CHECK(hits->at(0).sessions[0].turn == 1);
  // A phrase needs its words in a row; a prefix matches longer words.
  CHECK(Search(*store, "\"question 2\"")->size() == 1);
  CHECK(Search(*store, "\"2 question\"")->empty());
  CHECK(Search(*store, "pelic*")->size() == 4);
  CHECK(Search(*store, "pelic")->empty());
  // Environment context is not indexed; FTS operators are plain words.
  CHECK(Search(*store, "environment_context")->empty());
  CHECK(Search(*store, "question AND NOT (")->empty());
  // Malformed queries get a clear error, not an SQLite message.
  for (const char* bad : {"\"unbalanced", "*", "pel*can", "   "}) {
    INFO(bad);
    auto r = Search(*store, bad);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == StatusCode::kInvalidArgument);
    CHECK(r.status().message().find("sqlite") == std::string::npos);
  }
  CHECK(Search(*store, "pelican", 0).status().code() == StatusCode::kInvalidArgument);
}

TEST_CASE("Search indexes decoded text: tool output lines, commands, reasoning summaries") {
  StoreDir dir;
  auto store = OpenOrDie(dir.Store("s.db"));
  Item call;
  call.kind = core::ItemKind::kFunctionCall;
  call.call_id = "c1";
  call.body =
      R"({"type":"function_call","name":"shell","arguments":"{\"command\":[\"bash\",\"-lc\",\"grep -rn flamingo src\"]}","call_id":"c1"})";
  // The shell tool's output: a JSON text inside the JSON body.
  Item output = core::FunctionCallOutput(
      "c1",
      R"({"output":"first line\nhippo at the start of line two\n","metadata":{"exit_code":0}})");
  Item reasoning;
  reasoning.kind = core::ItemKind::kReasoning;
  reasoning.body =
      R"({"type":"reasoning","summary":[{"type":"summary_text","text":"Considering the capybara"}],"encrypted_content":"gAAAAxyzzy"})";
  core::NewSession spec;
  spec.cwd = "/w";
  spec.items = {core::UserMessage("look around"), call, output, reasoning,
                core::AssistantMessage("done")};
  auto s = store->CreateSession(spec);
  REQUIRE(s.ok());
  auto hits = Search(*store, "hippo");
  REQUIRE(hits.ok());
  REQUIRE(hits->size() == 1);
  CHECK(hits->at(0).kind == "function_call_output");
  CHECK(hits->at(0).snippet.find("[hippo]") != std::string::npos);
  CHECK(hits->at(0).snippet.find("\\n") == std::string::npos);
  CHECK(hits->at(0).snippet.find("metadata") == std::string::npos);
  CHECK(Search(*store, "nhippo")->empty());
  CHECK(Search(*store, "exit_code")->empty());  // metadata is not what the user saw
  CHECK(Search(*store, "flamingo")->size() == 1);
  CHECK(Search(*store, "\"grep -rn flamingo\"")->size() == 1);
  CHECK(Search(*store, "capybara")->size() == 1);
  CHECK(Search(*store, "xyzzy")->empty());  // encrypted content is not text
}

TEST_CASE("Search lists every live session holding an item, forks after the parent is gone") {
  StoreDir dir;
  auto store = OpenOrDie(dir.Store("s.db"));
  SessionInfo parent = MakeSession(*store, 2, "heron");
  auto fork = store->Fork(parent.id, 1);
  REQUIRE(fork.ok());
  auto full_fork = store->Fork(parent.id, std::nullopt);
  REQUIRE(full_fork.ok());
  auto hits = Search(*store, "\"question 1\"");
  REQUIRE(hits.ok());
  REQUIRE(hits->size() == 1);
  std::vector<std::string> all = {parent.id, fork->id, full_fork->id};
  std::sort(all.begin(), all.end());
  CHECK(HitSessions(hits->at(0)) == all);
  // Turn 2 is not in the fork taken at turn 1.
  hits = Search(*store, "\"question 2\"");
  REQUIRE(hits->size() == 1);
  std::vector<std::string> two = {parent.id, full_fork->id};
  std::sort(two.begin(), two.end());
  CHECK(HitSessions(hits->at(0)) == two);
  CHECK(hits->at(0).sessions[0].turn == 2);
  // Scoped to another directory: nothing.
  codex::storage::SearchQuery q;
  q.text = "heron";
  q.cwd = "/other";
  CHECK(store->Search(q)->empty());
  // The parent goes; its text stays findable through the forks only.
  REQUIRE(store->Remove(parent.id).ok());
  hits = Search(*store, "\"question 1\"");
  REQUIRE(hits.ok());
  REQUIRE(hits->size() == 1);
  std::vector<std::string> forks = {fork->id, full_fork->id};
  std::sort(forks.begin(), forks.end());
  CHECK(HitSessions(hits->at(0)) == forks);
  REQUIRE(store->Remove(full_fork->id).ok());
  CHECK(Search(*store, "\"question 2\"")->empty());
  CHECK(Search(*store, "\"question 1\"")->size() == 1);
}

TEST_CASE("Tree and Show") {
  StoreDir dir;
  auto store = OpenOrDie(dir.Store("s.db"));
  SessionInfo root = MakeSession(*store, 2);
  // Children are ordered by creation time; keep the forks in distinct milliseconds.
  auto f1 = store->Fork(root.id, 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(3));
  auto f2 = store->Fork(root.id, std::nullopt);
  REQUIRE(f1.ok());
  REQUIRE(f2.ok());
  auto f11 = store->Fork(f1->id, std::nullopt);
  REQUIRE(f11.ok());
  SessionInfo unrelated = MakeSession(*store, 1);

  auto tree = store->Tree(f11->id);
  REQUIRE(tree.ok());
  REQUIRE(tree->size() == 4);
  CHECK((*tree)[0].session.id == root.id);
  CHECK((*tree)[0].depth == 0);
  CHECK((*tree)[1].session.id == f1->id);
  CHECK((*tree)[1].depth == 1);
  CHECK((*tree)[2].session.id == f11->id);
  CHECK((*tree)[2].depth == 2);
  CHECK((*tree)[3].session.id == f2->id);
  CHECK(store->Tree(unrelated.id)->size() == 1);

  core::TurnRecord t;
  t.session_id = root.id;
  t.turn_id = "turn1";
  t.usage.total_tokens = 42;
  REQUIRE(store->RecordTurn(t).ok());
  REQUIRE(store->RecordEvent(root.id, "turn1", "approval", R"({"ok":true})").ok());
  auto d = store->Show(root.id);
  REQUIRE(d.ok());
  CHECK(d->session.id == root.id);
  CHECK(d->session.tokens_used == 42);
  CHECK(d->history.size() == 10);
  REQUIRE(d->turns.size() == 1);
  REQUIRE(d->events.size() == 1);
  REQUIRE(d->forks.size() == 2);
  CHECK(d->forks[0].id == f1->id);
}

TEST_CASE("Turns are not started by a compaction's replacement history") {
  StoreDir dir;
  auto store = OpenOrDie(dir.Store("s.db"));
  SessionInfo s = MakeSession(*store, 2);
  Item checkpoint;
  checkpoint.kind = core::ItemKind::kCompactionCheckpoint;
  checkpoint.body = R"({"type":"compaction_checkpoint","replacement_items":2})";
  auto ids = store->Append(
      s.id, s.head_item_id, "c",
      {checkpoint, core::UserMessage("question 2 "), core::UserMessage("summary of it all")});
  REQUIRE(ids.ok());
  ids = store->Append(s.id, ids->back(), "t3",
                      {core::UserMessage("third"), core::AssistantMessage("third answer")});
  REQUIRE(ids.ok());
  auto history = store->LoadHistory(Get(*store, s.id));
  REQUIRE(history.ok());
  CHECK(codex::storage::TurnStartIndexes(*history).size() == 3);
  // Turn 2 ends with the compaction's replacement history.
  auto f2 = store->Fork(s.id, 2);
  REQUIRE(f2.ok());
  auto t2 = store->LoadTranscript(*f2);
  REQUIRE(t2.ok());
  REQUIRE(t2->size() == 2);
  CHECK(core::MessageText(t2->back().item) == "summary of it all");
  auto f3 = store->Fork(s.id, 3);
  REQUIRE(f3.ok());
  CHECK(f3->head_item_id == ids->back());
  CHECK(store->Fork(s.id, 4).status().code() == StatusCode::kInvalidArgument);
}

TEST_CASE("Search names the turn an item belongs to, copies in a compacted history not counted") {
  StoreDir dir;
  auto store = OpenOrDie(dir.Store("s.db"));
  Item checkpoint;
  checkpoint.kind = core::ItemKind::kCompactionCheckpoint;
  checkpoint.body = R"({"type":"compaction_checkpoint","replacement_items":2})";
  core::NewSession spec;
  spec.cwd = "/w";
  spec.items = {core::UserMessage("first ask"),
                core::AssistantMessage("first reply"),
                checkpoint,
                core::UserMessage("first ask"),
                core::AssistantMessage("summary"),
                core::UserMessage("second ask"),
                core::AssistantMessage("ocelot reply")};
  REQUIRE(store->CreateSession(spec).ok());
  auto hits = Search(*store, "ocelot");
  REQUIRE(hits.ok());
  REQUIRE(hits->size() == 1);
  CHECK(hits->at(0).sessions.at(0).turn == 2);
  hits = Search(*store, "\"first reply\"");
  REQUIRE(hits->size() == 1);
  CHECK(hits->at(0).sessions.at(0).turn == 1);
}

TEST_CASE("Purge of many sessions reports its progress per batch; forks across batches go whole") {
  StoreDir dir;
  const std::string path = dir.Store("s.db");
  auto store = OpenOrDie(path);
  std::vector<SessionInfo> parents;
  for (int i = 0; i < 150; ++i) parents.push_back(MakeSession(*store, 1));
  // Forks of the first parents are newer: they fall in the second batch, and
  // the first batch must keep the items they share until then.
  for (int i = 0; i < 10; ++i) {
    auto f = store->Fork(parents[static_cast<size_t>(i)].id, 1);
    REQUIRE(f.ok());
    REQUIRE(store->Append(f->id, f->head_item_id, "f", {core::UserMessage("fork turn")}).ok());
  }
  // A session that is not old stays, with its items (the pauses put its
  // millisecond times strictly after the others').
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  core::NewSession keep_spec;
  keep_spec.items = {core::UserMessage("keep me")};
  auto keep = store->CreateSession(keep_spec);
  REQUIRE(keep.ok());
  const int64_t before = Get(*store, keep->id).updated_at_ms;
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  REQUIRE(store->Append(keep->id, keep->head_item_id, "k", {core::UserMessage("newer")}).ok());

  codex::storage::PurgeQuery q;
  q.updated_before_ms = before;
  std::vector<std::pair<int64_t, int64_t>> reports;
  q.progress = [&](int64_t done, int64_t total) { reports.emplace_back(done, total); };
  codex::storage::RemoveStats stats;
  auto gone = store->Purge(q, &stats);
  REQUIRE(gone.ok());
  REQUIRE(gone->size() == 160);
  const auto total = static_cast<int64_t>(gone->size());
  // One report a batch of kPurgeBatch, counting up to the total.
  REQUIRE(reports.size() ==
          (gone->size() + codex::storage::kPurgeBatch - 1) / codex::storage::kPurgeBatch);
  for (size_t i = 0; i < reports.size(); ++i) {
    CHECK(reports[i].second == total);
    CHECK(reports[i].first ==
          std::min<int64_t>(total, static_cast<int64_t>((i + 1) * codex::storage::kPurgeBatch)));
  }
  CHECK(stats.sessions == total);
  // Everything the purged sessions held is gone, nothing dangles, the kept
  // session reads whole.
  CHECK(Count(path,
              "SELECT count(*) FROM items WHERE parent_id IS NOT NULL AND parent_id NOT IN "
              "(SELECT id FROM items)") == 0);
  CHECK(Count(path, "SELECT count(*) FROM items") == 2);
  CHECK(store->LoadTranscript(Get(*store, keep->id))->size() == 2);
  // A dry run reports no progress: nothing is removed.
  reports.clear();
  q.dry_run = true;
  REQUIRE(store->Purge(q, &stats).ok());
  CHECK(reports.empty());
}

TEST_CASE("Purge cancelled (Ctrl-C) before or between batches rolls back: nothing is removed") {
  StoreDir dir;
  auto store = OpenOrDie(dir.Store("s.db"));
  for (int i = 0; i < 250; ++i) MakeSession(*store, 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const int64_t cutoff = codex::SystemClock().NowMs();
  auto listed = [&] {
    codex::core::ListQuery all;
    all.limit = 1000;
    auto page = store->ListSessions(all);
    REQUIRE(page.ok());
    return page->sessions.size();
  };
  REQUIRE(listed() == 250);
  for (const int cancel_after_batches : {0, 1, 2}) {
    INFO("cancelled after " << cancel_after_batches << " batches");
    codex::core::CancelToken token;
    codex::storage::PurgeQuery q;
    q.updated_before_ms = cutoff;
    q.cancel = &token;
    int batches = 0;
    q.progress = [&](int64_t, int64_t) {
      if (++batches >= cancel_after_batches) token.Cancel();
    };
    if (cancel_after_batches == 0) token.Cancel();
    codex::storage::RemoveStats stats;
    auto gone = store->Purge(q, &stats);
    REQUIRE_FALSE(gone.ok());
    CHECK(gone.status().code() == StatusCode::kCancelled);
    CHECK(gone.status().message().find("nothing was removed") != std::string::npos);
    CHECK(listed() == 250);
  }
  // Not cancelled: the same query removes them all.
  codex::storage::PurgeQuery q;
  q.updated_before_ms = cutoff;
  codex::storage::RemoveStats stats;
  REQUIRE(store->Purge(q, &stats).ok());
  CHECK(stats.sessions == 250);
  CHECK(listed() == 0);
}
