#include "sandbox/workspace_policy.h"

#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "base/path.h"

namespace codex::sandbox {
namespace {

// "." and ".." resolved lexically, no symlink followed; `path` absolute.
std::string Lexical(const std::string& path) {
  std::vector<std::string> parts;
  size_t i = 0;
  while (i < path.size()) {
    size_t j = path.find('/', i);
    if (j == std::string::npos) j = path.size();
    std::string c = path.substr(i, j - i);
    if (c == "..") {
      if (!parts.empty()) parts.pop_back();
    } else if (!c.empty() && c != ".") {
      parts.push_back(std::move(c));
    }
    i = j + 1;
  }
  std::string out;
  for (const std::string& c : parts) out += "/" + c;
  return out.empty() ? "/" : out;
}

std::string FirstLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  return line;
}

std::string LinkTarget(const std::string& path) {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink(path.c_str(), buf, sizeof buf - 1);
  return n < 0 ? std::string("?") : std::string(buf, static_cast<size_t>(n));
}

class Builder {
 public:
  explicit Builder(const std::vector<WritableRoot>& roots) : roots_(roots) {}

  bool InRoot(const std::string& path) const {
    return std::any_of(roots_.begin(), roots_.end(),
                       [&](const WritableRoot& r) { return PathWithin(path, r.path); });
  }

  Status CrossesLink(const std::string& protected_path, const std::string& lexical) const {
    std::string prefix;
    size_t i = 1;
    while (i <= lexical.size()) {
      size_t j = lexical.find('/', i);
      if (j == std::string::npos) j = lexical.size();
      prefix += "/" + lexical.substr(i, j - i);
      i = j + 1;
      struct stat st;
      if (::lstat(prefix.c_str(), &st) != 0) break;
      if (S_ISLNK(st.st_mode) && InRoot(prefix)) return Refuse(protected_path, prefix);
    }
    return OkStatus();
  }

  static Status Refuse(const std::string& path, const std::string& link) {
    return Status(StatusCode::kFailedPrecondition,
                  "cannot enforce sandbox read-only path " + path +
                      " because it crosses writable symlink " + link + " -> " + LinkTarget(link) +
                      "; remove the symlink (or run with --sandbox danger-full-access)");
  }

  void Add(const std::string& path, bool exists, bool temp_top) {
    for (ProtectedPath& p : out_) {
      if (p.path == path) {
        p.temp_top = p.temp_top && temp_top;
        return;
      }
    }
    out_.push_back({path, exists, InRoot(path), temp_top});
  }

  // `path` (.git or .codex; its parent canonical) must stay read-only.
  // `absent_too`: protect it even when it does not exist yet.
  Status Entry(const std::string& path, bool absent_too, bool temp_top, bool parse_gitfile) {
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0) {
      if (absent_too && InRoot(path)) Add(path, false, temp_top);
      return OkStatus();
    }
    if (S_ISLNK(st.st_mode)) {
      if (InRoot(path)) return Refuse(path, path);
      // A link no command can change; what it points to may still be writable.
      const std::string target = RealPath(path).value_or("");
      if (!target.empty() && InRoot(target)) Add(target, true, false);
      return OkStatus();
    }
    Add(path, true, temp_top);
    if (S_ISREG(st.st_mode) && parse_gitfile) return GitFile(path);
    return OkStatus();
  }

  // A `.git` file: its gitdir, and that gitdir's common dir.
  Status GitFile(const std::string& dot_git) {
    const std::string line = FirstLine(dot_git);
    constexpr std::string_view kPrefix = "gitdir:";
    if (line.compare(0, kPrefix.size(), kPrefix) != 0) return OkStatus();
    std::string target = line.substr(kPrefix.size());
    target.erase(0, target.find_first_not_of(' '));
    ASSIGN_OR_RETURN(std::string gitdir, GitDir(dot_git, ParentDir(dot_git), target));
    if (gitdir.empty()) return OkStatus();
    const std::string common = FirstLine(JoinPath(gitdir, "commondir"));
    if (common.empty()) return OkStatus();
    ASSIGN_OR_RETURN(std::string ignored, GitDir(dot_git, gitdir, common));
    (void)ignored;
    return OkStatus();
  }

  Result<std::string> GitDir(const std::string& dot_git, const std::string& base,
                             const std::string& target) {
    if (target.empty()) return std::string();
    const std::string lexical = Lexical(target[0] == '/' ? target : JoinPath(base, target));
    RETURN_IF_ERROR(CrossesLink(lexical, lexical));
    const std::string real = RealPath(lexical).value_or("");
    if (const std::string pseudo = real.empty() ? "" : PseudoFilesystemOf(real); !pseudo.empty()) {
      return Status(StatusCode::kFailedPrecondition,
                    "cannot enforce sandbox read-only path " + lexical + ": " + dot_git +
                        " points into " + pseudo +
                        ", which is not a git directory; fix or remove " + dot_git);
    }
    if (real.empty() || !IsDirectory(real)) {
      if (!InRoot(lexical)) return std::string();  // nothing a command could plant there
      return Status(StatusCode::kFailedPrecondition,
                    "cannot enforce sandbox read-only path " + lexical + ": " + dot_git +
                        " names it as its git directory but it is not a directory; fix or "
                        "remove " +
                        dot_git);
    }
    Add(real, true, false);
    return real;
  }

  // The `.git` files of the submodules `.gitmodules` in `top` lists.
  Status Submodules(const std::string& top) {
    std::ifstream in(JoinPath(top, ".gitmodules"));
    std::string line;
    while (std::getline(in, line)) {
      const size_t eq = line.find('=');
      if (eq == std::string::npos) continue;
      std::string key = line.substr(0, eq);
      key.erase(0, key.find_first_not_of(" \t"));
      key.erase(key.find_last_not_of(" \t") + 1);
      if (key != "path") continue;
      std::string value = line.substr(eq + 1);
      value.erase(0, value.find_first_not_of(" \t"));
      value.erase(value.find_last_not_of(" \t\r") + 1);
      if (value.empty() || value[0] == '/') continue;
      const std::string dot_git = Lexical(JoinPath(top, value) + "/.git");
      if (!InRoot(dot_git)) continue;
      RETURN_IF_ERROR(CrossesLink(dot_git, ParentDir(dot_git)));
      RETURN_IF_ERROR(Entry(dot_git, false, false, true));
    }
    return OkStatus();
  }

  std::vector<ProtectedPath> Take() {
    std::sort(out_.begin(), out_.end(),
              [](const ProtectedPath& a, const ProtectedPath& b) { return a.path < b.path; });
    return std::move(out_);
  }

 private:
  const std::vector<WritableRoot>& roots_;
  std::vector<ProtectedPath> out_;
};

}  // namespace

std::string JoinPath(const std::string& dir, const std::string& name) {
  return dir == "/" ? "/" + name : dir + "/" + name;
}

std::string ParentDir(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos || slash == 0) return "/";
  return path.substr(0, slash);
}

bool IsDirectory(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::string PseudoFilesystemOf(const std::string& real_path) {
  for (const char* pseudo : {"/proc", "/sys", "/dev"}) {
    if (PathWithin(real_path, pseudo)) return pseudo;
  }
  return "";
}

bool PathWithin(const std::string& path, const std::string& dir) {
  if (dir == "/") return !path.empty() && path[0] == '/';
  return path == dir || (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
                         path[dir.size()] == '/');
}

std::vector<std::string> WorkspacePolicy::root_paths() const {
  std::vector<std::string> out;
  for (const WritableRoot& r : roots_) out.push_back(r.path);
  return out;
}

Result<WorkspacePolicy> WorkspacePolicy::Compute(const WritableRootsSpec& spec) {
  WorkspacePolicy policy;
  std::vector<std::string> temp;
  if (!spec.exclude_slash_tmp) temp.push_back("/tmp");
  if (!spec.exclude_tmpdir_env_var) {
    if (const char* t = std::getenv("TMPDIR"); t != nullptr && t[0] == '/') temp.push_back(t);
  }
  std::vector<std::string> temp_real;
  for (const char* t :
       {static_cast<const char*>("/tmp"), static_cast<const char*>(std::getenv("TMPDIR"))}) {
    if (t != nullptr && t[0] == '/') {
      if (std::string real = RealPath(t).value_or(""); !real.empty()) temp_real.push_back(real);
    }
  }
  auto add_root = [&](const std::string& path, bool required) -> Status {
    std::string absolute = path;
    if (absolute.empty() || absolute[0] != '/') {
      absolute = spec.workspace.empty() ? absolute : JoinPath(spec.workspace, path);
    }
    const std::string real = RealPath(absolute).value_or("");
    if (real.empty() || !IsDirectory(real)) {
      if (!required) return OkStatus();
      if (real.empty()) {
        const int err = errno;
        return Status(StatusCode::kInvalidArgument,
                      "writable root '" + path + "' cannot be used: " + std::strerror(err) +
                          "; create it or remove it from the writable roots");
      }
      return Status(StatusCode::kInvalidArgument,
                    "writable root '" + path + "' is not a directory; pass a directory");
    }
    for (const WritableRoot& r : policy.roots_) {
      if (r.path == real) return OkStatus();
    }
    const bool is_temp = std::find(temp_real.begin(), temp_real.end(), real) != temp_real.end();
    policy.roots_.push_back({real, is_temp ? RootKind::kTemp : RootKind::kWorkspace});
    return OkStatus();
  };
  if (!spec.workspace.empty()) RETURN_IF_ERROR(add_root(spec.workspace, true));
  for (const std::string& t : temp) RETURN_IF_ERROR(add_root(t, false));
  for (const std::string& e : spec.extra) RETURN_IF_ERROR(add_root(e, true));
  // Parents before children, so that a nested root's bind is not hidden.
  std::sort(policy.roots_.begin(), policy.roots_.end(),
            [](const WritableRoot& a, const WritableRoot& b) { return a.path < b.path; });

  Builder b(policy.roots_);
  for (const WritableRoot& root : policy.roots_) {
    const bool temp_root = root.kind == RootKind::kTemp;
    RETURN_IF_ERROR(b.Entry(JoinPath(root.path, ".git"), true, temp_root, true));
    RETURN_IF_ERROR(b.Entry(JoinPath(root.path, ".codex"), true, temp_root, false));
    RETURN_IF_ERROR(b.Submodules(root.path));
    // The repositories above the root: git looks for them there.
    for (std::string dir = root.path; dir != "/";) {
      dir = ParentDir(dir);
      RETURN_IF_ERROR(b.Entry(JoinPath(dir, ".git"), true, false, true));
      RETURN_IF_ERROR(b.Submodules(dir));
    }
  }
  for (const std::string& p : spec.read_only_paths) {
    // Canonical already: no link left for a command to swap.
    const std::string real = RealPath(p).value_or("");
    if (real.empty()) continue;
    // Covered by /tmp or $TMPDIR only: a temp-root path for the Landlock-only
    // fallback (a hole there would forbid creating anything in /tmp).
    const bool temp_only =
        std::none_of(policy.roots_.begin(), policy.roots_.end(), [&](const WritableRoot& r) {
          return r.kind == RootKind::kWorkspace && PathWithin(real, r.path);
        });
    RETURN_IF_ERROR(b.Entry(real, false, temp_only, false));
  }
  policy.protected_ = b.Take();
  for (const std::string& p : spec.private_paths) {
    if (std::string real = RealPath(p).value_or(""); !real.empty()) policy.private_.push_back(real);
  }
  return policy;
}

std::string WorkspacePolicy::WhyNotWritable(const std::string& real_path) const {
  for (const std::string& p : private_) {
    if (PathWithin(real_path, p))
      return real_path + " is codex's own state, which no command may touch";
  }
  for (const ProtectedPath& p : protected_) {
    if (PathWithin(real_path, p.path)) {
      return real_path + " is inside " + p.path +
             ", which stays read-only in the sandbox (git's and codex's own settings)";
    }
  }
  for (const WritableRoot& r : roots_) {
    if (PathWithin(real_path, r.path)) return "";
  }
  std::string roots;
  for (const WritableRoot& r : roots_) roots += (roots.empty() ? "" : ", ") + r.path;
  return real_path + " is outside the writable roots (" + roots + ")";
}

}  // namespace codex::sandbox
