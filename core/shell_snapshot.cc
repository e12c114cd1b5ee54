#include "core/shell_snapshot.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <system_error>

#include "base/shell.h"
#include "base/strings.h"
#include "base/time.h"
#include "core/sandboxed_runner.h"
#include "core/session_lease.h"
#include "core/tool_args.h"
#include "sandbox/host_path.h"

namespace codex::core {
namespace {

constexpr int64_t kForeignRetentionMs = 7LL * 24 * 3600 * 1000;  // Codex's retention

// Lists each exported variable as "ATTRIBUTES NAME=VALUE", VALUE quoted by
// printf %q (one line whatever it holds). The names come from bash's own
// expansion, "${!a@}" ... "${!_@}" (every variable whose name starts with
// that letter: a name starts with a letter or `_`), not from `$(compgen -e)`,
// whose command substitution forked a subshell for each of the capture's two
// listings; quoted, each name is one word whatever IFS the login files left.
// Kept: those set (-v: `export X` alone, without a value, is no variable a
// command inherits, and a `set -u` from the login files would stop at it)
// and exported (`x` among the attributes), what `compgen -e` listed.
std::string ListExports() {
  std::string names;
  for (char c = 'a'; c <= 'z'; ++c) names += std::string(" \"${!") + c + "@}\"";
  for (char c = 'A'; c <= 'Z'; ++c) names += std::string(" \"${!") + c + "@}\"";
  names += " \"${!_@}\"";
  return "for __codex_n in" + names +
         R"(; do if [[ -v $__codex_n && ${!__codex_n@a} == *x* ]]; then printf '%s %s=%q\n' )"
         R"("${!__codex_n@a}" "$__codex_n" "${!__codex_n}"; fi; done; unset __codex_n)";
}

const std::set<std::string, std::less<>>& NeverCarried() {
  // cwd and nesting are the command's own; `_` is the last argument;
  // BASH_ENV is handled on its own (the first line of the file).
  static const std::set<std::string, std::less<>> names = {"PWD", "OLDPWD", "SHLVL", "_",
                                                           "BASH_ENV"};
  return names;
}

std::string RandomHex(int bytes) {
  std::random_device rd;
  std::string out;
  static constexpr char kHex[] = "0123456789abcdef";
  for (int i = 0; i < bytes; ++i) {
    const unsigned v = rd() & 0xffu;
    out.push_back(kHex[v >> 4]);
    out.push_back(kHex[v & 0xfu]);
  }
  return out;
}

bool DebugLogging() {
  const char* log = std::getenv("RUST_LOG");
  if (log == nullptr) return false;
  const std::string_view v(log);
  return v.find("debug") != std::string_view::npos || v.find("trace") != std::string_view::npos;
}

// [A-Za-z_][A-Za-z0-9_]*: a name bash can hold as a variable.
bool IsShellName(std::string_view name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
  for (const char c : name) {
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    if (!ok) return false;
  }
  return true;
}

struct Var {
  std::string attributes;
  std::string value;  // as printf %q wrote it
};

// Parses the lines of an exports section.
std::map<std::string, Var> ParseExports(std::string_view text) {
  std::map<std::string, Var> out;
  for (const std::string_view line : SplitLines(text)) {
    const size_t space = line.find(' ');
    if (space == std::string_view::npos) continue;
    const size_t eq = line.find('=', space);
    if (eq == std::string_view::npos || eq == space + 1) continue;
    const std::string_view name = line.substr(space + 1, eq - space - 1);
    // An environment entry whose name no shell variable can have (the
    // environment may hold any; bash imports none of them) is never
    // exported or unset by the snapshot.
    if (!IsShellName(name)) continue;
    Var v{std::string(line.substr(0, space)), std::string(line.substr(eq + 1))};
    out[std::string(name)] = std::move(v);
  }
  return out;
}

bool Settable(const std::string& name, const Var& var) {
  // Read-only (bash refuses to set them) and arrays (not exportable).
  if (var.attributes.find_first_of("raA") != std::string::npos) return false;
  return NeverCarried().count(name) == 0;
}

// The sections of a capture: name -> text (without the marker lines).
std::map<std::string, std::string> Sections(std::string_view text, std::string_view nonce) {
  std::map<std::string, std::string> out;
  const std::string marker = std::string(nonce) + " ";
  std::string* current = nullptr;
  for (const std::string_view line : SplitLines(text)) {
    if (line.size() > marker.size() && line.compare(0, marker.size(), marker) == 0) {
      current = &out[std::string(line.substr(marker.size()))];
      continue;
    }
    if (current != nullptr) {
      current->append(line);
      current->push_back('\n');
    }
  }
  return out;
}

void Debug(const std::string& line) {
  if (DebugLogging()) std::fprintf(stderr, "codex: shell snapshot: %s\n", line.c_str());
}

struct SnapshotName {
  int64_t pid = 0;
  std::string start;
};

// `<pid>.<start>.<nonce>.sh` (or `.sh.tmp`, one being written).
std::optional<SnapshotName> ParseName(const std::string& name) {
  auto digits = [](std::string_view s) {
    return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
  };
  const size_t a = name.find('.');
  if (a == std::string::npos) return std::nullopt;
  const size_t b = name.find('.', a + 1);
  if (b == std::string::npos) return std::nullopt;
  const std::string_view pid(name.data(), a);
  const std::string_view start(name.data() + a + 1, b - a - 1);
  const std::string_view rest(name.data() + b + 1, name.size() - b - 1);
  const bool suffix = (rest.size() > 3 && rest.substr(rest.size() - 3) == ".sh") ||
                      (rest.size() > 7 && rest.substr(rest.size() - 7) == ".sh.tmp");
  if (!digits(pid) || pid.size() > 9 || !digits(start) || !suffix) return std::nullopt;
  return SnapshotName{std::stoll(std::string(pid)), std::string(start)};
}

}  // namespace

std::string ShellSnapshotDir(const std::string& codex_home) {
  return codex_home + "/shell_snapshots";
}

bool IsLoginBashScript(const std::vector<std::string>& argv) {
  if (!ShellScriptOf(argv) || argv[1] != "-lc") return false;
  const std::string& shell = argv[0];
  const size_t slash = shell.rfind('/');
  return shell.compare(slash == std::string::npos ? 0 : slash + 1, std::string::npos, "bash") == 0;
}

std::vector<std::string> ShellSnapshotCaptureArgv(const std::string& bash,
                                                  const std::string& nonce) {
  auto mark = [&](const char* section) {
    return "printf '\\n%s\\n' " + ShellQuote(nonce + " " + section) + "\n";
  };
  // One login shell. What a command inherits (to leave out what the login
  // files did not change) is the environment this shell was started with,
  // which /proc/$$/environ keeps whatever the login files did; read by
  // mapfile (no fork) and listed with the same printf %q as what they left,
  // so that equal values compare equal. No readable /proc: no env-before
  // section, no snapshot (plain -lc), never a snapshot that freezes all.
  const std::string dump =
      "if mapfile -d '' -t __codex_e < /proc/$$/environ; then " + mark("env-before") +
      R"(for __codex_v in "${__codex_e[@]}"; do if [[ $__codex_v == *=* ]]; then )"
      R"(printf 'x %s=%q\n' "${__codex_v%%=*}" "${__codex_v#*=}"; fi; done; fi; )"
      "unset __codex_e __codex_v\n" +
      mark("env-after") + ListExports() + "\n" + mark("shopt") + "shopt -p\n" + mark("set") +
      "set +o\n" + mark("functions") + "declare -f\n" + mark("aliases") + "alias -p\n" +
      mark("end");
  return {bash, "-l", "-c", dump, "codex-shell-snapshot"};
}

Result<std::string> RenderShellSnapshot(std::string_view capture_stdout, std::string_view nonce) {
  const auto sections = Sections(capture_stdout, nonce);
  for (const char* name : {"env-before", "env-after", "shopt", "set", "functions", "aliases"}) {
    if (sections.count(name) == 0) {
      return FailedPreconditionError(std::string("the capture printed no ") + name + " section");
    }
  }
  if (sections.count("end") == 0) {
    return FailedPreconditionError("the capture stopped before its end (the login files exited?)");
  }
  const auto before = ParseExports(sections.at("env-before"));
  const auto after = ParseExports(sections.at("env-after"));

  std::string out =
      "# Shell snapshot written by codex (core/shell_snapshot.h): the login shell's state,\n"
      "# sourced through BASH_ENV by each `bash -lc` command of one session.\n";
  // First: the shells this command starts must not source the file again.
  if (auto it = after.find("BASH_ENV");
      it != after.end() && it->second.attributes.find('r') == std::string::npos) {
    out += "export BASH_ENV=" + it->second.value + "\n";
  } else {
    out += "unset BASH_ENV\n";
  }
  // One `shopt -u` and one `shopt -s` naming every option (each line of
  // its own cost an open of /dev/null: ~0.3 ms of CPU a command for ~57
  // options). bash applies each name it knows and only complains about the
  // others (2>/dev/null: an option another bash lacks); login_shell and
  // restricted_shell cannot be set. The compatNN options are the only ones
  // that interact: setting one clears the others, unsetting one that is off
  // changes nothing, so unsetting first, then setting, ends as shopt -p said.
  out += "# shopt\n";
  const std::string shopt = sections.at("shopt");
  std::string unset_names, set_names;
  size_t pos = 0;
  while (pos < shopt.size()) {
    size_t nl = shopt.find('\n', pos);
    if (nl == std::string::npos) nl = shopt.size();
    const std::string line = shopt.substr(pos, nl - pos);
    pos = nl + 1;
    std::string* names = line.rfind("shopt -s ", 0) == 0   ? &set_names
                         : line.rfind("shopt -u ", 0) == 0 ? &unset_names
                                                           : nullptr;
    if (names == nullptr) continue;
    const std::string name = line.substr(9);
    if (name.empty() || name == "login_shell" || name == "restricted_shell" ||
        name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") != std::string::npos) {
      continue;
    }
    *names += " " + name;
  }
  if (!unset_names.empty()) out += "shopt -u" + unset_names + " 2>/dev/null\n";
  if (!set_names.empty()) out += "shopt -s" + set_names + " 2>/dev/null\n";
  out += "# functions\n" + sections.at("functions");
  out += "# aliases\n" + sections.at("aliases");
  out += "# variables the login files set, changed or removed\n";
  for (const auto& [name, var] : after) {
    if (!Settable(name, var)) continue;
    auto was = before.find(name);
    if (was != before.end() && was->second.value == var.value) continue;
    out += "export " + name + "=" + var.value + "\n";
  }
  for (const auto& [name, var] : before) {
    if (after.count(name) != 0 || !Settable(name, var)) continue;
    out += "unset " + name + "\n";
  }
  // Last, so that an errexit or nounset from the login files cannot stop
  // the lines above.
  out += "# set -o\n";
  const std::string set = sections.at("set");
  pos = 0;
  while (pos < set.size()) {
    size_t nl = set.find('\n', pos);
    if (nl == std::string::npos) nl = set.size();
    const std::string line = set.substr(pos, nl - pos);
    pos = nl + 1;
    if (line.rfind("set -o ", 0) == 0) out += line + "\n";
  }
  return out;
}

void ApplyShellSnapshot(const std::string& path, CommandSpec& spec) {
  spec.argv[1] = "-c";
  spec.env_overrides["BASH_ENV"] = path;
}

void RemoveStaleShellSnapshots(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return;
  const LeaseHolder me = CurrentProcessHolder();
  const int64_t now_ms = NowMs();
  std::vector<std::string> stale;
  while (dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    const std::string path = dir + "/" + name;
    if (auto ours = ParseName(name)) {
      LeaseHolder holder;
      holder.pid = ours->pid;
      holder.host = me.host;
      holder.process_start = ours->start;
      if (LeaseHolderIsGone(holder, me.host, now_ms)) stale.push_back(path);
      continue;
    }
    // Another program's (Codex's `<thread id>.<n>.sh`): its retention.
    struct stat st;
    if (::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        now_ms - static_cast<int64_t>(st.st_mtime) * 1000 > kForeignRetentionMs) {
      stale.push_back(path);
    }
  }
  ::closedir(d);
  for (const std::string& path : stale) ::unlink(path.c_str());
}

ShellSnapshot::ShellSnapshot(Options options, CommandRunner& runner)
    : options_(std::move(options)), runner_(runner) {
  ::mkdir(options_.dir.c_str(), 0700);
  struct stat st;
  if (::lstat(options_.dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    Fail(FailedPreconditionError("cannot use " + options_.dir));
    return;
  }
  RemoveStaleShellSnapshots(options_.dir);
  const LeaseHolder me = CurrentProcessHolder();
  path_ = options_.dir + "/" + std::to_string(me.pid) + "." +
          (me.process_start.empty() ? "0" : me.process_start) + "." + RandomHex(8) + ".sh";
  const int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    Fail(FailedPreconditionError("cannot create " + path_));
    path_.clear();
    return;
  }
  ::close(fd);
}

ShellSnapshot::~ShellSnapshot() {
  if (thread_.joinable()) {
    // The session ends: its login shell (and the sandbox server's start, if
    // any) is not waited for beyond what killing it takes.
    stop_.Cancel();
    if (stop_write_) (void)!::write(stop_write_.get(), "x", 1);
    thread_.join();
  }
  if (!path_.empty()) ::unlink(path_.c_str());
}

Status ShellSnapshot::status() const {
  std::lock_guard<std::mutex> lock(mu_);
  return status_;
}

void ShellSnapshot::StartCapture(const std::string& bash) {
  std::lock_guard<std::mutex> lock(mu_);
  if (state_ != State::kNotTried || thread_.joinable()) return;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return;  // no capture: plain login shells
  stop_read_.Reset(fds[0]);
  stop_write_.Reset(fds[1]);
  state_ = State::kCapturing;
  try {
    thread_ = std::thread([this, bash] { Finish(Capture(bash, stop_, stop_read_.get())); });
  } catch (const std::system_error&) {
    state_ = State::kNotTried;  // no thread: plain login shells
  }
}

void ShellSnapshot::Finish(Status captured) {
  std::lock_guard<std::mutex> lock(mu_);
  captured_.notify_all();
  if (captured.ok()) {
    state_ = State::kReady;
    Debug("captured " + path_);
  } else if (captured.code() == StatusCode::kCancelled) {
    state_ = State::kNotTried;  // interrupted (the session ends)
  } else {
    Fail(std::move(captured));
  }
}

void ShellSnapshot::Fail(Status why) {
  state_ = State::kFailed;
  Debug("using plain login shells: " + why.message());
  status_ = std::move(why);
}

bool ShellSnapshot::Unchanged() const {
  struct stat st;
  if (::lstat(path_.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  const int64_t mtime_ns =
      static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
  return st.st_dev == dev_ && st.st_ino == ino_ && st.st_size == size_ && mtime_ns == mtime_ns_;
}

Status ShellSnapshot::Capture(const std::string& bash, const CancelToken& cancel, int cancel_fd) {
  const std::string nonce = "codex-snapshot-" + RandomHex(12);
  CommandSpec capture;
  capture.argv = ShellSnapshotCaptureArgv(bash, nonce);
  capture.cwd = options_.capture_cwd;
  if (capture.cwd.empty()) {
    const char* home = std::getenv("HOME");
    struct stat st;
    capture.cwd = home != nullptr && *home == '/' && ::stat(home, &st) == 0 && S_ISDIR(st.st_mode)
                      ? home
                      : "/";
  }
  capture.env_policy = options_.env_policy;
  capture.sandbox = options_.sandbox;
  capture.timeout_ms = options_.timeout_ms;
  capture.cancel_fd = cancel_fd;
  auto result = runner_.Run(capture, cancel);
  if (!result.ok()) return result.status();
  if (result->timed_out) {
    return DeadlineExceededError("the login shell took longer than " +
                                 std::to_string(options_.timeout_ms) + " ms");
  }
  if (result->exit_code != 0) {
    return FailedPreconditionError("the login shell exited with code " +
                                   std::to_string(result->exit_code));
  }
  if (result->dropped_bytes > 0) return FailedPreconditionError("the capture is too large");
  ASSIGN_OR_RETURN(std::string text, RenderShellSnapshot(result->stdout_text, nonce));

  // Written beside it, then renamed over it: a command never sees half a file.
  const std::string tmp = path_ + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return InternalError("cannot write " + tmp);
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n <= 0) {
      ::close(fd);
      ::unlink(tmp.c_str());
      return InternalError("cannot write " + tmp);
    }
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  // The file appears and the snapshot is ready in one step for a command
  // (Prepare reads the state under mu_): one that came in between would run
  // the login files as the capture's first command does (found under load:
  // a command answered once the file was there ran them a second time).
  std::lock_guard<std::mutex> lock(mu_);
  if (::rename(tmp.c_str(), path_.c_str()) != 0) {
    ::unlink(tmp.c_str());
    return InternalError("cannot rename " + tmp);
  }
  struct stat st;
  if (::lstat(path_.c_str(), &st) != 0) return InternalError("cannot stat " + path_);
  dev_ = st.st_dev;
  ino_ = st.st_ino;
  size_ = st.st_size;
  mtime_ns_ = static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
  state_ = State::kReady;
  captured_.notify_all();
  return OkStatus();
}

namespace {

// The bash that captures the login files: the user's SHELL when it is a bash,
// else the first bash of the PATH entries no sandboxed command can write
// (sandbox/host_path.h); "" when there is none.
std::string CaptureBash(const SandboxPolicy& policy) {
  const std::string shell = DefaultShell();
  const size_t slash = shell.rfind('/');
  if (shell.compare(slash + 1, std::string::npos, "bash") == 0) return shell;
  return sandbox::FindHostProgram("bash", std::getenv("PATH"), ModelWritableRootsFor(policy, ""));
}

}  // namespace

void ShellSnapshot::Prepare(CommandSpec& spec, const CancelToken& cancel) {
  if (!IsLoginBashScript(spec.argv)) return;
  std::unique_lock<std::mutex> lock(mu_);
  if (state_ == State::kNotTried) {
    plain_beside_capture_ = true;  // this command runs beside the capture it starts
    lock.unlock();
    // The user's bash makes the capture, never the command's argv[0]: a
    // `bash` of a cloned repository or one the model wrote would print what
    // it liked as the login shell's functions, and every later login command
    // (one approved to run outside the sandbox too) would source them.
    const std::string bash = CaptureBash(options_.sandbox);
    if (!bash.empty()) StartCapture(bash);
    return;
  }
  // While the capture runs, the first login command runs as it is (as in
  // Codex 0.169: a session's first command is not delayed); any other waits
  // for the capture rather than run the login files once more (a response's
  // calls arrive together). Bounded by the capture's own timeout; a
  // cancelled call stops waiting at once (its runner then sees the cancel).
  if (state_ == State::kCapturing && !plain_beside_capture_) {
    plain_beside_capture_ = true;
    return;
  }
  while (state_ == State::kCapturing && !cancel.cancelled()) {
    captured_.wait_for(lock, std::chrono::milliseconds(20));
  }
  if (state_ != State::kReady) return;
  if (!Unchanged()) {
    Fail(FailedPreconditionError(path_ + " changed after codex wrote it"));
    return;
  }
  ApplyShellSnapshot(path_, spec);
}

bool ShellSnapshot::ready() const {
  std::lock_guard<std::mutex> lock(mu_);
  return state_ == State::kReady;
}

}  // namespace codex::core
