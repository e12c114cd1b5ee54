#include "core/session_lease.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>
#include <fstream>
#include <iterator>

#include "base/file.h"
#include "base/time.h"

namespace codex::core {

namespace {

std::string HostName() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof(buf) - 1) != 0) return "localhost";
  return buf;
}

// Field 22 of /proc/<pid>/stat (start time in clock ticks since boot); ""
// when the process does not exist or the file cannot be read.
std::string ProcessStart(int64_t pid) {
  // The process may end while it is read (ESRCH): that is "" too.
  const auto read = ReadWholeFile("/proc/" + std::to_string(pid) + "/stat", 1 << 16,
                                  /*regular_only=*/false);
  if (!read.ok()) return {};
  const std::string& stat = *read;
  // The command name (field 2) may hold spaces and ')': skip to the last ')'.
  size_t pos = stat.rfind(')');
  if (pos == std::string::npos) return {};
  ++pos;
  // Fields 3.. follow; the start time is field 22, the 20th after ')'.
  for (int field = 3; field < 22; ++field) {
    pos = stat.find(' ', pos + 1);
    if (pos == std::string::npos) return {};
  }
  const size_t end = stat.find(' ', pos + 1);
  return stat.substr(pos + 1, end == std::string::npos ? std::string::npos : end - pos - 1);
}

}  // namespace

LeaseHolder CurrentProcessHolder() {
  LeaseHolder h;
  h.pid = ::getpid();
  h.host = HostName();
  h.process_start = ProcessStart(h.pid);
  return h;
}

bool LeaseHolderIsGone(const LeaseHolder& holder, std::string_view my_host, int64_t now_ms) {
  if (holder.host != my_host) return now_ms - holder.heartbeat_at_ms > kLeaseStaleMs;
  if (holder.pid <= 0) return true;
  if (::kill(static_cast<pid_t>(holder.pid), 0) != 0 && errno == ESRCH) return true;
  // The pid runs: the holder only if it is the same process (pids are reused).
  if (!holder.process_start.empty()) {
    const std::string now_start = ProcessStart(holder.pid);
    if (!now_start.empty() && now_start != holder.process_start) return true;
  }
  return false;
}

Status SessionBusyError(std::string_view session_id, const LeaseHolder& holder,
                        std::string_view advice) {
  const std::string id(session_id);
  const std::string hhmm = FormatLocalTime(holder.started_at_ms, "%H:%M");
  Status s = FailedPreconditionError(
      "session " + id + " is busy: a turn is running in codex pid " + std::to_string(holder.pid) +
      " on " + holder.host + " since " + hhmm + "; " +
      (advice.empty() ? "wait, or run 'codex fork " + id + "'" : std::string(advice)));
  s.WithReason(core::reason::kSessionBusy);
  return s;
}

}  // namespace codex::core
