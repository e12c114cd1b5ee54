// The turn loop (core::Conversation) on the real session store of the run's
// backend (SQLite in a temp file, or the private PostgreSQL server:
// testing/store_test_support.h), with a scripted ModelClient and a fake
// CommandRunner: what Conversation commits is what a user's store holds.
// A store written in memory for these tests had its own title and listing
// rules (a parent's title was empty, a fork untitled); the real one's are
// checked here instead. It lives in storage/ because core/ never includes
// storage/ (docs/architecture.md).
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>

#include "core/conversation.h"
#include "core/request_builder.h"
#include "core/session_store.h"
#include "storage/session_database.h"
#include "testing/fake_command_runner.h"
#include "testing/items.h"
#include "testing/manual_clock.h"
#include "testing/scripted_model_client.h"
#include "testing/store_test_support.h"

using namespace codex;
using namespace codex::core;
using codex::storage::testing::OpenOrDie;
using codex::storage::testing::QueryInt;
using codex::storage::testing::StoreDir;
using codex::testing::Decoded;
using codex::testing::Drop;
using codex::testing::Respond;

namespace {

Item ShellCall(const std::string& call_id, const std::string& word) {
  return Decoded(R"({"type":"function_call","id":"fc_)" + call_id +
                 R"(","name":"shell","arguments":"{\"command\":[\"echo\",\")" + word +
                 R"(\"]}","call_id":")" + call_id + R"("})");
}

// Records the output chunks the turn reports, and the order of tool events.
class RecordingObserver final : public TurnObserver {
 public:
  void OnToolStarted(const ToolActivity& a) override { events.push_back("start " + a.call_id); }
  void OnToolOutput(std::string_view call_id, std::string_view chunk) override {
    events.push_back("output " + std::string(call_id) + " " + std::string(chunk));
  }
  void OnToolCompleted(const ToolActivity& a) override { events.push_back("end " + a.call_id); }
  std::vector<std::string> events;
};

struct Harness {
  Harness() {
    config.cwd = "/tmp";
    config.codex_home = "/nonexistent-codex-home";
    config.model = "gpt-test";
    config.provider.stream_max_retries = 3;
    router = std::make_unique<ToolRouter>(config, runner, nullptr, observer);
  }
  ConversationDeps Deps() {
    ConversationDeps d;
    d.store = store.get();
    d.client = &client;
    d.tools = router.get();
    d.clock = &clock;
    d.observer = &observer;
    return d;
  }
  // CallsPairedInOrder (testing/items.h) of the stored items.
  static bool Paired(const std::vector<StoredItem>& items) {
    std::vector<Item> plain;
    for (const auto& s : items) plain.push_back(s.item);
    return codex::testing::CallsPairedInOrder(plain);
  }

  // The whole chain of `session` as stored, root to its head (checkpoints included).
  std::vector<StoredItem> Chain(const SessionInfo& session) {
    auto items = store->LoadHistory(session);
    REQUIRE(items.ok());
    return *items;
  }
  // The stored session `id`.
  SessionInfo Find(const std::string& id) {
    auto found = store->FindSession(id);
    REQUIRE(found.ok());
    return *found;
  }
  // The turns recorded, all of them or those with `status`.
  int64_t Turns(const std::string& status = "") {
    return QueryInt(location, "SELECT count(*) FROM turns" +
                                  (status.empty() ? "" : " WHERE status = '" + status + "'"));
  }
  int64_t Rows(const std::string& table) {
    return QueryInt(location, "SELECT count(*) FROM " + table);
  }
  // The pid holding the session's turn lease, 0 when nobody does.
  int64_t LeaseHolderPid(const std::string& id) {
    auto lease = store->CurrentLease(id);
    REQUIRE(lease.ok());
    return lease->has_value() ? (*lease)->pid : 0;
  }

  StoreDir dir;
  std::string location = dir.Store("conversation");
  std::unique_ptr<storage::SessionDatabase> store = OpenOrDie(location);
  Config config;
  testing::ScriptedModelClient client;
  testing::FakeCommandRunner runner;
  testing::ManualClock clock;
  RecordingObserver observer;
  std::unique_ptr<ToolRouter> router;
};

}  // namespace

TEST_CASE("A turn commits the user message, runs calls and ends with the answer") {
  Harness h;
  h.client.steps = {Respond({ShellCall("c1", "one"), ShellCall("c2", "two")}),
                    Respond({AssistantMessage("done")})};
  auto conv = Conversation::Create(h.config, h.Deps(), "exec");
  REQUIRE(conv.ok());
  CancelToken cancel;
  auto turn = (*conv)->RunTurn("do it", cancel);
  REQUIRE(turn.ok());
  CHECK(turn->final_message == "done");
  CHECK(turn->requests == 2);
  CHECK(h.runner.ran.size() == 2);
  auto items = h.Chain((*conv)->session());
  CHECK(Harness::Paired(items));
  CHECK(MessageText(items.back().item) == "done");
  REQUIRE(h.Turns() == 1);
  CHECK(h.Turns("completed") == 1);
  // The second request's input extends the first's byte for byte.
  const std::string& a = h.client.stream_bodies[0];
  const std::string& b = h.client.stream_bodies[1];
  const auto cut = a.size() - 2;  // all but the closing "]}"
  CHECK(b.compare(0, cut, a, 0, cut) == 0);
}

TEST_CASE("A running command's output reaches the observer as it arrives, by call id") {
  Harness h;
  h.client.steps = {Respond({ShellCall("c1", "one")}), Respond({AssistantMessage("done")})};
  auto conv = Conversation::Create(h.config, h.Deps(), "exec");
  REQUIRE(conv.ok());
  CancelToken cancel;
  REQUIRE((*conv)->RunTurn("do it", cancel).ok());
  CHECK(h.observer.events ==
        std::vector<std::string>{"start c1", "output c1 ran", "output c1  one\n", "end c1"});
  // The model still gets the captured output, not the stream.
  auto items = h.Chain((*conv)->session());
  bool found = false;
  for (const auto& s : items) {
    if (IsCallOutput(s.item.kind) && s.item.call_id == "c1") {
      found = s.item.body.find("ran one") != std::string::npos;
    }
  }
  CHECK(found);
}

TEST_CASE("A fork is titled by its first own message, once; its parent's messages do not count") {
  Harness h;
  h.client.steps = {Respond({AssistantMessage("a1")}), Respond({AssistantMessage("a2")}),
                    Respond({AssistantMessage("a3")}), Respond({AssistantMessage("a4")})};
  auto conv = Conversation::Create(h.config, h.Deps(), "exec");
  REQUIRE(conv.ok());
  CancelToken cancel;
  REQUIRE((*conv)->RunTurn("the parent's question", cancel).ok());
  const std::string parent = (*conv)->session().id;
  // A new session is titled by the store from its first message.
  CHECK(h.Find(parent).title == "the parent's question");

  auto fork = h.store->Fork(parent, std::nullopt);
  REQUIRE(fork.ok());
  CHECK(h.Find(fork->id).title == "fork of the parent's question");
  auto branch = Conversation::Resume(h.config, h.Deps(), *fork);
  REQUIRE(branch.ok());
  REQUIRE((*branch)->RunTurn("a new direction", cancel).ok());
  CHECK(h.Find(fork->id).title == "a new direction");
  REQUIRE((*branch)->RunTurn("and more", cancel).ok());
  CHECK(h.Find(fork->id).title == "a new direction");
  // Reopened later: it has its own message now, so nothing changes.
  auto again = Conversation::Resume(h.config, h.Deps(), h.Find(fork->id));
  REQUIRE(again.ok());
  REQUIRE((*again)->RunTurn("third", cancel).ok());
  CHECK(h.Find(fork->id).title == "a new direction");
  // The parent is not a fork: its own later turns do not retitle it.
  CHECK(h.Find(parent).title == "the parent's question");
}

TEST_CASE("A dropped stream is retried from what was committed, without duplicates") {
  Harness h;
  h.client.steps = {Drop({ShellCall("c1", "x")}), Respond({AssistantMessage("ok")})};
  auto conv = Conversation::Create(h.config, h.Deps(), "exec");
  REQUIRE(conv.ok());
  CancelToken cancel;
  auto turn = (*conv)->RunTurn("go", cancel);
  REQUIRE(turn.ok());
  CHECK(h.runner.ran.size() == 1);  // the committed call ran once
  auto items = h.Chain((*conv)->session());
  CHECK(Harness::Paired(items));
  int calls = 0;
  for (const auto& s : items) calls += s.item.call_id == "c1" && IsCall(s.item.kind);
  CHECK(calls == 1);
}

TEST_CASE("Retries stop at stream_max_retries and the failure is recorded") {
  Harness h;
  h.config.provider.stream_max_retries = 1;
  h.client.steps = {Drop({}), Drop({})};
  auto conv = Conversation::Create(h.config, h.Deps(), "exec");
  REQUIRE(conv.ok());
  CancelToken cancel;
  auto turn = (*conv)->RunTurn("go", cancel);
  REQUIRE_FALSE(turn.ok());
  CHECK(turn.status().code() == StatusCode::kUnavailable);
  REQUIRE(h.Turns() == 1);
  CHECK(h.Turns("failed") == 1);
  // The user message stayed committed.
  auto items = h.Chain((*conv)->session());
  CHECK(MessageText(items.back().item) == "go");
}

TEST_CASE("Cancelling during a tool run aborts open calls and records an interrupted turn") {
  Harness h;
  CancelToken cancel;
  h.runner.on_run = [&] { cancel.Cancel(); };
  h.client.steps = {Respond({ShellCall("c1", "a"), ShellCall("c2", "b")})};
  auto conv = Conversation::Create(h.config, h.Deps(), "exec");
  REQUIRE(conv.ok());
  auto turn = (*conv)->RunTurn("go", cancel);
  REQUIRE_FALSE(turn.ok());
  CHECK(turn.status().code() == StatusCode::kCancelled);
  auto items = h.Chain((*conv)->session());
  CHECK(Harness::Paired(items));
  int aborted = 0;
  for (const auto& s : items) {
    if (IsCallOutput(s.item.kind) && s.item.body.find("aborted") != std::string::npos) ++aborted;
  }
  CHECK(aborted >= 1);
  REQUIRE(h.Turns() == 1);
  CHECK(h.Turns("interrupted") == 1);
}

TEST_CASE("Resuming a session with a call left open closes it before the next request") {
  Harness h;
  auto conv = Conversation::Create(h.config, h.Deps(), "exec");
  REQUIRE(conv.ok());
  h.client.steps = {Respond({AssistantMessage("first")})};
  CancelToken cancel;
  REQUIRE((*conv)->RunTurn("start", cancel).ok());
  SessionInfo session = (*conv)->session();
  // A crash between the call and its output.
  auto ids = h.store->Append(session.id, session.head_item_id, "t", {ShellCall("c9", "z")});
  REQUIRE(ids.ok());
  session.head_item_id = ids->back();
  auto resumed = Conversation::Resume(h.config, h.Deps(), session);
  REQUIRE(resumed.ok());
  h.client.steps = {Respond({AssistantMessage("fine")})};
  REQUIRE((*resumed)->RunTurn("again", cancel).ok());
  CHECK(Harness::Paired(h.Chain((*resumed)->session())));
  CHECK(h.client.stream_bodies[1].find(R"("call_id":"c9","output":"aborted")") !=
        std::string::npos);
}

TEST_CASE("A new session is stored with its first user message, not before") {
  Harness h;
  auto conv = Conversation::Create(h.config, h.Deps(), "interactive");
  REQUIRE(conv.ok());
  CHECK_FALSE((*conv)->persisted());
  CHECK(h.Rows("sessions") == 0);
  CHECK(h.Rows("items") == 0);
  h.client.steps = {Respond({AssistantMessage("hi")})};
  CancelToken cancel;
  REQUIRE((*conv)->RunTurn("hello", cancel).ok());
  CHECK((*conv)->persisted());
  REQUIRE(h.Rows("sessions") == 1);
  CHECK(h.Find((*conv)->session().id).id == (*conv)->session().id);
  auto chain = h.Chain((*conv)->session());
  bool has_user = false;
  for (const auto& it : chain) has_user |= MessageText(it.item) == "hello";
  CHECK(has_user);
}

TEST_CASE("A sub-agent's session is its parent's child: own history, the parent's cache key") {
  Harness h;
  h.client.steps = {Respond({AssistantMessage("parent answer")}),
                    Respond({AssistantMessage("agent answer")}),
                    Respond({AssistantMessage("agent again")})};
  auto parent = Conversation::Create(h.config, h.Deps(), "exec");
  REQUIRE(parent.ok());
  CancelToken cancel;
  REQUIRE((*parent)->RunTurn("parent task", cancel).ok());
  const std::string parent_id = (*parent)->session().id;
  auto agent = Conversation::Create(h.config, h.Deps(), "subagent", "", parent_id);
  REQUIRE(agent.ok());
  REQUIRE((*agent)->RunTurn("agent task", cancel).ok());
  const SessionInfo stored = h.Find((*agent)->session().id);
  CHECK(stored.forked_from_session == parent_id);
  CHECK_FALSE(stored.forked_from_item.has_value());
  CHECK(stored.source == "subagent");
  CHECK(stored.title == "agent task");
  // Its history is its own: none of the parent's items.
  for (const auto& it : h.Chain(stored)) CHECK(MessageText(it.item) != "parent task");
  // It shares the parent's prompt_cache_key.
  const auto body = nlohmann::json::parse(h.client.stream_bodies[1]);
  CHECK(body["prompt_cache_key"] == parent_id);
  // Listed under its parent, and resumed with its own history.
  auto tree = h.store->Tree(parent_id);
  REQUIRE(tree.ok());
  REQUIRE(tree->size() == 2);
  CHECK((*tree)[1].session.id == stored.id);
  CHECK((*tree)[1].depth == 1);
  auto resumed = Conversation::Resume(h.config, h.Deps(), stored);
  REQUIRE(resumed.ok());
  CHECK((*resumed)->cache_key() == parent_id);
  REQUIRE((*resumed)->RunTurn("more", cancel).ok());
  CHECK(h.client.stream_bodies[2].find("agent task") != std::string::npos);
  CHECK(h.client.stream_bodies[2].find("parent task") == std::string::npos);
}

TEST_CASE("A turn holds the lease from before its first commit to its end") {
  Harness h;
  auto conv = Conversation::Create(h.config, h.Deps(), "exec");
  REQUIRE(conv.ok());
  int64_t holder_during_request = -1;
  h.client.steps = {[&](StreamObserver& o) -> Result<ModelResponse> {
    holder_during_request = h.LeaseHolderPid((*conv)->session().id);
    REQUIRE(o.OnOutputItemDone(AssistantMessage("ok")).ok());
    return ModelResponse{};
  }};
  CancelToken cancel;
  REQUIRE((*conv)->RunTurn("go", cancel).ok());
  CHECK(holder_during_request == ::getpid());
  CHECK(h.LeaseHolderPid((*conv)->session().id) == 0);

  // Busy: another process (a second codex) holds the lease; the turn is
  // refused before anything is committed or sent. (The store takes a lease
  // its own process left over, so the other holder must be a process.)
  const int64_t items_before = h.Rows("items");
  int to_child[2], from_child[2];
  REQUIRE(::pipe(to_child) == 0);
  REQUIRE(::pipe(from_child) == 0);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    // Only the parent keeps the other ends: its exit (even a failed REQUIRE)
    // is the end of file the read below returns on, so no child outlives it.
    ::close(to_child[1]);
    ::close(from_child[0]);
    auto other = storage::testing::OpenStore(h.location);
    if (!other.ok()) std::fprintf(stderr, "child: %s\n", other.status().ToString().c_str());
    auto lease = other.ok() ? (*other)->AcquireTurnLease((*conv)->session().id)
                            : Result<std::unique_ptr<TurnLease>>(other.status());
    if (!lease.ok()) std::fprintf(stderr, "child: %s\n", lease.status().ToString().c_str());
    const bool held = lease.ok();
    char c = held ? 'y' : 'n';
    (void)!::write(from_child[1], &c, 1);
    (void)!::read(to_child[0], &c, 1);  // holds the lease until the parent is done (or gone)
    std::_Exit(held ? 0 : 1);
  }
  ::close(to_child[0]);
  ::close(from_child[1]);
  char held = 0;
  REQUIRE(::read(from_child[0], &held, 1) == 1);
  auto turn = (*conv)->RunTurn("again", cancel);
  REQUIRE(::write(to_child[1], "x", 1) == 1);
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  ::close(to_child[1]);
  ::close(from_child[0]);
  REQUIRE(held == 'y');
  REQUIRE_FALSE(turn.ok());
  CHECK(turn.status().reason() == core::reason::kSessionBusy);
  CHECK(h.Rows("items") == items_before);
  CHECK(h.client.stream_bodies.size() == 1);
}

TEST_CASE("A session advanced by whole turns elsewhere is reloaded before the next turn") {
  Harness h;
  auto conv = Conversation::Create(h.config, h.Deps(), "interactive");
  REQUIRE(conv.ok());
  h.client.steps = {Respond({AssistantMessage("one")}), Respond({AssistantMessage("three")})};
  CancelToken cancel;
  REQUIRE((*conv)->RunTurn("first", cancel).ok());
  SessionInfo session = (*conv)->session();
  // Another process runs a whole turn (it held the lease meanwhile).
  REQUIRE(h.store
              ->Append(session.id, session.head_item_id, "t2",
                       {UserMessage("other process"), AssistantMessage("two")})
              .ok());
  REQUIRE((*conv)->RunTurn("mine", cancel).ok());
  REQUIRE(h.client.stream_bodies.size() == 2);
  const std::string& body = h.client.stream_bodies[1];
  CHECK(body.find("other process") != std::string::npos);
  CHECK(body.find("other process") < body.find("mine"));
}

TEST_CASE(
    "An append racing the lease is still a conflict (compare-and-set), never an interleaving") {
  Harness h;
  auto conv = Conversation::Create(h.config, h.Deps(), "exec");
  REQUIRE(conv.ok());
  CancelToken cancel;
  h.client.steps = {
      Respond({AssistantMessage("one")}), [&](StreamObserver& o) -> Result<ModelResponse> {
        // A writer that ignored the lease moves the head mid-turn.
        SessionInfo s = h.Find((*conv)->session().id);
        REQUIRE(h.store->Append(s.id, s.head_item_id, "x", {UserMessage("rogue")}).ok());
        RETURN_IF_ERROR(o.OnOutputItemDone(AssistantMessage("late")));
        return ModelResponse{};
      }};
  REQUIRE((*conv)->RunTurn("first", cancel).ok());
  auto turn = (*conv)->RunTurn("mine", cancel);
  REQUIRE_FALSE(turn.ok());
  CHECK(turn.status().reason() == core::reason::kSessionAdvanced);
  for (const auto& it : h.Chain(h.Find((*conv)->session().id))) {
    CHECK(MessageText(it.item) != "late");
  }
}

namespace {

// Records each compaction and replaces the history with its last user message.
class RecordingCompactor final : public Compactor {
 public:
  explicit RecordingCompactor(int64_t limit) : limit_(limit) {}
  int64_t context_window() const override { return limit_ * 2; }
  int64_t auto_compact_limit() const override { return limit_; }
  Result<CompactionOutput> Compact(const CompactionInput& input, const CancelToken&) override {
    inputs.push_back(input);
    CompactionOutput out;
    out.mode = "local";
    out.new_history = {UserMessage("summary")};
    if (input.current_user_message) out.new_history.push_back(*input.current_user_message);
    out.tokens_before = EstimateTokens(input.transcript);
    out.tokens_after = EstimateTokens(out.new_history);
    return out;
  }
  std::vector<CompactionInput> inputs;

 private:
  int64_t limit_;
};

}  // namespace

TEST_CASE("Resume: the stored server total seeds the estimate; over the limit compacts first") {
  Harness h;
  RecordingCompactor compactor(/*limit=*/5'000);
  ConversationDeps deps = h.Deps();
  deps.compactor = &compactor;
  h.client.steps = {Respond({AssistantMessage("first")}, /*total=*/30'100)};
  std::string id;
  {
    auto conv = Conversation::Create(h.config, deps, "exec");
    REQUIRE(conv.ok());
    auto turn = (*conv)->RunTurn("question", CancelToken());
    REQUIRE(turn.ok());
    CHECK((*conv)->EstimatedTokens() == 30'100);
    id = (*conv)->session().id;
  }
  const size_t compactions_before = compactor.inputs.size();
  // A new Conversation (a new process) on the same store.
  auto info = h.store->FindSession(id);
  REQUIRE(info.ok());
  auto resumed = Conversation::Resume(h.config, deps, *info);
  REQUIRE(resumed.ok());
  CHECK((*resumed)->EstimatedTokens() >= 30'100);
  h.client.steps = {Respond({AssistantMessage("second")}, /*total=*/200)};
  auto turn = (*resumed)->RunTurn("next", CancelToken());
  REQUIRE(turn.ok());
  CHECK(turn->compactions == 1);
  REQUIRE(compactor.inputs.size() == compactions_before + 1);
  const CompactionInput& input = compactor.inputs.back();
  // The compaction carries the session's own request settings.
  CHECK(input.request.prompt_cache_key == id);
  CHECK(input.request.tools_json == h.router->ToolsJson());
  CHECK(input.request.model == "gpt-test");
  // The request after it holds the compacted history and the new message.
  CHECK(h.client.stream_bodies.back().find("summary") != std::string::npos);
  CHECK(h.client.stream_bodies.back().find("\"first\"") == std::string::npos);
}

TEST_CASE("CompactNow under half the limit changes nothing") {
  Harness h;
  RecordingCompactor compactor(/*limit=*/1'000'000);
  ConversationDeps deps = h.Deps();
  deps.compactor = &compactor;
  h.client.steps = {Respond({AssistantMessage("first")}, /*total=*/1'000)};
  auto conv = Conversation::Create(h.config, deps, "exec");
  REQUIRE(conv.ok());
  REQUIRE((*conv)->RunTurn("question", CancelToken()).ok());
  const auto head = (*conv)->session().head_item_id;
  auto compacted = (*conv)->CompactNow(CancelToken());
  REQUIRE(compacted.ok());
  CHECK_FALSE(*compacted);
  CHECK(compactor.inputs.empty());
  CHECK((*conv)->session().head_item_id == head);
}

namespace {

Item GoalCall(const std::string& call_id, const std::string& name, const std::string& args) {
  nlohmann::json body = {{"type", "function_call"},
                         {"id", "fc_" + call_id},
                         {"name", name},
                         {"arguments", args},
                         {"call_id", call_id}};
  return Decoded(body.dump());
}

}  // namespace

TEST_CASE("The thread goal is stored with the session: resume and fork see it, each its own") {
  Harness h;
  // Stamped by the test's clock, so "after the fork" is a fact, not a race.
  storage::StoreOptions options;
  options.clock = &h.clock;
  h.store = OpenOrDie(h.dir.Store("goals"), options);
  h.client.steps = {
      Respond({GoalCall("c1", "create_goal", R"({"objective":"Ship it","token_budget":900})")}),
      Respond({AssistantMessage("on it")}),
      Respond({GoalCall("c2", "update_goal", R"({"status":"paused"})")}),
      Respond({AssistantMessage("paused")}),
      Respond({GoalCall("c3", "update_goal", R"({"status":"complete"})")}),
      Respond({AssistantMessage("done in the fork")}),
      Respond({GoalCall("c4", "get_goal", "{}")}),
      Respond({AssistantMessage("removed parent")})};
  CancelToken cancel;
  auto conv = Conversation::Create(h.config, h.Deps(), "exec");
  REQUIRE(conv.ok());
  REQUIRE((*conv)->RunTurn("set a goal", cancel).ok());
  const std::string parent = (*conv)->session().id;
  conv->reset();

  // A new process (a fresh router) resuming the session has the goal back.
  auto fresh_router = [&h]() {
    h.router = std::make_unique<ToolRouter>(h.config, h.runner, nullptr, h.observer);
  };
  fresh_router();
  auto resumed = Conversation::Resume(h.config, h.Deps(), h.Find(parent));
  REQUIRE(resumed.ok());
  REQUIRE(h.router->goal().has_value());
  CHECK(h.router->goal()->objective == "Ship it");
  CHECK(h.router->goal()->token_budget == 900);
  CHECK(h.router->goal()->status == "active");

  h.clock.Advance(1'000);
  auto fork = h.store->Fork(parent, std::nullopt);
  REQUIRE(fork.ok());
  // The parent pauses its goal after the fork: the fork keeps the goal as it was.
  h.clock.Advance(1'000);
  REQUIRE((*resumed)->RunTurn("pause it", cancel).ok());
  resumed->reset();
  fresh_router();
  auto branch = Conversation::Resume(h.config, h.Deps(), h.Find(fork->id));
  REQUIRE(branch.ok());
  REQUIRE(h.router->goal().has_value());
  CHECK(h.router->goal()->status == "active");
  // The fork completes its own copy; the parent's stays paused.
  REQUIRE((*branch)->RunTurn("finish it", cancel).ok());
  branch->reset();
  fresh_router();
  REQUIRE(Conversation::Resume(h.config, h.Deps(), h.Find(fork->id)).ok());
  CHECK(h.router->goal()->status == "complete");
  fresh_router();
  REQUIRE(Conversation::Resume(h.config, h.Deps(), h.Find(parent)).ok());
  CHECK(h.router->goal()->status == "paused");

  // A second fork, made after the pause, sees the paused goal; once its
  // parent is removed it has none (and resuming it is no error).
  h.clock.Advance(1'000);
  auto late_fork = h.store->Fork(parent, std::nullopt);
  REQUIRE(late_fork.ok());
  CHECK(h.store->LatestEvent(late_fork->id, kGoalEventType).value().has_value());
  REQUIRE(h.store->Remove(parent).ok());
  fresh_router();
  auto orphan = Conversation::Resume(h.config, h.Deps(), h.Find(late_fork->id));
  REQUIRE(orphan.ok());
  CHECK_FALSE(h.router->goal().has_value());
  REQUIRE((*orphan)->RunTurn("what is the goal?", cancel).ok());
  bool answered = false;
  for (const auto& s : h.Chain(h.Find(late_fork->id))) {
    if (s.item.call_id == "c4" && s.item.kind == ItemKind::kFunctionCallOutput) {
      answered = true;
      CHECK(nlohmann::json::parse(s.item.body)["output"] ==
            R"({"goal":null,"remainingTokens":null,"completionBudgetReport":null})");
    }
  }
  CHECK(answered);
  // The completed fork's own goal survives its parent's removal.
  CHECK(h.store->LatestEvent(fork->id, kGoalEventType).value().has_value());
  CHECK_FALSE(h.store->LatestEvent("no-such-session", kGoalEventType).ok());

  // A damaged goal event does not lock the session: it resumes without a goal.
  REQUIRE(h.store->RecordEvent(fork->id, "t", kGoalEventType, R"({"objective":7})").ok());
  fresh_router();
  auto damaged = Conversation::Resume(h.config, h.Deps(), h.Find(fork->id));
  REQUIRE(damaged.ok());
  CHECK_FALSE(h.router->goal().has_value());
}

namespace {

// A response streaming `items` with `usage` (input, cached, output), after the
// clock moved `spent_ms`: the time the model took, without sleeping.
testing::ScriptedModelClient::Step Spend(std::vector<Item> items, int64_t input, int64_t cached,
                                         int64_t output, testing::ManualClock& clock,
                                         int64_t spent_ms = 0) {
  return [items = std::move(items), input, cached, output, &clock,
          spent_ms](core::StreamObserver& observer) -> Result<core::ModelResponse> {
    clock.Advance(spent_ms);
    core::ModelResponse r;
    for (const Item& item : items) {
      RETURN_IF_ERROR(observer.OnOutputItemDone(item));
      r.items.push_back(item);
    }
    core::TokenUsage usage;
    usage.input_tokens = input;
    usage.cached_input_tokens = cached;
    usage.output_tokens = output;
    usage.total_tokens = input + output;
    r.usage = usage;
    return r;
  };
}

}  // namespace

TEST_CASE("Goal accounting: tokens and seconds while active, stored for resume; paused stops") {
  Harness h;
  h.client.steps = {
      // Turn 1: the creating request is not the goal's; the next two are,
      // the second at the turn's end. 3.5 s pass while it is active.
      Spend({GoalCall("c1", "create_goal", R"({"objective":"Ship it"})")}, 9'000, 0, 900, h.clock),
      Spend({GoalCall("c2", "get_goal", "{}")}, 1'000, 300, 40, h.clock, 2'500),
      Spend({AssistantMessage("working")}, 2'000, 1'000, 5, h.clock, 1'000),
      // Turn 2 (a new process): counted from its first turn; the pausing
      // request's own usage counts, what follows the pause does not.
      Spend({GoalCall("c3", "update_goal", R"({"status":"paused"})")}, 500, 0, 50, h.clock, 4'200),
      Spend({AssistantMessage("paused")}, 7'000, 0, 70, h.clock, 60'000),
      // Turn 3: paused, nothing counts however long it takes.
      Spend({GoalCall("c4", "get_goal", "{}")}, 8'000, 0, 80, h.clock, 90'000),
      Spend({AssistantMessage("still paused")}, 8'000, 0, 80, h.clock)};
  CancelToken cancel;
  auto conv = Conversation::Create(h.config, h.Deps(), "exec");
  REQUIRE(conv.ok());
  REQUIRE((*conv)->RunTurn("set a goal", cancel).ok());
  const std::string id = (*conv)->session().id;
  CHECK(h.router->goal()->tokens_used == (1'000 - 300 + 40) + (2'000 - 1'000 + 5));
  CHECK(h.router->goal()->time_used_seconds == 3);  // 3.5 s: whole seconds
  conv->reset();

  // A new process has the figures back from the stored goal event.
  h.router = std::make_unique<ToolRouter>(h.config, h.runner, nullptr, h.observer);
  auto resumed = Conversation::Resume(h.config, h.Deps(), h.Find(id));
  REQUIRE(resumed.ok());
  REQUIRE(h.router->goal().has_value());
  CHECK(h.router->goal()->tokens_used == 1'745);
  CHECK(h.router->goal()->time_used_seconds == 3);
  REQUIRE((*resumed)->RunTurn("pause it", cancel).ok());
  CHECK(h.router->goal()->status == "paused");
  CHECK(h.router->goal()->tokens_used == 1'745 + 550);
  CHECK(h.router->goal()->time_used_seconds == 3 + 4);
  REQUIRE((*resumed)->RunTurn("and now?", cancel).ok());
  resumed->reset();

  h.router = std::make_unique<ToolRouter>(h.config, h.runner, nullptr, h.observer);
  REQUIRE(Conversation::Resume(h.config, h.Deps(), h.Find(id)).ok());
  CHECK(h.router->goal()->status == "paused");
  CHECK(h.router->goal()->tokens_used == 2'295);
  CHECK(h.router->goal()->time_used_seconds == 7);
  // The paused get_goal answered the paused figures.
  bool answered = false;
  for (const auto& s : h.Chain(h.Find(id))) {
    if (s.item.call_id == "c4" && s.item.kind == ItemKind::kFunctionCallOutput) {
      answered = true;
      auto out =
          nlohmann::json::parse(nlohmann::json::parse(s.item.body)["output"].get<std::string>());
      CHECK(out["goal"]["tokensUsed"] == 2'295);
      CHECK(out["goal"]["timeUsedSeconds"] == 7);
      CHECK(out["remainingTokens"].is_null());
    }
  }
  CHECK(answered);
}

TEST_CASE("Goal accounting: an interrupted turn's usage still counts, without a wrap-up") {
  Harness h;
  CancelToken cancel;
  testing::ScriptedModelClient::Step interrupted =
      Spend({GoalCall("c2", "get_goal", "{}")}, 4'000, 0, 100, h.clock);
  h.client.steps = {
      Spend({GoalCall("c1", "create_goal", R"({"objective":"Ship it","token_budget":1000})")}, 50,
            0, 5, h.clock),
      Spend({AssistantMessage("on it")}, 100, 0, 10, h.clock),
      // The user interrupts while the model answers: its calls never run.
      [&cancel, interrupted](core::StreamObserver& observer) {
        cancel.Cancel();
        return interrupted(observer);
      }};
  auto conv = Conversation::Create(h.config, h.Deps(), "exec");
  REQUIRE(conv.ok());
  REQUIRE((*conv)->RunTurn("set a goal", cancel).ok());
  CHECK(h.router->goal()->tokens_used == 110);
  auto turn = (*conv)->RunTurn("go on", cancel);
  REQUIRE_FALSE(turn.ok());
  CHECK(turn.status().code() == StatusCode::kCancelled);
  // Counted, over the budget: budget_limited, and stored.
  CHECK(h.router->goal()->tokens_used == 110 + 4'100);
  CHECK(h.router->goal()->status == "budget_limited");
  const auto stored = h.store->LatestEvent((*conv)->session().id, kGoalEventType);
  REQUIRE(stored.ok());
  REQUIRE(stored->has_value());
  CHECK(ParseGoalEventPayload(**stored)->status == "budget_limited");
  // The turn ended: no wrap-up message was added to the history.
  for (const auto& s : h.Chain((*conv)->session())) {
    CHECK(MessageText(s.item).find("budget_limited") == std::string::npos);
  }
}
