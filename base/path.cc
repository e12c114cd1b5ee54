#include "base/path.h"

#include <climits>
#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace codex {

std::string CanonicalPath(const std::string& dir) {
  if (dir.empty()) return dir;
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path abs = fs::absolute(dir, ec);
  if (ec) return dir;
  const fs::path canonical = fs::weakly_canonical(abs, ec);
  std::string out = (ec ? abs.lexically_normal() : canonical.lexically_normal()).string();
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

std::optional<std::string> RealPath(const std::string& path) {
  char buf[PATH_MAX];
  if (::realpath(path.c_str(), buf) == nullptr) return std::nullopt;
  return std::string(buf);
}

}  // namespace codex
