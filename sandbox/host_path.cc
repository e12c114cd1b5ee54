#include "sandbox/host_path.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>

namespace codex::sandbox {

namespace {

// `path` with symlinks resolved as far as it exists (the rest appended as
// written): an entry not made yet still counts as lying where it would.
std::string ResolvedAsFarAsItExists(std::string path) {
  std::string rest;
  while (!path.empty()) {
    std::unique_ptr<char, decltype(&::free)> real(::realpath(path.c_str(), nullptr), &::free);
    if (real) return std::string(real.get()) + rest;
    const size_t slash = path.rfind('/');
    if (slash == std::string::npos) break;
    rest = path.substr(slash) + rest;
    path.resize(slash);
  }
  return rest.empty() ? "/" : rest;
}

}  // namespace

std::vector<std::string> ModelWritableRoots(const WritableRootsSpec& spec) {
  auto policy = WorkspacePolicy::Compute(spec);
  if (policy.ok()) return policy->root_paths();
  // A policy the workspace refuses (a protected path through a writable
  // symlink, which the model may have made on purpose): every root it could
  // have, the temp ones whether excluded or not.
  std::vector<std::string> out;
  if (!spec.workspace.empty()) out.push_back(spec.workspace);
  for (const std::string& e : spec.extra) {
    out.push_back(e.empty() || e[0] == '/' || spec.workspace.empty() ? e
                                                                     : JoinPath(spec.workspace, e));
  }
  out.push_back("/tmp");
  if (const char* t = std::getenv("TMPDIR"); t != nullptr && t[0] == '/') out.push_back(t);
  return out;
}

std::string HostSearchPath(const char* path_var, const std::vector<std::string>& writable) {
  std::vector<std::string> roots;
  for (const std::string& w : writable) {
    if (!w.empty() && w[0] == '/') roots.push_back(ResolvedAsFarAsItExists(w));
  }
  std::string_view rest = path_var != nullptr ? path_var : "";
  std::string out;
  while (true) {
    const size_t colon = rest.find(':');
    const std::string_view entry = rest.substr(0, colon);
    if (!entry.empty() && entry[0] == '/') {
      const std::string where = ResolvedAsFarAsItExists(std::string(entry));
      bool writable_entry = false;
      for (const std::string& root : roots) {
        writable_entry = writable_entry || PathWithin(where, root);
      }
      if (!writable_entry) {
        if (!out.empty()) out += ':';
        out += entry;
      }
    }
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
  return path_var == nullptr ? "/usr/bin:/bin" : out;
}

std::string FindHostProgram(std::string_view program, const char* path_var,
                            const std::vector<std::string>& writable) {
  if (program.empty() || program.find('/') != std::string_view::npos) return "";
  const std::string dirs = HostSearchPath(path_var, writable);
  if (dirs.empty()) return "";  // (not "/" + program: no entry is no directory)
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
