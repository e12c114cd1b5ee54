#include "core/sandboxed_runner.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <system_error>
#include <thread>
#include <utility>

#include "sandbox/host_path.h"
#include "sandbox/output_buffer.h"

namespace codex::core {
namespace {

bool IsDirectory(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::string CurrentDirectory() {
  char buf[4096];
  return ::getcwd(buf, sizeof(buf)) != nullptr ? std::string(buf) : std::string(".");
}

// The sandbox spec for `spec`: workspace-write may write what the workspace
// policy says (sandbox/workspace_policy.h).
Result<sandbox::SandboxSpec> ToSandboxSpec(const CommandSpec& spec) {
  sandbox::SandboxSpec out;
  switch (spec.sandbox.mode) {
    case SandboxMode::kReadOnly:
      out.mode = sandbox::Mode::kReadOnly;
      break;
    case SandboxMode::kWorkspaceWrite:
      out.mode = sandbox::Mode::kWorkspaceWrite;
      break;
    case SandboxMode::kDangerFullAccess:
      out.mode = sandbox::Mode::kFullAccess;
      break;
  }
  out.network = spec.sandbox.network ? sandbox::Network::kAllowed : sandbox::Network::kDenied;
  if (out.mode == sandbox::Mode::kWorkspaceWrite) {
    ASSIGN_OR_RETURN(sandbox::WorkspacePolicy policy,
                     sandbox::WorkspacePolicy::Compute(WritableRootsFor(spec.sandbox, spec.cwd)));
    out.writable_roots = policy.root_paths();
    out.private_paths = spec.sandbox.private_paths;
    out.read_only_paths = spec.sandbox.read_only_paths;
  }
  return out;
}

// The spawn options for `spec`, without the confinement.
Result<sandbox::SpawnOptions> SpawnOptionsFor(const CommandSpec& spec) {
  sandbox::SpawnOptions options;
  options.argv = spec.argv;
  options.cwd = spec.cwd;
  options.env = spec.env_policy;
  for (const auto& [name, value] : spec.env_overrides) options.env.overrides[name] = value;
  options.timeout_ms = spec.timeout_ms;
  if (!spec.cwd.empty() && !IsDirectory(spec.cwd)) {
    return InvalidArgumentError("working directory '" + spec.cwd +
                                "' does not exist; pass an existing directory");
  }
  return options;
}

void MarkNetwork(const sandbox::Confinement& confinement, sandbox::SpawnOptions* options) {
  if (confinement.network() == sandbox::Network::kDenied) {
    // Lets tools (and tests) know not to try; the same variable Codex sets.
    options->env.overrides.emplace("CODEX_SANDBOX_NETWORK_DISABLED", "1");
  }
}

// What a server's confinement was computed from and must still match: the
// spec, and the state of every path the workspace policy protects (an empty
// directory counts as absent: it is what a sandbox mounts over an absent
// path, sandbox/mount_point.h). A `.git` made on the host after the server
// started (`git init` by the user) is protected as a repository only by a
// new server.
Result<std::string> ServerKey(const sandbox::SandboxSpec& spec) {
  std::string key = std::to_string(static_cast<int>(spec.mode)) + "|" +
                    std::to_string(static_cast<int>(spec.network));
  for (const std::string& root : spec.writable_roots) key += "|" + root;
  for (const std::string& p : spec.private_paths) key += "|private:" + p;
  for (const std::string& p : spec.read_only_paths) key += "|read-only:" + p;
  if (spec.mode != sandbox::Mode::kWorkspaceWrite) return key;
  sandbox::WritableRootsSpec roots;
  roots.extra = spec.writable_roots;
  roots.exclude_slash_tmp = true;  // spec.writable_roots lists them when wanted
  roots.exclude_tmpdir_env_var = true;
  roots.private_paths = spec.private_paths;
  roots.read_only_paths = spec.read_only_paths;
  ASSIGN_OR_RETURN(sandbox::WorkspacePolicy policy, sandbox::WorkspacePolicy::Compute(roots));
  std::error_code ignored;
  for (const sandbox::ProtectedPath& p : policy.protected_paths()) {
    struct stat st;
    key += "|" + p.path;
    if (::lstat(p.path.c_str(), &st) != 0) continue;
    if (S_ISDIR(st.st_mode) && std::filesystem::is_empty(p.path, ignored)) continue;
    key += ":" + std::to_string(st.st_ino) + ":" + std::to_string(st.st_mode);
    // A worktree's .git file names the directories to protect.
    if (S_ISREG(st.st_mode)) {
      key += ":" + std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec);
    }
  }
  return key;
}

// Without namespaces, a root holding .git or .codex is granted entry by
// entry: its top-level names are part of the confinement too.
std::string TopLevelNames(const std::vector<std::string>& roots) {
  std::string out;
  for (const std::string& root : roots) {
    DIR* d = ::opendir(root.c_str());
    if (d == nullptr) continue;
    std::vector<std::string> names;
    while (dirent* e = ::readdir(d)) names.emplace_back(e->d_name);
    ::closedir(d);
    std::sort(names.begin(), names.end());
    out += "|" + root;
    for (const std::string& n : names) out += "/" + n;
  }
  return out;
}

}  // namespace

sandbox::WritableRootsSpec WritableRootsFor(const SandboxPolicy& policy, const std::string& cwd) {
  sandbox::WritableRootsSpec out;
  out.workspace = !policy.workspace_root.empty() ? policy.workspace_root
                  : !cwd.empty()                 ? cwd
                                                 : CurrentDirectory();
  out.extra = policy.writable_roots;
  out.exclude_slash_tmp = policy.exclude_slash_tmp;
  out.exclude_tmpdir_env_var = policy.exclude_tmpdir_env_var;
  out.private_paths = policy.private_paths;
  out.read_only_paths = policy.read_only_paths;
  return out;
}

std::vector<std::string> ModelWritableRootsFor(const SandboxPolicy& policy,
                                               const std::string& cwd) {
  return sandbox::ModelWritableRoots(WritableRootsFor(policy, cwd));
}

Result<PreparedCommand> PrepareCommand(const CommandSpec& spec) {
  PreparedCommand prepared;
  ASSIGN_OR_RETURN(prepared.options, SpawnOptionsFor(spec));
  ASSIGN_OR_RETURN(sandbox::SandboxSpec sandbox_spec, ToSandboxSpec(spec));
  auto confinement = sandbox::Confinement::Prepare(sandbox_spec);
  if (!confinement.ok()) return confinement.status();
  prepared.confinement = std::move(*confinement);
  MarkNetwork(*prepared.confinement, &prepared.options);
  prepared.options.child_setup = prepared.confinement.get();
  return prepared;
}

SandboxedRunner::~SandboxedRunner() {
  if (warm_.joinable()) warm_.join();
}

void SandboxedRunner::Warm(const CommandSpec& spec) {
  if (warm_.joinable()) return;
  try {
    warm_ = std::thread([this, spec] { (void)ServerFor(spec); });
  } catch (const std::system_error&) {
    // No thread: the first command starts the server.
  }
}

Result<SandboxedRunner::Server> SandboxedRunner::ServerFor(const CommandSpec& spec) {
  ASSIGN_OR_RETURN(const sandbox::SandboxSpec sandbox_spec, ToSandboxSpec(spec));
  ASSIGN_OR_RETURN(const std::string key, ServerKey(sandbox_spec));
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = servers_.begin(); it != servers_.end(); ++it) {
    if (it->key != key) continue;
    const bool same_grants =
        it->names.empty() || it->names == TopLevelNames(it->confinement->writable_roots());
    if (same_grants && it->server->Alive()) return *it;
    // Dead (reported by the call that saw it die) or stale: replace it.
    retired_.push_back(it->confinement);
    servers_.erase(it);
    break;
  }
  ASSIGN_OR_RETURN(std::unique_ptr<sandbox::Confinement> confinement,
                   sandbox::Confinement::Prepare(sandbox_spec));
  ASSIGN_OR_RETURN(std::shared_ptr<sandbox::SandboxServer> server,
                   sandbox::SandboxServer::Start(*confinement));
  Server entry;
  entry.key = key;
  entry.server = std::move(server);
  if (confinement->mode() != sandbox::Mode::kFullAccess && !confinement->uses_namespaces() &&
      !confinement->protected_paths().empty()) {
    entry.names = TopLevelNames(confinement->writable_roots());
  }
  entry.confinement = std::shared_ptr<const sandbox::Confinement>(std::move(confinement));
  // A policy change starts a new server; the old one keeps what it runs
  // (live exec sessions) until the session ends, up to a few policies.
  if (servers_.size() >= kMaxServers) {
    retired_.push_back(servers_.front().confinement);
    servers_.erase(servers_.begin());
  }
  servers_.push_back(entry);
  return entry;
}

Result<sandbox::SpawnOptions> SandboxedRunner::OptionsFor(const CommandSpec& spec,
                                                          const Server& server) {
  ASSIGN_OR_RETURN(sandbox::SpawnOptions options, SpawnOptionsFor(spec));
  MarkNetwork(*server.confinement, &options);
  return options;
}

Result<CommandResult> SandboxedRunner::Run(const CommandSpec& spec, const CancelToken& cancel) {
  ASSIGN_OR_RETURN(sandbox::SpawnOptions options, SpawnOptionsFor(spec));
  ASSIGN_OR_RETURN(Server server, ServerFor(spec));
  MarkNetwork(*server.confinement, &options);
  options.should_cancel = [&cancel] { return cancel.cancelled(); };
  options.cancel_fd = spec.cancel_fd;
  options.on_output = spec.on_output;

  auto run = server.server->Run(options);
  if (!run.ok()) return run.status();
  sandbox::ProcessResult& r = *run;
  CommandResult out;
  out.exit_code = r.exit_code;
  out.signal = r.signal;
  out.timed_out = r.timed_out;
  out.output = std::move(r.output);
  out.stdout_text = std::move(r.stdout_text);
  out.stderr_text = std::move(r.stderr_text);
  out.dropped_bytes = r.output_dropped;
  out.dropped_lines = r.output_dropped_lines;
  out.gap_offset = r.output_gap_offset;
  out.wall_ms = r.wall_ms;
  return out;
}

}  // namespace codex::core

namespace codex::core {
namespace {

// A command the sandbox server keeps running for unified exec. A reader
// thread drains its output as it comes (so that it never blocks on a full
// pipe or terminal between calls), keeping the newest kPendingCapBytes.
class ServedProcess final : public LiveProcess {
 public:
  static constexpr size_t kPendingCapBytes = 1 << 20;

  explicit ServedProcess(std::unique_ptr<sandbox::RemoteProcess> proc) : proc_(std::move(proc)) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) == 0) {
      wake_read_ = sandbox::UniqueFd(fds[0]);
      wake_write_ = sandbox::UniqueFd(fds[1]);
    }
    reader_ = std::thread([this] { ReadLoop(); });
  }

  ~ServedProcess() override {
    if (wake_write_) (void)!::write(wake_write_.get(), "x", 1);
    reader_.join();
    // Then RemoteProcess's destructor kills what is left.
  }

  Status Write(std::string_view bytes) override {
    const int fd = proc_->input_fd();
    // Without a terminal stdin is /dev/null, as in Codex 0.169 (whose words these are).
    if (fd < 0) {
      return Status(StatusCode::kFailedPrecondition,
                    "stdin is closed for this session; rerun exec_command with tty=true to keep "
                    "stdin open");
    }
    while (!bytes.empty()) {
      ssize_t n = ::write(fd, bytes.data(), bytes.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno == EAGAIN) {
        pollfd p{fd, POLLOUT, 0};
        if (::poll(&p, 1, 1'000) <= 0) {
          return Status(StatusCode::kUnavailable, "the process does not read its input");
        }
        continue;
      }
      if (n <= 0) {
        return Status(StatusCode::kFailedPrecondition,
                      ErrnoMessage("writing to the process", errno));
      }
      bytes.remove_prefix(static_cast<size_t>(n));
    }
    return OkStatus();
  }

  bool Exited() override {
    std::lock_guard<std::mutex> lock(mu_);
    return done_;
  }

  Chunk Collect(int64_t wait_ms, size_t cap_bytes, const CancelToken& cancel,
                const std::function<void(std::string_view)>& on_output) override {
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(std::max<int64_t>(wait_ms, 0));
    std::unique_lock<std::mutex> lock(mu_);
    streamed_ = 0;
    // What arrived since the last call of on_output, given without the lock.
    auto stream = [&] {
      if (!on_output || pending_.size() <= streamed_) return;
      const std::string fresh = pending_.substr(streamed_);
      streamed_ = pending_.size();
      lock.unlock();
      on_output(fresh);
      lock.lock();
    };
    while (!done_ && !cancel.cancelled() && std::chrono::steady_clock::now() < deadline) {
      cv_.wait_until(lock, std::min(deadline, std::chrono::steady_clock::now() +
                                                  std::chrono::milliseconds(50)));
      stream();
    }
    stream();
    Chunk chunk;
    sandbox::HeadTailBuffer buffer(cap_bytes / 2, cap_bytes - cap_bytes / 2);
    buffer.Append(pending_);
    chunk.output = buffer.head() + buffer.tail();
    chunk.dropped = buffer.omitted_bytes() + dropped_;
    pending_.clear();
    streamed_ = 0;
    dropped_ = 0;
    if (done_) {
      chunk.exited = true;
      chunk.exit_code = exit_code_;
      chunk.lost = lost_;
    }
    return chunk;
  }

 private:
  // Drains stdout, stderr and the exit status until the command ended and
  // its output is read (100 ms of grace for what leftover children hold), or
  // the destructor wakes it.
  void ReadLoop() {
    using SteadyClock = std::chrono::steady_clock;
    SteadyClock::time_point exit_seen{};
    for (;;) {
      const bool exited = proc_->HasExited();
      if (exited && exit_seen == SteadyClock::time_point{}) exit_seen = SteadyClock::now();
      const bool open = proc_->stdout_fd() >= 0 || proc_->stderr_fd() >= 0;
      if (exited && (!open || SteadyClock::now() - exit_seen > std::chrono::milliseconds(100))) {
        const int status = proc_->wait_status();
        // No exit status (the server or the keeper died): never "exited
        // with code 0", which the status word left at 0 would say.
        std::string lost = proc_->lost() ? proc_->LostError().message() : "";
        std::lock_guard<std::mutex> lock(mu_);
        exit_code_ = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
        lost_ = std::move(lost);
        done_ = true;
        cv_.notify_all();
        break;
      }
      pollfd fds[4];
      nfds_t n = 0;
      if (wake_read_) fds[n++] = {wake_read_.get(), POLLIN, 0};
      if (proc_->stdout_fd() >= 0) fds[n++] = {proc_->stdout_fd(), POLLIN, 0};
      if (proc_->stderr_fd() >= 0) fds[n++] = {proc_->stderr_fd(), POLLIN, 0};
      if (!exited && proc_->exit_fd() >= 0) fds[n++] = {proc_->exit_fd(), POLLIN, 0};
      if (::poll(fds, n, exited ? 20 : 1'000) <= 0) continue;
      if (wake_read_ && fds[0].revents != 0) return;
      for (int which = 0; which < 2; ++which) {
        const int fd = which == 0 ? proc_->stdout_fd() : proc_->stderr_fd();
        if (fd < 0) continue;
        char buf[65536];
        for (;;) {
          ssize_t got = ::read(fd, buf, sizeof(buf));
          if (got > 0) {
            Append(std::string_view(buf, static_cast<size_t>(got)));
            continue;
          }
          if (got < 0 && errno == EINTR) continue;
          if (got < 0 && errno == EAGAIN) break;
          // End of file, or EIO from a terminal whose last holder closed it.
          if (which == 0) {
            proc_->CloseStdout();
          } else {
            proc_->CloseStderr();
          }
          break;
        }
      }
    }
  }

  void Append(std::string_view data) {
    std::lock_guard<std::mutex> lock(mu_);
    pending_.append(data);
    if (pending_.size() > kPendingCapBytes) {
      const size_t drop = pending_.size() - kPendingCapBytes;
      pending_.erase(0, drop);
      dropped_ += static_cast<int64_t>(drop);
      streamed_ -= std::min(streamed_, drop);
    }
    cv_.notify_all();
  }

  std::unique_ptr<sandbox::RemoteProcess> proc_;  // the reader thread's alone once started
  sandbox::UniqueFd wake_read_;
  sandbox::UniqueFd wake_write_;
  std::mutex mu_;  // guards pending_, dropped_, done_, exit_code_, lost_
  std::condition_variable cv_;
  std::string pending_;  // output not yet collected, the newest kPendingCapBytes
  size_t streamed_ = 0;  // how much of pending_ Collect's on_output was given
  int64_t dropped_ = 0;  // older bytes dropped from pending_
  bool done_ = false;    // exited and drained
  int exit_code_ = 0;
  std::string lost_;  // see Chunk::lost
  std::thread reader_;
};

}  // namespace

Result<std::unique_ptr<LiveProcess>> SandboxedRunner::Start(const CommandSpec& spec, bool tty) {
  ASSIGN_OR_RETURN(Server server, ServerFor(spec));
  ASSIGN_OR_RETURN(sandbox::SpawnOptions options, OptionsFor(spec, server));
  sandbox::RemoteSpawnOptions remote;
  remote.stdio = tty ? sandbox::RemoteStdio::kPty : sandbox::RemoteStdio::kPipes;
  // Without a terminal, stdin is /dev/null, as in Codex 0.169: `cat`,
  // `read` or a prompt end at once instead of waiting out the yield (and
  // then for ever) on a pipe nobody writes.
  remote.stdin_pipe = false;
  ASSIGN_OR_RETURN(std::unique_ptr<sandbox::RemoteProcess> proc,
                   server.server->Spawn(options, remote));
  return std::unique_ptr<LiveProcess>(new ServedProcess(std::move(proc)));
}

}  // namespace codex::core
