#include "storage/project_identity.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <system_error>

#include "base/strings.h"
#include "core/session_lease.h"

namespace codex::storage {

namespace fs = std::filesystem;

namespace {

// The text of the regular file `p` (symlinks followed), nullopt for anything
// else: the workspace is the model's to write, and a FIFO planted as
// `.git/config` (or a `gitdir:` pointing at one, or at a device) must not
// block or feed codex at startup. Opened non-blocking, then checked.
std::optional<std::string> ReadSmallFile(const fs::path& p) {
  const int fd = ::open(p.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return std::nullopt;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return std::nullopt;
  }
  std::string text;
  char buf[4096];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) break;
    text.append(buf, static_cast<size_t>(n));
    if (text.size() > (1 << 20)) {  // no git config is this big
      ::close(fd);
      return std::nullopt;
    }
  }
  ::close(fd);
  return text;
}

// The repository's shared directory (where `config` lives) for the `.git`
// entry of a checkout: the directory itself, or for a linked worktree or a
// submodule (a `.git` file "gitdir: X") X's common directory.
std::optional<fs::path> CommonGitDir(const fs::path& dot_git) {
  std::error_code ec;
  fs::path git_dir = dot_git;
  if (!fs::is_directory(dot_git, ec)) {
    auto text = ReadSmallFile(dot_git);
    if (!text) return std::nullopt;
    std::string_view line = Trim(*text);
    constexpr std::string_view kPrefix = "gitdir:";
    if (line.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
    fs::path target(std::string(Trim(line.substr(kPrefix.size()))));
    git_dir = target.is_absolute() ? target : dot_git.parent_path() / target;
  }
  if (auto common = ReadSmallFile(git_dir / "commondir")) {
    fs::path target(std::string(Trim(*common)));
    return (target.is_absolute() ? target : git_dir / target).lexically_normal();
  }
  return git_dir;
}

// The URL of remote "origin" in a git config text, else of the first remote.
std::string RemoteUrl(std::string_view config) {
  std::string first, origin, section;
  for (const std::string_view raw : SplitLines(config)) {
    const std::string_view line = Trim(raw);
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    if (line[0] == '[') {
      const size_t close = line.find(']');
      section = std::string(
          Trim(line.substr(1, close == std::string_view::npos ? line.size() - 1 : close - 1)));
      continue;
    }
    // Only [remote "name"] sections; the section name is case-insensitive.
    if (section.size() < 7 || Lower(section.substr(0, 6)) != "remote" ||
        !std::isspace(static_cast<unsigned char>(section[6]))) {
      continue;
    }
    const size_t eq = line.find('=');
    if (eq == std::string_view::npos || Lower(Trim(line.substr(0, eq))) != "url") continue;
    std::string_view value = Trim(line.substr(eq + 1));
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
      value = value.substr(1, value.size() - 2);
    }
    std::string_view name = Trim(std::string_view(section).substr(6));
    if (name.size() >= 2 && name.front() == '"' && name.back() == '"') {
      name = name.substr(1, name.size() - 2);
    }
    if (first.empty()) first = std::string(value);
    if (name == "origin" && origin.empty()) origin = std::string(value);
  }
  return origin.empty() ? first : origin;
}

}  // namespace

std::string NormalizeRemoteUrl(std::string_view url) {
  url = Trim(url);
  std::string host;
  std::string_view path;
  const size_t scheme = url.find("://");
  if (scheme != std::string_view::npos) {
    const std::string proto = Lower(url.substr(0, scheme));
    std::string_view rest = url.substr(scheme + 3);
    if (proto == "file") {
      path = rest;
    } else {
      const size_t slash = rest.find('/');
      std::string_view authority = rest.substr(0, slash);
      path = slash == std::string_view::npos ? std::string_view() : rest.substr(slash);
      const size_t at = authority.rfind('@');
      if (at != std::string_view::npos) authority = authority.substr(at + 1);
      if (!authority.empty() && authority.front() == '[') {  // [ipv6]:port
        const size_t close = authority.find(']');
        authority =
            authority.substr(0, close == std::string_view::npos ? authority.size() : close + 1);
      } else {
        authority = authority.substr(0, authority.find(':'));
      }
      host = Lower(authority);
      if (host.empty()) return "";
    }
  } else {
    // scp-like "user@host:path"; a ':' after a '/' is part of a local path.
    const size_t colon = url.find(':');
    const size_t slash = url.find('/');
    if (colon != std::string_view::npos && (slash == std::string_view::npos || colon < slash)) {
      std::string_view authority = url.substr(0, colon);
      const size_t at = authority.rfind('@');
      if (at != std::string_view::npos) authority = authority.substr(at + 1);
      host = Lower(authority);
      path = url.substr(colon + 1);
      if (host.empty()) return "";
    } else if (!url.empty() && url.front() == '/') {
      path = url;  // an absolute local path: the same on machines sharing it
    } else {
      return "";  // a relative path means nothing on another machine
    }
  }
  // The path: no repeated, leading or trailing '/', no trailing ".git".
  std::string p;
  for (char c : path) {
    if (c == '/' && (p.empty() || p.back() == '/')) continue;
    p += c;
  }
  while (!p.empty() && p.back() == '/') p.pop_back();
  if (p.size() > 4 && p.compare(p.size() - 4, 4, ".git") == 0) p.resize(p.size() - 4);
  while (!p.empty() && p.back() == '/') p.pop_back();
  if (p.empty()) return "";
  return host.empty() ? "/" + p : host + "/" + p;
}

std::string ProjectKey(std::string_view dir) {
  if (dir.empty() || dir.front() != '/') return "";
  const fs::path start = fs::path(std::string(dir)).lexically_normal();
  std::error_code ec;
  for (fs::path top = start;; top = top.parent_path()) {
    const fs::path dot_git = top / ".git";
    if (fs::exists(dot_git, ec)) {
      const std::optional<fs::path> common = CommonGitDir(dot_git);
      if (!common) return "";
      const std::optional<std::string> config = ReadSmallFile(*common / "config");
      if (!config) return "";
      const std::string remote = NormalizeRemoteUrl(RemoteUrl(*config));
      if (remote.empty()) return "";
      std::string rel = start.lexically_relative(top).generic_string();
      while (!rel.empty() && rel.back() == '/') rel.pop_back();
      if (rel.empty() || rel == ".") return remote;
      return remote + "//" + rel;
    }
    if (top == top.parent_path() || top.empty()) return "";
  }
}

std::string LocalHost() { return core::CurrentProcessHolder().host; }

}  // namespace codex::storage
