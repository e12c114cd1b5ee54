// Where WorkspaceUndo (core/undo.h) keeps file contents and turn records:
// the git repository (undo_git.cc) or a directory of copies (undo_copy.cc).
// Internal to core/undo*.cc. Not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "core/undo.h"

namespace codex::core::undo_internal {

// A regular file's content and mode as stored.
struct FileState {
  uint32_t mode = 0100644;  // 0100644 or 0100755
  std::string blob;         // git object id, or the content's SHA-256 (hex)
  bool operator==(const FileState&) const = default;
};

// What lstat said; a file whose key is unchanged is not read again.
struct StatKey {
  int64_t size = 0;
  int64_t mtime_ns = 0;
  int64_t ctime_ns = 0;
  uint64_t ino = 0;
  uint64_t dev = 0;
  uint32_t mode = 0;
  bool operator==(const StatKey&) const = default;
};

// The workspace's files at one moment.
struct Capture {
  std::map<std::string, FileState> files;
  std::map<std::string, StatKey> stats;  // of `files` and `skipped`
  std::set<std::string> skipped;         // symlinks and files over the size limit
  int64_t taken_ns = 0;                  // CLOCK_REALTIME when it was taken
};

struct Change {
  std::string path;
  std::optional<FileState> before;  // nullopt: the turn created it
  std::optional<FileState> after;   // nullopt: the turn deleted it
};

struct TurnChanges {
  std::string turn_id;
  std::vector<Change> changes;       // path order
  std::vector<std::string> skipped;  // changed but not snapshotted
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view kind() const = 0;
  // The candidate files (relative paths, not yet checked): kResourceExhausted
  // when there are more than can be snapshotted.
  virtual Result<std::vector<std::string>> ListFiles() = 0;
  // Stores the current contents of `paths` (regular files); their blob ids,
  // in order, "" for a file that could not be read (gone or unreadable
  // meanwhile: the capture counts it as not snapshotted).
  virtual Result<std::vector<std::string>> Store(const std::vector<std::string>& paths) = 0;
  // The blob ids the current contents would get, storing nothing.
  virtual Result<std::vector<std::string>> Hash(const std::vector<std::string>& paths) = 0;
  virtual Result<std::string> Read(const std::string& blob) = 0;
  virtual Status Save(const std::string& session, const TurnChanges& turn) = 0;
  // The recorded turns of `session`, oldest first.
  virtual Result<std::vector<std::string>> Turns(const std::string& session) = 0;
  virtual Result<TurnChanges> Load(const std::string& session, const std::string& turn) = 0;
  virtual Status Drop(const std::string& session, const std::string& turn) = 0;
};

// The git backend when `root` is inside a git work tree (and git runs);
// nullptr otherwise.
Result<std::unique_ptr<Backend>> OpenGitBackend(const std::string& root,
                                                const std::string& state_dir);
std::unique_ptr<Backend> MakeCopyBackend(const std::string& root, const std::string& state_dir,
                                         const UndoLimits& limits);

// Creates `dir` and its missing parents, each 0700. 0 or an errno.
int MakeStateDir(const std::string& dir);

// Whether `id` (a session or turn id) is safe as one path or ref component.
bool ValidUndoId(std::string_view id);

}  // namespace codex::core::undo_internal
