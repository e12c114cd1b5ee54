// The compactors' unit-test inputs (test support, never linked into codex;
// part of codex_compaction_sim, which builds on compaction): a compaction
// input over a transcript and the options for a limit, the same for the
// local and the remote compactor's tests.
#pragma once

#include <cstdint>
#include <vector>

#include "compaction/compactor_options.h"
#include "core/compactor.h"
#include "core/item.h"

namespace codex::testing {

// A CompactionInput whose initial context and transcript start with
// MinimalInitialContext() (testing/items.h), the transcript followed by
// `transcript`; a fixed cache key, model "gpt-test" and short instructions.
core::CompactionInput CompactionInputOf(const std::vector<core::Item>& transcript);

// Options whose auto-compact limit is `limit` tokens, in a window 10/9 of it.
compaction::CompactorOptions CompactorOptionsFor(int64_t limit = 100'000);

}  // namespace codex::testing
