#include "cli/sessions_rm.h"

#include <cstdio>
#include <memory>
#include <string>

#include "cli/interrupt.h"
#include "cli/store_open.h"
#include "cli/terminal_text.h"
#include "cli/work_progress.h"
#include "core/cancel.h"

namespace codex::cli {

namespace {

Status RunSessionsRm(const GlobalOptions& global, const std::string& id) {
  ASSIGN_OR_RETURN(auto store, OpenConfiguredStore(global));
  ASSIGN_OR_RETURN(auto s, store->FindSession(id));
  // A session of many thousand items takes seconds: the progress of import
  // and purge, counted in items. Ctrl-C before the commit rolls the removal
  // back (one transaction) and says so; a second one exits at once.
  WorkProgress progress("removing", "items", 0, WorkProgress::OutputFor(/*silent=*/false));
  core::CancelToken interrupted;
  storage::RemoveHooks hooks;
  hooks.progress = [&progress](int64_t done, int64_t total) {
    progress.SetTotal(total);
    progress.Update(done);
  };
  hooks.cancel = &interrupted;
  InstallInterruptHandler(&interrupted);
  auto removed = store->Remove(s.id, hooks);
  RemoveInterruptHandler();
  progress.Finish();
  ASSIGN_OR_RETURN(auto stats, std::move(removed));
  PrintF(stdout, "removed session %s (%lld items deleted; items shared with forks kept)\n",
         s.id.c_str(), static_cast<long long>(stats.items));
  return OkStatus();
}

}  // namespace

void AddSessionsRmCommand(CLI::App* sessions, const GlobalOptions& global, CommandOutcome& result) {
  auto rm_id = std::make_shared<std::string>();
  CLI::App* rm = sessions->add_subcommand("rm", "Delete a session (items shared with forks stay)");
  rm->add_option("ID", *rm_id, "Session id, unique prefix or name")->required();
  rm->callback([&global, rm_id, &result] { result.Set(RunSessionsRm(global, *rm_id)); });
}

}  // namespace codex::cli
