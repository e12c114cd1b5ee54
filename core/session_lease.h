// The turn lease: one writer per turn (ARCHITECTURE.md, Data model).
//
// A turn holds a lease on its session from before its first commit to its
// end. The lease is a row in the store (holder pid, host, process start,
// turn start, heartbeat); a second process that wants to run a turn on the
// same session while the lease is live is refused with SessionBusyError
// before it sends or commits anything. The holder refreshes the heartbeat
// every kLeaseHeartbeatMs while the lease lives (also while a long tool
// runs), and deletes the row when the TurnLease object is destroyed.
//
// A lease whose holder died is taken over (LeaseHolderIsGone):
//   - same host: the holder pid no longer runs, or runs a different process
//     (its start time differs from the recorded one);
//   - another host: the heartbeat is older than kLeaseStaleMs.
// These rules are backend-neutral: a server database (PostgreSQL) keeps the
// same row and compares heartbeats across hosts.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace codex::core {

// The reason (base/status.h) of SessionBusyError: another process holds the turn lease.
namespace reason {
inline constexpr StatusReason kSessionBusy{"session_busy"};
}  // namespace reason

inline constexpr int64_t kLeaseHeartbeatMs = 5'000;
// A lease held from another host is live while its heartbeat is younger than
// this (12 missed heartbeats).
inline constexpr int64_t kLeaseStaleMs = 60'000;

struct LeaseHolder {
  int64_t pid = 0;
  std::string host;
  std::string process_start;  // /proc/<pid>/stat start time; "" when unknown
  int64_t started_at_ms = 0;  // when the turn took the lease
  int64_t heartbeat_at_ms = 0;
};

// A held lease; destroying it releases it (and stops its heartbeat).
class TurnLease {
 public:
  virtual ~TurnLease() = default;
  virtual const LeaseHolder& holder() const = 0;
};

// This process as a lease holder (pid, host name, process start), times 0.
LeaseHolder CurrentProcessHolder();

// True when `holder` can no longer be running its turn (see the rules above),
// judged from this process on host `my_host` at wall-clock `now_ms`: the time
// of the store that holds the lease (its Clock, or a server's clock), never the
// caller's own, since heartbeats were stamped with it.
bool LeaseHolderIsGone(const LeaseHolder& holder, std::string_view my_host, int64_t now_ms);

// kFailedPrecondition, reason "session_busy" (exit 3): "session <id> is busy:
// a turn is running in codex pid N on HOST since HH:MM; <advice>" (HH:MM in
// local time); the advice is "wait, or run 'codex fork <id>'" when empty.
Status SessionBusyError(std::string_view session_id, const LeaseHolder& holder,
                        std::string_view advice = {});

}  // namespace codex::core
