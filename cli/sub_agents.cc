#include "cli/sub_agents.h"

#include <utility>

#include "cli/engine.h"
#include "core/conversation.h"
#include "core/turn_observer.h"

namespace codex::cli {

namespace {

// One agent's session: its engine and conversation, driven from its thread.
class EngineAgentSession final : public core::AgentSession {
 public:
  static Result<std::unique_ptr<EngineAgentSession>> Open(const core::Config& config,
                                                          const core::StoreLocation& location,
                                                          std::string parent_id) {
    std::unique_ptr<EngineAgentSession> s(new EngineAgentSession());
    s->parent_id_ = std::move(parent_id);
    ASSIGN_OR_RETURN(s->engine_, Engine::OpenChild(config, location));
    RETURN_IF_ERROR(s->engine_->StartModel(s->quiet_));
    return s;
  }

  const std::string& id() const override { return conversation_->session().id; }

  Result<std::string> RunTurn(const std::string& text, const core::CancelToken& cancel) override {
    engine_->BindSubAgent(parent_id_, conversation_->session().id);
    ASSIGN_OR_RETURN(core::TurnResult turn, conversation_->RunTurn(text, cancel));
    return std::move(turn.final_message);
  }

  Engine& engine() { return *engine_; }
  void set_conversation(std::unique_ptr<core::Conversation> c) { conversation_ = std::move(c); }

 private:
  EngineAgentSession() = default;
  core::TurnObserver quiet_;  // outlives the engine that reports to it
  std::string parent_id_;
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<core::Conversation> conversation_;
};

}  // namespace

core::Config SubAgentFactory::AgentConfig(const core::Config& parent) {
  core::Config config = parent;
  config.multi_agent = false;
  config.output_schema_json.clear();
  return config;
}

Result<std::unique_ptr<core::AgentSession>> SubAgentFactory::Spawn(
    const core::SpawnRequest& request) {
  core::Config config = AgentConfig(config_);
  if (!request.model.empty()) config.model = request.model;
  if (!request.reasoning_effort.empty()) config.model_reasoning_effort = request.reasoning_effort;
  ASSIGN_OR_RETURN(auto session, EngineAgentSession::Open(config, location_, request.parent_id));
  Engine& engine = session->engine();
  std::unique_ptr<core::Conversation> conversation;
  if (request.fork_context) {
    // A copy of the parent's history so far: a fork of it, under the parent.
    ASSIGN_OR_RETURN(core::SessionInfo fork, engine.store().Fork(request.parent_id, std::nullopt));
    ASSIGN_OR_RETURN(conversation,
                     core::Conversation::Resume(engine.config(), engine.Deps(), std::move(fork)));
  } else {
    ASSIGN_OR_RETURN(conversation, core::Conversation::Create(engine.config(), engine.Deps(),
                                                              "subagent", "", request.parent_id));
  }
  session->set_conversation(std::move(conversation));
  return std::unique_ptr<core::AgentSession>(std::move(session));
}

Result<std::unique_ptr<core::AgentSession>> SubAgentFactory::Reopen(const std::string& parent_id,
                                                                    const std::string& id) {
  ASSIGN_OR_RETURN(auto session,
                   EngineAgentSession::Open(AgentConfig(config_), location_, parent_id));
  Engine& engine = session->engine();
  ASSIGN_OR_RETURN(core::SessionInfo stored, engine.store().FindSession(id));
  if (stored.id != id || stored.forked_from_session != parent_id) {
    return NotFoundError("agent with id " + id + " not found");
  }
  ASSIGN_OR_RETURN(auto conversation,
                   core::Conversation::Resume(engine.config(), engine.Deps(), std::move(stored)));
  session->set_conversation(std::move(conversation));
  return std::unique_ptr<core::AgentSession>(std::move(session));
}

}  // namespace codex::cli
