// Copying a whole store into another (`codex sessions migrate`, README
// "Session store"): SQLite to PostgreSQL and back, or between two files.
//
// Every session (live and archived, every directory) is copied with its
// history (root to head: items, compaction checkpoints, reported usage), its
// turn records and its events, one session per transaction
// (SessionDatabase::CopySession), parents before their forks. A fork whose
// parent is in the destination hangs from the parent's copied item, so it
// shares items there as it does in the source. A session already in the
// destination is left alone: running the copy again after it was killed at
// any moment finishes it, and running it twice changes nothing.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "base/status.h"
#include "core/cancel.h"
#include "storage/session_database.h"

namespace codex::storage {

struct CopyStats {
  int64_t copied = 0;   // sessions copied by this run
  int64_t present = 0;  // sessions the destination already had
};

// What one store holds of the sessions a copy concerns.
struct StoreCounts {
  int64_t sessions = 0;
  int64_t items = 0;  // distinct items on the sessions' histories
  int64_t turns = 0;
  int64_t events = 0;
};

// Copies every session of `from` into `to`. `on_copied` (may be empty) is
// called after each session committed, with the number done so far and the total.
//
// Whole turns only, without writing to `from` (a read-only source works): a
// session is read only while no live turn lease is recorded for it
// (core/session_lease.h: a turn holds it from before its first commit to its
// end), and copied only if, once read, still none is and its head has not
// moved; otherwise it is left for later and retried, after the others,
// until `busy_wait` has passed; then kFailedPrecondition / kSessionBusy
// naming how many were left and who holds one of them (the others are
// copied: run it again). A lease whose holder died (a crashed turn) does not
// count: what the source holds then is copied as it is.
//
// Once `cancel` (may be null) is cancelled (Ctrl-C), no further session is
// started: kCancelled saying how many were copied, the others are not.
Result<CopyStats> CopyAllSessions(SessionDatabase& from, SessionDatabase& to,
                                  const std::function<void(int64_t, int64_t)>& on_copied = {},
                                  std::chrono::milliseconds busy_wait = {},
                                  const core::CancelToken* cancel = nullptr);

// Checks that every session of `from` is in `to` with the same metadata, the
// same history (item for item, bodies byte for byte), turns and events.
// kDataLoss naming the first session that differs. `from_counts` and
// `to_counts` (the same sessions, counted in each store) are filled on success.
Status VerifyCopy(SessionDatabase& from, SessionDatabase& to, StoreCounts* from_counts,
                  StoreCounts* to_counts);

}  // namespace codex::storage
