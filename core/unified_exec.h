// Unified exec: Codex's `exec_command` / `write_stdin` tools.
//
// exec_command runs `cmd` through a shell (`shell`, default $SHELL or
// /bin/bash; `-lc` with `login`, the default, else `-c`) in `workdir`, on a
// pseudo-terminal with `tty` (default false) or on pipes with stdin from
// /dev/null (write_stdin's `chars` then fail: "stdin is closed for this
// session; rerun exec_command with tty=true…", as in Codex), and waits up to
// `yield_time_ms` (default 10000; clamped to 250..30000) for it to end. A
// command still running then stays alive in the session's sandbox server
// under a session ID the model passes to write_stdin, which writes `chars`
// (possibly empty, to poll) and collects output for `yield_time_ms` (default
// 250, same clamp). Output per call is at most `max_output_tokens` (default
// 10000; 4 bytes a token), head and tail. The reply is text:
//   Chunk ID: <6 hex digits>
//   Wall time: <seconds, 4 decimals> seconds
//   Process exited with code N        | Process running with session ID N
//   Original token count: N
//   Output:
//   <output>
// At most 64 processes stay open; starting another ends one, sparing the 8
// most recently used: the least recently used that already exited, else the
// least recently used (Codex 0.169's rule). Every process still open dies when the
// session (the ToolRouter) ends. ExecSessions is thread-safe (exec_command
// calls of one response run together); the LiveProcess that Find returns is
// used by one call at a time (write_stdin runs alone, core/tool_router.h).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/command_runner.h"

namespace codex::core {

inline constexpr int64_t kExecDefaultYieldMs = 10'000;
inline constexpr int64_t kWriteStdinDefaultYieldMs = 250;
inline constexpr int64_t kMinYieldMs = 250;
inline constexpr int64_t kMaxYieldMs = 30'000;
inline constexpr int64_t kDefaultMaxOutputTokens = 10'000;
inline constexpr size_t kMaxExecSessions = 64;
inline constexpr size_t kProtectedRecentSessions = 8;
inline constexpr size_t kExecCollectCapBytes = 1 << 20;  // kept per call before the token cap

// The `tools` entries of exec_command and write_stdin.
std::string ExecCommandToolJson();
std::string WriteStdinToolJson();

// The reply text (see the file comment); `session_id` < 0 when it exited.
std::string FormatExecOutput(const LiveProcess::Chunk& chunk, double wall_seconds,
                             int64_t session_id, int64_t max_output_tokens);

// The reply when a command was lost (chunk.lost: its end seen without an exit
// status): "<tool> failed: <why>", then what it printed before, if anything,
// after "Output:" (head and tail, as FormatExecOutput).
std::string FormatLostOutput(std::string_view tool, const LiveProcess::Chunk& chunk,
                             int64_t max_output_tokens);

// The processes that outlive their exec_command call.
class ExecSessions {
 public:
  // Takes `process` (running `command`), returns its session ID; ends one
  // first when kMaxExecSessions are open (see the file comment).
  int64_t Add(std::unique_ptr<LiveProcess> process, std::string command);
  // The process of `id` (marked as used), or null.
  LiveProcess* Find(int64_t id);
  // Kills and forgets `id`.
  void Remove(int64_t id);
  size_t size() const {
    std::lock_guard<std::mutex> lock(mu_);
    return sessions_.size();
  }
  // The open sessions, by ID: (ID, command).
  std::vector<std::pair<int64_t, std::string>> List() const;

 private:
  struct Entry {
    std::unique_ptr<LiveProcess> process;
    std::string command;
    uint64_t last_used = 0;
  };
  mutable std::mutex mu_;  // guards everything below
  std::map<int64_t, Entry> sessions_;
  int64_t next_id_ = 1000;
  uint64_t clock_ = 0;
};

}  // namespace codex::core
