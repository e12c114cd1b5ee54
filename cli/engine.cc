#include "cli/engine.h"

#include <stdlib.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <system_error>
#include <thread>

#include "base/file.h"
#include "cli/config_overrides.h"
#include "cli/store_open.h"
#include "cli/sub_agents.h"
#include "cli/terminal_text.h"
#include "compaction/compactor_factory.h"
#include "core/responses_client.h"
#include "core/review.h"
#include "core/sandboxed_runner.h"
#include "storage/sqlite_session_store.h"

namespace codex::cli {

// MCP stdio servers get the environment the model's commands get.
sandbox::EnvPolicy McpEnvironmentPolicy(const core::Config& config) {
  return config.shell_environment_policy;
}

namespace {

// The --output-schema file: a JSON object, returned compact.
Result<std::string> ReadOutputSchema(const std::string& path) {
  const auto text = ReadWholeFile(path);
  if (!text.ok()) {
    return InvalidArgumentError("--output-schema " + text.status().message() +
                                "; give a JSON Schema file");
  }
  const auto schema = nlohmann::ordered_json::parse(*text, nullptr, false);
  if (schema.is_discarded() || !schema.is_object()) {
    return InvalidArgumentError("--output-schema " + path +
                                ": not a JSON object; give a JSON Schema file");
  }
  return schema.dump();
}

}  // namespace

Result<std::unique_ptr<Engine>> Engine::Open(const GlobalOptions& global, const RunFlags& flags) {
  ASSIGN_OR_RETURN(auto overrides, OverridesFrom(global, flags));
  std::unique_ptr<Engine> engine(new Engine());
  ASSIGN_OR_RETURN(engine->config_, core::LoadConfig(core::DefaultCodexHome(), overrides));
  // Once per process: the interactive session reopens the engine (/model, ...).
  static bool warned = false;
  if (!warned) {
    for (const std::string& w : engine->config_.warnings) {
      PrintF(stderr, "warning: %s\n", w.c_str());
    }
    warned = true;
  }
  if (flags.review) engine->config_.review_guidelines = std::string(core::ReviewGuidelines());
  if (!flags.output_schema_file.empty()) {
    ASSIGN_OR_RETURN(engine->config_.output_schema_json,
                     ReadOutputSchema(flags.output_schema_file));
  }
  core::StoreLocation location = engine->config_.session_store;
  if (flags.ephemeral) {
    // Under $CODEX_HOME (mode 0700), not in /tmp where every workspace-write
    // command could read and change it; the workspace policy masks it from
    // commands in case a writable root covers $CODEX_HOME too.
    std::error_code ec;
    const std::filesystem::path parent =
        std::filesystem::path(engine->config_.codex_home) / "ephemeral";
    std::filesystem::create_directories(parent, ec);
    ::chmod(parent.c_str(), 0700);
    std::string tmpl = (parent / "XXXXXX").string();
    if (ec || ::mkdtemp(tmpl.data()) == nullptr) {
      return InternalError("--ephemeral: cannot create a directory under " + parent.string() +
                           "; check that $CODEX_HOME is writable");
    }
    engine->ephemeral_dir_ = tmpl;
    engine->config_.sandbox_private_paths.push_back(tmpl);
    location = core::StoreLocation{};  // SQLite, whatever session_store says
    location.path = (std::filesystem::path(tmpl) / "sessions.db").string();
  }
  if (flags.runs_commands) {
    // Before the store opens (a new one is created and migrated here) and
    // the first request: the sandbox server and the shell snapshot's capture.
    engine->runner_ = std::make_unique<core::SandboxedRunner>();
    engine->shell_snapshot_ = core::SessionShellSnapshot(engine->config_, *engine->runner_);
    core::StartSessionWork(engine->config_, *engine->runner_, engine->shell_snapshot_.get());
  }
  ASSIGN_OR_RETURN(auto store, OpenCliStore(location));
  engine->location_ = location;
  // Not on a shared PostgreSQL store: one user's retention_days would purge
  // the whole team's sessions (`codex sessions purge --all` does it on purpose).
  if (!flags.ephemeral && location.kind == core::StoreLocation::Kind::kSqlite) {
    ApplyRetention(*store, engine->config_.codex_home, engine->config_.history_retention_days);
  }
  engine->store_ = std::move(store);
  return engine;
}

Result<std::unique_ptr<Engine>> Engine::OpenChild(const core::Config& config,
                                                  const core::StoreLocation& location) {
  std::unique_ptr<Engine> engine(new Engine());
  engine->config_ = config;
  engine->location_ = location;
  ASSIGN_OR_RETURN(engine->store_, OpenCliStore(location));
  return engine;
}

Engine::~Engine() {
  // The sub-agents first: their threads use their own engines, on our store.
  StopAgents();
  agents_.reset();
  agent_factory_.reset();
  // The store closes before its temporary directory goes.
  tools_.reset();
  shell_snapshot_.reset();
  compactor_.reset();
  // Nothing uses the runner now: its sandbox servers end (they kill what
  // they still run, exit and are waited for) while the store closes (the
  // checkpoint's syncs), instead of one after the other on the way out.
  std::thread runner_end;
  if (runner_ != nullptr) {
    try {
      runner_end = std::thread([runner = std::move(runner_)]() mutable { runner.reset(); });
    } catch (const std::system_error&) {
      // No thread: the runner ends below, after the store.
    }
  }
  store_.reset();
  if (runner_end.joinable()) runner_end.join();
  if (!ephemeral_dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(ephemeral_dir_, ec);
  }
}

Status Engine::StartModel(core::TurnObserver& observer) {
  observer_ = &observer;
  ASSIGN_OR_RETURN(std::string key, core::ResolveApiKey(config_.provider));
  core::ClientOptions client_options;
  // Codex's override of the originator header; OpenAI's TypeScript SDK sets
  // it to "codex_sdk_ts" for the codex it spawns.
  if (const char* o = std::getenv("CODEX_INTERNAL_ORIGINATOR_OVERRIDE"); o != nullptr && *o) {
    client_options.originator = o;
  }
  ASSIGN_OR_RETURN(auto client,
                   core::ResponsesClient::Create(config_.provider, key, client_options));
  responses_ = client.get();
  client_ = std::move(client);
  ASSIGN_OR_RETURN(compactor_, compaction::MakeCompactor(config_, *client_));
  if (runner_ == nullptr) {
    runner_ = std::make_unique<core::SandboxedRunner>();
    shell_snapshot_ = core::SessionShellSnapshot(config_, *runner_);
  }
  tools_ = std::make_unique<core::ToolRouter>(config_, *runner_, approver_, observer,
                                              std::move(shell_snapshot_));
  if (config_.multi_agent) {
    agent_factory_ = std::make_unique<SubAgentFactory>(config_, location_);
    agents_ = std::make_unique<core::AgentPool>(*agent_factory_);
    tools_->set_agents(agents_.get());
  }
  if (!config_.mcp_servers.empty()) {
    mcp_ = std::make_unique<mcp::McpManager>(config_, McpEnvironmentPolicy(config_));
    // Not waited for (only required servers are): a slow server's tools join
    // at the first turn that starts after it is ready.
    RETURN_IF_ERROR(mcp_->Start());
    ReportMcpNotices(false);
    tools_->set_mcp_tools(mcp_.get());
  }
  return OkStatus();
}

void Engine::ReportMcpNotices(bool at_exit) {
  if (mcp_ == nullptr || observer_ == nullptr) return;
  for (const auto& line : mcp_->TakeNotices(at_exit)) observer_->OnNotice(line);
}

void Engine::BindSession(const std::string& session_id) {
  if (responses_ != nullptr) responses_->set_session_id(session_id);
}

void Engine::BindSubAgent(const std::string& parent_id, const std::string& agent_id) {
  if (responses_ != nullptr) responses_->set_subagent(parent_id, agent_id);
}

void Engine::StopAgents() {
  if (agents_ != nullptr) agents_->StopAll();
}

core::ConversationDeps Engine::Deps() {
  core::ConversationDeps deps;
  deps.store = store_.get();
  deps.client = client_.get();
  deps.tools = tools_.get();
  deps.compactor = compactor_.get();
  deps.clock = &clock_;
  deps.observer = observer_;
  return deps;
}

}  // namespace codex::cli
