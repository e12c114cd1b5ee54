// CopyAllSessions / VerifyCopy (`codex sessions migrate`) between stores
// opened through the one factory (storage::OpenDatabase): from SQLite into
// the backend of the run ($CODEX_TEST_STORE: SQLite, or the private
// PostgreSQL server) and from there back into SQLite.
#include "storage/copy_sessions.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include "base/time.h"
#include "core/compaction_checkpoint.h"
#include "core/session_lease.h"
#include "storage/open_database.h"
#include "testing/manual_clock.h"
#include "testing/store_test_support.h"
#include "testing/temp_dir.h"

using codex::StatusCode;
using codex::core::Item;
using codex::core::SessionInfo;
using codex::core::StoredItem;
using namespace codex::storage;
using codex::storage::testing::StoreDir;
namespace core = codex::core;

namespace {

std::unique_ptr<SessionDatabase> Open(const std::string& location) {
  auto db = codex::storage::testing::OpenStore(location);
  INFO(db.status().ToString());
  REQUIRE(db.ok());
  return std::move(*db);
}

SessionInfo Get(SessionDatabase& store, const std::string& id) {
  auto s = store.FindSession(id);
  INFO(s.status().ToString());
  REQUIRE(s.ok());
  return *s;
}

// A session of `turns` turns with usage, turn records and an event per turn.
SessionInfo MakeSession(SessionDatabase& store, int turns, const std::string& tag) {
  core::NewSession spec;
  spec.cwd = "/w/" + tag;
  spec.model = "m";
  spec.items = {core::DeveloperMessage("rules " + tag)};
  spec.turn_id = "ctx";
  auto s = store.CreateSession(spec);
  REQUIRE(s.ok());
  std::optional<int64_t> head = s->head_item_id;
  for (int t = 1; t <= turns; ++t) {
    Item call;
    call.kind = core::ItemKind::kFunctionCall;
    call.call_id = "call" + std::to_string(t);
    call.body = R"({"type":"function_call","name":"shell","arguments":"{}","call_id":"call)" +
                std::to_string(t) + "\"}";
    const std::string turn = tag + "-turn" + std::to_string(t);
    auto ids = store.Append(s->id, head, turn,
                            {core::UserMessage("question " + std::to_string(t) + " " + tag), call,
                             core::FunctionCallOutput(call.call_id, "out " + std::to_string(t)),
                             core::AssistantMessage("answer " + std::to_string(t) + " " + tag)});
    REQUIRE(ids.ok());
    head = ids->back();
    REQUIRE(store.RecordUsage(*head, 100 * t).ok());
    core::TurnRecord rec;
    rec.session_id = s->id;
    rec.turn_id = turn;
    rec.started_at_ms = 1000 * t;
    rec.ended_at_ms = 1000 * t + 5;
    rec.usage.total_tokens = 100 * t;
    REQUIRE(store.RecordTurn(rec).ok());
    REQUIRE(store.RecordEvent(s->id, turn, "approval", R"({"n":)" + std::to_string(t) + "}").ok());
  }
  return Get(store, s->id);
}

std::vector<std::string> Bodies(SessionDatabase& store, const std::string& id) {
  auto h = store.LoadHistory(Get(store, id));
  REQUIRE(h.ok());
  std::vector<std::string> out;
  for (const StoredItem& it : *h) out.push_back(it.item.body);
  return out;
}

}  // namespace

TEST_CASE("Every session, fork, checkpoint, turn, usage and event is copied; forks share items") {
  StoreDir dir;
  auto src = Open(dir.File("src.db"));
  const SessionInfo a = MakeSession(*src, 3, "a");
  // A compaction: checkpoint + replacement history after turn 3.
  core::CompactionOutput out;
  out.mode = "local";
  out.summary = "summary of a";
  out.new_history = {core::UserMessage("question 1 a"), core::AssistantMessage("summary of a")};
  std::vector<Item> compacted{core::MakeCheckpointItem(out, core::CompactionTrigger::kManual)};
  for (const Item& i : out.new_history) compacted.push_back(i);
  REQUIRE(src->Append(a.id, a.head_item_id, "a-compact", compacted).ok());
  auto fork1 = src->Fork(a.id, 2);  // branches after turn 2, shares its items
  REQUIRE(fork1.ok());
  REQUIRE(src->Append(fork1->id, fork1->head_item_id, "f1", {core::UserMessage("fork says")}).ok());
  auto fork2 = src->Fork(fork1->id, std::nullopt);  // a fork of a fork, no item of its own
  REQUIRE(fork2.ok());
  const SessionInfo b = MakeSession(*src, 1, "b");
  REQUIRE(src->Rename(b.id, "named-b").ok());
  REQUIRE(src->Archive(b.id).ok());
  // A fork whose parent is gone: its chain is copied whole.
  const SessionInfo c = MakeSession(*src, 2, "c");
  auto orphan = src->Fork(c.id, 1);
  REQUIRE(orphan.ok());
  REQUIRE(src->Remove(c.id).ok());

  auto dst = Open(dir.Store("dst.db"));
  int64_t calls = 0;
  auto stats = CopyAllSessions(*src, *dst, [&](int64_t done, int64_t total) {
    ++calls;
    CHECK(done <= total);
  });
  INFO(stats.status().ToString());
  REQUIRE(stats.ok());
  CHECK(stats->copied == 5);
  CHECK(stats->present == 0);
  CHECK(calls == 5);
  StoreCounts fc, tc;
  REQUIRE(VerifyCopy(*src, *dst, &fc, &tc).ok());
  CHECK(fc.sessions == 5);
  CHECK(tc.sessions == 5);
  CHECK(fc.items == tc.items);  // forks share in the destination as in the source
  CHECK(fc.turns == 3 + 1);
  CHECK(fc.events == 3 + 1);

  for (const std::string& id : {a.id, fork1->id, fork2->id, b.id, orphan->id}) {
    CHECK(Bodies(*src, id) == Bodies(*dst, id));
    auto ts = src->LoadTranscript(Get(*src, id));
    auto td = dst->LoadTranscript(Get(*dst, id));
    REQUIRE(ts.ok());
    REQUIRE(td.ok());
    CHECK(ts->size() == td->size());  // the checkpoint still cuts the transcript
  }
  const SessionInfo da = Get(*dst, a.id);
  const SessionInfo df1 = Get(*dst, fork1->id);
  auto ha = dst->LoadHistory(da);
  REQUIRE(ha.ok());
  // The fork hangs from the destination's own copy of a's item.
  REQUIRE(df1.forked_from_item);
  bool found = false;
  for (const StoredItem& it : *ha) found = found || it.id == *df1.forked_from_item;
  CHECK(found);
  CHECK(df1.forked_from_session == a.id);
  const SessionInfo db = Get(*dst, "named-b");
  CHECK(db.id == b.id);
  CHECK(db.archived);
  CHECK(db.tokens_used == 100);
  auto usage = dst->LoadHistory(db);
  REQUIRE(usage.ok());
  CHECK(usage->back().reported_total_tokens == 100);
  // The fork tree is the same.
  auto tree = dst->Tree(fork2->id);
  REQUIRE(tree.ok());
  CHECK(tree->size() == 3);
  // The copy is a working store: appending continues from the copied head.
  CHECK(dst->Append(a.id, da.head_item_id, "next", {core::UserMessage("more")}).ok());
  auto changed = VerifyCopy(*src, *dst, nullptr, nullptr);
  CHECK(changed.code() == StatusCode::kDataLoss);
  CHECK(changed.message().find(a.id) != std::string::npos);
}

TEST_CASE("Copying again changes nothing; an interrupted copy is finished by the next run") {
  StoreDir dir;
  auto src = Open(dir.File("src.db"));
  std::vector<std::string> ids;
  for (int i = 0; i < 6; ++i) ids.push_back(MakeSession(*src, 2, "s" + std::to_string(i)).id);
  auto fork = src->Fork(ids[0], 1);
  REQUIRE(fork.ok());
  auto dst = Open(dir.Store("dst.db"));
  REQUIRE(CopyAllSessions(*src, *dst).ok());
  auto again = CopyAllSessions(*src, *dst);
  REQUIRE(again.ok());
  CHECK(again->copied == 0);
  CHECK(again->present == 7);
  // As if killed before these sessions committed: they are absent, the rest stays.
  REQUIRE(dst->Remove(fork->id).ok());
  REQUIRE(dst->Remove(ids[3]).ok());
  CHECK(VerifyCopy(*src, *dst, nullptr, nullptr).code() == StatusCode::kDataLoss);
  auto resumed = CopyAllSessions(*src, *dst);
  REQUIRE(resumed.ok());
  CHECK(resumed->copied == 2);
  StoreCounts fc, tc;
  REQUIRE(VerifyCopy(*src, *dst, &fc, &tc).ok());
  CHECK(fc.items == tc.items);
  // And back again, into a third store.
  auto back = Open(dir.File("back.db"));
  REQUIRE(CopyAllSessions(*dst, *back).ok());
  REQUIRE(VerifyCopy(*src, *back, nullptr, nullptr).ok());
}

TEST_CASE("CopySession refuses nothing silently: an existing id is left untouched") {
  StoreDir dir;
  auto store = Open(dir.Store("x.db"));
  const SessionInfo s = MakeSession(*store, 1, "x");
  SessionCopy copy;
  copy.info = s;
  copy.items = {StoredItem{}};
  copy.items[0].item = core::UserMessage("other");
  auto r = store->CopySession(copy);
  REQUIRE(r.ok());
  CHECK_FALSE(*r);
  CHECK(Bodies(*store, s.id).size() == 5);
  copy.info.id = "not-a-uuid";
  CHECK(store->CopySession(copy).status().code() == StatusCode::kInvalidArgument);
}

namespace {

// A pipe both processes of a fork() use: one byte to say "go on".
struct Signal {
  int fds[2] = {-1, -1};
  Signal() { REQUIRE(::pipe(fds) == 0); }
  ~Signal() {
    ::close(fds[0]);
    ::close(fds[1]);
  }
  void Send() const { REQUIRE(::write(fds[1], "x", 1) == 1); }
  bool Wait() const {
    char c = 0;
    return ::read(fds[0], &c, 1) == 1;
  }
};

std::vector<std::string> UserAndAssistantTexts(SessionDatabase& store, const std::string& id) {
  auto h = store.LoadHistory(Get(store, id));
  REQUIRE(h.ok());
  std::vector<std::string> out;
  for (const StoredItem& it : *h) {
    if (it.item.kind == core::ItemKind::kMessage && it.item.role != "developer") {
      out.push_back(it.item.role + ": " + core::MessageText(it.item));
    }
  }
  return out;
}

}  // namespace

TEST_CASE("A session whose turn is running is copied only once the turn has ended") {
  StoreDir dir;
  const std::string src_location = dir.Store("src.db");
  auto src = Open(src_location);
  const SessionInfo busy = MakeSession(*src, 1, "busy");
  const SessionInfo idle = MakeSession(*src, 1, "idle");
  auto child_fork = src->Fork(busy.id, std::nullopt);
  REQUIRE(child_fork.ok());
  Signal started, finish;
  // Another process runs a turn on `busy`: its lease, then the user message
  // committed, and the answer only when told to.
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    int code = 1;
    {
      auto store = codex::storage::testing::OpenStore(src_location);
      if (store.ok()) {
        auto lease = (*store)->AcquireTurnLease(busy.id);
        auto s = (*store)->FindSession(busy.id);
        if (lease.ok() && s.ok()) {
          auto ids = (*store)->Append(busy.id, s->head_item_id, "running",
                                      {core::UserMessage("half-way question")});
          started.Send();
          if (ids.ok() && finish.Wait()) {
            code = (*store)->Append(busy.id, ids->back(), "running",
                                    {core::AssistantMessage("the answer at last")})
                           .ok()
                       ? 0
                       : 2;
          }
        }
      }
    }
    std::_Exit(code);
  }
  REQUIRE(started.Wait());
  auto dst = Open(dir.File("dst.db"));
  // Not waiting: everything else is copied, the busy session and its fork
  // (which shares its items) are not, and the error names the holder.
  auto first = CopyAllSessions(*src, *dst, {}, std::chrono::milliseconds(0));
  REQUIRE_FALSE(first.ok());
  CHECK(first.status().code() == StatusCode::kFailedPrecondition);
  CHECK(first.status().reason() == codex::core::reason::kSessionBusy);
  CHECK(first.status().message().find("2 sessions not copied") != std::string::npos);
  CHECK(first.status().message().find("pid " + std::to_string(pid)) != std::string::npos);
  CHECK(dst->FindSession(idle.id).ok());
  CHECK(dst->FindSession(busy.id).status().code() == StatusCode::kNotFound);
  CHECK(dst->FindSession(child_fork->id).status().code() == StatusCode::kNotFound);
  // Waiting: the turn ends while the copy waits, and the copy holds it whole.
  std::thread finisher([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    finish.Send();
  });
  auto second = CopyAllSessions(*src, *dst, {}, std::chrono::seconds(60));
  finisher.join();
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  CHECK(WEXITSTATUS(status) == 0);
  INFO(second.status().ToString());
  REQUIRE(second.ok());
  CHECK(second->copied == 2);
  const std::vector<std::string> copied = UserAndAssistantTexts(*dst, busy.id);
  REQUIRE(copied.size() >= 2);
  CHECK(copied[copied.size() - 2] == "user: half-way question");
  CHECK(copied.back() == "assistant: the answer at last");
  CHECK(copied == UserAndAssistantTexts(*src, busy.id));
  REQUIRE(VerifyCopy(*src, *dst, nullptr, nullptr).ok());
}

TEST_CASE("A copy judges another host's lease by the source's clock") {
  // Time passes without waiting: by the source's clock on SQLite (moved
  // forward), by the server's on PostgreSQL (the heartbeat moved back).
  codex::testing::ManualClock clock(codex::NowMs());
  StoreOptions options;
  options.clock = &clock;
  StoreDir dir;
  const std::string src_location = dir.Store("src.db");
  auto src = codex::storage::testing::OpenOrDie(src_location, options);
  if (!codex::storage::testing::IsPostgres()) {
    auto now = src->LeaseNowMs();
    REQUIRE(now.ok());
    CHECK(*now == clock.NowMs());
  }
  const SessionInfo held = MakeSession(*src, 1, "held");
  codex::storage::testing::InsertLease(src_location, held.id, 4242, "some-other-host",
                                       clock.NowMs());
  auto dst = Open(dir.File("dst.db"));
  auto fresh = CopyAllSessions(*src, *dst, {}, std::chrono::milliseconds(0));
  REQUIRE_FALSE(fresh.ok());
  CHECK(fresh.status().reason() == codex::core::reason::kSessionBusy);
  CHECK(fresh.status().message().find("on some-other-host") != std::string::npos);
  if (codex::storage::testing::IsPostgres()) {
    codex::storage::testing::QueryInt(
        src_location, "UPDATE session_leases SET heartbeat_at_ms = heartbeat_at_ms - " +
                          std::to_string(codex::core::kLeaseStaleMs + 1'000));
  } else {
    clock.Advance(codex::core::kLeaseStaleMs + 1'000);
  }
  auto stale = CopyAllSessions(*src, *dst, {}, std::chrono::milliseconds(0));
  INFO(stale.status().ToString());
  REQUIRE(stale.ok());
  CHECK(stale->copied == 1);
  CHECK(dst->FindSession(held.id).ok());
}

TEST_CASE("A copy killed mid-way blocks no turn; the next run finishes it") {
  StoreDir dir;
  const std::string src_location = dir.Store("src.db");
  const std::string dst_location = dir.File("dst.db");
  std::vector<std::string> ids;
  {
    auto src = Open(src_location);
    for (int i = 0; i < 6; ++i) ids.push_back(MakeSession(*src, 1, "k" + std::to_string(i)).id);
  }
  // The copy dies (SIGKILL) right after the third session committed.
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    auto src = codex::storage::testing::OpenStore(src_location);
    auto dst = codex::storage::testing::OpenStore(dst_location);
    if (!src.ok() || !dst.ok()) std::_Exit(1);
    (void)CopyAllSessions(**src, **dst, [](int64_t done, int64_t) {
      if (done == 3) ::raise(SIGKILL);
    });
    std::_Exit(2);
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFSIGNALED(status));
  auto src = Open(src_location);
  auto dst = Open(dst_location);
  int in_dst = 0;
  for (const std::string& id : ids) in_dst += dst->FindSession(id).ok() ? 1 : 0;
  CHECK(in_dst == 3);
  // It left nothing behind in the source that would block a turn.
  for (const std::string& id : ids) {
    auto lease = src->AcquireTurnLease(id);
    INFO(lease.status().ToString());
    CHECK(lease.ok());
  }
  auto rerun = CopyAllSessions(*src, *dst);
  INFO(rerun.status().ToString());
  REQUIRE(rerun.ok());
  CHECK(rerun->copied == 3);
  CHECK(rerun->present == 3);
  REQUIRE(VerifyCopy(*src, *dst, nullptr, nullptr).ok());
}
