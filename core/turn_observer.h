// TurnObserver: what the turn loop reports while it works, for renderers
// (human stderr progress, `--json` events, the interactive screen). Callbacks
// come one at a time, in order: on the thread that runs the turn, or, for
// tool calls a response runs together, on their threads through the
// ToolRouter's SerializedObserver (never two at once; a call's OnToolStarted
// comes before its output and OnToolCompleted, but the calls' events
// interleave as they start and finish, as Codex's do). Library code never
// prints; only cli/ implements this and writes.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "core/item.h"
#include "core/token_usage.h"

namespace codex::core {

struct ChangedFile {
  std::string path;
  std::string kind;  // add | delete | update
};

struct PlanStep {
  std::string step;
  std::string status;  // pending | in_progress | completed
};

// One tool invocation as the user sees it.
struct ToolActivity {
  std::string call_id;
  std::string tool;     // shell | apply_patch | update_plan | mcp | collab | <unknown name>
  std::string command;  // shell: the command line, quoted for display
  std::string output;   // aggregated output (shell) or result text
  std::optional<int> exit_code;
  bool success = false;
  // exec_command: the command was still running when its call returned; it
  // lives on in the background as unified exec session `exec_session` (no
  // exit_code yet; `exec --json` then leaves its item started, as Codex).
  int64_t exec_session = -1;
  std::vector<ChangedFile> changes;  // apply_patch
  std::vector<PlanStep> plan;        // update_plan
  std::string explanation;           // update_plan
  // mcp (tool == "mcp"): the server and its tool, the arguments (JSON text),
  // the CallToolResult (JSON text, "" when there is none) and the error.
  std::string mcp_server;
  std::string mcp_tool;
  std::string mcp_arguments;
  std::string mcp_result;
  std::string error;
  // A sub-agent call (tool == "collab", core/agent_tools.h): Codex's
  // collab_tool_call fields as JSON text ({"tool", "sender_thread_id",
  // "receiver_thread_ids", "prompt", "agents_states"}).
  std::string collab;
};

struct CompactionNotice {
  std::string mode;  // remote | local
  int64_t tokens_before = 0;
  int64_t tokens_after = 0;
  int dropped_items = 0;
  std::string trigger;  // auto | manual | overflow
  // What the execution frontier kept (CompactionOutput::kept), "" for none.
  std::string kept;
};

class TurnObserver {
 public:
  virtual ~TurnObserver() = default;
  virtual void OnTurnStarted(std::string_view turn_id) { (void)turn_id; }
  virtual void OnTextDelta(std::string_view delta) { (void)delta; }
  virtual void OnReasoningDelta(std::string_view delta) { (void)delta; }
  // Raw reasoning text (not a summary); renderers show it only with
  // show_raw_agent_reasoning.
  virtual void OnRawReasoningDelta(std::string_view delta) { (void)delta; }
  // A model output item was committed (messages, reasoning, calls).
  virtual void OnItemCompleted(const Item& item) { (void)item; }
  virtual void OnToolStarted(const ToolActivity& activity) { (void)activity; }
  // Output of a running command (shell), as it arrives, before OnToolCompleted
  // (or before OnTurnFailed when the turn is interrupted while it runs). For
  // live display: ToolActivity::output on completion is the captured text.
  virtual void OnToolOutput(std::string_view call_id, std::string_view chunk) {
    (void)call_id, (void)chunk;
  }
  virtual void OnToolCompleted(const ToolActivity& activity) { (void)activity; }
  virtual void OnCompaction(const CompactionNotice& notice) { (void)notice; }
  virtual void OnTurnCompleted(const TokenUsage& usage, int context_left_percent) {
    (void)usage, (void)context_left_percent;
  }
  virtual void OnTurnFailed(const Status& status) { (void)status; }
  // Progress for humans: warnings, compaction notes.
  virtual void OnNotice(std::string_view message) { (void)message; }
  // A request is being retried ("Reconnecting 1/5… (why)"); by default a notice.
  virtual void OnRetry(std::string_view message) { OnNotice(message); }
};

// Forwards every callback to `target` (borrowed for its lifetime) under one
// mutex, so that tool calls running on several threads report one at a
// time. Thread-safe.
class SerializedObserver final : public TurnObserver {
 public:
  explicit SerializedObserver(TurnObserver& target) : target_(target) {}
  void OnTurnStarted(std::string_view turn_id) override {
    std::lock_guard<std::mutex> lock(mu_);
    target_.OnTurnStarted(turn_id);
  }
  void OnTextDelta(std::string_view delta) override {
    std::lock_guard<std::mutex> lock(mu_);
    target_.OnTextDelta(delta);
  }
  void OnReasoningDelta(std::string_view delta) override {
    std::lock_guard<std::mutex> lock(mu_);
    target_.OnReasoningDelta(delta);
  }
  void OnRawReasoningDelta(std::string_view delta) override {
    std::lock_guard<std::mutex> lock(mu_);
    target_.OnRawReasoningDelta(delta);
  }
  void OnItemCompleted(const Item& item) override {
    std::lock_guard<std::mutex> lock(mu_);
    target_.OnItemCompleted(item);
  }
  void OnToolStarted(const ToolActivity& activity) override {
    std::lock_guard<std::mutex> lock(mu_);
    target_.OnToolStarted(activity);
  }
  void OnToolOutput(std::string_view call_id, std::string_view chunk) override {
    std::lock_guard<std::mutex> lock(mu_);
    target_.OnToolOutput(call_id, chunk);
  }
  void OnToolCompleted(const ToolActivity& activity) override {
    std::lock_guard<std::mutex> lock(mu_);
    target_.OnToolCompleted(activity);
  }
  void OnCompaction(const CompactionNotice& notice) override {
    std::lock_guard<std::mutex> lock(mu_);
    target_.OnCompaction(notice);
  }
  void OnTurnCompleted(const TokenUsage& usage, int context_left_percent) override {
    std::lock_guard<std::mutex> lock(mu_);
    target_.OnTurnCompleted(usage, context_left_percent);
  }
  void OnTurnFailed(const Status& status) override {
    std::lock_guard<std::mutex> lock(mu_);
    target_.OnTurnFailed(status);
  }
  void OnNotice(std::string_view message) override {
    std::lock_guard<std::mutex> lock(mu_);
    target_.OnNotice(message);
  }
  void OnRetry(std::string_view message) override {
    std::lock_guard<std::mutex> lock(mu_);
    target_.OnRetry(message);
  }

 private:
  TurnObserver& target_;
  std::mutex mu_;
};

}  // namespace codex::core
