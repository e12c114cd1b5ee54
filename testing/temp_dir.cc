#include "testing/temp_dir.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <vector>

namespace codex::testing {

namespace fs = std::filesystem;

fs::path TempBase() {
  const char* tmpdir = std::getenv("TMPDIR");
  return tmpdir != nullptr && *tmpdir != '\0' ? fs::path(tmpdir) : fs::path("/tmp");
}

bool UnderTemp(const fs::path& dir) {
  const char* tmpdir = std::getenv("TMPDIR");
  for (std::string base : {std::string("/tmp"), std::string(tmpdir ? tmpdir : "")}) {
    if (base.empty()) continue;
    std::error_code ec;
    auto rel = fs::weakly_canonical(dir, ec).lexically_relative(fs::weakly_canonical(base, ec));
    if (!rel.empty() && *rel.begin() != "..") return true;
  }
  return false;
}

fs::path NonTempBase() {
  std::vector<fs::path> candidates = {fs::read_symlink("/proc/self/exe").parent_path(), "/var/tmp"};
  if (const char* home = std::getenv("HOME")) candidates.emplace_back(home);
  for (const auto& c : candidates) {
    std::error_code ec;
    if (fs::is_directory(c, ec) && !UnderTemp(c) && ::access(c.c_str(), W_OK) == 0) return c;
  }
  return candidates.front();
}

TempDir::TempDir(std::string_view prefix, const fs::path& base) {
  std::string tmpl = (base / (std::string(prefix) + "XXXXXX")).string();
  if (::mkdtemp(tmpl.data()) == nullptr) {
    std::fprintf(stderr, "error: cannot make a temporary directory %s: %s\n", tmpl.c_str(),
                 std::strerror(errno));
    std::abort();
  }
  path_ = fs::canonical(tmpl);
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

void TempHome::Write(std::string_view config_toml) const {
  std::ofstream(path / "config.toml") << config_toml;
}

}  // namespace codex::testing
