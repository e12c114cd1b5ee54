#include "core/conversation.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>
#include <utility>

#include "core/compaction_checkpoint.h"
#include "core/goals.h"
#include "core/instructions.h"
#include "core/model_client.h"
#include "core/project_context.h"
#include "core/request_builder.h"
#include "core/retry_policy.h"
#include "core/transcript.h"
#include "core/uuid.h"

namespace codex::core {

using Json = nlohmann::ordered_json;

namespace {

// The first stream retry's delay (doubled per retry, core::RetryDelayMs), as
// the client's request retries start.
constexpr int64_t kStreamRetryBaseMs = 200;

// Streams model output into the store and the observer as it arrives.
// Holds the items of one batch (bytes received together) and commits them in
// one transaction at its end: none waits for the network to be stored, and a
// response of many calls is not one transaction an item.
class CommitObserver final : public StreamObserver {
 public:
  using CommitFn = std::function<Status(std::vector<Item>)>;
  CommitObserver(TurnObserver& observer, CommitFn commit)
      : observer_(observer), commit_(std::move(commit)) {}

  void OnTextDelta(std::string_view, std::string_view delta) override {
    observer_.OnTextDelta(delta);
  }
  void OnReasoningDelta(std::string_view, std::string_view delta) override {
    observer_.OnReasoningDelta(delta);
  }
  void OnRawReasoningDelta(std::string_view, std::string_view delta) override {
    observer_.OnRawReasoningDelta(delta);
  }
  Status OnOutputItemDone(const Item& item) override {
    held_.push_back(item);
    return OkStatus();
  }
  Status OnBatchEnd() override {
    if (held_.empty()) return OkStatus();
    std::vector<Item> items = std::move(held_);
    held_.clear();
    RETURN_IF_ERROR(commit_(items));
    for (const Item& item : items) observer_.OnItemCompleted(item);
    return OkStatus();
  }
  void OnWarning(std::string_view message) override { observer_.OnNotice(message); }
  void OnRetry(std::string_view message) override { observer_.OnRetry(message); }

 private:
  TurnObserver& observer_;
  CommitFn commit_;
  std::vector<Item> held_;
};

// Sleeps up to `ms`, waking early when cancelled.
void SleepCancellable(int64_t ms, const CancelToken& cancel) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (!cancel.cancelled() && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// Indexes (into `items`) of calls at or after `from` that have no output
// (the pairing rule is core/transcript.h's).
std::vector<size_t> DanglingCalls(const std::vector<Item>& items, size_t from = 0) {
  return UnansweredCalls(items, from);
}

// Whether `stored` (a session's loaded view) holds a message the user typed
// that session `id` itself appended: a fork without one still carries its
// "fork of …" title.
bool HasOwnUserMessage(const std::vector<StoredItem>& stored, const std::string& id) {
  return std::any_of(stored.begin(), stored.end(), [&](const StoredItem& s) {
    return s.session_id == id && IsTypedUserMessage(s.item);
  });
}

// The id of the session a fork chain starts from (the session's own id when
// it is no fork). A parent since purged ends the walk at the oldest one left;
// the walk is bounded so a damaged store cannot loop it.
std::string RootSessionId(SessionStore& store, const SessionInfo& session) {
  std::string root = session.id;
  std::string parent = session.forked_from_session;
  for (int depth = 0; !parent.empty() && depth < 256; ++depth) {
    Result<SessionInfo> up = store.FindSession(parent);
    if (!up.ok()) break;
    root = up->id;
    parent = up->forked_from_session;
  }
  return root;
}

}  // namespace

Item ContextBudgetMessage(const ContextBudget& budget) {
  std::string text = "<context_budget>\n  About " + std::to_string(budget.usage()) +
                     " tokens of the conversation are in use";
  if (budget.context_window() > 0) {
    text += " (" + std::to_string(budget.ContextLeftPercent()) + "% of the " +
            std::to_string(budget.context_window()) + "-token context window left)";
  }
  text += ". At " + std::to_string(budget.limit()) +
          " tokens codex compacts it, at a natural boundary from " +
          std::to_string(budget.soft_limit()) +
          " (a plan step completed, the end of a turn), keeping the tasks and their status, the "
          "plan, the files touched and the last commands in <working_state>.\n</context_budget>";
  return UserMessage(text);
}

Conversation::Conversation(const Config& config, ConversationDeps deps, SessionInfo session)
    : config_(config), deps_(deps), session_(std::move(session)) {
  if (deps_.compactor != nullptr) {
    budget_ =
        ContextBudget(deps_.compactor->auto_compact_limit(), deps_.compactor->context_window(),
                      deps_.compactor->soft_compact_limit());
  }
  budget_.Seed(transcript_, std::nullopt, FixedTokens());
}

Result<std::unique_ptr<Conversation>> Conversation::Create(const Config& config,
                                                           ConversationDeps deps,
                                                           std::string source, std::string id,
                                                           std::string parent) {
  NewSession spec;
  spec.parent_session = parent;
  spec.cwd = config.cwd;
  spec.model = config.model;
  spec.provider = config.model_provider_id;
  spec.source = std::move(source);
  spec.created_at_ms = deps.clock->NowMs();
  // The row is created with the first user message (Commit): starting and
  // quitting stores nothing.
  spec.id = id.empty() ? NewUuidV7(spec.created_at_ms) : std::move(id);
  SessionInfo info;
  info.id = spec.id;
  info.cwd = spec.cwd;
  info.model = spec.model;
  info.provider = spec.provider;
  info.source = spec.source;
  info.created_at_ms = info.updated_at_ms = spec.created_at_ms;
  info.forked_from_session = parent;
  std::unique_ptr<Conversation> c(new Conversation(config, deps, std::move(info)));
  if (!parent.empty()) c->cache_key_ = RootSessionId(*deps.store, c->session_);
  c->transcript_ = InitialContext(config);
  if (deps.tools != nullptr) deps.tools->goals().Reset(c->session_.id, std::nullopt, deps.clock);
  c->pending_ = std::move(spec);
  return c;
}

Result<std::unique_ptr<Conversation>> Conversation::Resume(const Config& config,
                                                           ConversationDeps deps,
                                                           SessionInfo session) {
  ASSIGN_OR_RETURN(auto stored, deps.store->LoadTranscript(session));
  std::unique_ptr<Conversation> c(new Conversation(config, deps, std::move(session)));
  c->transcript_.reserve(stored.size() + 16);
  // The newest total the server reported for this view, with the item it followed.
  const std::optional<UsageMark> mark = NewestUsageMark(stored);
  c->fork_untitled_ =
      !c->session_.forked_from_session.empty() && !HasOwnUserMessage(stored, c->session_.id);
  c->cache_key_ = RootSessionId(*deps.store, c->session_);
  for (auto& s : stored) c->transcript_.push_back(std::move(s.item));
  c->budget_.Seed(c->transcript_, mark, c->FixedTokens());
  if (deps.tools != nullptr) {
    // The thread goal: the latest "goal" event (a fork's parent's, as of the fork).
    ASSIGN_OR_RETURN(std::optional<std::string> payload,
                     deps.store->LatestEvent(c->session_.id, kGoalEventType));
    std::optional<ThreadGoal> goal;
    if (payload) {
      // A damaged goal must not lock the session: it goes on without one.
      Result<ThreadGoal> parsed = ParseGoalEventPayload(*payload);
      if (parsed.ok()) {
        goal = std::move(*parsed);
      } else if (deps.observer != nullptr) {
        deps.observer->OnNotice("session " + c->session_.id + ": " + parsed.status().message() +
                                "; continuing without a goal");
      }
    }
    // As Codex does on resume: a goal still active is recalled before the first prompt.
    c->goal_continuation_pending_ = goal && goal->status == "active";
    deps.tools->goals().Reset(c->session_.id, std::move(goal), deps.clock);
  }
  return c;
}

Status Conversation::Commit(const std::string& turn_id, std::vector<Item> items) {
  if (items.empty()) return OkStatus();
  if (pending_) {
    // The initial context is held until now, and stored with the row.
    NewSession spec = *pending_;
    spec.items = transcript_;
    spec.items.insert(spec.items.end(), items.begin(), items.end());
    spec.turn_id = turn_id;
    ASSIGN_OR_RETURN(session_, deps_.store->CreateSession(spec));
    pending_.reset();
    for (auto& item : items) transcript_.push_back(std::move(item));
    return OkStatus();
  }
  ASSIGN_OR_RETURN(auto ids,
                   deps_.store->Append(session_.id, session_.head_item_id, turn_id, items));
  if (!ids.empty()) session_.head_item_id = ids.back();
  for (auto& item : items) {
    budget_.OnItemAdded(item);
    transcript_.push_back(std::move(item));
  }
  return OkStatus();
}

Status Conversation::CloseDanglingCalls(const std::string& turn_id, std::string_view output) {
  std::vector<Item> outputs;
  for (size_t i : DanglingCalls(transcript_)) {
    outputs.push_back(CallOutputFor(transcript_[i].kind, transcript_[i].call_id, output));
  }
  return Commit(turn_id, std::move(outputs));
}

int64_t Conversation::FixedTokens() const {
  const size_t instructions =
      config_.instructions.empty() ? BaseInstructions().size() : config_.instructions.size();
  const size_t tools = deps_.tools ? deps_.tools->ToolsJson().size() : 0;
  return EstimateTextTokens(instructions + tools);
}

RequestOptions Conversation::Request() const {
  RequestOptions options;
  options.model = config_.model;
  // A review session sends no base instructions: its guidelines are its first
  // developer message (core/review.h), as in Codex 0.169.
  if (config_.review_guidelines.empty()) {
    options.instructions =
        config_.instructions.empty() ? std::string(BaseInstructions()) : config_.instructions;
  }
  options.tools_json = deps_.tools ? deps_.tools->ToolsJson() : "[]";
  options.parallel_tool_calls = config_.parallel_tool_calls;
  options.verbosity = config_.model_verbosity;
  options.output_schema_json = config_.output_schema_json;
  options.reasoning_effort = config_.model_reasoning_effort;
  options.reasoning_summary = config_.model_reasoning_summary;
  options.prompt_cache_key = cache_key();
  options.send_item_ids = config_.provider.send_item_ids;
  return options;
}

// The budget's window is the compactor's (0, unknown, without one).
int Conversation::ContextLeftPercent() const { return budget_.ContextLeftPercent(); }

Result<ModelResponse> Conversation::Sample(const std::string& turn_id, const CancelToken& cancel) {
  const std::string body = BuildResponsesRequest(Request(), transcript_);
  CommitObserver observer(
      *deps_.observer, [&](std::vector<Item> items) { return Commit(turn_id, std::move(items)); });
  Result<ModelResponse> response = deps_.client->Stream(body, observer, cancel);
  // What a client delivered without ending its batch (one that calls
  // OnOutputItemDone alone) is committed now, whatever the outcome.
  RETURN_IF_ERROR(observer.OnBatchEnd());
  return response;
}

Result<bool> Conversation::Compact(const std::string& turn_id, CompactionTrigger trigger,
                                   const std::optional<Item>& current_user_message,
                                   const CancelToken& cancel) {
  if (deps_.compactor == nullptr) {
    return FailedPreconditionError("compaction is not available for this session");
  }
  CompactionInput input;
  input.transcript = transcript_;
  input.initial_context = InitialContext(config_);
  input.current_user_message = current_user_message;
  input.request = Request();
  input.trigger = trigger;
  if (deps_.tools != nullptr) input.open_processes = deps_.tools->OpenProcesses();
  ASSIGN_OR_RETURN(CompactionOutput out, deps_.compactor->Compact(input, cancel));
  // Before and after as the budget decided (the whole request, from the
  // server's count when there is one), so what is reported is what was
  // compared: a compaction that is committed never reports growth.
  out.tokens_before = budget_.usage();
  out.tokens_after = FixedTokens() + EstimateTokens(out.new_history);
  if (!budget_.Shrinks(out.new_history, FixedTokens())) {
    // Compaction never grows a history: keep the one we have.
    deps_.observer->OnNotice("compaction would not shrink the history (~" +
                             std::to_string(out.tokens_before) + " -> ~" +
                             std::to_string(out.tokens_after) + " tokens); nothing changed");
    return false;
  }

  const Item marker = MakeCheckpointItem(out, trigger);
  std::vector<Item> batch;
  batch.reserve(out.new_history.size() + 1);
  batch.push_back(marker);
  for (const auto& item : out.new_history) batch.push_back(item);
  ASSIGN_OR_RETURN(auto ids,
                   deps_.store->Append(session_.id, session_.head_item_id, turn_id, batch));
  if (!ids.empty()) session_.head_item_id = ids.back();
  transcript_ = std::move(out.new_history);
  budget_.Seed(transcript_, std::nullopt, FixedTokens());
  budget_.OnCompacted();

  CompactionNotice notice{out.mode,
                          out.tokens_before,
                          out.tokens_after,
                          out.dropped_items,
                          std::string(CompactionTriggerName(trigger)),
                          out.kept};
  Json event = {{"mode", notice.mode},
                {"trigger", notice.trigger},
                {"tokens_before", notice.tokens_before},
                {"tokens_after", notice.tokens_after},
                {"dropped_items", notice.dropped_items},
                {"kept", notice.kept}};
  RETURN_IF_ERROR(deps_.store->RecordEvent(session_.id, turn_id, "compaction", event.dump()));
  deps_.observer->OnCompaction(notice);
  if (out.dropped_items > 0) {
    deps_.observer->OnNotice("compaction dropped the " + std::to_string(out.dropped_items) +
                             " oldest items to fit the context window");
  }
  return true;
}

Status Conversation::AcquireTurnLease() {
  if (lease_) return OkStatus();
  ASSIGN_OR_RETURN(lease_, deps_.store->AcquireTurnLease(session_.id));
  if (pending_) return OkStatus();
  Result<SessionInfo> now = deps_.store->FindSession(session_.id);
  if (!now.ok()) {
    lease_.reset();
    return now.status();
  }
  if (now->head_item_id != session_.head_item_id) {
    // Another process ran turns since this one loaded the session: continue
    // from what it stored (whole turns only: it held the lease meanwhile).
    auto stored = deps_.store->LoadTranscript(*now);
    if (!stored.ok()) {
      lease_.reset();
      return stored.status();
    }
    // The newest total the server reported for the reloaded view seeds the
    // estimate, as in Resume.
    const std::optional<UsageMark> mark = NewestUsageMark(*stored);
    fork_untitled_ = fork_untitled_ && !HasOwnUserMessage(*stored, session_.id);
    transcript_.clear();
    for (auto& it : *stored) transcript_.push_back(std::move(it.item));
    budget_.Seed(transcript_, mark, FixedTokens());
    deps_.observer->OnNotice("session " + session_.id +
                             " was continued by another codex process; reloaded its latest turns");
  }
  session_ = std::move(now).value();
  return OkStatus();
}

Result<bool> Conversation::CompactNow(const CancelToken& cancel, bool when_asked) {
  RETURN_IF_ERROR(AcquireTurnLease());
  Result<bool> compacted = CompactHoldingLease(cancel, when_asked);
  lease_.reset();
  return compacted;
}

Result<TurnResult> Conversation::RunTurn(const std::string& user_text, const CancelToken& cancel,
                                         std::span<const std::string> image_urls) {
  RETURN_IF_ERROR(AcquireTurnLease());
  Result<TurnResult> result = RunTurnHoldingLease(user_text, cancel, image_urls);
  lease_.reset();
  return result;
}

Result<bool> Conversation::CompactHoldingLease(const CancelToken& cancel, bool when_asked) {
  if (deps_.compactor != nullptr && !when_asked && !budget_.ManualCompactionWorthwhile()) {
    deps_.observer->OnNotice("session " + session_.id + " uses ~" +
                             std::to_string(budget_.usage()) +
                             " tokens, at or under half the auto-compact limit (" +
                             std::to_string(budget_.limit()) + "); nothing to compact");
    return false;
  }
  const std::string turn_id = NewUuidV7();
  RETURN_IF_ERROR(CloseDanglingCalls(turn_id, "aborted"));
  return Compact(turn_id, CompactionTrigger::kManual, std::nullopt, cancel);
}

// The state of one running turn, shared by the steps of RunTurnHoldingLease.
struct Conversation::TurnState {
  std::string turn_id;
  TurnRecord record;
  TurnResult result;
  Item user;  // the message the turn answers, once committed
  bool user_committed = false;
  int stream_retries = 0;
  bool overflow_retried = false;
  // The tool batch just run marked a plan step completed: a natural boundary
  // for a compaction above the soft limit.
  bool plan_step_completed = false;
};

Result<TurnResult> Conversation::RunTurnHoldingLease(const std::string& user_text,
                                                     const CancelToken& cancel,
                                                     std::span<const std::string> image_urls) {
  TurnState turn;
  turn.turn_id = NewUuidV7();
  turn.result.turn_id = turn.turn_id;
  turn.record.session_id = session_.id;
  turn.record.turn_id = turn.turn_id;
  turn.record.started_at_ms = deps_.clock->NowMs();
  deps_.observer->OnTurnStarted(turn.turn_id);
  if (deps_.tools != nullptr) {
    deps_.tools->BeginTurn();  // MCP list changes apply here
    deps_.tools->goals().BeginTurn();
  }

  // From here on every failure goes through FailTurn, so the turn is recorded
  // and observers (--json: turn.failed) hear how it ended.
  if (Status s = OpenTurn(turn, user_text, image_urls, cancel); !s.ok()) return FailTurn(turn, s);
  for (;;) {
    // A message steered in while the model worked goes in before the next
    // request; one steered after the model answered asks it once more.
    if (Status s = CommitSteered(turn); !s.ok()) return FailTurn(turn, s);
    Result<bool> more = SampleAndRunCalls(turn, cancel);
    if (!more.ok()) return FailTurn(turn, more.status());
    if (!*more && !HasSteered()) break;
  }

  turn.record.status = TurnStatus::kCompleted;
  turn.record.usage = turn.result.usage;
  turn.record.ended_at_ms = deps_.clock->NowMs();
  RETURN_IF_ERROR(deps_.store->RecordTurn(turn.record));
  session_.tokens_used += turn.result.usage.total_tokens;
  deps_.observer->OnTurnCompleted(turn.result.usage, ContextLeftPercent());
  return std::move(turn.result);
}

Status Conversation::AppendRecord(Item item) { return Commit(NewUuidV7(), {std::move(item)}); }

void Conversation::Steer(std::string text) {
  std::lock_guard<std::mutex> lock(steer_mutex_);
  steered_.push_back(std::move(text));
}

std::vector<std::string> Conversation::TakeSteered() {
  std::lock_guard<std::mutex> lock(steer_mutex_);
  return std::exchange(steered_, {});
}

bool Conversation::HasSteered() {
  std::lock_guard<std::mutex> lock(steer_mutex_);
  return !steered_.empty();
}

Status Conversation::CommitSteered(TurnState& turn) {
  std::vector<Item> messages;
  // Sub-agents that settled since the last request (Codex's place for them:
  // after the outputs of the calls just run), then what the user steered.
  if (deps_.tools != nullptr) {
    for (std::string& text : deps_.tools->TakeAgentNotifications()) {
      messages.push_back(UserMessage(text));
    }
  }
  for (std::string& text : TakeSteered()) messages.push_back(UserMessage(text, {}));
  return Commit(turn.turn_id, std::move(messages));
}

Status Conversation::FailTurn(TurnState& turn, Status status) {
  // Cancelled means the user interrupted (Ctrl-C, a denial that stops the
  // turn); every other failure is the turn's own.
  const bool interrupted = status.code() == StatusCode::kCancelled;
  (void)CloseDanglingCalls(turn.turn_id,
                           interrupted ? std::string("aborted") : "aborted: " + status.message());
  if (interrupted && turn.user_committed) {
    // As Codex does: the next request tells the model the turn was stopped.
    (void)Commit(turn.turn_id, {UserMessage(TurnAbortedMessage())});
  }
  // What the goal spent before the turn ended still counts (no wrap-up now).
  (void)AccountGoal(turn.turn_id, /*wrap_up_allowed=*/false);
  turn.record.status = interrupted ? TurnStatus::kInterrupted : TurnStatus::kFailed;
  turn.record.error = status.message();
  turn.record.usage = turn.result.usage;
  turn.record.ended_at_ms = deps_.clock->NowMs();
  (void)deps_.store->RecordTurn(turn.record);
  deps_.observer->OnTurnFailed(status);
  return status;
}

Status Conversation::AccountGoal(const std::string& turn_id, bool wrap_up_allowed) {
  if (deps_.tools == nullptr) return OkStatus();
  std::optional<std::string> wrap_up = deps_.tools->goals().Account(wrap_up_allowed);
  RETURN_IF_ERROR(RecordGoalChange(turn_id));
  if (wrap_up) RETURN_IF_ERROR(Commit(turn_id, {UserMessage(*wrap_up)}));
  return OkStatus();
}

Status Conversation::RecordGoalChange(const std::string& turn_id) {
  if (deps_.tools == nullptr || session_.id.empty() || pending_) return OkStatus();
  std::optional<ThreadGoal> goal = deps_.tools->goals().TakeChange();
  if (!goal) return OkStatus();
  return deps_.store->RecordEvent(session_.id, turn_id, kGoalEventType, GoalEventPayload(*goal));
}

Status Conversation::OpenTurn(TurnState& turn, const std::string& user_text,
                              std::span<const std::string> image_urls, const CancelToken& cancel) {
  // A previous run may have died between a call and its output.
  RETURN_IF_ERROR(CloseDanglingCalls(turn.turn_id, "aborted"));
  RETURN_IF_ERROR(Commit(turn.turn_id, ContextUpdates(config_, transcript_)));

  budget_.OnTurnStarted();
  if (deps_.compactor != nullptr && budget_.ShouldCompactBeforeTurn()) {
    RETURN_IF_ERROR(CompactForTurn(turn, CompactionTrigger::kAuto, std::nullopt, cancel));
  }
  // The agent sees its budget once per turn, before the message, when half of
  // the auto-compact limit is used (appended: every request's prefix stays).
  if (deps_.compactor != nullptr && budget_.limit() > 0 && budget_.usage() > budget_.limit() / 2) {
    RETURN_IF_ERROR(Commit(turn.turn_id, {ContextBudgetMessage(budget_)}));
  }

  if (std::exchange(goal_continuation_pending_, false) && deps_.tools != nullptr &&
      deps_.tools->goal() && deps_.tools->goal()->status == "active") {
    RETURN_IF_ERROR(
        Commit(turn.turn_id, {UserMessage(GoalContinuationMessage(*deps_.tools->goal()))}));
  }
  turn.user = UserMessage(user_text, image_urls);
  RETURN_IF_ERROR(Commit(turn.turn_id, {turn.user}));
  turn.user_committed = true;
  if (fork_untitled_ && user_text.find_first_not_of(" \t\r\n") != std::string::npos) {
    // A fork's first own message names it, as a new session's does.
    if (Status s = deps_.store->SetTitle(session_.id, user_text); !s.ok()) {
      deps_.observer->OnNotice("the branch keeps its title: " + s.message());
    }
    fork_untitled_ = false;
  }
  return OkStatus();
}

Status Conversation::CompactForTurn(TurnState& turn, CompactionTrigger trigger,
                                    const std::optional<Item>& current_user_message,
                                    const CancelToken& cancel) {
  ASSIGN_OR_RETURN(const bool compacted,
                   Compact(turn.turn_id, trigger, current_user_message, cancel));
  if (compacted) ++turn.result.compactions;
  return OkStatus();
}

Result<bool> Conversation::SampleAndRunCalls(TurnState& turn, const CancelToken& cancel) {
  if (cancel.cancelled()) return CancelledError("interrupted");
  // Between tool-call iterations: compact when over the limit, at most once
  // per model request.
  if (deps_.compactor != nullptr && budget_.ShouldCompactBeforeRequest(turn.plan_step_completed)) {
    RETURN_IF_ERROR(CompactForTurn(turn, CompactionTrigger::kAuto, turn.user, cancel));
  }
  turn.plan_step_completed = false;

  const size_t before = transcript_.size();
  Result<ModelResponse> response = Sample(turn.turn_id, cancel);
  budget_.OnRequestSent();
  ++turn.result.requests;
  bool had_calls = false;
  for (size_t i = before; i < transcript_.size(); ++i) {
    if (IsCall(transcript_[i].kind)) had_calls = true;
    if (transcript_[i].kind == ItemKind::kMessage && transcript_[i].role == "assistant") {
      turn.result.final_message = MessageText(transcript_[i]);
    }
  }
  if (!response.ok()) {
    ASSIGN_OR_RETURN(const AfterFailure next,
                     RecoverFromFailedRequest(turn, response.status(), before, cancel));
    if (next == AfterFailure::kRequestAgain) return true;
  } else {
    turn.stream_retries = 0;
    RETURN_IF_ERROR(RecordResponseUsage(turn, *response));
  }
  ASSIGN_OR_RETURN(const bool ran_calls, RunCalls(turn, before, cancel));
  // The goal's share of this request, once its calls have run (Codex's order);
  // a request without calls ends the turn, where no wrap-up is sent.
  if (response.ok()) RETURN_IF_ERROR(AccountGoal(turn.turn_id, /*wrap_up_allowed=*/ran_calls));
  // Without calls the model has answered; a failed request is asked again.
  return had_calls || ran_calls || !response.ok();
}

Result<Conversation::AfterFailure> Conversation::RecoverFromFailedRequest(
    TurnState& turn, const Status& failure, size_t first_new_item, const CancelToken& cancel) {
  if (failure.code() == StatusCode::kCancelled || cancel.cancelled()) {
    return CancelledError("interrupted");
  }
  if (deps_.compactor != nullptr && budget_.ShouldCompactAfterFailure(failure)) {
    turn.overflow_retried = true;
    budget_.OnOverflowCompacted();
    deps_.observer->OnNotice("context window exceeded; compacting and retrying");
    RETURN_IF_ERROR(CloseDanglingCalls(turn.turn_id, "aborted"));
    RETURN_IF_ERROR(CompactForTurn(turn, CompactionTrigger::kOverflow, turn.user, cancel));
    return AfterFailure::kRequestAgain;
  }
  // Only what the client did not already retry: a stream that dropped
  // after delivering events, or a response.failed the server sent.
  const int max_retries = config_.provider.stream_max_retries;
  if (IsRetryable(failure) && turn.stream_retries < max_retries) {
    ++turn.stream_retries;
    deps_.observer->OnRetry("Reconnecting " + std::to_string(turn.stream_retries) + "/" +
                            std::to_string(max_retries) + "… (" + failure.message() + ")");
    SleepCancellable(
        RetryDelayMs(failure.retry_after_ms(), kStreamRetryBaseMs, turn.stream_retries), cancel);
    // Calls committed before the drop are real model decisions: run them.
    return DanglingCalls(transcript_, first_new_item).empty() ? AfterFailure::kRequestAgain
                                                              : AfterFailure::kRunCommittedCalls;
  }
  if (turn.overflow_retried && failure.reason() == core::reason::kContextLengthExceeded) {
    // Compacting did not make room: say so and what to do, not just the server's words.
    Status still = ResourceExhaustedError(
        "the conversation still exceeds the model's context window after compacting (" +
        failure.message() + "); start a new session, or branch from an earlier turn with 'codex " +
        "fork " + session_.id + " --at-turn N'");
    still.WithReason(core::reason::kContextLengthExceeded);
    return still;
  }
  return failure;
}

Status Conversation::RecordResponseUsage(TurnState& turn, const ModelResponse& response) {
  if (!response.usage) return OkStatus();
  if (deps_.tools != nullptr) deps_.tools->goals().OnResponseUsage(*response.usage);
  turn.result.usage += *response.usage;
  budget_.OnResponseCompleted(response.usage);
  // Stored with the item it followed: a new process resumes from it.
  if (session_.head_item_id && response.usage->total_tokens > 0) {
    RETURN_IF_ERROR(deps_.store->RecordUsage(*session_.head_item_id, response.usage->total_tokens));
  }
  return OkStatus();
}

Result<bool> Conversation::RunCalls(TurnState& turn, size_t first_new_item,
                                    const CancelToken& cancel) {
  // In order, as Codex 0.169 does: consecutive calls that may run together
  // (ToolRouter::RunsInParallel) run as one group, any other call alone once
  // the running ones ended (Codex's read/write lock, taken in call order).
  // Outputs are committed in call order whatever order the calls end in, so
  // the stored transcript and every request's prefix stay the same. After a
  // deny-and-stop the rest are answered without running.
  std::vector<std::string> completed_before;
  const std::vector<PlanStep> no_plan;
  const std::vector<PlanStep>& plan = deps_.tools != nullptr ? deps_.tools->plan() : no_plan;
  for (const auto& step : plan) {
    if (step.status == "completed") completed_before.push_back(step.step);
  }
  const std::vector<size_t> dangling = DanglingCalls(transcript_, first_new_item);
  bool stop = false;
  for (size_t next = 0; next < dangling.size();) {
    if (stop) {
      const Item& call = transcript_[dangling[next++]];
      RETURN_IF_ERROR(
          Commit(turn.turn_id, {CallOutputFor(call.kind, call.call_id, "aborted by the user")}));
      continue;
    }
    if (cancel.cancelled()) return CancelledError("interrupted");
    size_t end = next + 1;
    if (deps_.tools->RunsInParallel(transcript_[dangling[next]])) {
      while (end < dangling.size() && deps_.tools->RunsInParallel(transcript_[dangling[end]])) {
        ++end;
      }
    }
    // Copies: committing outputs grows transcript_ while the group runs.
    std::vector<Item> group;
    for (size_t k = next; k < end; ++k) group.push_back(transcript_[dangling[k]]);
    RETURN_IF_ERROR(RunCallGroup(turn, group, cancel, stop));
    next = end;
  }
  for (const auto& step : plan) {
    if (step.status == "completed" && std::find(completed_before.begin(), completed_before.end(),
                                                step.step) == completed_before.end()) {
      turn.plan_step_completed = true;
    }
  }
  if (stop) return CancelledError("the user denied a request and stopped the turn");
  return !dangling.empty();
}

Status Conversation::CommitOutcome(TurnState& turn, const Item& call, Result<ToolOutcome> outcome,
                                   const CancelToken& cancel, bool& stop) {
  if (!outcome.ok()) {
    if (outcome.status().code() == StatusCode::kCancelled || cancel.cancelled()) {
      return CancelledError("interrupted");
    }
    return Commit(turn.turn_id,
                  {CallOutputFor(call.kind, call.call_id, outcome.status().message())});
  }
  RETURN_IF_ERROR(Commit(turn.turn_id, {outcome->output}));
  RETURN_IF_ERROR(RecordGoalChange(turn.turn_id));
  stop = stop || outcome->stop_turn;
  return OkStatus();
}

Status Conversation::RunCallGroup(TurnState& turn, const std::vector<Item>& calls,
                                  const CancelToken& cancel, bool& stop) {
  ToolRouter& tools = *deps_.tools;
  if (calls.size() == 1) {
    return CommitOutcome(turn, calls[0], tools.Dispatch(calls[0], cancel), cancel, stop);
  }

  // One thread a call. The group's token is cancelled by the user's (Ctrl-C:
  // every call ends as a cancelled one does, its processes killed) and by a
  // call whose user denied and stopped the turn (the calls in flight are
  // cancelled, those not started are not started).
  CancelToken group_cancel(&cancel);
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::optional<Result<ToolOutcome>>> results(calls.size());
  std::vector<char> gate_passed(calls.size(), 0);  // guarded by mu
  std::vector<std::thread> threads(calls.size());
  size_t started = 0;
  // Each call starts once the one before is past its approval gate: the user
  // is asked one question at a time, in the model's order, while the
  // approved commands already run.
  for (size_t i = 0; i < calls.size() && !group_cancel.cancelled(); ++i) {
    auto passed = [&mu, &cv, &gate_passed, i] {
      std::lock_guard<std::mutex> lock(mu);
      gate_passed[i] = 1;
      cv.notify_all();
    };
    auto run = [&, i, passed] {
      Result<ToolOutcome> result = tools.Dispatch(calls[i], group_cancel, passed);
      if (result.ok() && result->stop_turn) group_cancel.Cancel();
      std::lock_guard<std::mutex> lock(mu);
      results[i] = std::move(result);
      gate_passed[i] = 1;
      cv.notify_all();
    };
    try {
      threads[i] = std::thread(run);
    } catch (const std::system_error&) {
      run();  // no thread to be had: this call runs here, alone
    }
    started = i + 1;
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return gate_passed[i] != 0; });
  }

  // Outputs in call order, each as soon as it and those before it are in.
  // Outputs that are in together are committed together (one transaction:
  // the calls of a group of quick commands end nearly at once), none later
  // than alone; a failed, cancelled or turn-stopping call is committed on
  // its own path below.
  auto plain = [&](size_t k) {  // with `mu` held, or thread k joined
    return k < started && results[k].has_value() && results[k]->ok() && !(*results[k])->stop_turn;
  };
  Status status = OkStatus();
  for (size_t i = 0; i < calls.size(); ++i) {
    if (threads[i].joinable()) threads[i].join();
    if (!status.ok()) continue;  // the rest are only waited for
    if (!group_cancel.cancelled() && plain(i)) {
      std::vector<Item> outputs = {std::move((*results[i])->output)};
      size_t last = i;
      {
        std::lock_guard<std::mutex> lock(mu);
        while (last + 1 < calls.size() && plain(last + 1)) {
          outputs.push_back(std::move((*results[++last])->output));
        }
      }
      for (size_t k = i + 1; k <= last; ++k) {
        if (threads[k].joinable()) threads[k].join();
      }
      status = Commit(turn.turn_id, std::move(outputs));
      if (status.ok()) status = RecordGoalChange(turn.turn_id);
      if (!status.ok()) group_cancel.Cancel();  // no point running on
      i = last;
      continue;
    }
    const bool cancelled_call = i >= started || (!results[i]->ok() && results[i]->status().code() ==
                                                                          StatusCode::kCancelled);
    if (cancelled_call && !group_cancel.cancelled()) {
      // Cancelled while neither the user nor the group cancelled: another
      // call's question was answered with a stop (ApprovalFlow then refuses
      // every other question of the turn at once), and that call has not
      // yet ended, which is when it cancels the group. Its end decides what
      // this call was: wait for the calls still running. (Deciding before
      // it did made this call "interrupted" and the whole group "aborted",
      // the stopping call's own output lost: seen under load.)
      for (size_t k = i + 1; k < calls.size(); ++k) {
        if (threads[k].joinable()) threads[k].join();
      }
    }
    const bool stopped_by_group = group_cancel.cancelled() && !cancel.cancelled();
    if (!cancelled_call || !stopped_by_group) {
      status = i < started ? CommitOutcome(turn, calls[i], std::move(*results[i]), cancel, stop)
                           : CancelledError("interrupted");
    } else {
      // Cancelled, or never started, because another call stopped the turn.
      status = Commit(turn.turn_id,
                      {CallOutputFor(calls[i].kind, calls[i].call_id, "aborted by the user")});
    }
    if (!status.ok()) group_cancel.Cancel();  // no point running on
  }
  return status;
}

}  // namespace codex::core
