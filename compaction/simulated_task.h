// The simulated long task shared by compaction_simulation_test and
// bench/compaction_bench: one turn whose model calls a shell tool `calls`
// times (outputs growing from 200 bytes to about 4 KiB) and then answers,
// against SimulatedModelClient. The loop asks core::ContextBudget, exactly as
// core::Conversation does, whether to compact before the turn, before each
// follow-up request and after a context_length_exceeded failure, and sends
// the compaction the session's own request (RequestOptions). Not for
// production (target codex_compaction_sim).
#pragma once

#include <cstdint>
#include <string>

#include "compaction/simulated_model_client.h"
#include "core/compactor.h"

namespace codex::compaction::sim {

struct TaskResult {
  int compactions = 0;
  int64_t tool_output_tokens = 0;  // estimate of every tool output produced
  // Bytes of the items the model and the tools produced (each sent once as
  // new input at least): the floor of what no prompt cache can serve.
  int64_t new_content_bytes = 0;
  bool finished = false;  // the model gave its final answer
  std::string failure;    // the error that stopped the turn, "" if none
  // The task message, files touched and plan were in the last request sent.
  bool task_kept = false;
  bool files_kept = false;
  bool plan_kept = false;
};

// `compactor` null: compaction off (the turn fails when a request overflows).
TaskResult RunToolCallTask(core::Compactor* compactor, SimulatedModelClient& model, int calls);

}  // namespace codex::compaction::sim
