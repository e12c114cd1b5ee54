// A corpus of Codex-like rollouts for storage_bench (both backends): the
// sessions a real user's ~/.codex/sessions holds, shaped line for line as
// the real Codex 0.169 rollout in tests/data/reference/codex-0.169/rollouts
// (session_meta, task_started, turn_context, developer and context messages,
// world_state, thread_settings_applied, reasoning with encrypted content,
// exec_command calls, item_completed events that repeat the command output,
// token_usage_record, token_count, task_complete), with varied content: user
// prompts, tool outputs cut from this repository's own sources and docs,
// assistant answers from its docs, and encrypted reasoning (random base64).
// The texts are read from the tree the bench was built from, so figures of
// two commits differ slightly (hit counts by a few); compare within one run
// or one commit.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "core/item.h"
#include "storage/session_database.h"

namespace codex::bench {

struct RolloutCorpus {
  std::vector<std::string> files;  // one rollout per session
  int64_t jsonl_bytes = 0;         // the files' total size
  int64_t items = 0;               // response_item lines in them
};

// What the corpus's tool outputs hold: slices of this tree's files (the
// Codex-like corpus), or, for the stress rows of the size figures, text whose
// tokens never repeat, each one a search index entry: words of random
// letters, `git log`-like lines of a 40-digit hash and a UUID, base64 lines.
enum class CorpusContent { kCodexLike, kDistinctWords, kHashes, kBase64 };

// Writes `sessions` rollout files into `dir` (deterministic for a `seed`).
RolloutCorpus WriteRolloutCorpus(const std::string& dir, int sessions, uint32_t seed,
                                 CorpusContent content = CorpusContent::kCodexLike);

// The stress contents, with the names the benches print.
inline constexpr std::pair<CorpusContent, const char*> kStressContents[] = {
    {CorpusContent::kDistinctWords, "random words"},
    {CorpusContent::kHashes, "hashes and UUIDs"},
    {CorpusContent::kBase64, "base64"}};

// Prints one stress row: "  <name>: JSONL X MB -> store Y MB = R x".
void PrintStressSize(const char* name, const RolloutCorpus& corpus, int64_t bytes);

// Imports every file of `corpus` into `store` (as `codex sessions import`);
// exits the bench on a failure.
void ImportCorpus(storage::SessionDatabase& store, const RolloutCorpus& corpus);

// A word the corpus's tool outputs hold in most sessions, for search depth.
inline constexpr const char* kCorpusCommonWord = "session";

// Prints the corpus's size rows, the same on both backends: the rollouts,
// items and JSONL bytes, then the database's growth `bytes` for them
// ("<store> after import (<how>): ... (target <= <target>)") and the
// heading of the backend's own "where the bytes are (<where>):" list.
void PrintCorpusSize(const RolloutCorpus& corpus, int64_t items, int64_t bytes,
                     const char* store_after, const char* target, const char* where);

// Prints the corpus's search rows, the same on both backends: searching
// kCorpusCommonWord with --limit 20, 100 and 10,000, the hits and the median
// wall time (with its quartiles) of kCorpusSearchRuns runs each (5 for
// 10,000). Exits the bench on a failure.
void PrintCorpusSearch(storage::SessionDatabase& store);

// The same rows for `store` and `other` holding the same corpus (the other
// backend), the searches of the two alternated one by one, so that both
// meet the same load (a run minutes apart moved a median of 3 by 1.6x on
// this shared machine); each row gives both medians and their ratio.
void PrintCorpusSearchAgainst(storage::SessionDatabase& store, const char* name,
                              storage::SessionDatabase& other, const char* other_name);

// The search-at-depth rows, the same on both backends: "src" (in every item
// of the 10,000-item session the benches write) with --limit 20, 200, 2,000
// and 10,000, the hits and the median wall time with its quartiles
// (kCorpusSearchRuns runs up to 200, 5 beyond).
void PrintSearchDepth(storage::SessionDatabase& store);

// Runs of each shallow corpus search (--limit 20 and 100).
inline constexpr int kCorpusSearchRuns = 15;

// The turn `t` of the benches' synthetic sessions (the same on both
// backends): a user message, a shell call, its 8-line output, an answer.
std::vector<core::Item> BenchTurn(int t);

// Prints "storage_bench: WHAT: STATUS" and exits 1.
[[noreturn]] void Die(const Status& status, const char* what);

}  // namespace codex::bench
