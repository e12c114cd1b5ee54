// Conversation: one session's agent loop (ARCHITECTURE.md, "One turn, as
// data flows").
//
// A turn: commit the user message, then repeatedly build the request from the
// stored item bytes, stream the response committing each output item the
// moment it is complete, run the tool calls it holds (those that may run
// together, ToolRouter::RunsInParallel, on a thread each; every output
// committed from the session's thread, in call order),
// until the model answers without calls. Whether to compact is asked of
// ContextBudget before a turn, between tool-call iterations (at most once per
// model request, telling it whether the batch just run completed a plan step:
// a natural boundary above the soft limit) and on a context_length_exceeded
// failure (then the request is retried once). A turn that starts above half
// the limit first appends a <context_budget> message (ContextBudgetMessage). Every response's
// total_tokens is stored with the item it followed, so a resumed session's estimate starts from it.
// A dropped stream is retried from what was committed, so nothing is lost or duplicated. On open,
// and after an interrupt, every call without an output gets an "aborted" output, so each request
// pairs every call with one output.
//
// Borrows every dependency for its lifetime; not thread-safe (one thread owns
// a session). Cancel() may be called from a signal handler via the token.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/clock.h"
#include "core/cancel.h"
#include "core/compactor.h"
#include "core/config.h"
#include "core/context_budget.h"
#include "core/model_client.h"
#include "core/request_builder.h"
#include "core/session_store.h"
#include "core/token_usage.h"
#include "core/tool_router.h"
#include "core/turn_observer.h"

namespace codex::core {

struct ConversationDeps {
  SessionStore* store = nullptr;
  ModelClient* client = nullptr;
  ToolRouter* tools = nullptr;
  Compactor* compactor = nullptr;  // may be null: no compaction
  const Clock* clock = nullptr;    // base/clock.h
  TurnObserver* observer = nullptr;
};

struct TurnResult {
  std::string turn_id;
  std::string final_message;  // the last assistant message text
  TokenUsage usage;           // summed over the turn's requests
  int requests = 0;
  int compactions = 0;
};

// The <context_budget> context message a turn starts with once half the
// auto-compact limit is used: the estimate, the window left, where codex
// compacts and what it keeps.
Item ContextBudgetMessage(const ContextBudget& budget);

class Conversation {
 public:
  // Starts a new session in config.cwd with the initial context prepared.
  // Nothing is stored until the first user message. `id` = "" makes a new one.
  // With `parent` (a stored session's id) it is that session's sub-agent
  // (core/agent_tools.h): stored as its child, sharing its prompt_cache_key.
  static Result<std::unique_ptr<Conversation>> Create(const Config& config, ConversationDeps deps,
                                                      std::string source, std::string id = "",
                                                      std::string parent = "");
  // Continues an existing session (resumed or forked): loads its transcript
  // and repairs calls left without an output. A fork's first own user
  // message becomes its title (SessionStore::SetTitle), replacing "fork of …".
  static Result<std::unique_ptr<Conversation>> Resume(const Config& config, ConversationDeps deps,
                                                      SessionInfo session);

  // Runs one turn for `user_text` (with `image_urls` attached as input_image
  // parts), holding the session's turn lease from before its first commit to
  // its end (AcquireTurnLease when not yet held). kCancelled when interrupted
  // (the turn is recorded as interrupted and the session stays resumable).
  Result<TurnResult> RunTurn(const std::string& user_text, const CancelToken& cancel,
                             std::span<const std::string> image_urls = {});

  // Steers the running turn (Codex's Enter during a turn): `text` is sent as
  // a user message at the turn's next request boundary (before its next
  // model request, or as one more request when the model had finished).
  // Safe to call from another thread while RunTurn runs.
  void Steer(std::string text);
  // Messages steered too late for the turn that just ended (it was over, or
  // interrupted): the caller sends them as the next turn or gives them back.
  std::vector<std::string> TakeSteered();

  // Appends `item` (a record outside any model turn, e.g. the interactive
  // `!cmd` record) to a session not yet stored: creates its row with the
  // initial context, as a first user message does.
  Status AppendRecord(Item item);

  // Takes the session's turn lease now (so a caller can be refused before it
  // prints or sends anything); the next RunTurn/CompactNow uses and releases
  // it. kFailedPrecondition / "session_busy" while another process runs a
  // turn. When another process advanced the session since it was loaded, the
  // transcript is reloaded and the observer told.
  Status AcquireTurnLease();

  // Compacts now (codex compact, /compact), holding the lease. False, with
  // nothing changed, when a compaction would not shrink the history, or
  // (unless `when_asked`: /compact, which runs whenever the user asks) the
  // session is under half the auto-compact limit; the reason is then told to
  // the observer.
  Result<bool> CompactNow(const CancelToken& cancel, bool when_asked = false);

  const SessionInfo& session() const { return session_; }
  // The prompt_cache_key of every request: the session's own id, or for a
  // fork (Esc-Esc, /fork, codex fork) the key of the session it was forked
  // from, so the provider serves the prefix they share from its cache.
  const std::string& cache_key() const { return cache_key_.empty() ? session_.id : cache_key_; }
  // False for a new session until its first user message is committed (the
  // session row is created with it).
  bool persisted() const { return !pending_; }
  // Estimated tokens of the next request (ContextBudget::usage).
  int64_t EstimatedTokens() const { return budget_.usage(); }
  // Percentage of the context window left (0..100); 100 without a compactor.
  int ContextLeftPercent() const;

 private:
  Conversation(const Config& config, ConversationDeps deps, SessionInfo session);

  Result<TurnResult> RunTurnHoldingLease(const std::string& user_text, const CancelToken& cancel,
                                         std::span<const std::string> image_urls);

  // The steps of a turn (RunTurnHoldingLease), in order. TurnState is the
  // turn's id, record, result, user message and retry counters.
  struct TurnState;
  enum class AfterFailure { kRequestAgain, kRunCommittedCalls };
  // Closes dangling calls, appends context updates, compacts when over the
  // limit and commits the user message.
  Status OpenTurn(TurnState& turn, const std::string& user_text,
                  std::span<const std::string> image_urls, const CancelToken& cancel);
  // One model request (compacting first when over the limit) and the calls
  // it made; true while the model is to be asked again.
  Result<bool> SampleAndRunCalls(TurnState& turn, const CancelToken& cancel);
  // What to do after a failed request: compact and retry on overflow, retry a
  // dropped stream; the error that ends the turn otherwise.
  Result<AfterFailure> RecoverFromFailedRequest(TurnState& turn, const Status& failure,
                                                size_t first_new_item, const CancelToken& cancel);
  Status RecordResponseUsage(TurnState& turn, const ModelResponse& response);
  // Runs the calls committed from `first_new_item` on; true when there were any.
  Result<bool> RunCalls(TurnState& turn, size_t first_new_item, const CancelToken& cancel);
  // Runs `calls` (one call, or consecutive calls that run in parallel) and
  // commits their outputs in call order; sets `stop` when the user denied
  // and stopped the turn.
  Status RunCallGroup(TurnState& turn, const std::vector<Item>& calls, const CancelToken& cancel,
                      bool& stop);
  // Commits what a call produced (an error becomes its output); kCancelled
  // when it was interrupted.
  Status CommitOutcome(TurnState& turn, const Item& call, Result<ToolOutcome> outcome,
                       const CancelToken& cancel, bool& stop);
  Status CompactForTurn(TurnState& turn, CompactionTrigger trigger,
                        const std::optional<Item>& current_user_message, const CancelToken& cancel);
  // Records the turn as failed (kCancelled: interrupted), gives every open call
  // an "aborted" output, tells the observer; returns `status`.
  Status FailTurn(TurnState& turn, Status status);
  // Adds what the thread goal has spent since the last accounting
  // (core/goals.h); commits the wrap-up message when the goal has just been
  // found budget_limited and `wrap_up_allowed` (after a request's calls).
  Status AccountGoal(const std::string& turn_id, bool wrap_up_allowed);
  // Records the goal as last changed, if it changed, as a "goal" event.
  Status RecordGoalChange(const std::string& turn_id);
  Result<bool> CompactHoldingLease(const CancelToken& cancel, bool when_asked);
  Status Commit(const std::string& turn_id, std::vector<Item> items);
  Status CloseDanglingCalls(const std::string& turn_id, std::string_view output);
  // False when the compaction would not shrink the history (nothing written).
  Result<bool> Compact(const std::string& turn_id, CompactionTrigger trigger,
                       const std::optional<Item>& current_user_message, const CancelToken& cancel);
  Result<ModelResponse> Sample(const std::string& turn_id, const CancelToken& cancel);
  // The session's request settings, the same for turns and compactions.
  RequestOptions Request() const;
  // Tokens of what every request sends besides the items (instructions + tools).
  int64_t FixedTokens() const;

  const Config& config_;
  ConversationDeps deps_;
  SessionInfo session_;
  std::vector<Item> transcript_;       // the current view, oldest first
  std::optional<NewSession> pending_;  // a new session not yet stored
  std::unique_ptr<TurnLease> lease_;   // held during a turn
  ContextBudget budget_;               // when to compact (the one trigger)
  bool fork_untitled_ = false;         // a fork still titled "fork of …" (no own message yet)
  // Resumed with an active goal: the first turn reminds the model of it.
  bool goal_continuation_pending_ = false;
  // Steered messages not yet committed (Steer, from the UI's thread).
  std::mutex steer_mutex_;
  std::vector<std::string> steered_;
  // Commits what was steered since the last request, as user messages.
  Status CommitSteered(TurnState& turn);
  bool HasSteered();
  // The prompt_cache_key every request sends: the id of the session's root
  // (a fork keeps its parent's key, so the prefix they share stays cached).
  std::string cache_key_;
};

}  // namespace codex::core
