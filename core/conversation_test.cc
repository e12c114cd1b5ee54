// Unit tests of the turn loop through its seams: an in-memory SessionStore,
// a scripted ModelClient and a fake CommandRunner (ARCHITECTURE.md: "the turn
// loop takes SessionStore&, CommandRunner&, Clock&; tests pass fakes").
#include "core/conversation.h"

#include <catch2/catch.hpp>
#include <deque>
#include <functional>
#include <map>

#include "core/request_builder.h"

using namespace codex;
using namespace codex::core;

namespace {

// Keeps items in memory with the SessionStore contract (CAS on the head).
class MemoryStore final : public SessionStore {
 public:
  Result<SessionInfo> CreateSession(const NewSession& spec) override {
    SessionInfo s;
    s.id = "session-" + std::to_string(sessions_.size() + 1);
    s.cwd = spec.cwd;
    sessions_[s.id] = s;
    return s;
  }
  Result<SessionInfo> FindSession(std::string_view id) override {
    auto it = sessions_.find(std::string(id));
    if (it == sessions_.end()) return NotFoundError("no session");
    return it->second;
  }
  Result<SessionInfo> LatestSession(const std::optional<std::string>&) override {
    return NotFoundError("unused");
  }
  Result<std::vector<StoredItem>> LoadTranscript(const SessionInfo& s) override {
    auto all = Chain(sessions_[s.id].head_item_id);
    std::vector<StoredItem> out;
    for (auto it = all.rbegin(); it != all.rend(); ++it) {
      if (it->item.kind == ItemKind::kCompactionCheckpoint) break;
      out.insert(out.begin(), *it);
    }
    return out;
  }
  Result<std::vector<StoredItem>> LoadHistory(const SessionInfo& s) override {
    return Chain(sessions_[s.id].head_item_id);
  }
  Result<std::vector<int64_t>> Append(std::string_view session_id,
                                      std::optional<int64_t> expected_head, std::string_view,
                                      const std::vector<Item>& items) override {
    SessionInfo& s = sessions_[std::string(session_id)];
    if (s.head_item_id != expected_head) {
      return FailedPreconditionError("advanced").WithReason("session_advanced");
    }
    std::vector<int64_t> ids;
    for (const Item& item : items) {
      StoredItem stored;
      stored.id = static_cast<int64_t>(items_.size()) + 1;
      stored.parent_id = s.head_item_id;
      stored.item = item;
      items_.push_back(stored);
      s.head_item_id = stored.id;
      ids.push_back(stored.id);
    }
    return ids;
  }
  Status MoveHead(std::string_view id, std::optional<int64_t>,
                  std::optional<int64_t> head) override {
    sessions_[std::string(id)].head_item_id = head;
    return OkStatus();
  }
  Result<ListPage> ListSessions(const ListQuery&) override { return ListPage{}; }
  Status RecordUsage(int64_t item_id, int64_t total_tokens) override {
    if (item_id < 1 || static_cast<size_t>(item_id) > items_.size()) return NotFoundError("item");
    items_[static_cast<size_t>(item_id - 1)].reported_total_tokens = total_tokens;
    return OkStatus();
  }
  Status RecordTurn(const TurnRecord& turn) override {
    turns.push_back(turn);
    return OkStatus();
  }
  Status RecordEvent(std::string_view, std::string_view, std::string_view type,
                     std::string_view) override {
    events.emplace_back(type);
    return OkStatus();
  }
  Result<SessionInfo> Fork(std::string_view, std::optional<int>) override {
    return NotFoundError("unused");
  }

  std::vector<StoredItem> Chain(std::optional<int64_t> head) const {
    std::vector<StoredItem> out;
    for (auto id = head; id; id = items_[static_cast<size_t>(*id - 1)].parent_id) {
      out.insert(out.begin(), items_[static_cast<size_t>(*id - 1)]);
    }
    return out;
  }

  std::map<std::string, SessionInfo> sessions_;
  std::vector<StoredItem> items_;
  std::vector<TurnRecord> turns;
  std::vector<std::string> events;
};

// Each Stream() call runs the next scripted step against the observer.
class ScriptedClient final : public ModelClient {
 public:
  using Step = std::function<Result<ModelResponse>(StreamObserver&)>;
  Result<ModelResponse> Stream(std::string_view body, StreamObserver& observer,
                               const CancelToken&) override {
    bodies.emplace_back(body);
    REQUIRE_FALSE(steps.empty());
    Step step = steps.front();
    steps.pop_front();
    return step(observer);
  }
  Result<std::string> Compact(std::string_view, const CancelToken&) override {
    return UnavailableError("unused");
  }
  std::deque<Step> steps;
  std::vector<std::string> bodies;
};

class FakeRunner final : public CommandRunner {
 public:
  Result<CommandResult> Run(const CommandSpec& spec, const CancelToken&) override {
    ran.push_back(spec.argv);
    if (on_run) on_run();
    CommandResult r;
    r.output = "ran " + spec.argv.back() + "\n";
    return r;
  }
  std::vector<std::vector<std::string>> ran;
  std::function<void()> on_run;
};

class FixedClock final : public Clock {
 public:
  int64_t NowMs() const override { return 1'000; }
};

Item Decoded(const std::string& json) {
  auto item = DecodeItem(json);
  REQUIRE(item.ok());
  return *item;
}

Item ShellCall(const std::string& call_id, const std::string& word) {
  return Decoded(R"({"type":"function_call","id":"fc_)" + call_id +
                 R"(","name":"shell","arguments":"{\"command\":[\"echo\",\")" + word +
                 R"(\"]}","call_id":")" + call_id + R"("})");
}

// A step that streams `items` and completes with `total` tokens.
ScriptedClient::Step Respond(std::vector<Item> items, int64_t total = 100) {
  return [items, total](StreamObserver& observer) -> Result<ModelResponse> {
    ModelResponse r;
    for (const Item& item : items) {
      RETURN_IF_ERROR(observer.OnOutputItemDone(item));
      r.items.push_back(item);
    }
    TokenUsage usage;
    usage.total_tokens = total;
    r.usage = usage;
    return r;
  };
}

// A step that streams `items` and then drops.
ScriptedClient::Step Drop(std::vector<Item> items) {
  return [items](StreamObserver& observer) -> Result<ModelResponse> {
    for (const Item& item : items) RETURN_IF_ERROR(observer.OnOutputItemDone(item));
    return UnavailableError("stream closed before response.completed").WithReason("stream_closed");
  };
}

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
    d.store = &store;
    d.client = &client;
    d.tools = router.get();
    d.clock = &clock;
    d.observer = &observer;
    return d;
  }
  // Every call in `items` has exactly one output and no output lacks a call.
  static bool Paired(const std::vector<StoredItem>& items) {
    std::map<std::string, int> calls, outputs;
    for (const auto& s : items) {
      if (IsCall(s.item.kind)) ++calls[s.item.call_id];
      if (IsCallOutput(s.item.kind)) ++outputs[s.item.call_id];
    }
    return calls == outputs &&
           std::all_of(calls.begin(), calls.end(), [](const auto& kv) { return kv.second == 1; });
  }

  Config config;
  MemoryStore store;
  ScriptedClient client;
  FakeRunner runner;
  FixedClock clock;
  TurnObserver observer;
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
  auto items = h.store.Chain((*conv)->session().head_item_id);
  CHECK(Harness::Paired(items));
  CHECK(MessageText(items.back().item) == "done");
  REQUIRE(h.store.turns.size() == 1);
  CHECK(h.store.turns[0].status == TurnStatus::kCompleted);
  // The second request's input extends the first's byte for byte.
  const std::string& a = h.client.bodies[0];
  const std::string& b = h.client.bodies[1];
  const auto cut = a.size() - 2;  // all but the closing "]}"
  CHECK(b.compare(0, cut, a, 0, cut) == 0);
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
  auto items = h.store.Chain((*conv)->session().head_item_id);
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
  REQUIRE(h.store.turns.size() == 1);
  CHECK(h.store.turns[0].status == TurnStatus::kFailed);
  // The user message stayed committed.
  auto items = h.store.Chain((*conv)->session().head_item_id);
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
  auto items = h.store.Chain((*conv)->session().head_item_id);
  CHECK(Harness::Paired(items));
  int aborted = 0;
  for (const auto& s : items) {
    if (IsCallOutput(s.item.kind) && s.item.body.find("aborted") != std::string::npos) ++aborted;
  }
  CHECK(aborted >= 1);
  REQUIRE(h.store.turns.size() == 1);
  CHECK(h.store.turns[0].status == TurnStatus::kInterrupted);
}

TEST_CASE("Resuming a session with a call left open closes it before the next request") {
  Harness h;
  auto conv = Conversation::Create(h.config, h.Deps(), "exec");
  REQUIRE(conv.ok());
  SessionInfo session = (*conv)->session();
  // A crash between the call and its output.
  auto ids = h.store.Append(session.id, session.head_item_id, "t", {ShellCall("c9", "z")});
  REQUIRE(ids.ok());
  session.head_item_id = ids->back();
  auto resumed = Conversation::Resume(h.config, h.Deps(), session);
  REQUIRE(resumed.ok());
  h.client.steps = {Respond({AssistantMessage("fine")})};
  CancelToken cancel;
  REQUIRE((*resumed)->RunTurn("again", cancel).ok());
  CHECK(Harness::Paired(h.store.Chain((*resumed)->session().head_item_id)));
  CHECK(h.client.bodies[0].find(R"("call_id":"c9","output":"aborted")") != std::string::npos);
}

TEST_CASE("A session advanced elsewhere is a conflict, never an interleaving") {
  Harness h;
  auto conv = Conversation::Create(h.config, h.Deps(), "exec");
  REQUIRE(conv.ok());
  SessionInfo session = (*conv)->session();
  REQUIRE(h.store.Append(session.id, session.head_item_id, "t", {UserMessage("other")}).ok());
  CancelToken cancel;
  auto turn = (*conv)->RunTurn("mine", cancel);
  REQUIRE_FALSE(turn.ok());
  CHECK(turn.status().reason() == "session_advanced");
  CHECK(h.client.bodies.empty());
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
  auto info = h.store.FindSession(id);
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
  CHECK(h.client.bodies.back().find("summary") != std::string::npos);
  CHECK(h.client.bodies.back().find("\"first\"") == std::string::npos);
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
