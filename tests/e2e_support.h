// Support for end-to-end tests that run real processes (the `codex` binary,
// the scripted-responses-server executable) against a ScriptedServer.
//
//   auto env = CodexTestEnv::Create(R"(["Hello from the script"])");
//   REQUIRE(env.ok());
//   auto run = (*env)->RunCodex({"exec", "say hi"});
//   REQUIRE(run.ok());
//   CHECK(run->exit_code == 0);
//   CHECK(run->out == "Hello from the script\n");
//   auto requests = (*env)->server().requests_to("/responses");
//
// ChildProcess owns a child in its own process group with piped stdio;
// RunProcess runs one to completion. CodexTestEnv owns a temporary directory
// (CODEX_HOME with a config.toml pointing at an in-process ScriptedServer,
// plus a work directory) and removes it on destruction unless CODEX_E2E_KEEP
// is set in the environment. None of these classes is thread-safe.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "tests/scripted_server/scripted_server.h"

namespace codex::testing {

struct ProcessOptions {
  std::vector<std::string> argv;  // argv[0] is the program (a path, or a name looked up in PATH)
  std::map<std::string, std::string> env;     // added to (or overriding) the inherited environment
  std::vector<std::string> unset_env;         // removed from the inherited environment
  std::optional<std::string> stdin_text;      // written to stdin, then closed; nullopt = /dev/null
  std::filesystem::path cwd;                  // "" = the current directory
  std::chrono::milliseconds timeout{60'000};  // for RunProcess
};

// What execvpe needs to start a child of `options`, prepared before fork()
// (no allocation after it): argv, and the environment (this process's, then
// `set` applied and `unset` removed, then options.unset_env removed and
// options.env applied). The one home of both spawners of tests/
// (ChildProcess here, PtyProcess in pty_support.h). `options` must outlive it.
class ExecArgs {
 public:
  explicit ExecArgs(const ProcessOptions& options,
                    const std::map<std::string, std::string>& set = {},
                    const std::vector<std::string>& unset = {});
  ExecArgs(const ExecArgs&) = delete;
  ExecArgs& operator=(const ExecArgs&) = delete;

  char* const* argv() const { return argv_.data(); }
  char* const* envp() const { return envp_.data(); }
  const std::string& cwd() const { return cwd_; }  // "" = the current directory

 private:
  std::vector<std::string> env_strings_;
  std::vector<char*> argv_;
  std::vector<char*> envp_;
  std::string cwd_;
};

struct ProcessResult {
  int exit_code = -1;      // the exit status, or -1 when killed by a signal
  int term_signal = 0;     // the signal that ended it, 0 if it exited
  bool timed_out = false;  // the timeout expired and the process group was killed
  std::string out;         // everything written to stdout
  std::string err;         // everything written to stderr
};

// A running child process with piped stdin/stdout/stderr, leader of its own
// process group. The destructor SIGKILLs the group and reaps the child if it
// is still running.
class ChildProcess {
 public:
  // kInvalidArgument for an empty argv; kNotFound when the program cannot be executed.
  static Result<std::unique_ptr<ChildProcess>> Spawn(const ProcessOptions& options);

  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess();

  pid_t pid() const { return pid_; }

  // The next complete stdout line (without "\n"), reading as needed.
  // kDeadlineExceeded after `timeout`; kUnavailable when stdout closes first.
  Result<std::string> ReadStdoutLine(std::chrono::milliseconds timeout);

  // Sends `sig` to the child's process group.
  Status Signal(int sig);

  // Pumps the pipes until the child exits; after `timeout` SIGKILLs the group
  // and reports timed_out. The result holds all output since Spawn (lines
  // already returned by ReadStdoutLine included).
  Result<ProcessResult> Wait(std::chrono::milliseconds timeout);

 private:
  ChildProcess() = default;
  // Moves available data between the pipes and the buffers, waiting up to
  // `wait_ms` for something to happen.
  void Pump(int wait_ms);
  bool Reap(bool block);

  pid_t pid_ = -1;
  int stdin_fd_ = -1;
  int stdout_fd_ = -1;
  int stderr_fd_ = -1;
  std::string pending_stdin_;
  size_t stdin_written_ = 0;
  std::string out_;
  std::string err_;
  size_t line_cursor_ = 0;  // how much of out_ ReadStdoutLine has consumed
  bool exited_ = false;
  int wait_status_ = 0;
};

// Spawns, waits (with options.timeout) and returns the captured result.
Result<ProcessResult> RunProcess(const ProcessOptions& options);

// The codex binary under test: $CODEX_BINARY if set, else the path compiled
// into this library from the `codex` CMake target, else "".
std::string CodexBinaryPath();

// The scripted-responses-server executable: $SCRIPTED_SERVER_BINARY if set,
// else the path compiled in from its CMake target.
std::string ScriptedServerBinaryPath();

// Reads a --record file (one JSON object per line).
Result<std::vector<RecordedRequest>> ReadRecordFile(const std::filesystem::path& path);

// The input items of `request` whose "type" is `type` (messages without a
// type count as "message").
std::vector<Json> ItemsOfType(const RecordedRequest& request, std::string_view type);

// The text of every user message in `request`'s input, in order.
std::vector<std::string> UserTexts(const RecordedRequest& request);

// The first session id printed after `prefix` (a regex) in `text`, "" when none.
std::string FirstId(const std::string& text, const std::string& prefix);

// True when `texts` holds `text` (as one whole element).
bool Contains(const std::vector<std::string>& texts, std::string_view text);

// 40 numbered words ("word01 word02 ... word40") on one line: a paragraph
// several screen lines long, for the interactive suites' wrapping cases.
std::string LongParagraph();

struct CodexTestEnvOptions {
  std::string codex_binary;  // "" = CodexBinaryPath()
  std::string model = "gpt-test";
  std::string extra_config;                  // TOML appended to config.toml (top-level keys first!)
  std::string api_key = "sk-scripted-test";  // exported as SCRIPTED_API_KEY
  ServerOptions server;                      // e.g. a record_path
  // [projects."<workdir>"] trust_level, as Codex's "Trust this folder?"
  // records it; "" = undecided: the interactive session on a terminal asks.
  std::string workdir_trust = "untrusted";
};

// A temporary CODEX_HOME wired to an in-process ScriptedServer. config.toml:
//   model = "<model>"
//   model_provider = "scripted"
//   <extra_config>
//   [model_providers.scripted]
//   name = "scripted"
//   base_url = "http://127.0.0.1:PORT/v1"
//   env_key = "SCRIPTED_API_KEY"
//   wire_api = "responses"
//   [projects."<workdir>"]            (unless options.workdir_trust is "")
//   trust_level = "<workdir_trust>"   (decided: the interactive session does not ask)
class CodexTestEnv {
 public:
  static Result<std::unique_ptr<CodexTestEnv>> Create(std::string_view script_json,
                                                      CodexTestEnvOptions options = {});

  CodexTestEnv(const CodexTestEnv&) = delete;
  CodexTestEnv& operator=(const CodexTestEnv&) = delete;
  ~CodexTestEnv();

  ScriptedServer& server() { return *server_; }
  const std::filesystem::path& root() const { return root_; }         // the temp dir
  const std::filesystem::path& codex_home() const { return home_; }   // root/codex_home
  const std::filesystem::path& workdir() const { return work_; }      // root/work (empty)
  std::filesystem::path user_home() const { return root_ / "home"; }  // HOME: empty, no dotfiles
  const std::string& codex_binary() const { return options_.codex_binary; }

  // The environment additions for a codex run: CODEX_HOME, HOME (user_home()),
  // SCRIPTED_API_KEY.
  std::map<std::string, std::string> Env() const;

  // ProcessOptions running `codex <args...>` in workdir() with Env(); adjust
  // and pass to RunProcess or ChildProcess::Spawn (e.g. for crash tests).
  ProcessOptions CodexCommand(std::vector<std::string> args) const;

  // Runs codex to completion.
  Result<ProcessResult> RunCodex(std::vector<std::string> args,
                                 std::optional<std::string> stdin_text = std::nullopt,
                                 std::chrono::milliseconds timeout = std::chrono::seconds(60));

  // Rewrites config.toml with `extra_config` in place of the one given at Create.
  Status WriteConfig(std::string_view extra_config);

 private:
  CodexTestEnv() = default;

  CodexTestEnvOptions options_;
  std::unique_ptr<ScriptedServer> server_;
  std::filesystem::path root_;
  std::filesystem::path home_;
  std::filesystem::path work_;
};

}  // namespace codex::testing
