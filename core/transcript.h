// The transcript's vocabulary: what kind of thing each item is, the one home
// for these rules (the turn loop, compaction, the store's turn starts, titles
// and search, `sessions show`, the Markdown export and the interactive
// replay all ask here, so they agree).
//
//  - A *context item* is injected, not typed: every developer or system
//    message, and a user message whose text, after leading whitespace, starts
//    with one of kContextMarkers (environment context, AGENTS.md, user
//    instructions, Codex's permissions block, our working state).
//  - A *summary message* is a user message starting with kSummaryPrefix (ours)
//    or kCodexSummaryPrefix (Codex CLI's, in imported rollouts).
//  - A *real user message* is input from the person: a user message that is
//    neither context nor a summary and carries something (non-blank text or
//    an image). Turns start at real user messages; titles come from the first.
//  - A *shell record* is the `!cmd` record of the interactive CLI: a real user
//    message (the person ran it), but not a prompt they typed.
//  - Tool calls and their outputs pair by call_id (IsCall/IsCallOutput in
//    item.h classify the kinds).
// Pure functions; thread-safe.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/item.h"

namespace codex::core {

// Leading text of the user-role messages that carry context.
inline constexpr std::string_view kContextMarkers[] = {
    "<environment_context>",    "<user_instructions>", "<permissions instructions>",
    "# AGENTS.md instructions", "<working_state>",     "<context_budget>",
    "<turn_aborted>",
};

// The user message recorded after a turn the user interrupted (Esc, Ctrl-C),
// in Codex 0.169's shape: the model is told the turn was stopped on purpose
// rather than seeing two user messages in a row. Context (kContextMarkers),
// not a message the person typed.
std::string TurnAbortedMessage();

// The fixed start of every summary message compaction writes. Recognising it
// is how a later compaction knows a message is a summary (summarised again,
// never kept as a real user message).
inline constexpr std::string_view kSummaryPrefix =
    "[Context checkpoint] The earlier part of this conversation was compacted to free room in "
    "the context window. What follows is a handoff summary written by the assistant that did "
    "that work; the tool calls it mentions really ran and their effects on files persist. "
    "Continue from this summary and the messages after it, without redoing finished work.\n\n";

// How Codex CLI starts its summaries; recognised so that sessions imported
// from Codex rollouts compact correctly.
inline constexpr std::string_view kCodexSummaryPrefix =
    "Another language model started to solve this problem and produced a summary of its "
    "thinking process.";

// The start of the `!cmd` record the interactive CLI appends.
inline constexpr std::string_view kUserShellRecordPrefix = "<user_shell_command>";

// A message item with role "user", whatever it carries.
bool IsUserRoleMessage(const Item& item);
// True when a message item has at least one input_image part.
bool HasImage(const Item& item);

// Injected context: developer/system messages, user messages starting (after
// leading whitespace) with a kContextMarkers entry.
bool IsContextItem(const Item& item);
// A user message starting with kSummaryPrefix or kCodexSummaryPrefix.
bool IsSummaryMessage(const Item& item);
// A user message from the person: not context, not a summary, not blank
// (an image alone counts).
bool IsRealUserMessage(const Item& item);
// The interactive `!cmd` record (a real user message starting with
// kUserShellRecordPrefix).
bool IsUserShellRecord(const Item& item);
// A prompt the person typed: a real user message that is not a shell record.
// What the interactive replay, Esc-Esc and a fork's own-message check show.
bool IsTypedUserMessage(const Item& item);

// True when `output` is the output item answering the call item `call`.
bool Answers(const Item& output, const Item& call);
// Indexes (into `items`) of the calls at or after `from` that no output in
// `items` answers, in order.
std::vector<size_t> UnansweredCalls(std::span<const Item> items, size_t from = 0);
// Indexes of the outputs after `call_index` that answer items[call_index]
// (empty when it is not a call).
std::vector<size_t> OutputsAnswering(std::span<const Item> items, size_t call_index);

}  // namespace codex::core
