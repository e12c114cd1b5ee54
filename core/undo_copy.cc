// The directory backend of /undo (undo_backend.h), for a workspace outside
// git: contents copied to <state_dir>/copy/blobs/<sha256> (written once per
// distinct content), a turn as <state_dir>/copy/sessions/<session>/<turn>.json.
// Everything it writes is codex's own, outside the workspace.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

#include "base/sha.h"
#include "core/undo.h"
#include "core/undo_backend.h"

namespace codex::core::undo_internal {

namespace {

using Json = nlohmann::json;

// Reads a whole file without following a symlink in its last component.
// 0 or an errno.
int ReadWhole(const std::string& path, std::string* out, int64_t max_bytes) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return errno;
  out->clear();
  char buf[65536];
  for (;;) {
    ssize_t got = ::read(fd, buf, sizeof buf);
    if (got < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      return err;
    }
    if (got == 0) break;
    out->append(buf, static_cast<size_t>(got));
    if (out->size() > static_cast<size_t>(max_bytes)) {
      ::close(fd);
      return EFBIG;
    }
  }
  ::close(fd);
  return 0;
}

// Writes `data` to `path` through a temporary file and a rename (0600).
int WriteUndoFile(const std::string& path, std::string_view data) {
  const std::string tmp = path + ".tmp-" + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return errno;
  size_t done = 0;
  while (done < data.size()) {
    ssize_t put = ::write(fd, data.data() + done, data.size() - done);
    if (put < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      return err;
    }
    done += static_cast<size_t>(put);
  }
  if (::close(fd) != 0 || ::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return err;
  }
  return 0;
}

Status OsFailure(const std::string& what, int err) {
  return FailedPreconditionError(what + ": " + std::strerror(err));
}

Json StateJson(const std::optional<FileState>& s) {
  if (!s) return nullptr;
  return {{"mode", s->mode}, {"blob", s->blob}};
}

std::optional<FileState> StateFrom(const Json& j) {
  if (!j.is_object()) return std::nullopt;
  FileState s;
  s.mode = j.value("mode", 0100644u);
  s.blob = j.value("blob", "");
  return s;
}

class CopyBackend final : public Backend {
 public:
  CopyBackend(std::string root, std::string dir, UndoLimits limits)
      : root_(std::move(root)),
        dir_(std::move(dir)),
        state_root_(dir_.substr(0, dir_.rfind('/'))),
        limits_(limits) {}

  std::string_view kind() const override { return "copy"; }

  Result<std::vector<std::string>> ListFiles() override {
    std::vector<std::string> out;
    std::vector<std::string> todo = {""};
    while (!todo.empty()) {
      const std::string rel = std::move(todo.back());
      todo.pop_back();
      const std::string abs = rel.empty() ? root_ : root_ + "/" + rel;
      DIR* d = ::opendir(abs.c_str());
      if (d == nullptr) continue;  // unreadable: not snapshotted
      while (struct dirent* e = ::readdir(d)) {
        const std::string name = e->d_name;
        if (name == "." || name == "..") continue;
        if (name == ".git" || (rel.empty() && name == ".codex")) continue;
        const std::string child = rel.empty() ? name : rel + "/" + name;
        const std::string child_abs = root_ + "/" + child;
        if (child_abs == state_root_ || child_abs.rfind(state_root_ + "/", 0) == 0) {
          continue;  // codex's own state, when CODEX_HOME lies in the workspace
        }
        struct stat st;
        if (::lstat(child_abs.c_str(), &st) != 0) continue;
        if (S_ISDIR(st.st_mode)) {
          todo.push_back(child);
        } else if (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) {
          out.push_back(child);
          if (out.size() > static_cast<size_t>(limits_.max_files)) {
            ::closedir(d);
            return ResourceExhaustedError("the directory " + root_ + " holds more than " +
                                          std::to_string(limits_.max_files) +
                                          " files; /undo snapshots up to that (in a git "
                                          "repository ignored files do not count)");
          }
        }
      }
      ::closedir(d);
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  Result<std::vector<std::string>> Store(const std::vector<std::string>& paths) override {
    std::vector<std::string> ids;
    if (paths.empty()) return ids;
    RETURN_IF_ERROR(EnsureDir(dir_ + "/blobs"));
    for (const std::string& p : paths) {
      std::string data;
      if (ReadWhole(root_ + "/" + p, &data, limits_.max_file_bytes) != 0) {
        ids.emplace_back();  // gone or unreadable since it was listed
        continue;
      }
      std::string id = Sha256Hex(data);
      const std::string blob = dir_ + "/blobs/" + id;
      struct stat st;
      if (::lstat(blob.c_str(), &st) != 0) {
        if (int err = WriteUndoFile(blob, data)) return OsFailure("cannot write " + blob, err);
      }
      ids.push_back(std::move(id));
    }
    return ids;
  }

  Result<std::vector<std::string>> Hash(const std::vector<std::string>& paths) override {
    std::vector<std::string> ids;
    for (const std::string& p : paths) {
      std::string data;
      if (int err = ReadWhole(root_ + "/" + p, &data, limits_.max_file_bytes)) {
        ids.push_back("unreadable:" + std::string(std::strerror(err)));  // never a blob id
        continue;
      }
      ids.push_back(Sha256Hex(data));
    }
    return ids;
  }

  Result<std::string> Read(const std::string& blob) override {
    if (!ValidUndoId(blob)) return DataLossError("a snapshot names a bad blob '" + blob + "'");
    std::string data;
    if (int err = ReadWhole(dir_ + "/blobs/" + blob, &data, limits_.max_file_bytes)) {
      return DataLossError("the snapshot's copy " + blob +
                           " cannot be read: " + std::strerror(err));
    }
    if (Sha256Hex(data) != blob) {
      return DataLossError("the snapshot's copy " + blob + " was changed; it is not restored");
    }
    return data;
  }

  Status Save(const std::string& session, const TurnChanges& turn) override {
    const std::string dir = dir_ + "/sessions/" + session;
    RETURN_IF_ERROR(EnsureDir(dir));
    Json changes = Json::array();
    for (const Change& c : turn.changes) {
      changes.push_back(
          {{"path", c.path}, {"before", StateJson(c.before)}, {"after", StateJson(c.after)}});
    }
    Json record = {{"session", session},
                   {"turn", turn.turn_id},
                   {"workspace", root_},
                   {"changes", changes},
                   {"skipped", turn.skipped}};
    const std::string path = dir + "/" + turn.turn_id + ".json";
    if (int err =
            WriteUndoFile(path, record.dump(-1, ' ', false, Json::error_handler_t::replace))) {
      return OsFailure("cannot write " + path, err);
    }
    return OkStatus();
  }

  Result<std::vector<std::string>> Turns(const std::string& session) override {
    std::vector<std::string> turns;
    DIR* d = ::opendir((dir_ + "/sessions/" + session).c_str());
    if (d == nullptr) return turns;
    while (struct dirent* e = ::readdir(d)) {
      std::string name = e->d_name;
      if (name.size() > 5 && name.ends_with(".json")) {
        name.resize(name.size() - 5);
        if (ValidUndoId(name)) turns.push_back(name);
      }
    }
    ::closedir(d);
    std::sort(turns.begin(), turns.end());
    return turns;
  }

  Result<TurnChanges> Load(const std::string& session, const std::string& turn) override {
    const std::string path = dir_ + "/sessions/" + session + "/" + turn + ".json";
    std::string text;
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return OsFailure("cannot read " + path, errno);
    char buf[65536];
    for (ssize_t got; (got = ::read(fd, buf, sizeof buf)) > 0;) {
      text.append(buf, static_cast<size_t>(got));
    }
    ::close(fd);
    Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object() || !j.contains("changes") || !j["changes"].is_array()) {
      return DataLossError("the undo record " + path + " is damaged");
    }
    if (j.value("workspace", "") != root_) {
      return FailedPreconditionError("the undo record " + path + " is of " +
                                     j.value("workspace", std::string("?")) + ", not " + root_);
    }
    TurnChanges out;
    out.turn_id = turn;
    for (const Json& c : j["changes"]) {
      if (!c.is_object() || !c.contains("path") || !c["path"].is_string()) continue;
      Change change;
      change.path = c["path"].get<std::string>();
      if (c.contains("before")) change.before = StateFrom(c["before"]);
      if (c.contains("after")) change.after = StateFrom(c["after"]);
      out.changes.push_back(std::move(change));
    }
    if (j.contains("skipped") && j["skipped"].is_array()) {
      for (const Json& s : j["skipped"]) {
        if (s.is_string()) out.skipped.push_back(s.get<std::string>());
      }
    }
    return out;
  }

  Status Drop(const std::string& session, const std::string& turn) override {
    const std::string path = dir_ + "/sessions/" + session + "/" + turn + ".json";
    if (::unlink(path.c_str()) != 0 && errno != ENOENT)
      return OsFailure("cannot remove " + path, errno);
    // FIXME(undo): blobs no record names any more stay in blobs/ until
    // CODEX_HOME/undo is removed; a sweep could drop them.
    return OkStatus();
  }

 private:
  Status EnsureDir(const std::string& dir) {
    if (int err = MakeStateDir(dir)) return OsFailure("cannot create " + dir, err);
    return OkStatus();
  }

  std::string root_;
  std::string dir_;
  std::string state_root_;
  UndoLimits limits_;
};

}  // namespace

int MakeStateDir(const std::string& dir) {
  struct stat st;
  if (::stat(dir.c_str(), &st) == 0) return S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
  const size_t slash = dir.rfind('/');
  if (slash != std::string::npos && slash > 0) {
    if (int err = MakeStateDir(dir.substr(0, slash))) return err;
  }
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return errno;
  return 0;
}

bool ValidUndoId(std::string_view id) {
  if (id.empty() || id.size() > 128) return false;
  return std::all_of(id.begin(), id.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-';
  });
}

std::unique_ptr<Backend> MakeCopyBackend(const std::string& root, const std::string& state_dir,
                                         const UndoLimits& limits) {
  return std::make_unique<CopyBackend>(root, state_dir + "/copy", limits);
}

}  // namespace codex::core::undo_internal
