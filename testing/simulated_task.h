// The simulated long task shared by tests/compaction_simulation_test and
// bench/compaction_bench: one turn of the shipped turn loop
// (core::Conversation, with core::ToolRouter running the calls) against
// SimulatedModelClient, whose model makes a plan, edits src/parser.cc, then
// runs `cat build.log` `calls` times (outputs growing from 200 bytes to about
// 4 KiB) and answers. Only the model and the command runner are simulated;
// the trigger (core::ContextBudget), the compactor, the request building and
// the store are the ones codex runs. Not for production (target
// codex_compaction_sim).
#pragma once

#include <cstdint>
#include <string>

#include "core/compactor.h"
#include "core/session_store.h"
#include "testing/simulated_model_client.h"

namespace codex::compaction::sim {

struct TaskResult {
  int requests = 0;                // model requests of the turn (compaction requests not included)
  int compactions = 0;             // committed compactions
  int64_t tool_output_tokens = 0;  // estimate of every tool output produced
  // Bytes of the items the model and the tools produced, each with the comma
  // that joins it to the input (each sent once as new input at least): the
  // floor of what no prompt cache can serve, compactions aside.
  int64_t new_content_bytes = 0;
  // Bytes of what each compaction produced to stand for the history it
  // replaced (the server's `compaction` items, our summary messages), with
  // their commas: new input once each, as much a floor as the model's output.
  int64_t compaction_output_bytes = 0;
  bool finished = false;  // the model gave its final answer
  // The tool router applied the model's patch: src/parser.cc reads "new".
  bool patch_applied = false;
  std::string failure;  // the error that stopped the turn, "" if none
  // The task message, files touched and plan were in the last task request.
  bool task_kept = false;
  bool files_kept = false;
  bool plan_kept = false;
  // After a compaction the frontier says the task is still in progress and
  // names the last command with its exit code (compaction/working_state.h).
  bool frontier_kept = false;
};

// Runs the task in a new session of `store` (a real store: the bench and the
// test pass a SQLite file) in a temporary workspace, removed after.
// `compactor` null: compaction off (the turn fails when a request overflows).
TaskResult RunToolCallTask(core::SessionStore& store, core::Compactor* compactor,
                           SimulatedModelClient& model, int calls);

}  // namespace codex::compaction::sim
