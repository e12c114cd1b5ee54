// JsonEventWriter: `codex exec --json` output, one JSON object per line on
// stdout, matching the Codex CLI's exec event stream: thread.started,
// turn.started, item.started / item.completed (agent_message, reasoning,
// command_execution, file_change, todo_list, error), turn.completed with
// usage, turn.failed with the error, and a top-level {"type":"error"} for
// each reconnect and for the error that fails a turn (as Codex 0.169 does).
// file_change paths are absolute. Not thread-safe.
#pragma once

#include <cstdio>
#include <string>

#include "core/cancel.h"
#include "core/turn_observer.h"

namespace codex::cli {

// The texts of a reasoning item's `field` array ("summary" or the raw
// "content"), joined by blank lines; "" when it has none.
std::string ReasoningText(const core::Item& item, std::string_view field);

class JsonEventWriter final : public core::TurnObserver {
 public:
  // `cwd` resolves relative file_change paths; `hide_reasoning`
  // (hide_agent_reasoning) leaves reasoning items out. A reasoning item's
  // text is its summary: as in Codex 0.169, raw reasoning text is never
  // emitted here (show_raw_agent_reasoning shows it to people only).
  explicit JsonEventWriter(std::FILE* out, std::string cwd = "", bool hide_reasoning = false)
      : out_(out), cwd_(std::move(cwd)), hide_reasoning_(hide_reasoning) {}

  void ThreadStarted(const std::string& session_id);
  // Cancels `token` (as Ctrl-C would: the turn stops and is recorded) the
  // first time a line cannot be written: nobody reads the events any more
  // (a closed or full stdout, `| head -1`). Later events are dropped.
  void CancelWhenOutputLost(core::CancelToken* token) { cancel_on_loss_ = token; }
  // Whether an event could not be written.
  bool output_lost() const { return output_lost_; }
  // A failure outside a turn (e.g. an unreachable endpoint before it began).
  void Error(const std::string& message);

  void OnTurnStarted(std::string_view turn_id) override;
  void OnItemCompleted(const core::Item& item) override;
  void OnToolStarted(const core::ToolActivity& activity) override;
  void OnToolCompleted(const core::ToolActivity& activity) override;
  void OnCompaction(const core::CompactionNotice& notice) override;
  void OnTurnCompleted(const core::TokenUsage& usage, int context_left_percent) override;
  void OnTurnFailed(const Status& status) override;
  void OnNotice(std::string_view message) override;
  void OnRetry(std::string_view message) override;

 private:
  void Emit(const std::string& line);
  std::string NextId();
  std::string IdFor(const std::string& call_id);

  std::FILE* out_;
  std::string cwd_;
  bool hide_reasoning_ = false;
  int next_id_ = 0;
  std::vector<std::pair<std::string, std::string>> call_ids_;  // call_id -> item id
  core::CancelToken* cancel_on_loss_ = nullptr;
  bool output_lost_ = false;
};

}  // namespace codex::cli
