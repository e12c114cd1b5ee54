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
#include <utility>

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
  engine->location_ = location;
  if (flags.runs_commands) {
    // Before the first request: the sandbox server and the shell snapshot's
    // capture (each starts on a thread of its own).
    engine->runner_ = std::make_unique<core::SandboxedRunner>();
    engine->shell_snapshot_ = core::SessionShellSnapshot(engine->config_, *engine->runner_);
    core::StartSessionWork(engine->config_, *engine->runner_, engine->shell_snapshot_.get());
  }
  // The store opens on a thread: a new one's image is synced before it is
  // linked (storage/new_sqlite_store.h), and opening reads its schema; none
  // of it needs the client's setup (StartModel) when the caller awaits the
  // store later. After the session's start above: the snapshot's file, made
  // in CODEX_HOME, would wait for the journal commit of the image's sync.
  // Not on a shared PostgreSQL store: one user's retention_days would purge
  // the whole team's sessions (`codex sessions purge --all` does it on purpose).
  const bool retention = !flags.ephemeral && location.kind == core::StoreLocation::Kind::kSqlite;
  Engine* e = engine.get();
  auto open_store = [e, location, retention, codex_home = engine->config_.codex_home,
                     days = engine->config_.history_retention_days] {
    auto store = OpenCliStore(location);
    if (!store.ok()) {
      e->store_status_ = store.status();
      return;
    }
    if (retention) ApplyRetention(**store, codex_home, days);
    e->store_ = std::move(store).value();
  };
  try {
    engine->store_opening_ = std::thread(open_store);
  } catch (const std::system_error&) {
    open_store();  // no thread: here, first
  }
  if (!flags.store_awaited_later) RETURN_IF_ERROR(engine->AwaitStore());
  return engine;
}

Status Engine::AwaitStore() {
  if (store_opening_.joinable()) store_opening_.join();
  return std::exchange(store_status_, OkStatus());
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
  // A store still opening (a caller that failed before AwaitStore) is
  // waited for: its thread writes into this Engine.
  if (store_opening_.joinable()) store_opening_.join();
  // The sub-agents first: their threads use their own engines, on our store.
  StopAgents();
  agents_.reset();
  agent_factory_.reset();
  compactor_.reset();
  // Nothing uses the tools and the runner now, nor do they use the store:
  // on a thread, while the store closes (the checkpoint's syncs), the tools
  // end (unified exec's processes killed, the shell snapshot's capture
  // stopped and its file removed), then the runner's sandbox servers (they
  // kill what they still run, exit and are waited for), in that order (the
  // tools borrow the runner), instead of all of it one after the other on
  // the way out.
  auto end_tools = [tools = std::move(tools_), snapshot = std::move(shell_snapshot_),
                    runner = std::move(runner_)]() mutable {
    tools.reset();
    snapshot.reset();
    runner.reset();
  };
  std::thread tools_end;
  try {
    tools_end = std::thread(std::ref(end_tools));
  } catch (const std::system_error&) {
    end_tools();  // no thread: here, before the store
  }
  // The store closes before its temporary directory goes.
  store_.reset();
  if (tools_end.joinable()) tools_end.join();
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
