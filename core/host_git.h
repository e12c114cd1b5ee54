// The one home for running `git` on the host for codex's own purposes (the
// interactive UI's `@` file list and `/diff`, and a review's `git status` and
// `git merge-base` and the /review picker's branches and commits, core/review.h), in a directory
// the model may have written. A repository's own config (and files it names) can make a plain `git
// ls-files` or `git diff` run programs: core.fsmonitor, filter drivers
// (filter.*.clean/smudge/process, run by `git diff`), external diff and textconv, hooks, pagers,
// editors, signing and transport programs, credential helpers, also reached through include.path /
// includeIf. A sandboxed command can plant any of them (`git init && git config ...`), so codex's
// git:
//   * runs inside the read-only sandbox with the network off (the strongest
//     layer: whatever still runs can write nothing and reach no one); only
//     when no sandbox is available on this machine does it run unsandboxed;
//   * and, in either case, with every config-driven execution path disabled
//     by command-line scope config (`-c` and GIT_CONFIG_COUNT/KEY/VALUE,
//     which outrank every config file and include): core.fsmonitor=false,
//     core.hooksPath=/dev/null, pagers cat, editors/ssh/gpg/askpass "false",
//     credential.helper reset, protocol.allow=never, submodules ignored,
//     safe.bareRepository=explicit (a directory that is itself a git
//     directory, planted or embedded in a clone, is no repository), and
//     each filter driver the repository's config defines emptied
//     (clean/smudge/process "" and required=false); callers of `diff` pass
//     HostGitDiffArgs (--no-ext-diff --no-textconv --ignore-submodules=all);
//   * with an environment built from nothing: no GIT_* variable (GIT_DIR,
//     GIT_CONFIG_PARAMETERS, GIT_EXTERNAL_DIFF, GIT_SSH_COMMAND...) from
//     outside, PATH reduced to the entries no sandboxed command can write
//     (sandbox/host_path.h: absolute, outside the writable roots of a session
//     in that directory), HOME/XDG_CONFIG_HOME kept
//     (the user's own global config is the user's), GIT_OPTIONAL_LOCKS=0 and
//     GIT_TERMINAL_PROMPT=0.
// Nothing else in codex runs git (storage/project_identity reads the config
// file itself); tests/host_git_e2e_test plants each mechanism. The /undo
// snapshots (core/undo.h) also write objects and refs/codex/ refs, through
// HostGit::RunWriting below.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace codex::core {

class SandboxedRunner;

struct HostGitResult {
  int exit_code = 0;
  std::string stdout_text;
  std::string stderr_text;
  bool sandboxed = false;  // it ran inside the read-only sandbox
  // The output was longer than the runner keeps (1 MiB, head + tail): the
  // texts lack a middle part.
  bool truncated = false;
};

// git in one directory, the way described above. Open lists the
// repository's config once (for its filter drivers) and finds out whether the
// sandbox is available; Run then runs each command with those overrides, so a
// caller running several (/diff: one per untracked file) pays for that once.
// (A driver added between Open and Run is not emptied, but still runs in the
// read-only sandbox; without a sandbox on this machine the model's own
// commands already run only unsandboxed, so there is nothing to plant from.)
class HostGit {
 public:
  // Errors: git not found or not startable (kNotFound, kInternal).
  static Result<HostGit> Open(const std::string& dir, int64_t timeout_ms = 10'000);
  // Runs `git -C dir ARGS...`; a git that runs and fails is not an error
  // (see exit_code).
  Result<HostGitResult> Run(const std::vector<std::string>& args) const;
  bool sandboxed() const { return sandboxed_; }

  // The one door for git commands that write to the repository (the
  // snapshots of core/undo.h: `hash-object -w --no-filters`, `update-index`
  // and `write-tree` on `index_file`, `commit-tree`, `update-ref` of
  // refs/codex/...): the same overrides and environment as Run (the
  // repository's filter drivers listed again for each command), plus
  // GIT_INDEX_FILE=`index_file` (an absolute path of codex's own, never the
  // user's index), a fixed identity, and no reflog, automatic gc or
  // maintenance, split index, signing or line-ending conversion. It runs
  // outside the sandbox: the read-only one cannot write .git and the
  // workspace-write one keeps .git read-only. So the guarantee is the
  // overrides alone: no program the repository's config names runs (hooks
  // such as reference-transaction and post-index-change, fsmonitor, filter
  // drivers; core/undo_test plants each). Callers pass only plumbing
  // commands whose paths come after `--` or are object names they made.
  Result<HostGitResult> RunWriting(const std::vector<std::string>& args,
                                   const std::string& index_file) const;

 private:
  std::string dir_;
  int64_t timeout_ms_ = 0;
  bool sandboxed_ = true;
  std::string path_;  // the PATH git gets (sandbox/host_path.h)
  std::vector<std::pair<std::string, std::string>> overrides_;
  // One runner for every command of this HostGit (and its copies): the
  // read-only sandbox's server is started once, each command after the
  // first costs about a fork.
  std::shared_ptr<SandboxedRunner> runner_;
};

// HostGit::Open(dir, timeout_ms), then Run(args).
Result<HostGitResult> RunHostGit(const std::string& dir, const std::vector<std::string>& args,
                                 int64_t timeout_ms = 10'000);

// The options every `git diff` of codex's passes after "diff".
std::vector<std::string> HostGitDiffArgs();

// The command-line scope config RunHostGit sets, given the repository's
// config listing (`git config --list -z` output: "key\nvalue\0" entries), as
// key/value pairs in order. Exposed for tests.
std::vector<std::pair<std::string, std::string>> HostGitOverrides(std::string_view config_list);

}  // namespace codex::core
