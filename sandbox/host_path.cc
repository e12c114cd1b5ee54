#include "sandbox/host_path.h"

#include <sys/stat.h>
#include <unistd.h>

namespace codex::sandbox {

std::string HostSearchPath(const char* path_var) {
  std::string_view rest = path_var != nullptr ? path_var : "";
  std::string out;
  while (true) {
    const size_t colon = rest.find(':');
    const std::string_view entry = rest.substr(0, colon);
    if (!entry.empty() && entry[0] == '/') {
      if (!out.empty()) out += ':';
      out += entry;
    }
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
  return out.empty() ? "/usr/bin:/bin" : out;
}

std::string FindHostProgram(std::string_view program, const char* path_var) {
  if (program.empty() || program.find('/') != std::string_view::npos) return "";
  const std::string dirs = HostSearchPath(path_var);
  std::string_view rest = dirs;
  while (true) {
    const size_t colon = rest.find(':');
    std::string candidate(rest.substr(0, colon));
    candidate += '/';
    candidate += program;
    struct stat st;
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        ::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
  return "";
}

}  // namespace codex::sandbox
