// The processes a test can see, read from /proc (test support, never linked
// into codex). Processes come and go while a test looks: a process that ends
// between the listing and the read is simply not there.
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>
#include <vector>

namespace codex::testing {

struct ProcessEntry {
  pid_t pid = -1;
  pid_t parent = -1;
  char state = '?';          // /proc/PID/stat's state: R, S, Z, ...
  std::string command_line;  // its argv, each argument ended by a NUL
};

// Every process visible now, but this one.
std::vector<ProcessEntry> Processes();

// True once `pid` has ended: gone, or a zombie its parent has not reaped.
bool ProcessEnded(pid_t pid);

enum class Mentioned { kInCommandLine, kInCommandLineOrEnvironment };

// The live (not ended) processes, but this one, whose command line (or
// environment) holds `token`.
std::vector<ProcessEntry> ProcessesMentioning(std::string_view token,
                                              Mentioned where = Mentioned::kInCommandLine);

}  // namespace codex::testing
