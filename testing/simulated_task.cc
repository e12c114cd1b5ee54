#include "testing/simulated_task.h"

#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <vector>

#include "base/clock.h"
#include "compaction/rebuild_history.h"
#include "core/command_runner.h"
#include "core/context_budget.h"
#include "core/conversation.h"
#include "core/tool_router.h"
#include "core/turn_observer.h"

namespace codex::compaction::sim {

namespace {

namespace fs = std::filesystem;

constexpr char kTask[] = "The build fails; read build.log until you find why.";

// A fresh directory holding src/parser.cc (the file the model patches) and an
// empty CODEX_HOME; removed with everything in it when destroyed.
class Workspace {
 public:
  static Result<Workspace> Create() {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern =
        std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/codex-compaction-sim-XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) {
      return InternalError("cannot create a workspace under " + pattern + ": " +
                           std::strerror(errno));
    }
    Workspace w(pattern);
    std::error_code ec;
    fs::create_directories(w.root_ / "src", ec);
    fs::create_directories(w.home(), ec);
    std::ofstream(w.root_ / "src" / "parser.cc") << "old\n";
    if (ec || !fs::is_regular_file(w.root_ / "src" / "parser.cc")) {
      return InternalError("cannot write the workspace " + pattern);
    }
    return w;
  }
  Workspace(Workspace&& other) noexcept : root_(std::move(other.root_)) { other.root_.clear(); }
  Workspace& operator=(Workspace&&) = delete;
  ~Workspace() {
    std::error_code ec;
    if (!root_.empty()) fs::remove_all(root_, ec);
  }
  std::string path() const { return root_.string(); }
  std::string home() const { return (root_ / "home").string(); }

 private:
  explicit Workspace(fs::path root) : root_(std::move(root)) {}
  fs::path root_;
};

// The shell: the n-th command (from 0) prints "log line n: " and 200 + 26 n
// bytes, so outputs grow from 200 bytes to about 4 KiB over 150 calls.
class BuildLogRunner final : public core::CommandRunner {
 public:
  Result<core::CommandResult> Run(const core::CommandSpec& spec,
                                  const core::CancelToken& cancel) override {
    (void)spec;
    if (cancel.cancelled()) return CancelledError("cancelled");
    core::CommandResult result;
    result.output = "log line " + std::to_string(runs_) + ": " +
                    std::string(200 + 26 * static_cast<size_t>(runs_), 'x');
    result.stdout_text = result.output;
    ++runs_;
    return result;
  }

 private:
  int runs_ = 0;
};

class CountingObserver final : public core::TurnObserver {
 public:
  void OnCompaction(const core::CompactionNotice& notice) override {
    (void)notice;
    ++compactions;
  }
  int compactions = 0;
};

bool ProducedByModelOrTool(const core::Item& item) {
  return core::IsCall(item.kind) || core::IsCallOutput(item.kind) ||
         item.kind == core::ItemKind::kReasoning ||
         (item.kind == core::ItemKind::kMessage && item.role == "assistant");
}

}  // namespace

TaskResult RunToolCallTask(core::SessionStore& store, core::Compactor* compactor,
                           SimulatedModelClient& model, int calls) {
  TaskResult result;
  Result<Workspace> workspace = Workspace::Create();
  if (!workspace.ok()) {
    result.failure = workspace.status().message();
    return result;
  }
  core::Config config;
  config.model = "sim-model";
  config.model_provider_id = "sim";
  config.cwd = workspace->path();
  config.codex_home = workspace->home();
  config.instructions = "You are a coding agent.";
  config.approval_policy = core::ApprovalPolicy::kNever;
  config.sandbox_mode = core::SandboxMode::kWorkspaceWrite;
  config.project_doc_max_bytes = 0;  // no AGENTS.md from above the temp directory
  // The simulated model spawns no sub-agents; without their ~900 tokens of
  // tool definitions the fixed part (and so the figures) stay comparable with
  // the measurements before multi_agent_v1 was offered.
  config.multi_agent = false;

  BuildLogRunner runner;
  CountingObserver observer;
  core::ToolRouter tools(config, runner, /*approver=*/nullptr, observer);
  RealClock clock;
  core::ConversationDeps deps;
  deps.store = &store;
  deps.client = &model;
  deps.tools = &tools;
  deps.compactor = compactor;
  deps.clock = &clock;
  deps.observer = &observer;
  auto conversation = core::Conversation::Create(config, deps, "exec");
  if (!conversation.ok()) {
    result.failure = conversation.status().message();
    return result;
  }
  model.set_shell_calls(calls);
  core::CancelToken cancel;
  Result<core::TurnResult> turn = (*conversation)->RunTurn(kTask, cancel);
  result.compactions = observer.compactions;
  if (turn.ok()) {
    result.finished = true;
    result.requests = turn->requests;
  } else {
    result.failure = turn.status().message();
  }

  {
    std::ifstream patched(fs::path(workspace->path()) / "src" / "parser.cc");
    std::string text((std::istreambuf_iterator<char>(patched)), std::istreambuf_iterator<char>());
    result.patch_applied = text == "new\n";
  }

  // What the model, the tools and the server produced, from the store.
  auto history = store.LoadHistory((*conversation)->session());
  if (!history.ok()) {
    result.failure = history.status().message();
    return result;
  }
  for (const core::StoredItem& stored : *history) {
    const core::Item& item = stored.item;
    const auto bytes = static_cast<int64_t>(item.body.size()) + 1;
    if (ProducedByModelOrTool(item)) result.new_content_bytes += bytes;
    if (item.kind == core::ItemKind::kCompaction || IsSummaryMessage(item)) {
      result.compaction_output_bytes += bytes;
    }
    if (core::IsCallOutput(item.kind)) result.tool_output_tokens += core::EstimateItemTokens(item);
  }
  const std::string& last = model.last_task_request();
  result.task_kept = last.find(kTask) != std::string::npos;
  result.files_kept = last.find("src/parser.cc") != std::string::npos;
  result.plan_kept = last.find("fix src/parser.cc") != std::string::npos &&
                     last.find("read build.log") != std::string::npos;
  result.frontier_kept = result.compactions == 0 ||
                         (last.find(std::string("- [in progress] ") + kTask) != std::string::npos &&
                          last.find("times] cat build.log") != std::string::npos);
  return result;
}

}  // namespace codex::compaction::sim
