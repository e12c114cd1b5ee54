// Sub-agents: Codex 0.169's `multi_agent_v1` namespace (spawn_agent,
// send_input, wait_agent, close_agent, resume_agent; captured in
// tests/compat/codex-0.169-multi-agent-capture.json). A sub-agent is a
// session of its own (a child of the session that spawned it in the store),
// with its own turn loop on a thread of its own; AgentPool is what the model's
// calls act on: the agents the sessions of one engine opened (each reachable
// only from the session that opened it), their inboxes and statuses,
// Codex's limits (6 open agents, waits of 10 s to 1 h, 30 s by default) and its
// outputs and error lines. How an agent's session is opened (its config:
// the parent's, with the sub-agent tools off; no approver) is the
// AgentFactory's (cli/sub_agents.h). Thread-safe: the parent's router calls
// it, each agent's thread reports to it.
#pragma once

#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "base/status.h"
#include "core/cancel.h"

namespace codex::core {

inline constexpr std::string_view kMultiAgentNamespace = "multi_agent_v1";
// Codex 0.169's limit: open agents (finished ones count until closed).
inline constexpr int kMaxOpenAgents = 6;

// One sub-agent's session as the pool drives it: each RunTurn on the
// agent's own thread.
class AgentSession {
 public:
  virtual ~AgentSession() = default;
  virtual const std::string& id() const = 0;
  // One turn for `text`: its final message; kCancelled when `cancel` fired
  // (the turn is recorded as interrupted).
  virtual Result<std::string> RunTurn(const std::string& text, const CancelToken& cancel) = 0;
};

struct SpawnRequest {
  std::string parent_id;         // the spawning session (stored)
  bool fork_context = false;     // start from a copy of the parent's history
  std::string model;             // "" = the parent's
  std::string reasoning_effort;  // "" = the parent's
};

class AgentFactory {
 public:
  virtual ~AgentFactory() = default;
  // A new child session of request.parent_id (stored once its first turn commits).
  virtual Result<std::unique_ptr<AgentSession>> Spawn(const SpawnRequest& request) = 0;
  // The stored child session `id` of `parent_id`, opened again.
  virtual Result<std::unique_ptr<AgentSession>> Reopen(const std::string& parent_id,
                                                       const std::string& id) = 0;
};

// What a call did, for the `--json` events (Codex's collab_tool_call item):
// the tool as Codex names it there (`wait` for wait_agent), the agents it
// acted on and their status with its message ("pending_init", "running",
// "completed", "errored", "interrupted", "shutdown", "not_found"), the text
// sent (spawn_agent, send_input), and whether the call succeeded.
struct AgentCallReport {
  struct AgentState {
    std::string id;
    std::string status;
    std::optional<std::string> message;
  };
  std::string tool;
  std::optional<std::string> prompt;
  std::vector<AgentState> agents;
  bool ok = false;
};

class AgentPool {
 public:
  explicit AgentPool(AgentFactory& factory) : factory_(factory) {}
  ~AgentPool() { StopAll(); }
  AgentPool(const AgentPool&) = delete;
  AgentPool& operator=(const AgentPool&) = delete;

  // Runs the namespace's function `name` for session `parent_id` with the
  // call's `arguments` text; the output the model gets (errors are Codex's
  // lines). kCancelled when `cancel` fired during a wait.
  // `report` (may be null) is filled for the events.
  Result<std::string> Call(const std::string& parent_id, const std::string& name,
                           const std::string& arguments, const CancelToken& cancel,
                           AgentCallReport* report = nullptr);

  // The <subagent_notification> messages of agents that reached a final
  // status (or were closed while running) since the last call, oldest first:
  // the parent commits them before its next request.
  // Only the notifications of `parent_id`'s agents: sessions that share an
  // engine (the interactive /new, /review) never see each other's agents.
  std::vector<std::string> TakeNotifications(const std::string& parent_id);

  // Stops every agent (its turn interrupted, its commands killed) and waits
  // for their threads: the end of the parent's session.
  void StopAll();

 private:
  enum class State { kPendingInit, kRunning, kCompleted, kErrored, kInterrupted, kShutdown };
  struct Agent {
    std::string parent;  // the session that opened it: the only one that reaches it
    std::string id;
    std::string nickname;
    std::unique_ptr<AgentSession> session;
    std::deque<std::string> inbox;  // messages after the assigned one
    // The message of the turn running or about to run (Assign), and that
    // turn's own token: an interrupt stops this turn, never the next.
    std::optional<std::string> current;
    std::shared_ptr<CancelToken> cancel;
    State state = State::kPendingInit;
    std::string message;  // the final message (completed) or the error (errored)
    bool closing = false;
    std::thread thread;
  };

  void RunAgent(Agent* agent);
  // Gives an idle agent its next message (state running); mu_ held.
  static void Assign(Agent& agent);
  // Starts `agent` (its first message queued or not) and keeps it; mu_ held.
  void Start(std::unique_ptr<Agent> agent);
  // The agent's status as Codex's JSON text ("running", {"completed":…}).
  static std::string StatusJson(const Agent& agent);
  // The same as an event's agent state.
  static AgentCallReport::AgentState StateOf(const Agent& agent);
  static bool Final(State state);
  // Stops and removes `id`'s agent; its status before. mu_ not held.
  std::string Close(const std::string& id);
  std::string NextNickname();

  Result<std::string> Spawn(const std::string& parent_id, const std::string& arguments,
                            AgentCallReport& report);
  Result<std::string> SendInput(const std::string& parent_id, const std::string& arguments,
                                AgentCallReport& report);
  Result<std::string> Wait(const std::string& parent_id, const std::string& arguments,
                           const CancelToken& cancel, AgentCallReport& report);
  Result<std::string> CloseAgent(const std::string& parent_id, const std::string& arguments,
                                 AgentCallReport& report);
  Result<std::string> Resume(const std::string& parent_id, const std::string& arguments,
                             AgentCallReport& report);
  // The open agent an id names; the error line Codex gives otherwise. mu_ held.
  Result<Agent*> Find(const std::string& id, const std::string& parent);
  size_t OpenCount(const std::string& parent) const;  // mu_ held

  AgentFactory& factory_;
  std::mutex mu_;
  std::condition_variable changed_;
  std::map<std::string, std::unique_ptr<Agent>> agents_;
  std::vector<std::pair<std::string, std::string>> notifications_;  // parent, text
  int spawned_ = 0;
};

}  // namespace codex::core
