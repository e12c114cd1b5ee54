// Engine: the real implementations wired together for one run of `codex`
// (config, SQLite store, Responses client, sandboxed runner, compactor, tool
// router). Only cli/ builds one; library code sees only the core interfaces.
// The flags it is opened with are run_flags.h's, turned into config by
// config_overrides.h; which session a command means is session_resolution.h's.
#pragma once

#include <memory>
#include <string>

#include "base/clock.h"
#include "cli/global_options.h"
#include "cli/run_flags.h"
#include "core/agent_tools.h"
#include "core/approval.h"
#include "core/command_runner.h"
#include "core/compactor.h"
#include "core/config.h"
#include "core/conversation.h"
#include "core/model_client.h"
#include "core/responses_client.h"
#include "core/session_store.h"
#include "core/store_location.h"
#include "core/tool_router.h"
#include "core/turn_observer.h"
#include "mcp/manager.h"
#include "sandbox/environment.h"

namespace codex::cli {

// The environment filter of MCP stdio servers: the one of shell commands.
sandbox::EnvPolicy McpEnvironmentPolicy(const core::Config& config);

class Engine {
 public:
  ~Engine();

  // Loads config (printing its warnings on stderr, once) and opens the
  // store: $CODEX_HOME/sessions.db, or with flags.ephemeral a store in a
  // private directory under $CODEX_HOME/ephemeral (0700, outside every
  // writable root, masked from commands) removed with the Engine. Does not
  // need an API key.
  static Result<std::unique_ptr<Engine>> Open(const GlobalOptions& global, const RunFlags& flags);
  // A sub-agent's engine (cli/sub_agents.h): `config` as it is, the store at
  // `location` (the parent's, an ephemeral one included, which stays the
  // parent's to remove). No warnings, no retention pass.
  static Result<std::unique_ptr<Engine>> OpenChild(const core::Config& config,
                                                   const core::StoreLocation& location);

  // Creates the model client (needs the API key), the runner, the tool router
  // and the compactor, reporting to `observer` (which must outlive the Engine).
  // Starts the [mcp_servers] in parallel without waiting for them (only a
  // `required` one is waited for, and its failure fails the call); each one
  // that fails is reported through observer.OnNotice in one line, when the
  // next turn starts (or at ReportMcpNotices).
  Status StartModel(core::TurnObserver& observer);

  // Reports the MCP failures not yet shown; `at_exit` adds one line per
  // server still starting (codex exec calls it when its turn is over).
  void ReportMcpNotices(bool at_exit);

  // The approver asked when the policy wants the user's word; null (the
  // default, as in `codex exec`) denies and tells the model. Set before
  // StartModel; borrowed for the Engine's lifetime.
  void set_approver(core::Approver* approver) { approver_ = approver; }

  // The MCP servers and their state now (starting, ready, failed, disabled);
  // empty when none is configured or StartModel has not run.
  std::vector<mcp::ServerStatus> McpServers() const {
    return mcp_ ? mcp_->Servers() : std::vector<mcp::ServerStatus>{};
  }

  // Names the session the model requests belong to (session_id headers).
  void BindSession(const std::string& session_id);
  // Names a sub-agent's requests: its parent's session, its own thread.
  void BindSubAgent(const std::string& parent_id, const std::string& agent_id);
  // Stops every sub-agent the session started (their turns interrupted,
  // their commands killed); also done when the Engine goes.
  void StopAgents();

  core::ConversationDeps Deps();
  const core::Config& config() const { return config_; }
  core::SessionStore& store() { return *store_; }

 private:
  Engine() = default;
  core::Config config_;
  std::string ephemeral_dir_;  // removed by the destructor ("" = none)
  std::unique_ptr<core::SessionStore> store_;
  std::unique_ptr<core::ModelClient> client_;
  core::ResponsesClient* responses_ = nullptr;  // client_, when it is the HTTP client
  std::unique_ptr<core::CommandRunner> runner_;
  // Until StartModel hands it to tools_ (destroyed before runner_).
  std::unique_ptr<core::ShellSnapshot> shell_snapshot_;
  std::unique_ptr<mcp::McpManager> mcp_;  // outlives tools_, which borrows it
  std::unique_ptr<core::ToolRouter> tools_;
  std::unique_ptr<core::Compactor> compactor_;
  core::StoreLocation location_;  // where store_ is (sub-agents open it too)
  // The sub-agents ([features] multi_agent): stopped before the rest goes.
  std::unique_ptr<core::AgentFactory> agent_factory_;
  std::unique_ptr<core::AgentPool> agents_;
  RealClock clock_;
  core::TurnObserver* observer_ = nullptr;
  core::Approver* approver_ = nullptr;
};

}  // namespace codex::cli
