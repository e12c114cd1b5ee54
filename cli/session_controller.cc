#include "cli/session_controller.h"

#include <utility>

namespace codex::cli {

Result<std::unique_ptr<SessionController>> SessionController::Open(const GlobalOptions& global,
                                                                   const RunFlags& flags) {
  ASSIGN_OR_RETURN(std::unique_ptr<Engine> engine, Engine::Open(global, flags));
  return std::unique_ptr<SessionController>(new SessionController(std::move(engine)));
}

Status SessionController::StartModel(core::TurnObserver& observer, core::Approver* approver) {
  observer_ = &observer;
  approver_ = approver;
  engine_->set_approver(approver);
  return engine_->StartModel(observer);
}

Status SessionController::StartNew(std::string source, std::string id) {
  ASSIGN_OR_RETURN(conversation_, core::Conversation::Create(engine_->config(), engine_->Deps(),
                                                             std::move(source), std::move(id)));
  return OkStatus();
}

Status SessionController::Resume(const core::SessionInfo& session) {
  ASSIGN_OR_RETURN(conversation_,
                   core::Conversation::Resume(engine_->config(), engine_->Deps(), session));
  return OkStatus();
}

Result<core::SessionInfo> SessionController::ForkAndResume(const core::SessionInfo& session,
                                                           std::optional<int> at_turn) {
  ASSIGN_OR_RETURN(core::SessionInfo fork, engine_->store().Fork(session.id, at_turn));
  RETURN_IF_ERROR(Resume(fork));
  return fork;
}

std::unique_ptr<core::Conversation> SessionController::Exchange(
    std::unique_ptr<core::Conversation> other) {
  std::swap(conversation_, other);
  return other;
}

Result<core::TurnResult> SessionController::RunTurn(const std::string& text,
                                                    const core::CancelToken& cancel,
                                                    std::span<const std::string> image_urls) {
  engine_->BindSession(conversation_->session().id);
  return conversation_->RunTurn(text, cancel, image_urls);
}

Result<bool> SessionController::CompactNow(const core::CancelToken& cancel, bool asked) {
  return conversation_->CompactNow(cancel, asked);
}

Status SessionController::Reopen(const GlobalOptions& global, const RunFlags& flags) {
  ASSIGN_OR_RETURN(std::unique_ptr<Engine> engine, Engine::Open(global, flags));
  engine->set_approver(approver_);
  RETURN_IF_ERROR(engine->StartModel(*observer_));
  std::unique_ptr<core::Conversation> conversation;
  if (conversation_->persisted()) {
    ASSIGN_OR_RETURN(auto session, engine->store().FindSession(conversation_->session().id));
    ASSIGN_OR_RETURN(conversation,
                     core::Conversation::Resume(engine->config(), engine->Deps(), session));
  } else {
    // Nothing asked yet, so nothing stored: start afresh with the new settings.
    ASSIGN_OR_RETURN(conversation, core::Conversation::Create(engine->config(), engine->Deps(),
                                                              conversation_->session().source,
                                                              conversation_->session().id));
  }
  conversation_ = std::move(conversation);
  engine_ = std::move(engine);
  return OkStatus();
}

}  // namespace codex::cli
