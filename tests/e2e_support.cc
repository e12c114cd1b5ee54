#include "tests/e2e_support.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <regex>
#include <sstream>
#include <thread>

extern char** environ;

namespace codex::testing {

namespace {

using Clock = std::chrono::steady_clock;

// After the child exits, output still buffered in the pipes (or written by a
// lingering grandchild) is collected for at most this long.
constexpr int kDrainAfterExitMs = 500;
constexpr int kPumpSliceMs = 50;

void CloseFd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

int RemainingMs(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return static_cast<int>(std::max<int64_t>(0, left.count()));
}

std::string EnvValue(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? std::string() : std::string(v);
}

}  // namespace

ExecArgs::ExecArgs(const ProcessOptions& options, const std::map<std::string, std::string>& set,
                   const std::vector<std::string>& unset)
    : cwd_(options.cwd.string()) {
  for (const auto& a : options.argv) argv_.push_back(const_cast<char*>(a.c_str()));
  argv_.push_back(nullptr);
  std::map<std::string, std::string> env_map;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string_view kv(*e);
    size_t eq = kv.find('=');
    if (eq == std::string_view::npos) continue;
    env_map[std::string(kv.substr(0, eq))] = std::string(kv.substr(eq + 1));
  }
  for (const auto& [k, v] : set) env_map[k] = v;
  for (const auto& name : unset) env_map.erase(name);
  for (const auto& name : options.unset_env) env_map.erase(name);
  for (const auto& [k, v] : options.env) env_map[k] = v;
  for (const auto& [k, v] : env_map) env_strings_.push_back(k + "=" + v);
  for (auto& kv : env_strings_) envp_.push_back(kv.data());
  envp_.push_back(nullptr);
}

Result<std::unique_ptr<ChildProcess>> ChildProcess::Spawn(const ProcessOptions& options) {
  if (options.argv.empty()) return InvalidArgumentError("ChildProcess: argv is empty");
  // Writing to a child that already exited must give EPIPE, not kill the test.
  ::signal(SIGPIPE, SIG_IGN);

  // Everything the child needs is prepared before fork(): no allocation after.
  const ExecArgs exec(options);

  int in_pipe[2] = {-1, -1};
  int out_pipe[2] = {-1, -1};
  int err_pipe[2] = {-1, -1};
  int exec_pipe[2] = {-1, -1};
  auto close_all = [&] {
    for (int* p : {in_pipe, out_pipe, err_pipe, exec_pipe}) {
      CloseFd(p[0]);
      CloseFd(p[1]);
    }
  };
  if (options.stdin_text) {
    if (::pipe2(in_pipe, O_CLOEXEC) != 0) return InternalError("pipe2 failed");
  } else {
    in_pipe[0] = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (in_pipe[0] < 0) return InternalError("cannot open /dev/null");
  }
  if (::pipe2(out_pipe, O_CLOEXEC) != 0 || ::pipe2(err_pipe, O_CLOEXEC) != 0 ||
      ::pipe2(exec_pipe, O_CLOEXEC) != 0) {
    close_all();
    return InternalError(std::string("pipe2 failed: ") + std::strerror(errno));
  }

  pid_t pid = ::fork();
  if (pid < 0) {
    close_all();
    return InternalError(std::string("fork failed: ") + std::strerror(errno));
  }
  if (pid == 0) {
    // Child: only async-signal-safe calls from here to exec.
    ::setpgid(0, 0);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::signal(SIGPIPE, SIG_DFL);
    ::dup2(in_pipe[0], 0);
    ::dup2(out_pipe[1], 1);
    ::dup2(err_pipe[1], 2);
    if (!exec.cwd().empty() && ::chdir(exec.cwd().c_str()) != 0) {
      int e = errno;
      [[maybe_unused]] ssize_t n = ::write(exec_pipe[1], &e, sizeof(e));
      ::_exit(127);
    }
    ::execvpe(exec.argv()[0], exec.argv(), exec.envp());
    int e = errno;
    [[maybe_unused]] ssize_t n = ::write(exec_pipe[1], &e, sizeof(e));
    ::_exit(127);
  }

  ::setpgid(pid, pid);  // also done in the child; whichever runs first wins the race
  CloseFd(in_pipe[0]);
  CloseFd(out_pipe[1]);
  CloseFd(err_pipe[1]);
  CloseFd(exec_pipe[1]);
  int child_errno = 0;
  ssize_t n;
  do {
    n = ::read(exec_pipe[0], &child_errno, sizeof(child_errno));
  } while (n < 0 && errno == EINTR);
  CloseFd(exec_pipe[0]);

  std::unique_ptr<ChildProcess> child(new ChildProcess());
  child->pid_ = pid;
  child->stdin_fd_ = in_pipe[1];
  child->stdout_fd_ = out_pipe[0];
  child->stderr_fd_ = err_pipe[0];
  if (n > 0) {
    child->Reap(/*block=*/true);
    bool cwd_failed = !exec.cwd().empty() && ::access(exec.cwd().c_str(), X_OK) != 0;
    return NotFoundError(
        cwd_failed ? "cannot enter directory " + exec.cwd() + ": " + std::strerror(child_errno)
                   : "cannot execute " + options.argv[0] + ": " + std::strerror(child_errno));
  }
  if (child->stdin_fd_ >= 0) {
    ::fcntl(child->stdin_fd_, F_SETFL, ::fcntl(child->stdin_fd_, F_GETFL) | O_NONBLOCK);
    child->pending_stdin_ = *options.stdin_text;
    if (child->pending_stdin_.empty()) CloseFd(child->stdin_fd_);
  }
  return child;
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0 && !exited_) {
    ::kill(-pid_, SIGKILL);
    Reap(/*block=*/true);
  }
  CloseFd(stdin_fd_);
  CloseFd(stdout_fd_);
  CloseFd(stderr_fd_);
}

bool ChildProcess::Reap(bool block) {
  if (exited_) return true;
  pid_t r;
  do {
    r = ::waitpid(pid_, &wait_status_, block ? 0 : WNOHANG);
  } while (r < 0 && errno == EINTR);
  if (r == pid_ || (r < 0 && errno == ECHILD)) exited_ = true;
  return exited_;
}

void ChildProcess::Pump(int wait_ms) {
  pollfd fds[3];
  int* owners[3];
  nfds_t count = 0;
  if (stdin_fd_ >= 0) {
    fds[count] = {stdin_fd_, POLLOUT, 0};
    owners[count++] = &stdin_fd_;
  }
  if (stdout_fd_ >= 0) {
    fds[count] = {stdout_fd_, POLLIN, 0};
    owners[count++] = &stdout_fd_;
  }
  if (stderr_fd_ >= 0) {
    fds[count] = {stderr_fd_, POLLIN, 0};
    owners[count++] = &stderr_fd_;
  }
  if (count == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min(wait_ms, 10)));
    return;
  }
  int ready = ::poll(fds, count, wait_ms);
  if (ready <= 0) return;
  char buf[65536];
  for (nfds_t i = 0; i < count; ++i) {
    if (fds[i].revents == 0) continue;
    int& fd = *owners[i];
    if (&fd == &stdin_fd_) {
      ssize_t w = ::write(fd, pending_stdin_.data() + stdin_written_,
                          pending_stdin_.size() - stdin_written_);
      if (w > 0) stdin_written_ += static_cast<size_t>(w);
      if ((w < 0 && errno != EAGAIN && errno != EINTR) || stdin_written_ >= pending_stdin_.size()) {
        CloseFd(fd);  // all written, or the child closed its end
      }
      continue;
    }
    ssize_t r = ::read(fd, buf, sizeof(buf));
    if (r > 0) {
      (&fd == &stdout_fd_ ? out_ : err_).append(buf, static_cast<size_t>(r));
    } else if (r == 0 || (errno != EAGAIN && errno != EINTR)) {
      CloseFd(fd);
    }
  }
}

Result<std::string> ChildProcess::ReadStdoutLine(std::chrono::milliseconds timeout) {
  Clock::time_point deadline = Clock::now() + timeout;
  for (;;) {
    size_t nl = out_.find('\n', line_cursor_);
    if (nl != std::string::npos) {
      std::string line = out_.substr(line_cursor_, nl - line_cursor_);
      line_cursor_ = nl + 1;
      return line;
    }
    if (stdout_fd_ < 0) {
      return UnavailableError("the child closed stdout before a full line (got \"" +
                              out_.substr(line_cursor_) + "\")");
    }
    int left = RemainingMs(deadline);
    if (left == 0) return DeadlineExceededError("no stdout line from the child in time");
    Pump(std::min(left, kPumpSliceMs));
  }
}

Status ChildProcess::Signal(int sig) {
  if (exited_) return FailedPreconditionError("the child has already been reaped");
  if (::kill(-pid_, sig) != 0) {
    return InternalError(std::string("kill failed: ") + std::strerror(errno));
  }
  return OkStatus();
}

Result<ProcessResult> ChildProcess::Wait(std::chrono::milliseconds timeout) {
  Clock::time_point deadline = Clock::now() + timeout;
  ProcessResult result;
  while (!Reap(/*block=*/false)) {
    int left = RemainingMs(deadline);
    if (left == 0) {
      ::kill(-pid_, SIGKILL);
      Reap(/*block=*/true);
      result.timed_out = true;
      break;
    }
    Pump(std::min(left, kPumpSliceMs));
  }
  CloseFd(stdin_fd_);
  Clock::time_point drain_deadline = Clock::now() + std::chrono::milliseconds(kDrainAfterExitMs);
  while ((stdout_fd_ >= 0 || stderr_fd_ >= 0) && RemainingMs(drain_deadline) > 0) {
    Pump(std::min(RemainingMs(drain_deadline), kPumpSliceMs));
  }
  CloseFd(stdout_fd_);
  CloseFd(stderr_fd_);
  if (WIFEXITED(wait_status_)) {
    result.exit_code = WEXITSTATUS(wait_status_);
  } else if (WIFSIGNALED(wait_status_)) {
    result.term_signal = WTERMSIG(wait_status_);
  }
  result.out = out_;
  result.err = err_;
  return result;
}

Result<ProcessResult> RunProcess(const ProcessOptions& options) {
  ASSIGN_OR_RETURN(std::unique_ptr<ChildProcess> child, ChildProcess::Spawn(options));
  return child->Wait(options.timeout);
}

std::string CodexBinaryPath() {
  std::string from_env = EnvValue("CODEX_BINARY");
  if (!from_env.empty()) return from_env;
#ifdef CODEX_BINARY
  return CODEX_BINARY;
#else
  return "";
#endif
}

std::string ScriptedServerBinaryPath() {
  std::string from_env = EnvValue("SCRIPTED_SERVER_BINARY");
  if (!from_env.empty()) return from_env;
#ifdef SCRIPTED_SERVER_BINARY
  return SCRIPTED_SERVER_BINARY;
#else
  return "";
#endif
}

Result<std::vector<RecordedRequest>> ReadRecordFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFoundError("cannot read record file " + path.string());
  std::vector<RecordedRequest> out;
  std::string line;
  size_t line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty()) continue;
    Json j = Json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) {
      return DataLossError(path.string() + ":" + std::to_string(line_no) + ": not valid JSON");
    }
    Result<RecordedRequest> r = RecordedRequest::FromJson(j);
    if (!r.ok()) {
      return DataLossError(path.string() + ":" + std::to_string(line_no) + ": " +
                           r.status().message());
    }
    out.push_back(std::move(*r));
  }
  return out;
}

std::vector<Json> ItemsOfType(const RecordedRequest& request, std::string_view type) {
  std::vector<Json> out;
  for (const auto& item : request.InputItems()) {
    if (!item.is_object()) continue;
    std::string t = item.contains("type") && item["type"].is_string()
                        ? item["type"].get<std::string>()
                        : (item.contains("role") ? "message" : "");
    if (t == type) out.push_back(item);
  }
  return out;
}

std::vector<std::string> UserTexts(const RecordedRequest& request) {
  std::vector<std::string> out;
  for (const Json& item : ItemsOfType(request, "message")) {
    if (item.value("role", "") != "user") continue;
    for (const Json& part : item["content"]) out.push_back(part.value("text", ""));
  }
  return out;
}

std::string FirstId(const std::string& text, const std::string& prefix) {
  std::smatch m;
  if (!std::regex_search(text, m, std::regex(prefix + "([0-9a-f-]{36})"))) return "";
  return m[1];
}

bool Contains(const std::vector<std::string>& texts, std::string_view text) {
  return std::find(texts.begin(), texts.end(), text) != texts.end();
}

std::string LongParagraph() {
  std::string out;
  for (int i = 1; i <= 40; ++i)
    out += (i > 1 ? " " : "") + std::string("word") + (i < 10 ? "0" : "") + std::to_string(i);
  return out;
}

Result<std::unique_ptr<CodexTestEnv>> CodexTestEnv::Create(std::string_view script_json,
                                                           CodexTestEnvOptions options) {
  if (options.codex_binary.empty()) options.codex_binary = CodexBinaryPath();
  if (options.codex_binary.empty()) {
    return FailedPreconditionError(
        "no codex binary: set CodexTestEnvOptions::codex_binary or $CODEX_BINARY");
  }
  std::unique_ptr<CodexTestEnv> env(new CodexTestEnv());
  env->options_ = std::move(options);
  ASSIGN_OR_RETURN(env->server_, ScriptedServer::Start(script_json, env->options_.server));

  std::string base = EnvValue("TMPDIR");
  if (base.empty()) base = "/tmp";
  std::string tmpl = base + "/codex-e2e-XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr) {
    return InternalError("cannot create a temporary directory under " + base + ": " +
                         std::strerror(errno));
  }
  env->root_ = tmpl;
  env->home_ = env->root_ / "codex_home";
  env->work_ = env->root_ / "work";
  std::error_code ec;
  std::filesystem::create_directories(env->home_, ec);
  if (!ec) std::filesystem::create_directories(env->work_, ec);
  if (!ec) std::filesystem::create_directories(env->user_home(), ec);
  if (ec) return InternalError("cannot create directories in " + tmpl + ": " + ec.message());
  RETURN_IF_ERROR(env->WriteConfig(env->options_.extra_config));
  return env;
}

CodexTestEnv::~CodexTestEnv() {
  if (server_) server_->Stop();
  if (root_.empty()) return;
  if (!EnvValue("CODEX_E2E_KEEP").empty()) {
    std::cerr << "CODEX_E2E_KEEP: keeping " << root_ << "\n";
    return;
  }
  std::error_code ec;
  std::filesystem::remove_all(root_, ec);
}

Status CodexTestEnv::WriteConfig(std::string_view extra_config) {
  std::ofstream out(home_ / "config.toml", std::ios::binary | std::ios::trunc);
  if (!out) return InternalError("cannot write " + (home_ / "config.toml").string());
  out << "model = \"" << options_.model << "\"\n"
      << "model_provider = \"scripted\"\n";
  if (!extra_config.empty()) {
    out << extra_config;
    if (extra_config.back() != '\n') out << '\n';
  }
  out << "\n[model_providers.scripted]\n"
      << "name = \"scripted\"\n"
      << "base_url = \"" << server_->base_url() << "\"\n"
      << "env_key = \"SCRIPTED_API_KEY\"\n"
      << "wire_api = \"responses\"\n";
  if (!options_.workdir_trust.empty()) {
    std::error_code ec;
    const std::filesystem::path work = std::filesystem::canonical(work_, ec);
    out << "\n[projects.\"" << (ec ? work_ : work).string() << "\"]\n"
        << "trust_level = \"" << options_.workdir_trust << "\"\n";
  }
  out.close();
  if (!out) return InternalError("cannot write " + (home_ / "config.toml").string());
  return OkStatus();
}

std::map<std::string, std::string> CodexTestEnv::Env() const {
  // HOME too: a login shell (`bash -lc`, the snapshot's capture) would run the
  // developer's own dotfiles, whose output and state (a stale pyenv lock
  // printed into every command's output) then decide the test.
  return {{"CODEX_HOME", home_.string()},
          {"HOME", user_home().string()},
          {"SCRIPTED_API_KEY", options_.api_key}};
}

ProcessOptions CodexTestEnv::CodexCommand(std::vector<std::string> args) const {
  ProcessOptions p;
  p.argv.push_back(options_.codex_binary);
  for (auto& a : args) p.argv.push_back(std::move(a));
  p.env = Env();
  // Nothing from the developer's own setup may leak into a test run.
  p.unset_env = {"OPENAI_API_KEY", "OPENAI_BASE_URL", "CODEX_API_KEY"};
  p.cwd = work_;
  return p;
}

Result<ProcessResult> CodexTestEnv::RunCodex(std::vector<std::string> args,
                                             std::optional<std::string> stdin_text,
                                             std::chrono::milliseconds timeout) {
  ProcessOptions p = CodexCommand(std::move(args));
  p.stdin_text = std::move(stdin_text);
  p.timeout = timeout;
  return RunProcess(p);
}

}  // namespace codex::testing
