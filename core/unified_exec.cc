#include "core/unified_exec.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <random>
#include <vector>

#include "sandbox/truncate.h"

namespace codex::core {

using Json = nlohmann::ordered_json;

std::string ExecCommandToolJson() {
  Json j = {
      {"type", "function"},
      {"name", "exec_command"},
      {"description",
       "Runs a shell command in the session's sandbox and returns its output; a command still "
       "running after yield_time_ms keeps running under a session ID for write_stdin."},
      {"strict", false},
      {"parameters",
       {{"type", "object"},
        {"properties",
         {{"cmd", {{"type", "string"}, {"description", "The shell command to run."}}},
          {"workdir",
           {{"type", "string"},
            {"description", "Working directory; defaults to the session's directory."}}},
          {"shell",
           {{"type", "string"}, {"description", "The shell to run cmd with; defaults to $SHELL."}}},
          {"login",
           {{"type", "boolean"},
            {"description", "Run the shell as a login shell (-lc instead of -c); default true."}}},
          {"tty",
           {{"type", "boolean"},
            {"description",
             "Give the command a pseudo-terminal (for REPLs and interactive programs); default "
             "false."}}},
          {"yield_time_ms",
           {{"type", "number"},
            {"description", "How long to wait for output before returning; default 10000."}}},
          {"max_output_tokens",
           {{"type", "number"},
            {"description", "At most this many tokens of output are returned."}}},
          {"sandbox_permissions",
           {{"type", "string"},
            {"description",
             "\"use_default\", or \"require_escalated\" to ask the user to run it outside the "
             "sandbox."}}},
          {"justification",
           {{"type", "string"},
            {"description", "With require_escalated: why, in one sentence, shown to the user."}}},
          {"prefix_rule",
           {{"type", "array"},
            {"items", {{"type", "string"}}},
            {"description",
             "With require_escalated: a command prefix the user may approve for "
             "the rest of the session."}}}}},
        {"required", Json::array({"cmd"})},
        {"additionalProperties", false}}}};
  return j.dump();
}

std::string WriteStdinToolJson() {
  Json j = {{"type", "function"},
            {"name", "write_stdin"},
            {"description",
             "Writes characters to a running exec_command session and returns the output that "
             "follows; empty chars just polls."},
            {"strict", false},
            {"parameters",
             {{"type", "object"},
              {"properties",
               {{"session_id",
                 {{"type", "number"}, {"description", "The session ID exec_command returned."}}},
                {"chars", {{"type", "string"}, {"description", "What to write; may be empty."}}},
                {"yield_time_ms",
                 {{"type", "number"},
                  {"description", "How long to wait for output before returning; default 250."}}},
                {"max_output_tokens",
                 {{"type", "number"},
                  {"description", "At most this many tokens of output are returned."}}}}},
              {"required", Json::array({"session_id"})},
              {"additionalProperties", false}}}};
  return j.dump();
}

namespace {

// At most `max_output_tokens` of `chunk`'s output: head and tail.
std::string BoundedOutput(const LiveProcess::Chunk& chunk, int64_t max_output_tokens) {
  const size_t max_bytes = static_cast<size_t>(std::clamp<int64_t>(max_output_tokens, 1, 1 << 28)) *
                           static_cast<size_t>(4);
  if (chunk.dropped == 0 && chunk.output.size() <= max_bytes) return chunk.output;
  const sandbox::OutputGap gap{chunk.output.size() / 2, chunk.dropped, 0};
  return sandbox::TruncateHeadTail(chunk.output, gap, max_bytes);
}

}  // namespace

std::string FormatLostOutput(std::string_view tool, const LiveProcess::Chunk& chunk,
                             int64_t max_output_tokens) {
  std::string out = std::string(tool) + " failed: " + chunk.lost;
  if (!chunk.output.empty()) out += "\nOutput:\n" + BoundedOutput(chunk, max_output_tokens);
  return out;
}

std::string FormatExecOutput(const LiveProcess::Chunk& chunk, double wall_seconds,
                             int64_t session_id, int64_t max_output_tokens) {
  static thread_local std::mt19937 rng{std::random_device{}()};
  char id[16];
  std::snprintf(id, sizeof(id), "%06x", static_cast<unsigned>(rng() & 0xFFFFFF));
  char wall[64];
  std::snprintf(wall, sizeof(wall), "%.4f", wall_seconds);
  const int64_t total_bytes = static_cast<int64_t>(chunk.output.size()) + chunk.dropped;
  const int64_t tokens = (total_bytes + 3) / 4;
  std::string out = "Chunk ID: " + std::string(id) + "\nWall time: " + wall + " seconds\n";
  if (session_id < 0) {
    out += "Process exited with code " + std::to_string(chunk.exit_code) + "\n";
  } else {
    out += "Process running with session ID " + std::to_string(session_id) + "\n";
  }
  out += "Original token count: " + std::to_string(tokens) + "\nOutput:\n";
  out += BoundedOutput(chunk, max_output_tokens);
  return out;
}

int64_t ExecSessions::Add(std::unique_ptr<LiveProcess> process, std::string command) {
  std::unique_ptr<LiveProcess> evicted;  // killed after the lock is let go
  std::lock_guard<std::mutex> lock(mu_);
  if (sessions_.size() >= kMaxExecSessions) {
    // As Codex 0.169: spare the most recently used few; of the others, the
    // least recently used one that already exited, else the least recently
    // used one (found: a running server was killed while a finished
    // process, never polled since, kept its place).
    std::vector<std::pair<uint64_t, int64_t>> by_use;
    for (const auto& [id, e] : sessions_) by_use.emplace_back(e.last_used, id);
    std::sort(by_use.begin(), by_use.end());
    if (by_use.size() > kProtectedRecentSessions) {
      by_use.resize(by_use.size() - kProtectedRecentSessions);
      int64_t victim = by_use.front().second;
      for (const auto& [used, id] : by_use) {
        if (sessions_[id].process->Exited()) {
          victim = id;
          break;
        }
      }
      auto it = sessions_.find(victim);
      evicted = std::move(it->second.process);
      sessions_.erase(it);
    }
  }
  const int64_t id = next_id_++;
  sessions_[id] = Entry{std::move(process), std::move(command), ++clock_};
  return id;
}

LiveProcess* ExecSessions::Find(int64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return nullptr;
  it->second.last_used = ++clock_;
  return it->second.process.get();
}

void ExecSessions::Remove(int64_t id) {
  std::unique_ptr<LiveProcess> removed;  // killed after the lock is let go
  std::lock_guard<std::mutex> lock(mu_);
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return;
  removed = std::move(it->second.process);
  sessions_.erase(it);
}

std::vector<std::pair<int64_t, std::string>> ExecSessions::List() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::pair<int64_t, std::string>> out;
  for (const auto& [id, e] : sessions_) out.emplace_back(id, e.command);
  return out;
}

}  // namespace codex::core
