#include "core/undo.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <ctime>
#include <utility>

#include "core/apply_patch.h"
#include "core/apply_patch_text.h"
#include "core/apply_patch_workspace.h"
#include "core/undo_backend.h"
#include "core/uuid.h"
#include "sandbox/workspace_policy.h"

namespace codex::core {

using undo_internal::Backend;
using undo_internal::Capture;
using undo_internal::Change;
using undo_internal::FileState;
using undo_internal::StatKey;
using undo_internal::TurnChanges;

namespace {

// A file written within this long before a capture may change again within
// the same mtime tick: it is read again next time instead of trusted by stat.
constexpr int64_t kRacyNs = 2'000'000'000;

int64_t RealtimeNs() {
  struct timespec ts {};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

StatKey KeyOf(const struct stat& st) {
  StatKey key;
  key.size = st.st_size;
  key.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
  key.ctime_ns = static_cast<int64_t>(st.st_ctim.tv_sec) * 1'000'000'000 + st.st_ctim.tv_nsec;
  key.ino = st.st_ino;
  key.dev = st.st_dev;
  key.mode = st.st_mode;
  return key;
}

uint32_t FileModeOf(mode_t mode) { return (mode & 0111) != 0 ? 0100755 : 0100644; }

std::string UnderRoot(const std::string& root, const std::string& rel) { return root + "/" + rel; }

// The workspace's files now; `previous` (may be null) lends the blob ids of
// files whose stat is unchanged.
Result<Capture> TakeCapture(Backend& backend, const std::string& root, const UndoLimits& limits,
                            const Capture* previous) {
  ASSIGN_OR_RETURN(std::vector<std::string> paths, backend.ListFiles());
  Capture cap;
  cap.taken_ns = RealtimeNs();
  std::vector<std::string> to_store;
  int64_t total = 0;
  for (const std::string& path : paths) {
    struct stat st;
    if (::lstat(UnderRoot(root, path).c_str(), &st) != 0) continue;  // listed but gone (deleted)
    const StatKey key = KeyOf(st);
    if (S_ISLNK(st.st_mode) || (S_ISREG(st.st_mode) && st.st_size > limits.max_file_bytes)) {
      cap.skipped.insert(path);
      cap.stats[path] = key;
      continue;
    }
    if (!S_ISREG(st.st_mode)) continue;  // a submodule's directory, a fifo ...
    if (::access(UnderRoot(root, path).c_str(), R_OK) != 0) {
      cap.skipped.insert(path);  // not ours to read
      cap.stats[path] = key;
      continue;
    }
    total += st.st_size;
    if (total > limits.max_total_bytes) {
      return ResourceExhaustedError("the files under " + root + " hold more than " +
                                    std::to_string(limits.max_total_bytes >> 20) +
                                    " MiB; /undo snapshots up to that");
    }
    cap.stats[path] = key;
    FileState state;
    state.mode = FileModeOf(st.st_mode);
    if (previous != nullptr) {
      auto old_key = previous->stats.find(path);
      auto old_file = previous->files.find(path);
      if (old_key != previous->stats.end() && old_file != previous->files.end() &&
          old_key->second == key && key.mtime_ns < previous->taken_ns - kRacyNs) {
        state.blob = old_file->second.blob;
      }
    }
    if (state.blob.empty()) to_store.push_back(path);
    cap.files.emplace(path, std::move(state));
  }
  ASSIGN_OR_RETURN(std::vector<std::string> blobs, backend.Store(to_store));
  if (blobs.size() != to_store.size()) return InternalError("the snapshot stored a wrong count");
  for (size_t i = 0; i < to_store.size(); ++i) {
    if (blobs[i].empty()) {
      cap.files.erase(to_store[i]);  // unreadable now: like a file too large
      cap.skipped.insert(to_store[i]);
      continue;
    }
    cap.files[to_store[i]].blob = std::move(blobs[i]);
  }
  return cap;
}

// What changed from `before` to `after`.
TurnChanges Compare(const Capture& before, const Capture& after) {
  std::set<std::string> paths;
  for (const auto& [p, f] : before.files) paths.insert(p);
  for (const auto& [p, f] : after.files) paths.insert(p);
  for (const auto& p : before.skipped) paths.insert(p);
  for (const auto& p : after.skipped) paths.insert(p);
  TurnChanges out;
  for (const std::string& p : paths) {
    if (before.skipped.contains(p) || after.skipped.contains(p)) {
      auto b = before.stats.find(p);
      auto a = after.stats.find(p);
      const bool same = b != before.stats.end() && a != after.stats.end() && b->second == a->second;
      if (!same) out.skipped.push_back(p);
      continue;
    }
    std::optional<FileState> b, a;
    if (auto it = before.files.find(p); it != before.files.end()) b = it->second;
    if (auto it = after.files.find(p); it != after.files.end()) a = it->second;
    if (b != a) out.changes.push_back({p, std::move(b), std::move(a)});
  }
  return out;
}

UndoChange ChangeOf(const Change& c) {
  if (!c.before) return UndoChange::kCreated;
  if (!c.after) return UndoChange::kDeleted;
  return UndoChange::kModified;
}

// The files of `turn` that no longer hold what the turn left.
Result<std::vector<std::string>> Conflicts(Backend& backend, const std::string& root,
                                           const TurnChanges& turn) {
  std::vector<std::string> conflicts;
  std::vector<std::string> to_hash;
  std::vector<const Change*> hashed;
  for (const Change& c : turn.changes) {
    struct stat st;
    if (::lstat(UnderRoot(root, c.path).c_str(), &st) != 0) {
      if (errno != ENOENT && errno != ENOTDIR) {
        conflicts.push_back(c.path);
      } else if (c.after) {
        conflicts.push_back(c.path);  // the turn left it; it is gone
      }
      continue;
    }
    if (!S_ISREG(st.st_mode) || !c.after || FileModeOf(st.st_mode) != c.after->mode) {
      conflicts.push_back(c.path);
      continue;
    }
    to_hash.push_back(c.path);
    hashed.push_back(&c);
  }
  ASSIGN_OR_RETURN(std::vector<std::string> ids, backend.Hash(to_hash));
  if (ids.size() != to_hash.size()) return InternalError("hashing returned a wrong count");
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] != hashed[i]->after->blob) conflicts.push_back(hashed[i]->path);
  }
  std::sort(conflicts.begin(), conflicts.end());
  return conflicts;
}

std::string JoinNames(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace

std::string_view UndoChangeName(UndoChange change) {
  switch (change) {
    case UndoChange::kCreated:
      return "created";
    case UndoChange::kDeleted:
      return "deleted";
    case UndoChange::kModified:
      return "modified";
  }
  return "modified";
}

WorkspaceUndo::WorkspaceUndo(std::string root, std::string session_id, UndoLimits limits,
                             std::unique_ptr<Backend> backend)
    : root_(std::move(root)),
      limits_(limits),
      session_id_(std::move(session_id)),
      backend_(std::move(backend)) {}

WorkspaceUndo::~WorkspaceUndo() = default;

Result<std::unique_ptr<WorkspaceUndo>> WorkspaceUndo::Open(const std::string& workspace,
                                                           const std::string& state_dir,
                                                           std::string session_id,
                                                           UndoLimits limits) {
  if (!undo_internal::ValidUndoId(session_id)) {
    return InvalidArgumentError("'" + session_id + "' is not a session id /undo can record");
  }
  char* real = ::realpath(workspace.c_str(), nullptr);
  if (real == nullptr) {
    return FailedPreconditionError("cannot snapshot " + workspace + ": " +
                                   patch_internal::OsError(errno));
  }
  std::string root(real);
  ::free(real);
  if (state_dir.empty() || state_dir.front() != '/') {
    return InvalidArgumentError("the undo state directory must be an absolute path");
  }
  ASSIGN_OR_RETURN(std::unique_ptr<Backend> backend,
                   undo_internal::OpenGitBackend(root, state_dir));
  if (!backend) backend = undo_internal::MakeCopyBackend(root, state_dir, limits);
  return std::unique_ptr<WorkspaceUndo>(
      new WorkspaceUndo(std::move(root), std::move(session_id), limits, std::move(backend)));
}

std::string_view WorkspaceUndo::kind() const { return backend_->kind(); }

Status WorkspaceUndo::BeginTurn() {
  before_.reset();
  ASSIGN_OR_RETURN(Capture cap, TakeCapture(*backend_, root_, limits_, last_.get()));
  before_ = std::make_unique<Capture>(cap);
  last_ = std::make_unique<Capture>(std::move(cap));
  return OkStatus();
}

Result<std::vector<UndoFile>> WorkspaceUndo::EndTurn(const std::string& turn_id) {
  std::vector<UndoFile> files;
  if (!before_) return files;
  std::unique_ptr<Capture> before = std::move(before_);
  ASSIGN_OR_RETURN(Capture after, TakeCapture(*backend_, root_, limits_, last_.get()));
  TurnChanges turn = Compare(*before, after);
  last_ = std::make_unique<Capture>(std::move(after));
  if (turn.changes.empty() && turn.skipped.empty()) return files;
  turn.turn_id = turn_id.empty() ? NewUuidV7() : turn_id;
  if (!undo_internal::ValidUndoId(turn.turn_id)) {
    return InvalidArgumentError("'" + turn.turn_id + "' is not a turn id /undo can record");
  }
  RETURN_IF_ERROR(backend_->Save(session_id_, turn));
  for (const Change& c : turn.changes) files.push_back({c.path, ChangeOf(c)});
  return files;
}

Result<std::optional<UndoPlan>> WorkspaceUndo::Plan() {
  ASSIGN_OR_RETURN(std::vector<std::string> turns, backend_->Turns(session_id_));
  if (turns.empty()) return std::optional<UndoPlan>();
  ASSIGN_OR_RETURN(TurnChanges turn, backend_->Load(session_id_, turns.back()));
  UndoPlan plan;
  plan.turn_id = turn.turn_id;
  plan.turns = static_cast<int>(turns.size());
  for (const Change& c : turn.changes) plan.files.push_back({c.path, ChangeOf(c)});
  plan.skipped = turn.skipped;
  ASSIGN_OR_RETURN(plan.conflicts, Conflicts(*backend_, root_, turn));
  return std::optional<UndoPlan>(std::move(plan));
}

Result<UndoResult> WorkspaceUndo::Undo(const std::string& turn_id, UndoConflicts policy) {
  ASSIGN_OR_RETURN(std::vector<std::string> turns, backend_->Turns(session_id_));
  if (turns.empty() || turns.back() != turn_id) {
    return FailedPreconditionError("turn " + turn_id +
                                   " is no longer the newest recorded turn; run /undo again");
  }
  ASSIGN_OR_RETURN(TurnChanges turn, backend_->Load(session_id_, turn_id));
  ASSIGN_OR_RETURN(std::vector<std::string> conflicts, Conflicts(*backend_, root_, turn));
  if (!conflicts.empty() && policy == UndoConflicts::kRefuse) {
    return FailedPreconditionError("changed since that turn, not overwritten: " +
                                   JoinNames(conflicts) + "; nothing was restored");
  }
  // Every old content is read before anything is written: a missing object
  // leaves the workspace as it was.
  std::map<std::string, std::string> contents;
  for (const Change& c : turn.changes) {
    if (!c.before) continue;
    ASSIGN_OR_RETURN(contents[c.path], backend_->Read(c.before->blob));
  }
  // Writes go through apply_patch's workspace: within the root, symlink-free
  // opens, and never into .git/.codex (the workspace policy's protected paths).
  sandbox::WritableRootsSpec spec;
  spec.workspace = root_;
  spec.exclude_slash_tmp = true;
  spec.exclude_tmpdir_env_var = true;
  ASSIGN_OR_RETURN(sandbox::WorkspacePolicy policy_paths, sandbox::WorkspacePolicy::Compute(spec));
  ApplyPatchOptions opts;
  opts.cwd = root_;
  opts.policy = &policy_paths;
  ASSIGN_OR_RETURN(patch_internal::Workspace ws, patch_internal::OpenWorkspace(opts));
  UndoResult result;
  result.turn_id = turn_id;
  result.skipped = turn.skipped;
  result.overwritten = conflicts;
  // Every path is checked before anything is written: one that may not be
  // written refuses the whole undo.
  struct Target {
    const Change* change;
    std::string real;
    bool exists = false;
    bool symlink = false;
  };
  std::vector<Target> targets;
  for (const Change& c : turn.changes) {
    ASSIGN_OR_RETURN(std::string real, ws.Resolve(c.path, /*follow_final=*/false));
    if (real != UnderRoot(root_, c.path)) {
      return FailedPreconditionError("cannot restore " + c.path +
                                     ": a directory on its path is now a symlink; nothing was "
                                     "restored");
    }
    struct stat st;
    Target t{&c, std::move(real)};
    t.exists = ::lstat(t.real.c_str(), &st) == 0;
    t.symlink = t.exists && S_ISLNK(st.st_mode);
    if (t.exists && !S_ISREG(st.st_mode) && !t.symlink) {
      return FailedPreconditionError("cannot restore " + c.path +
                                     ": it is now a directory or special file; move it away and "
                                     "run /undo again (nothing was restored)");
    }
    targets.push_back(std::move(t));
  }
  for (const Target& t : targets) {
    const Change& c = *t.change;
    if (t.exists && (!c.before || t.symlink)) {
      if (int err = ws.Remove(t.real)) {
        return FailedPreconditionError("cannot remove " + c.path + ": " +
                                       patch_internal::OsError(err) + "; run /undo again");
      }
    }
    if (!c.before) {
      if (!t.exists) continue;
      // Directories the removal left empty go too, up to the workspace.
      for (std::string dir = t.real.substr(0, t.real.rfind('/'));
           dir.size() > root_.size() && ::rmdir(dir.c_str()) == 0;
           dir = dir.substr(0, dir.rfind('/'))) {
      }
    } else {
      RETURN_IF_ERROR(
          ws.Write(t.real, c.path, contents[c.path], static_cast<mode_t>(c.before->mode & 0777)));
    }
    result.restored.push_back({c.path, ChangeOf(c)});
  }
  RETURN_IF_ERROR(backend_->Drop(session_id_, turn_id));
  result.turns_left = static_cast<int>(turns.size()) - 1;
  return result;
}

std::string UndoMessageText(const UndoResult& result) {
  std::string text =
      "<undo>\nThe user ran /undo: the file changes of an earlier turn were reverted. These "
      "files are back to what they held before that turn:\n";
  for (const UndoFile& f : result.restored) {
    text += "- " + f.path;
    switch (f.change) {
      case UndoChange::kCreated:
        text += " (that turn created it; it is removed)\n";
        break;
      case UndoChange::kDeleted:
        text += " (that turn deleted it; it is back)\n";
        break;
      case UndoChange::kModified:
        text += " (that turn modified it; its earlier content is back)\n";
        break;
    }
  }
  if (!result.overwritten.empty()) {
    text += "Changes made to these since that turn were overwritten too: " +
            JoinNames(result.overwritten) + "\n";
  }
  if (!result.skipped.empty()) {
    text += "Not restored (not snapshotted: a symlink or a file too large): " +
            JoinNames(result.skipped) + "\n";
  }
  text += "Work from the files as they are now.\n</undo>";
  return text;
}

}  // namespace codex::core
