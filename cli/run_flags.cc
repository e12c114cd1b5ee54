#include "cli/run_flags.h"

#include "cli/global_options.h"  // NonEmptyValue

namespace codex::cli {

void AddRunFlags(CLI::App* cmd, RunFlags& flags) {
  cmd->add_option("-m,--model", flags.model, "Model to use")->check(NonEmptyValue());
  cmd->add_option("-C,--cd", flags.cd, "Working directory of the session")->check(NonEmptyValue());
  cmd->add_option("-s,--sandbox", flags.sandbox,
                  "Sandbox mode: read-only | workspace-write | danger-full-access");
  cmd->add_option("-a,--ask-for-approval", flags.approval,
                  "Approval policy: untrusted | on-failure | on-request | never");
  cmd->add_option("--add-dir", flags.add_dirs, "Extra writable root (workspace-write)")
      ->allow_extra_args(false)
      ->check(NonEmptyValue());
  cmd->add_flag("--oss", flags.oss, "Use the local open-source provider (Ollama/LM Studio)");
  cmd->add_flag("--full-auto", flags.full_auto,
                "Low-friction automation: -a on-request -s workspace-write");
  cmd->add_flag("--dangerously-bypass-approvals-and-sandbox", flags.bypass,
                "Run every command without sandbox or approval (only in an isolated VM)");
  // --experimental-json: Codex's older name for --json, still what the
  // TypeScript SDK (@openai/codex-sdk) passes.
  cmd->add_flag("--json,--experimental-json", flags.json, "Print JSONL events on stdout");
  cmd->add_flag("--skip-git-repo-check", flags.skip_git_repo_check,
                "Accepted for compatibility: codex never requires a git repository");
}

}  // namespace codex::cli
