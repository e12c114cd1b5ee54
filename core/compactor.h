// Compactor: the seam through which the turn loop rewrites a transcript that
// nears the context window (ARCHITECTURE.md, Compaction).
//
// Implementations live in compaction/ (inline compaction_trigger, remote
// /responses/compact and local summary). When to compact is decided by
// core::ContextBudget (core/context_budget.h). A Compactor performs model requests but never writes
// to the store: the turn loop appends the checkpoint and the new history it returns, so the raw
// history stays in the tree. Not thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "core/cancel.h"
#include "core/item.h"
#include "core/request_builder.h"

namespace codex::core {

enum class CompactionTrigger { kAuto, kManual, kOverflow };

// A process the tool layer keeps running across model requests (unified exec
// sessions, issue 24): what the execution frontier lists under "Open
// processes" (compaction/working_state.h). ToolRouter::OpenProcesses() is the
// one source; it reports none until such sessions exist.
struct OpenProcess {
  std::string id;       // the session id the model uses to reach it
  std::string command;  // what it runs
  bool operator==(const OpenProcess&) const = default;
};

struct CompactionInput {
  std::vector<Item> transcript;       // the current view, oldest first
  std::vector<Item> initial_context;  // developer/environment items re-injected after compaction
  std::optional<Item> current_user_message;  // mid-turn: the message the turn answers
  // The session's request exactly as the turn loop sends it (model,
  // instructions, tools in order, reasoning, prompt_cache_key = session id):
  // a compaction request keeps all of it and only appends its ask to the
  // input, so the provider serves the whole prefix from its prompt cache.
  RequestOptions request;
  CompactionTrigger trigger = CompactionTrigger::kAuto;
  std::vector<OpenProcess> open_processes;  // ToolRouter::OpenProcesses() at compaction time
};

struct CompactionOutput {
  std::vector<Item> new_history;  // replaces the transcript, in order
  std::string mode;               // "inline" | "remote" | "local"
  std::string summary;            // local: the summary text; otherwise ""
  int dropped_items = 0;          // items dropped because the request itself overflowed
  int64_t tokens_before = 0;      // estimate of the transcript it replaced
  int64_t tokens_after = 0;       // estimate of new_history
  // What the execution frontier kept, in one line for the user
  // (compaction::KeptSummary); "" when the new history has none.
  std::string kept;
};

class Compactor {
 public:
  virtual ~Compactor() = default;
  // The context window and the auto-compaction threshold in tokens.
  virtual int64_t context_window() const = 0;
  virtual int64_t auto_compact_limit() const = 0;
  // Above this (at most auto_compact_limit) the turn loop compacts at a
  // natural boundary (core::ContextBudget); the default is the hard limit.
  virtual int64_t soft_compact_limit() const { return auto_compact_limit(); }
  // Performs the compaction requests and returns the rewritten history.
  virtual Result<CompactionOutput> Compact(const CompactionInput& input,
                                           const CancelToken& cancel) = 0;
};

}  // namespace codex::core
