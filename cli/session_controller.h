// SessionController: the lifecycle of the session one run of codex drives,
// shared by `codex exec` (exec_cmd.cc), `codex compact` (compact_cmd.cc) and
// the interactive UI (cli/interactive/): the engine opened for the run's flags (engine.h), the
// model side started with the run's observer and approver, which session it
// is on (a new one, one resumed, a fork of one), a user turn run on it (the
// request headers bound to it first), a compaction asked for, and the engine
// opened again with other flags (/model, /approvals) on the same session.
// Interrupts are the caller's: each operation that runs takes the
// CancelToken the caller's Ctrl-C handling cancels (cli/interrupt.h in line
// mode, the terminal's keys in the UI). Which session an id, a prefix or
// --last means is session_resolution.h's. Not thread-safe, except what
// core::Conversation allows while a turn runs (Steer).
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "base/status.h"
#include "cli/engine.h"
#include "cli/global_options.h"
#include "cli/run_flags.h"
#include "core/approval.h"
#include "core/cancel.h"
#include "core/conversation.h"
#include "core/session_store.h"
#include "core/turn_observer.h"

namespace codex::cli {

class SessionController {
 public:
  // Loads the config (its warnings printed once) and opens the store
  // (Engine::Open); needs no API key yet. No session is open.
  static Result<std::unique_ptr<SessionController>> Open(const GlobalOptions& global,
                                                         const RunFlags& flags);

  // Starts the model side (Engine::StartModel): turns report to `observer`,
  // approvals ask `approver` (null: every request is declined and the model
  // told). Both are borrowed for the controller's lifetime and kept by Reopen.
  Status StartModel(core::TurnObserver& observer, core::Approver* approver);

  // --- which session ---
  // A new session in the config's cwd, recorded with `source` ("exec",
  // "review", "interactive"); `id` "" = a new id. Nothing is stored until
  // its first message.
  Status StartNew(std::string source, std::string id = "");
  // Continues `session` (core::Conversation::Resume).
  Status Resume(const core::SessionInfo& session);
  // Branches `session` at its head, or after turn `at_turn` (0: before the
  // first), and continues the branch; returns it.
  Result<core::SessionInfo> ForkAndResume(const core::SessionInfo& session,
                                          std::optional<int> at_turn);
  // Puts `other` in place of the open conversation and returns the one it
  // replaced (the interactive /review runs one turn in a session of its own).
  std::unique_ptr<core::Conversation> Exchange(std::unique_ptr<core::Conversation> other);

  // --- running ---
  // One user turn on the open session, with `image_urls` attached; the
  // model requests name the session first (Engine::BindSession). kCancelled
  // when `cancel` fired (the turn is recorded as interrupted).
  Result<core::TurnResult> RunTurn(const std::string& text, const core::CancelToken& cancel,
                                   std::span<const std::string> image_urls = {});
  // A compaction now (core::Conversation::CompactNow); false when nothing
  // was compacted (the observer was told why).
  Result<bool> CompactNow(const core::CancelToken& cancel, bool asked);
  // Opens the engine again with `global` and `flags`, with the same observer
  // and approver, and continues the open session under it (one with nothing
  // stored yet starts afresh under its id). On failure nothing changes.
  Status Reopen(const GlobalOptions& global, const RunFlags& flags);

  Engine& engine() { return *engine_; }
  const core::Config& config() const { return engine_->config(); }
  core::SessionStore& store() { return engine_->store(); }
  // The open session's conversation (after StartNew, Resume or ForkAndResume).
  core::Conversation& conversation() { return *conversation_; }

 private:
  explicit SessionController(std::unique_ptr<Engine> engine) : engine_(std::move(engine)) {}
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<core::Conversation> conversation_;
  core::TurnObserver* observer_ = nullptr;
  core::Approver* approver_ = nullptr;
};

}  // namespace codex::cli
