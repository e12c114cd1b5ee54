// The git backend of /undo (undo_backend.h): contents as objects of the
// workspace's repository, a turn as the commit refs/codex/undo/<session>/<turn>
// (its tree: the touched files after the turn; its parent's tree: before).
// Reads run through HostGit::Run (the read-only sandbox), writes through
// HostGit::RunWriting; both with every config-driven program disabled.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>

#include "core/host_git.h"
#include "core/undo.h"
#include "core/undo_backend.h"

namespace codex::core::undo_internal {

namespace {

using Json = nlohmann::json;

// Paths per git command line (each under PATH_MAX; far below ARG_MAX).
constexpr size_t kBatch = 256;
constexpr std::string_view kRefPrefix = "refs/codex/undo/";

std::string Trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    if (end > pos) out.push_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
  return out;
}

Status GitFailed(std::string_view what, const HostGitResult& r) {
  std::string err = Trimmed(r.stderr_text);
  if (size_t nl = err.find('\n'); nl != std::string::npos) err.resize(nl);
  return InternalError("git " + std::string(what) + " failed (exit " + std::to_string(r.exit_code) +
                       (err.empty() ? "" : ": " + err) + ")");
}

class GitBackend final : public Backend {
 public:
  GitBackend(HostGit git, std::string state_dir)
      : git_(std::move(git)), state_dir_(std::move(state_dir)) {}

  std::string_view kind() const override { return "git"; }

  Result<std::vector<std::string>> ListFiles() override {
    ASSIGN_OR_RETURN(HostGitResult r,
                     git_.Run({"ls-files", "-z", "--cached", "--others", "--exclude-standard"}));
    if (r.exit_code != 0) return GitFailed("ls-files", r);
    if (r.truncated) {
      return ResourceExhaustedError(
          "the work tree lists more files than /undo snapshots (git's listing is over 1 MiB)");
    }
    std::set<std::string> unique;
    size_t pos = 0;
    while (pos < r.stdout_text.size()) {
      size_t end = r.stdout_text.find('\0', pos);
      if (end == std::string::npos) end = r.stdout_text.size();
      if (end > pos) unique.insert(r.stdout_text.substr(pos, end - pos));
      pos = end + 1;
    }
    if (unique.size() > static_cast<size_t>(kMaxUndoFilesForGit())) {
      return ResourceExhaustedError("the work tree has more than " +
                                    std::to_string(kMaxUndoFilesForGit()) +
                                    " files; /undo snapshots up to that");
    }
    return std::vector<std::string>(unique.begin(), unique.end());
  }

  Result<std::vector<std::string>> Store(const std::vector<std::string>& paths) override {
    return HashObjects(paths, /*write=*/true);
  }
  Result<std::vector<std::string>> Hash(const std::vector<std::string>& paths) override {
    return HashObjects(paths, /*write=*/false);
  }

  Result<std::string> Read(const std::string& blob) override {
    ASSIGN_OR_RETURN(HostGitResult r, git_.Run({"cat-file", "blob", blob}));
    if (r.exit_code != 0) {
      return DataLossError("the snapshot's object " + blob + " is missing from the repository (" +
                           Trimmed(r.stderr_text) + ")");
    }
    if (r.truncated)
      return DataLossError("the snapshot's object " + blob + " could not be read whole");
    return std::move(r.stdout_text);
  }

  Status Save(const std::string& session, const TurnChanges& turn) override {
    std::vector<std::pair<std::string, FileState>> before, after;
    for (const Change& c : turn.changes) {
      if (c.before) before.emplace_back(c.path, *c.before);
      if (c.after) after.emplace_back(c.path, *c.after);
    }
    ASSIGN_OR_RETURN(std::string before_tree, Tree(before));
    ASSIGN_OR_RETURN(std::string after_tree, Tree(after));
    ASSIGN_OR_RETURN(std::string before_commit,
                     Write({"commit-tree", before_tree, "-m",
                            "codex /undo: files before turn " + turn.turn_id}));
    Json meta = {{"session", session}, {"turn", turn.turn_id}, {"skipped", turn.skipped}};
    ASSIGN_OR_RETURN(std::string after_commit,
                     Write({"commit-tree", after_tree, "-p", before_commit, "-m",
                            "codex /undo: files after turn " + turn.turn_id + "\n\n" +
                                meta.dump(-1, ' ', false, Json::error_handler_t::replace)}));
    // "" as the old value: the ref must not exist yet.
    return Write({"update-ref", Ref(session, turn.turn_id), after_commit, ""}).status();
  }

  Result<std::vector<std::string>> Turns(const std::string& session) override {
    const std::string prefix = std::string(kRefPrefix) + session + "/";
    ASSIGN_OR_RETURN(HostGitResult r, git_.Run({"for-each-ref", "--format=%(refname)", prefix}));
    if (r.exit_code != 0) return GitFailed("for-each-ref", r);
    std::vector<std::string> turns;
    for (const std::string& line : Lines(r.stdout_text)) {
      if (line.rfind(prefix, 0) == 0) turns.push_back(line.substr(prefix.size()));
    }
    std::sort(turns.begin(), turns.end());
    return turns;
  }

  Result<TurnChanges> Load(const std::string& session, const std::string& turn) override {
    const std::string ref = Ref(session, turn);
    ASSIGN_OR_RETURN(auto before, TreeEntries(ref + "^1"));
    ASSIGN_OR_RETURN(auto after, TreeEntries(ref));
    TurnChanges out;
    out.turn_id = turn;
    std::set<std::string> paths;
    for (const auto& [p, s] : before) paths.insert(p);
    for (const auto& [p, s] : after) paths.insert(p);
    for (const std::string& p : paths) {
      Change c;
      c.path = p;
      if (auto it = before.find(p); it != before.end()) c.before = it->second;
      if (auto it = after.find(p); it != after.end()) c.after = it->second;
      out.changes.push_back(std::move(c));
    }
    ASSIGN_OR_RETURN(HostGitResult r, git_.Run({"cat-file", "commit", ref}));
    if (r.exit_code != 0) return GitFailed("cat-file", r);
    if (size_t brace = r.stdout_text.find("\n{"); brace != std::string::npos) {
      Json meta = Json::parse(r.stdout_text.substr(brace + 1), nullptr, /*allow_exceptions=*/false);
      if (meta.is_object() && meta.contains("skipped") && meta["skipped"].is_array()) {
        for (const Json& s : meta["skipped"]) {
          if (s.is_string()) out.skipped.push_back(s.get<std::string>());
        }
      }
    }
    return out;
  }

  Status Drop(const std::string& session, const std::string& turn) override {
    return Write({"update-ref", "-d", Ref(session, turn)}).status();
  }

 private:
  // Far more than a plain directory: ignored files (build output,
  // node_modules) are not listed; git's 1 MiB listing is the other bound.
  static int kMaxUndoFilesForGit() { return 100'000; }

  static std::string Ref(const std::string& session, const std::string& turn) {
    return std::string(kRefPrefix) + session + "/" + turn;
  }

  // A private index file of codex's own: never the user's.
  std::string IndexPath() {
    static std::atomic<int> counter{0};
    return state_dir_ + "/index-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
  }

  // Runs a writing command; its first output line.
  Result<std::string> Write(const std::vector<std::string>& args) {
    RETURN_IF_ERROR(EnsureStateDir());
    const std::string index = IndexPath();
    ::unlink(index.c_str());
    Result<HostGitResult> r = git_.RunWriting(args, index);
    ::unlink(index.c_str());
    if (!r.ok()) return r.status();
    if (r->exit_code != 0) return GitFailed(args.front(), *r);
    return Trimmed(r->stdout_text);
  }

  Status EnsureStateDir() {
    if (int err = MakeStateDir(state_dir_)) {
      return FailedPreconditionError("cannot create " + state_dir_ + ": " + std::strerror(err));
    }
    return OkStatus();
  }

  Result<std::vector<std::string>> HashObjects(const std::vector<std::string>& paths, bool write) {
    std::vector<std::string> ids;
    if (paths.empty()) return ids;
    if (write) RETURN_IF_ERROR(EnsureStateDir());
    for (size_t at = 0; at < paths.size(); at += kBatch) {
      std::vector<std::string> args = {"hash-object"};
      if (write) args.push_back("-w");
      args.insert(args.end(), {"--no-filters", "--"});
      const size_t end = std::min(paths.size(), at + kBatch);
      args.insert(args.end(), paths.begin() + static_cast<ptrdiff_t>(at),
                  paths.begin() + static_cast<ptrdiff_t>(end));
      ASSIGN_OR_RETURN(HostGitResult r, HashRun(args, write));
      std::vector<std::string> lines = Lines(r.stdout_text);
      if (r.exit_code == 0 && lines.size() == end - at) {
        for (auto& l : lines) ids.push_back(Trimmed(std::move(l)));
        continue;
      }
      // A file of the batch went away or cannot be read: one at a time,
      // "" for each that fails.
      for (size_t i = at; i < end; ++i) {
        std::vector<std::string> one(args.begin(), args.begin() + (write ? 4 : 3));
        one.push_back(paths[i]);
        ASSIGN_OR_RETURN(HostGitResult single, HashRun(one, write));
        ids.push_back(single.exit_code == 0 ? Trimmed(single.stdout_text) : "");
      }
    }
    return ids;
  }

  Result<HostGitResult> HashRun(const std::vector<std::string>& args, bool write) {
    if (write) return git_.RunWriting(args, IndexPath());
    return git_.Run(args);
  }

  // A tree of `entries` built in a private index.
  Result<std::string> Tree(const std::vector<std::pair<std::string, FileState>>& entries) {
    RETURN_IF_ERROR(EnsureStateDir());
    const std::string index = IndexPath();
    ::unlink(index.c_str());
    struct Cleanup {
      std::string path;
      ~Cleanup() { ::unlink(path.c_str()); }
    } cleanup{index};
    for (size_t at = 0; at < entries.size(); at += kBatch) {
      std::vector<std::string> args = {"update-index", "--add"};
      for (size_t i = at; i < std::min(entries.size(), at + kBatch); ++i) {
        char mode[16];
        std::snprintf(mode, sizeof mode, "%o", entries[i].second.mode);
        args.push_back("--cacheinfo");
        args.push_back(std::string(mode) + "," + entries[i].second.blob + "," + entries[i].first);
      }
      ASSIGN_OR_RETURN(HostGitResult r, git_.RunWriting(args, index));
      if (r.exit_code != 0) return GitFailed("update-index", r);
    }
    ASSIGN_OR_RETURN(HostGitResult r, git_.RunWriting({"write-tree"}, index));
    if (r.exit_code != 0) return GitFailed("write-tree", r);
    return Trimmed(r.stdout_text);
  }

  // path -> state of every file in `treeish`.
  Result<std::map<std::string, FileState>> TreeEntries(const std::string& treeish) {
    ASSIGN_OR_RETURN(HostGitResult r, git_.Run({"ls-tree", "-r", "-z", "--full-tree", treeish}));
    if (r.exit_code != 0) return GitFailed("ls-tree", r);
    if (r.truncated) return DataLossError("the snapshot of " + treeish + " is too long to read");
    std::map<std::string, FileState> out;
    size_t pos = 0;
    while (pos < r.stdout_text.size()) {
      size_t end = r.stdout_text.find('\0', pos);
      if (end == std::string::npos) end = r.stdout_text.size();
      const std::string entry = r.stdout_text.substr(pos, end - pos);
      pos = end + 1;
      // "<mode> SP <type> SP <object> TAB <path>"
      const size_t tab = entry.find('\t');
      if (tab == std::string::npos) continue;
      const std::string head = entry.substr(0, tab);
      const size_t sp1 = head.find(' ');
      const size_t sp2 = head.rfind(' ');
      if (sp1 == std::string::npos || sp2 == sp1) continue;
      FileState s;
      s.mode = static_cast<uint32_t>(std::stoul(head.substr(0, sp1), nullptr, 8));
      s.blob = head.substr(sp2 + 1);
      out.emplace(entry.substr(tab + 1), std::move(s));
    }
    return out;
  }

  HostGit git_;
  std::string state_dir_;
};

}  // namespace

Result<std::unique_ptr<Backend>> OpenGitBackend(const std::string& root,
                                                const std::string& state_dir) {
  Result<HostGit> git = HostGit::Open(root);
  if (!git.ok()) return std::unique_ptr<Backend>();  // no git here: the copy backend
  ASSIGN_OR_RETURN(HostGitResult r, git->Run({"rev-parse", "--is-inside-work-tree"}));
  if (r.exit_code != 0 || Trimmed(r.stdout_text) != "true") return std::unique_ptr<Backend>();
  return std::unique_ptr<Backend>(new GitBackend(std::move(*git), state_dir + "/git"));
}

}  // namespace codex::core::undo_internal
