// The execution frontier a compaction must not lose (ARCHITECTURE.md,
// Compaction; issue 30), written by codex from the stored items, never by the
// model:
//  - tasks: each real user message, with its status: answered (with the
//    start of its final answer), in progress, or interrupted (its turn ended
//    without an answer: a newer task began, or a compaction between turns
//    found it unanswered); "status unknown" for a task a compaction without a
//    frontier (an older codex) summarised; the person's `!cmd` records are
//    not tasks;
//  - plan: the steps of the newest update_plan call, with their statuses;
//  - files: every path an apply_patch call named ("*** Add File:",
//    "*** Update File:", "*** Delete File:", "*** Move to:"), as a custom
//    tool call or a function call with an `input` argument, or sent through
//    the shell tool (core::MatchShellApplyPatch), and what a shell call
//    (shell, container.exec, shell_command, local_shell) writes, read
//    conservatively from its command (shell_edits.h); each with the last
//    action on it;
//  - commands: the last few commands run through the shell tools, with their
//    exit codes (adjacent runs of the same command with the same exit code
//    are one entry with a count);
//  - open processes: what the tool layer reports still running
//    (core::OpenProcess; none until unified exec sessions exist).
// A compacted history carries them in one working-state message (a user
// message starting with kWorkingStatePrefix), which the next compaction reads
// back and continues from (only the items after it are new), so the frontier
// survives any number of compactions, a resume and a fork.
//
// Bounded: each section keeps at most its k* limit of entries (the oldest go
// first) and every line is cut to a fixed number of bytes, so the message has
// a fixed ceiling. Byte-stable: the text is a pure function of the items
// (same items -> same bytes; a message read back and written again is
// unchanged). Sections are ordered from the most stable to the most
// volatile (tasks, plan, files, commands, processes) so that a compaction
// that only ran more commands changes the message from its end: the prompt
// cache still serves the rest. Pure; thread-safe.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/compactor.h"
#include "core/item.h"

namespace codex::compaction {

inline constexpr std::string_view kWorkingStatePrefix = "<working_state>";

// The budget (oldest first out) and the longest line of each section.
inline constexpr size_t kMaxTasks = 8;
inline constexpr size_t kMaxPlanSteps = 20;
inline constexpr size_t kMaxFiles = 24;
inline constexpr size_t kMaxCommands = 5;
inline constexpr size_t kMaxProcesses = 8;
inline constexpr size_t kMaxLineBytes = 200;

struct PlanStep {
  std::string step;
  std::string status;  // pending | in_progress | completed
  bool operator==(const PlanStep&) const = default;
};

// answered | in progress | interrupted
struct Task {
  std::string text;    // the user's message, cut to kMaxLineBytes
  std::string status;  // "answered" | "in progress" | "interrupted" | "status unknown"
  std::string answer;  // answered: the start of the final answer
  bool operator==(const Task&) const = default;
};

struct FileTouch {
  std::string path;
  std::string action;  // added | updated | deleted | moved away | moved here | written by a command
  bool operator==(const FileTouch&) const = default;
};

struct CommandRun {
  std::string command;  // the script (bash -lc X: X) or the argv joined, cut to kMaxLineBytes
  std::string exit;     // "exit N" | "aborted" | "no exit code" | "running"
  int times = 1;        // adjacent identical runs
  bool operator==(const CommandRun&) const = default;
};

struct WorkingState {
  std::vector<Task> tasks;           // oldest first
  std::vector<PlanStep> plan;        // the newest plan; empty when none was set
  std::vector<FileTouch> files;      // first-touched order, no duplicate paths
  std::vector<CommandRun> commands;  // oldest first
  std::vector<core::OpenProcess> processes;
  bool empty() const {
    return tasks.empty() && files.empty() && plan.empty() && commands.empty() && processes.empty();
  }
  std::vector<std::string> paths() const;
};

// The state at the end of `transcript`: the newest working-state message,
// then what the items after it add (newer plans replace older ones; items
// before that message are what the compaction that wrote it already read).
// `turn_running`: the transcript ends inside a turn (mid-turn compaction), so
// an unanswered last task is in progress; otherwise it is interrupted.
// `processes` is taken as the open-process section as given.
WorkingState ExtractWorkingState(std::span<const core::Item> transcript, bool turn_running = true,
                                 std::span<const core::OpenProcess> processes = {});

// The working-state message for `state`; nullopt when it is empty.
std::optional<core::Item> WorkingStateMessage(const WorkingState& state);

// True for a message WorkingStateMessage made.
bool IsWorkingStateMessage(const core::Item& item);

// One line saying what a working-state message in `history` kept (for the
// user: the compaction notice), e.g. "2 tasks (1 answered, 1 in progress),
// plan 1/3 completed, 2 files, last command `make` exit 0"; "" without one.
std::string KeptSummary(std::span<const core::Item> history);

}  // namespace codex::compaction
