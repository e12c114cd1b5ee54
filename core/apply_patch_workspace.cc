#include "core/apply_patch_workspace.h"

#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <deque>
#include <utility>

#include "base/path.h"
#include "core/apply_patch_text.h"
#include "sandbox/unique_fd.h"

namespace codex::core::patch_internal {
namespace {

constexpr int kMaxSymlinkHops = 40;

using sandbox::UniqueFd;

std::string JoinPath(const std::string& dir, std::string_view name) {
  if (dir.ends_with('/')) return dir + std::string(name);
  return dir + "/" + std::string(name);
}

std::string ParentOf(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos || slash == 0) return "/";
  return path.substr(0, slash);
}

std::deque<std::string> Components(std::string_view path) {
  std::deque<std::string> out;
  while (!path.empty()) {
    size_t slash = path.find('/');
    std::string_view c = path.substr(0, slash);
    if (!c.empty()) out.emplace_back(c);
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  return out;
}

// Lexically normalised absolute path ("." and ".." resolved, no symlinks followed).
std::string LexicalNormal(const std::string& absolute) {
  std::string out = "/";
  for (const std::string& c : Components(absolute)) {
    if (c == ".") continue;
    if (c == "..") {
      out = ParentOf(out);
      continue;
    }
    out = JoinPath(out, c);
  }
  return out;
}

bool IsWithin(const std::string& path, const std::string& root) {
  if (root == "/") return true;
  return path == root || (path.starts_with(root) && path[root.size()] == '/');
}

std::string BaseName(const std::string& path) { return path.substr(path.rfind('/') + 1); }

}  // namespace

std::string Workspace::Shown(std::string_view rel) const { return JoinPath(cwd, rel); }

std::string Workspace::RootsText() const {
  std::string out;
  for (const std::string& r : roots) out += (out.empty() ? "" : ", ") + r;
  return out;
}

Result<std::string> Workspace::Resolve(std::string_view rel, bool follow_final) const {
  if (rel.empty()) {
    return InvalidArgumentError(
        "apply_patch got an empty path; name a file relative to the working directory");
  }
  if (rel.front() == '/') {
    return InvalidArgumentError("Refusing absolute path '" + std::string(rel) +
                                "': apply_patch paths must be relative to the working "
                                "directory " +
                                cwd);
  }
  std::deque<std::string> todo = Components(rel);
  std::string cur = cwd;
  bool missing = false;
  bool via_symlink = false;
  int hops = 0;
  while (!todo.empty()) {
    std::string c = std::move(todo.front());
    todo.pop_front();
    if (c == ".") continue;
    if (c == "..") {
      cur = ParentOf(cur);
      missing = false;  // the parent of a resolved path exists again
      continue;
    }
    std::string next = JoinPath(cur, c);
    if (missing || (todo.empty() && !follow_final)) {
      cur = std::move(next);
      continue;
    }
    struct stat st;
    if (::lstat(next.c_str(), &st) != 0) {
      missing = true;
      cur = std::move(next);
      continue;
    }
    if (!S_ISLNK(st.st_mode)) {
      cur = std::move(next);
      continue;
    }
    if (++hops > kMaxSymlinkHops) {
      return InvalidArgumentError("Refusing path '" + std::string(rel) +
                                  "': too many levels of symbolic links");
    }
    std::string target(static_cast<size_t>(st.st_size > 0 ? st.st_size : PATH_MAX), '\0');
    ssize_t len = ::readlink(next.c_str(), target.data(), target.size());
    if (len < 0) {
      return InvalidArgumentError("Refusing path '" + std::string(rel) + "': cannot read symlink " +
                                  next + ": " + OsError(errno));
    }
    target.resize(static_cast<size_t>(len));
    via_symlink = true;
    if (target.starts_with('/')) cur = "/";
    std::deque<std::string> expanded = Components(target);
    todo.insert(todo.begin(), expanded.begin(), expanded.end());
  }
  if (policy != nullptr) {
    const std::string why = policy->WhyNotWritable(cur);
    if (why.empty()) return cur;
    if (std::any_of(roots.begin(), roots.end(),
                    [&](const std::string& r) { return IsWithin(cur, r); })) {
      return InvalidArgumentError("Refusing to touch '" + std::string(rel) + "': " + why +
                                  "; change files of the working tree instead");
    }
  } else {
    for (const std::string& root : roots) {
      if (IsWithin(cur, root)) return cur;
    }
  }
  return InvalidArgumentError("Refusing to touch '" + std::string(rel) + "': it resolves" +
                              (via_symlink ? " through a symlink" : "") + " to " + cur +
                              ", outside the writable roots (" + RootsText() +
                              "); use a path inside the workspace");
}

int Workspace::OpenNoSymlinks(const std::string& real, int flags, mode_t mode) const {
  const std::string* root = nullptr;
  for (const std::string& r : roots) {
    if (IsWithin(real, r) && (root == nullptr || r.size() > root->size())) root = &r;
  }
  if (root != nullptr) {
    UniqueFd root_fd(::open(root->c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (root_fd.get() < 0) return -1;
    std::string rel = real == *root ? "." : real.substr(*root == "/" ? 1 : root->size() + 1);
    struct open_how how = {};
    how.flags = static_cast<unsigned long long>(flags | O_CLOEXEC);
    how.mode = (flags & O_CREAT) != 0 ? mode : 0;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS;
    long fd = ::syscall(SYS_openat2, root_fd.get(), rel.c_str(), &how, sizeof how);
    if (fd >= 0 || (errno != ENOSYS && errno != EPERM)) return static_cast<int>(fd);
  }
  return ::open(real.c_str(), flags | O_CLOEXEC | O_NOFOLLOW, mode);
}

int Workspace::Read(const std::string& real, std::string* out) const {
  if (auto it = overlay.find(real); it != overlay.end()) {
    if (!it->second) return ENOENT;
    *out = *it->second;
    return 0;
  }
  int fd = OpenNoSymlinks(real, O_RDONLY, 0);
  if (fd < 0) return errno;
  out->clear();
  char buf[65536];
  for (;;) {
    ssize_t got = ::read(fd, buf, sizeof buf);
    if (got < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      return err;
    }
    if (got == 0) break;
    out->append(buf, static_cast<size_t>(got));
  }
  ::close(fd);
  return 0;
}

int Workspace::MakeParents(const std::string& real) const {
  const std::string parent = ParentOf(real);
  struct stat st;
  if (::lstat(parent.c_str(), &st) == 0) return S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
  if (errno != ENOENT) return errno;
  // Only directories strictly inside a root are created, never a root or above.
  if (std::none_of(roots.begin(), roots.end(),
                   [&](const std::string& r) { return parent != r && IsWithin(parent, r); })) {
    return ENOENT;
  }
  if (int err = MakeParents(parent)) return err;
  UniqueFd dir(OpenNoSymlinks(ParentOf(parent), O_PATH | O_DIRECTORY, 0));
  if (dir.get() < 0) return errno;
  if (::mkdirat(dir.get(), BaseName(parent).c_str(), 0777) != 0 && errno != EEXIST) {
    return errno;
  }
  return 0;
}

Status Workspace::Write(const std::string& real, std::string_view rel, const std::string& content,
                        std::optional<mode_t> mode) {
  if (dry_run) {
    struct stat st;
    if (::stat(real.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && !overlay.contains(real)) {
      return FailedPreconditionError("Failed to write file " + Shown(rel) + ": " + OsError(EISDIR));
    }
    overlay[real] = content;
    return OkStatus();
  }
  if (int err = MakeParents(real)) {
    return FailedPreconditionError("Failed to create parent directories for " + Shown(rel) + ": " +
                                   OsError(err));
  }
  int fd = OpenNoSymlinks(real, O_WRONLY | O_CREAT | O_TRUNC, 0666);
  if (fd < 0) {
    return FailedPreconditionError("Failed to write file " + Shown(rel) + ": " + OsError(errno));
  }
  size_t done = 0;
  while (done < content.size()) {
    ssize_t put = ::write(fd, content.data() + done, content.size() - done);
    if (put < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      return FailedPreconditionError("Failed to write file " + Shown(rel) + ": " + OsError(err));
    }
    done += static_cast<size_t>(put);
  }
  if (mode) (void)::fchmod(fd, *mode);
  if (::close(fd) != 0) {
    return FailedPreconditionError("Failed to write file " + Shown(rel) + ": " + OsError(errno));
  }
  return OkStatus();
}

int Workspace::Remove(const std::string& real) {
  if (dry_run) {
    if (auto it = overlay.find(real); it != overlay.end()) {
      if (!it->second) return ENOENT;
    } else {
      struct stat st;
      if (::lstat(real.c_str(), &st) != 0) return errno;
      if (S_ISDIR(st.st_mode)) return EISDIR;
    }
    overlay[real] = std::nullopt;
    return 0;
  }
  // The parent is opened symlink-free; the name itself may be a symlink,
  // which unlinkat removes without touching its target.
  UniqueFd dir(OpenNoSymlinks(ParentOf(real), O_PATH | O_DIRECTORY, 0));
  if (dir.get() < 0) return errno;
  return ::unlinkat(dir.get(), BaseName(real).c_str(), 0) == 0 ? 0 : errno;
}

Result<Workspace> OpenWorkspace(const ApplyPatchOptions& opts) {
  Workspace ws;
  std::string cwd = opts.cwd;
  if (cwd.empty()) {
    char buf[PATH_MAX];
    if (::getcwd(buf, sizeof buf) == nullptr) {
      return FailedPreconditionError("cannot determine the current directory: " + OsError(errno));
    }
    cwd = buf;
  }
  std::optional<std::string> real_cwd = RealPath(cwd);
  struct stat st;
  if (!real_cwd || ::stat(real_cwd->c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return FailedPreconditionError("working directory " + cwd +
                                   " does not exist or is not a directory; pass an existing "
                                   "directory");
  }
  ws.cwd = *real_cwd;
  ws.policy = opts.policy;
  if (opts.policy != nullptr) {
    ws.roots = opts.policy->root_paths();
    return ws;
  }
  for (const std::string& root : opts.writable_roots) {
    if (root.empty()) continue;
    std::string absolute = root.front() == '/' ? root : JoinPath(ws.cwd, root);
    std::optional<std::string> real = RealPath(absolute);
    ws.roots.push_back(real ? *real : LexicalNormal(absolute));
  }
  if (ws.roots.empty()) ws.roots.push_back(ws.cwd);
  return ws;
}

}  // namespace codex::core::patch_internal
