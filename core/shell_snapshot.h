// Shell snapshot (Codex 0.169's `shell_snapshot` feature, default on): the
// login shell's state is captured once per session and each login command
// then starts from it instead of re-running /etc/profile and the dotfiles.
//
// What a login command is: argv `[.../bash, -lc, SCRIPT]` (base/shell.h's
// ShellScriptOf, the shell named bash), as exec_command builds it with
// `login` (the default) and as the model may send it to `shell`. zsh and sh
// keep `-lc` (the snapshot is bash syntax).
//
// The capture: at session start (StartCapture: on a thread of its own,
// beside the first model request, as Codex starts its own, when SHELL is a
// bash), or else started by the first login command (which runs as the
// plain `bash -lc` it is). Either way its bash is the user's (SHELL when a
// bash, else the first bash of PATH's absolute entries, sandbox/host_path.h),
// never that command's argv[0]: a `bash` of a cloned repository or one the
// model wrote would print its own "functions" into the snapshot every later
// login command sources, those run outside the sandbox included.
// The first login command that comes while the capture runs does not wait
// for it either (as in Codex 0.169: the session's first command is not
// delayed); any other waits for it, then starts from the snapshot (Codex
// 0.169 does not wait: each command of its first response runs the login
// files again, 25 login shells for a response of 25 calls, each as slow as
// the dotfiles). The wait is bounded by the capture's timeout, and a
// cancelled call stops waiting. One `bash -l -c DUMP` runs the login files, then
// lists the environment it was started with (/proc/$$/environ: what a
// command inherits; no readable /proc, no snapshot) and the state the login
// files left: exported variables
// (with their attributes), `shopt -p`, `set +o`, `declare -f`, `alias -p`,
// each section behind a line holding a random nonce (so that what the
// dotfiles print is not taken for a section; they are the user's own files,
// trusted as much as at every `bash -lc`). It runs through the session's CommandRunner with
// the session's sandbox policy (never unsandboxed, whatever the command was
// approved for), in $HOME (not the workspace: the dotfiles run where they
// would at login, not in an untrusted checkout), with kShellSnapshotTimeoutMs.
// A capture that fails, times out or exits non-zero leaves every login
// command on plain `-lc` for the rest of the session; the reason is kept
// (status()) and, under RUST_LOG=debug, printed on stderr — nothing else.
//
// The file: codex writes it itself (RenderShellSnapshot) under
// $CODEX_HOME/shell_snapshots/ as `<pid>.<process start>.<nonce>.sh`, mode
// 0600, replaced atomically. It holds the shell options, the `set -o`
// options that were on, the functions, the aliases, and `export` / `unset`
// for each variable the login files added, changed or removed — never PWD,
// OLDPWD, SHLVL, `_`, read-only variables (bash refuses them) or a variable
// the login files left as it was (so what codex sets per command, such as
// CODEX_SANDBOX_NETWORK_DISABLED, is never frozen at its capture value). The
// directory is a read-only path of the sandbox policy (SandboxPolicyFor):
// readable by commands, writable by none, wherever a writable root covers
// $CODEX_HOME (sandbox/workspace_policy.h). Before each use the file's
// identity (inode, size, mtime) is checked against what codex wrote; a file
// changed by anyone else is never sourced again (plain `-lc` from then on).
//
// The rewrite (spawn time only: the model, approvals, the safe-command rule,
// `--json` and the rollout keep `bash -lc SCRIPT`): argv becomes
// `[.../bash, -c, SCRIPT]` with BASH_ENV naming the snapshot, which a
// non-interactive bash sources before SCRIPT; the snapshot's first line
// restores BASH_ENV as the command would have had it, so the shells the
// command starts do not source it again. Each command starts from the
// snapshot: a `cd` or `export` in one call does not reach the next.
//
// Lifetime: one ShellSnapshot per session (ToolRouter); when it is destroyed
// a capture still running is cancelled (its login shell killed at once,
// through the runner's cancel_fd) and waited for, and the file removed;
// RemoveStaleShellSnapshots (called at construction)
// removes the files of codex processes that are gone (core/session_lease.h's
// rule: the pid no longer runs, or runs another process) and any file not
// named as codex names them. StartCapture is called from the session's
// thread; Prepare also from the threads of calls running together (the
// state is read under the object's mutex; a waiting Prepare sleeps on a
// condition variable that the capture's end notifies).
#pragma once

#include <sys/types.h>

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/status.h"
#include "core/cancel.h"
#include "core/command_runner.h"
#include "sandbox/unique_fd.h"

namespace codex::core {

inline constexpr int64_t kShellSnapshotTimeoutMs = 10'000;  // Codex's

// $CODEX_HOME/shell_snapshots.
std::string ShellSnapshotDir(const std::string& codex_home);

// Whether `argv` is a login bash script `[.../bash, -lc, SCRIPT]`.
bool IsLoginBashScript(const std::vector<std::string>& argv);

// The capture command for bash at `bash` with section marker `nonce`.
std::vector<std::string> ShellSnapshotCaptureArgv(const std::string& bash,
                                                  const std::string& nonce);

// The snapshot file's text from the capture's stdout, or kFailedPrecondition
// naming what is missing (a section, the end marker: the login files exited
// early).
Result<std::string> RenderShellSnapshot(std::string_view capture_stdout, std::string_view nonce);

// Rewrites `spec` (a login bash script) to start from the snapshot at
// `path`: `-lc` becomes `-c` and BASH_ENV names the file.
void ApplyShellSnapshot(const std::string& path, CommandSpec& spec);

// Removes from `dir` the snapshots of codex processes that are gone, and
// files not named `<pid>.<start>.<nonce>.sh`.
void RemoveStaleShellSnapshots(const std::string& dir);

class ShellSnapshot {
 public:
  struct Options {
    std::string dir;                // ShellSnapshotDir(codex_home)
    SandboxPolicy sandbox;          // the session's policy (the capture's)
    sandbox::EnvPolicy env_policy;  // the session's [shell_environment_policy]
    std::string capture_cwd;        // "" = $HOME, else /
    int64_t timeout_ms = kShellSnapshotTimeoutMs;
  };
  // Creates the directory (0700), removes stale snapshots and reserves this
  // session's file (empty until the capture), so the directory's state, and
  // with it the sandbox server's key, stays the same all session.
  ShellSnapshot(Options options, CommandRunner& runner);
  ~ShellSnapshot();
  ShellSnapshot(const ShellSnapshot&) = delete;
  ShellSnapshot& operator=(const ShellSnapshot&) = delete;

  // Starts the capture with the login shell `bash` now, on a thread of its
  // own (the session's start: the first login command then finds it done,
  // or waits for the rest of it: Prepare). Once a session; nothing when a capture was
  // already tried or the directory cannot be used.
  void StartCapture(const std::string& bash);

  // When `spec` is a login bash script and the snapshot is ready (after
  // waiting for a capture that is running, until it ends or `cancel` is
  // set, unless this is the first login command during the capture):
  // rewrites `spec` to start from it (ApplyShellSnapshot). Otherwise `spec`
  // stays as it is: not a login bash, the first login command during the
  // capture, the capture failed, timed out or was waited for no longer
  // (cancel), or not tried yet (then started now, on its thread, for the
  // commands after this one).
  void Prepare(CommandSpec& spec, const CancelToken& cancel);

  // Whether the snapshot is ready to be used (a capture ended well).
  bool ready() const;

  // The snapshot file ("" when the directory cannot be used).
  const std::string& path() const { return path_; }
  // Why there is no snapshot (OK while none was tried, while the capture
  // runs, or when it is ready).
  Status status() const;

 private:
  enum class State { kNotTried, kCapturing, kReady, kFailed };
  Status Capture(const std::string& bash, const CancelToken& cancel, int cancel_fd);
  // Records how a capture ended (under mu_).
  void Finish(Status captured);
  bool Unchanged() const;
  void Fail(Status why);

  Options options_;
  CommandRunner& runner_;
  std::string path_;
  mutable std::mutex mu_;             // guards state_ and status_ against the capture thread
  std::condition_variable captured_;  // notified when a capture ends (Finish)
  State state_ = State::kNotTried;
  bool plain_beside_capture_ = false;  // a login command ran without the capture
  Status status_;
  std::thread thread_;  // StartCapture's
  CancelToken stop_;    // set (and stop_write_ written) when the session ends
  sandbox::UniqueFd stop_read_;
  sandbox::UniqueFd stop_write_;
  // What codex wrote: a file that no longer matches is not sourced.
  dev_t dev_ = 0;
  ino_t ino_ = 0;
  off_t size_ = 0;
  int64_t mtime_ns_ = 0;
};

}  // namespace codex::core
