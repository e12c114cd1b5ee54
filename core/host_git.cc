#include "core/host_git.h"

#include <cctype>
#include <cstdlib>
#include <map>
#include <set>
#include <string_view>

#include "core/cancel.h"
#include "core/sandboxed_runner.h"
#include "sandbox/host_path.h"

namespace codex::core {

namespace {

// Config that names a program git could run, each set to something inert.
// Command-line scope: it outranks the system, global, repository and
// worktree files and everything they include.
const std::vector<std::pair<std::string, std::string>>& FixedOverrides() {
  static const auto* kFixed = new std::vector<std::pair<std::string, std::string>>{
      {"core.fsmonitor", "false"},
      {"core.hooksPath", "/dev/null"},
      {"core.pager", "cat"},
      {"pager.diff", "false"},
      {"pager.ls-files", "false"},
      {"core.editor", "false"},
      {"sequence.editor", "false"},
      {"core.sshCommand", "false"},
      {"core.askPass", "false"},
      {"core.gitProxy", "false"},
      {"core.alternateRefsCommand", "false"},
      {"credential.helper", ""},
      {"gpg.program", "false"},
      {"gpg.openpgp.program", "false"},
      {"gpg.ssh.program", "false"},
      {"gpg.x509.program", "false"},
      {"log.showSignature", "false"},
      {"diff.external", ""},
      {"diff.ignoreSubmodules", "all"},
      {"submodule.recurse", "false"},
      {"status.submoduleSummary", "false"},
      {"protocol.allow", "never"},
      {"core.untrackedCache", "false"},
      {"color.ui", "false"},
      // A directory that is itself a git directory (HEAD, config, objects/,
      // refs/: embedded in a clone, or planted at the top of a workspace,
      // where only .git and .codex are protected) is never taken as the
      // repository: its config and its objects/ and refs/ (symlinks out of
      // the workspace) are the model's. Honoured from command-line config.
      {"safe.bareRepository", "explicit"},
  };
  return *kFixed;
}

Result<CommandResult> RunOnce(SandboxedRunner& runner, const std::string& dir,
                              const std::vector<std::string>& args,
                              const std::vector<std::pair<std::string, std::string>>& overrides,
                              int64_t timeout_ms, SandboxMode mode, const std::string& path,
                              const std::map<std::string, std::string>& extra_env = {}) {
  CommandSpec spec;
  spec.argv = {"git", "-C", dir, "--no-pager"};
  // Each override twice: as `-c` (every git version) when the key can be
  // written so (no '=' in a driver's name), and below in GIT_CONFIG_COUNT /
  // KEY / VALUE (git >= 2.31), which takes any key as it is.
  for (const auto& [key, value] : overrides) {
    if (key.find('=') == std::string::npos)
      spec.argv.insert(spec.argv.end(), {"-c", key + "=" + value});
  }
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.cwd = dir;
  spec.timeout_ms = timeout_ms;
  spec.sandbox.mode = mode;
  spec.sandbox.workspace_root = dir;
  spec.sandbox.network = false;
  spec.env_policy.inherit = sandbox::EnvInherit::kNone;
  spec.env_policy.secrets = sandbox::SecretFilter::kDropSecretLike;
  auto& env = spec.env_overrides;
  // sandbox/host_path.h's entries: git itself and every program git starts
  // are found there, never in the workspace or another writable root.
  env["PATH"] = path;
  for (const char* keep : {"HOME", "XDG_CONFIG_HOME", "LANG", "LC_ALL", "LC_CTYPE"}) {
    if (const char* v = std::getenv(keep); v != nullptr) env[keep] = v;
  }
  env["GIT_OPTIONAL_LOCKS"] = "0";
  env["GIT_TERMINAL_PROMPT"] = "0";
  env["GIT_PAGER"] = "cat";
  env["PAGER"] = "cat";
  env["GIT_CONFIG_COUNT"] = std::to_string(overrides.size());
  for (size_t i = 0; i < overrides.size(); ++i) {
    env["GIT_CONFIG_KEY_" + std::to_string(i)] = overrides[i].first;
    env["GIT_CONFIG_VALUE_" + std::to_string(i)] = overrides[i].second;
  }
  for (const auto& [key, value] : extra_env) env[key] = value;
  CancelToken never;
  return runner.Run(spec, never);
}

}  // namespace

std::vector<std::string> HostGitDiffArgs() {
  return {"--no-ext-diff", "--no-textconv", "--ignore-submodules=all", "--color=never"};
}

std::vector<std::pair<std::string, std::string>> HostGitOverrides(std::string_view config_list) {
  std::vector<std::pair<std::string, std::string>> out = FixedOverrides();
  // Each filter driver the repository defines: `git diff` runs a driver's
  // clean (or process) command on working-tree files whose attributes name it.
  std::set<std::string> drivers;
  size_t pos = 0;
  while (pos < config_list.size()) {
    size_t end = config_list.find('\0', pos);
    if (end == std::string_view::npos) end = config_list.size();
    std::string_view entry = config_list.substr(pos, end - pos);
    pos = end + 1;
    const std::string_view key = entry.substr(0, entry.find('\n'));
    // filter.<name>.<var>, where <name> may itself hold dots; the section
    // name is case-insensitive.
    if (key.size() < 8) continue;
    std::string head(key.substr(0, 7));
    for (char& c : head) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (head != "filter.") continue;
    const size_t last = key.rfind('.');
    if (last <= 7) continue;
    drivers.emplace(key.substr(7, last - 7));
  }
  for (const auto& name : drivers) {
    for (const char* var : {"clean", "smudge", "process"}) {
      out.emplace_back("filter." + name + "." + var, "");
    }
    out.emplace_back("filter." + name + ".required", "false");
  }
  return out;
}

Result<HostGit> HostGit::Open(const std::string& dir, int64_t timeout_ms) {
  // The read-only sandbox; without one on this machine, the host.
  SandboxMode mode = SandboxMode::kReadOnly;
  const std::vector<std::string> list_args = {"config", "--list", "-z"};
  auto runner = std::make_shared<SandboxedRunner>();
  // The writable roots of a session in `dir` with the default policy (the
  // callers hold no config: --add-dir and writable_roots are not known here).
  const std::string path =
      sandbox::HostSearchPath(std::getenv("PATH"), ModelWritableRootsFor(SandboxPolicy{}, dir));
  auto list = RunOnce(*runner, dir, list_args, FixedOverrides(), timeout_ms, mode, path);
  if (!list.ok() && list.status().code() == StatusCode::kFailedPrecondition) {
    mode = SandboxMode::kDangerFullAccess;
    list = RunOnce(*runner, dir, list_args, FixedOverrides(), timeout_ms, mode, path);
  }
  if (!list.ok()) return list.status();
  HostGit git;
  git.dir_ = dir;
  git.timeout_ms_ = timeout_ms;
  git.sandboxed_ = mode == SandboxMode::kReadOnly;
  git.runner_ = std::move(runner);
  git.path_ = path;
  // Outside a repository the listing holds the user's own config only.
  git.overrides_ = HostGitOverrides(list->stdout_text);
  return git;
}

namespace {

// What a finished git command hands back to the caller.
HostGitResult ToHostGitResult(CommandResult run, bool sandboxed) {
  HostGitResult out;
  out.exit_code = run.exit_code;
  out.stdout_text = std::move(run.stdout_text);
  out.stderr_text = std::move(run.stderr_text);
  out.truncated = run.dropped_bytes > 0;
  out.sandboxed = sandboxed;
  return out;
}

}  // namespace

Result<HostGitResult> HostGit::Run(const std::vector<std::string>& args) const {
  const SandboxMode mode = sandboxed_ ? SandboxMode::kReadOnly : SandboxMode::kDangerFullAccess;
  auto run = RunOnce(*runner_, dir_, args, overrides_, timeout_ms_, mode, path_);
  if (!run.ok()) return run.status();
  return ToHostGitResult(std::move(*run), sandboxed_);
}

Result<HostGitResult> HostGit::RunWriting(const std::vector<std::string>& args,
                                          const std::string& index_file) const {
  // What the writing commands read besides the programs already emptied: no
  // reflog or automatic gc/maintenance (they would touch more of .git), no
  // split index (it writes shared files beside the user's index), no signing
  // and a fixed identity for commit-tree, no line-ending conversion.
  // The repository's config is listed again (outside the sandbox, with the
  // fixed overrides: listing runs nothing), so a filter driver planted since
  // Open is emptied too: this command has no sandbox to fall back on.
  auto list = RunOnce(*runner_, dir_, {"config", "--list", "-z"}, FixedOverrides(), timeout_ms_,
                      SandboxMode::kDangerFullAccess, path_);
  if (!list.ok()) return list.status();
  std::vector<std::pair<std::string, std::string>> overrides = HostGitOverrides(list->stdout_text);
  for (const auto& [key, value] : std::initializer_list<std::pair<const char*, const char*>>{
           {"core.logAllRefUpdates", "false"},
           {"gc.auto", "0"},
           {"maintenance.auto", "false"},
           {"core.splitIndex", "false"},
           {"commit.gpgSign", "false"},
           {"core.autocrlf", "false"},
           {"core.safecrlf", "false"},
           {"user.useConfigOnly", "false"}}) {
    overrides.emplace_back(key, value);
  }
  std::map<std::string, std::string> env = {{"GIT_INDEX_FILE", index_file},
                                            {"GIT_AUTHOR_NAME", "codex"},
                                            {"GIT_AUTHOR_EMAIL", "codex@localhost"},
                                            {"GIT_COMMITTER_NAME", "codex"},
                                            {"GIT_COMMITTER_EMAIL", "codex@localhost"}};
  auto run = RunOnce(*runner_, dir_, args, overrides, timeout_ms_, SandboxMode::kDangerFullAccess,
                     path_, env);
  if (!run.ok()) return run.status();
  return ToHostGitResult(std::move(*run), /*sandboxed=*/false);
}

Result<HostGitResult> RunHostGit(const std::string& dir, const std::vector<std::string>& args,
                                 int64_t timeout_ms) {
  ASSIGN_OR_RETURN(HostGit git, HostGit::Open(dir, timeout_ms));
  return git.Run(args);
}

}  // namespace codex::core
