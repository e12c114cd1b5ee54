#include "testing/processes.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "testing/files.h"

namespace codex::testing {
namespace {

// Fills `entry`'s parent and state from /proc/PID/stat; false when the
// process is gone.
bool ReadStat(ProcessEntry& entry) {
  const std::string stat = ReadFile("/proc/" + std::to_string(entry.pid) + "/stat");
  // "PID (comm) S PPID ...": comm may hold anything, so look after its last ')'.
  const size_t paren = stat.rfind(')');
  if (paren == std::string::npos || paren + 4 >= stat.size()) return false;
  entry.state = stat[paren + 2];
  entry.parent = static_cast<pid_t>(std::atol(stat.c_str() + paren + 4));
  return true;
}

bool Ended(const ProcessEntry& entry) { return entry.state == 'Z' || entry.state == 'X'; }

}  // namespace

std::vector<ProcessEntry> Processes() {
  std::vector<ProcessEntry> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    ProcessEntry entry;
    entry.pid = static_cast<pid_t>(std::atol(name.c_str()));
    if (entry.pid == ::getpid() || !ReadStat(entry)) continue;
    entry.command_line = ReadFile(e.path() / "cmdline");
    out.push_back(std::move(entry));
  }
  return out;
}

bool ProcessEnded(pid_t pid) {
  ProcessEntry entry;
  entry.pid = pid;
  return !ReadStat(entry) || Ended(entry);
}

std::vector<ProcessEntry> ProcessesMentioning(std::string_view token, Mentioned where) {
  std::vector<ProcessEntry> out;
  for (auto& entry : Processes()) {
    if (Ended(entry)) continue;
    bool found = entry.command_line.find(token) != std::string::npos;
    if (!found && where == Mentioned::kInCommandLineOrEnvironment) {
      found = ReadFile("/proc/" + std::to_string(entry.pid) + "/environ").find(token) !=
              std::string::npos;
    }
    if (found) out.push_back(std::move(entry));
  }
  return out;
}

}  // namespace codex::testing
