// The pure core of compaction (ARCHITECTURE.md, Compaction; STYLE.md "Pure
// policy, thin driver"): rebuilding the history around a summary (items are
// classified by core/transcript.h), and dropping the oldest items of an input that overflows.
// No I/O; every function is thread-safe.
//
// Rebuilt history, in order:
//   1. the initial context items, as given;
//   2. the most recent real user messages, within a token budget;
//   3. mid-turn: the user message the turn answers (the newest user message);
//   4. the working state (the execution frontier: tasks and their status,
//      plan, files touched, last commands, open processes; working_state.h),
//      when there is any;
//   5. the summary, as a user message starting with kSummaryPrefix (or, for
//      a server-side compaction, the server's `compaction` item), last.
// Messages before the summary is Codex's order, and the cheap one for the
// prompt cache: a compaction request of a history compacted before starts
// with items 1-4 of that history, so the history after it differs from the
// compaction request only from the working state (when it changed) or the
// new summary on.
// Everything else (assistant messages, reasoning, tool calls and outputs,
// earlier summaries, remote compaction items) is what the summary replaces.
//
// Budget rule (decided here): user messages are taken newest first while
// their estimates (EstimateItemTokens) fit in what is left of the budget. The
// first one that does not fit is cut in the middle (head and tail kept around
// a marker, images dropped) when at least kMinPartialMessageTokens remain,
// and skipped otherwise; either way the walk stops there, so the kept
// messages are always the most recent contiguous run. A budget of 0 keeps none.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "core/compactor.h"
#include "core/item.h"
#include "core/transcript.h"

namespace codex::compaction {

// Default budget for recent real user messages kept verbatim.
inline constexpr int64_t kDefaultUserMessageBudgetTokens = 20'000;

// Below this many tokens of remaining budget a message is skipped, not cut.
inline constexpr int64_t kMinPartialMessageTokens = 64;

// What a summary, a context item and a real user message are is decided in
// core/transcript.h, the one home shared with the store and the CLI.
using core::IsContextItem;
using core::IsRealUserMessage;
using core::IsSummaryMessage;
using core::kSummaryPrefix;

// The summary as a user message: kSummaryPrefix + `summary`.
core::Item SummaryMessage(std::string_view summary);

// Whether an item of `items` has the same body (byte for byte) as `item`.
bool SameBodyAsAny(const core::Item& item, std::span<const core::Item> items);

// `text` cut to at most `max_bytes` bytes by removing its middle (on UTF-8
// boundaries) and putting a marker saying how much was removed in its place.
// `text` itself when it fits; a plain head cut when even the marker does not fit.
std::string TruncateMiddle(std::string_view text, size_t max_bytes);

// A user message holding `message`'s text cut in the middle so that its
// estimate is at most `max_tokens`. nullopt when max_tokens is below
// kMinPartialMessageTokens.
std::optional<core::Item> TruncateUserMessage(const core::Item& message, int64_t max_tokens);

// The history that replaces `transcript` after a compaction (see the top of
// this file). `initial_context` items are output first and are never taken
// as user messages (nor is any transcript item byte-identical to one of
// them). `current_user_message`, when given, follows the kept messages (3.) and is not charged
// to the budget; its last byte-identical occurrence in the transcript is not
// output a second time. A negative budget counts as 0.
std::vector<core::Item> RebuildHistory(std::span<const core::Item> transcript,
                                       std::span<const core::Item> initial_context,
                                       std::string_view summary, int64_t user_message_budget,
                                       const std::optional<core::Item>& current_user_message,
                                       std::span<const core::OpenProcess> open_processes = {});

// The same with `replacement` (e.g. a server `compaction` item, kept byte for
// byte) where the summary message would go.
std::vector<core::Item> RebuildHistoryAround(
    std::span<const core::Item> transcript, std::span<const core::Item> initial_context,
    std::span<const core::Item> replacement, int64_t user_message_budget,
    const std::optional<core::Item>& current_user_message,
    std::span<const core::OpenProcess> open_processes = {});

// RebuildHistoryAround under a ceiling: the user-message budget shrinks to
// what `max_tokens` leaves; kResourceExhausted when the fixed parts alone
// exceed it.
Result<std::vector<core::Item>> RebuildHistoryAroundWithin(
    std::span<const core::Item> transcript, std::span<const core::Item> initial_context,
    std::span<const core::Item> replacement, int64_t user_message_budget,
    const std::optional<core::Item>& current_user_message, int64_t max_tokens,
    std::span<const core::OpenProcess> open_processes = {});

// RebuildHistory under a ceiling: the result's EstimateTokens is at most
// `max_tokens`. The user-message budget is shrunk first; if the history is
// still too big with no user message kept, the summary is cut in the middle.
// kResourceExhausted when the initial context and current message alone
// (with an empty summary) exceed `max_tokens`.
Result<std::vector<core::Item>> RebuildHistoryWithin(
    std::span<const core::Item> transcript, std::span<const core::Item> initial_context,
    std::string_view summary, int64_t user_message_budget,
    const std::optional<core::Item>& current_user_message, int64_t max_tokens,
    std::span<const core::OpenProcess> open_processes = {});

// The working-state message (the frontier) a compaction of `transcript`
// writes: mid-turn (`current_user_message` given) the last task may be in
// progress; between turns an unanswered last task was interrupted. nullopt
// when there is nothing to keep.
std::optional<core::Item> FrontierMessage(std::span<const core::Item> transcript,
                                          const std::optional<core::Item>& current_user_message,
                                          std::span<const core::OpenProcess> open_processes);

// Removes from the front of `items` the oldest droppable units until at least
// `min_tokens` (estimated) are gone, and at least one unit. A unit is one item,
// with any reasoning items right before it, and for a tool call every output
// answering it, so a call and its output are never split. Protected, never
// dropped: items byte-identical to one of `keep` (the initial context) and
// summary messages. Returns the number of items removed: 0 when nothing is
// droppable.
int DropOldestItems(std::vector<core::Item>& items, std::span<const core::Item> keep,
                    int64_t min_tokens);

// The history `items` minus checkpoints (never sent, never summarised).
std::vector<core::Item> WithoutCheckpoints(std::span<const core::Item> items);

}  // namespace codex::compaction
