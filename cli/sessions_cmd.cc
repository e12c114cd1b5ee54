#include "cli/sessions_cmd.h"

#include "cli/sessions_archive.h"
#include "cli/sessions_export.h"
#include "cli/sessions_import.h"
#include "cli/sessions_list.h"
#include "cli/sessions_migrate.h"
#include "cli/sessions_purge.h"
#include "cli/sessions_rename.h"
#include "cli/sessions_rm.h"
#include "cli/sessions_search.h"
#include "cli/sessions_serve.h"
#include "cli/sessions_show.h"
#include "cli/sessions_tree.h"
#include "cli/sessions_usage.h"

namespace codex::cli {

void RegisterSessionsCommands(CLI::App& app, const GlobalOptions& global, CommandOutcome& result) {
  CLI::App* sessions = app.add_subcommand("sessions", "List, inspect and manage stored sessions");
  sessions->require_subcommand(1);
  // In the order `codex sessions --help` lists them.
  AddSessionsListCommand(sessions, global, result);
  AddSessionsShowCommand(sessions, global, result);
  AddSessionsTreeCommand(sessions, global, result);
  AddSessionsSearchCommand(sessions, global, result);
  AddSessionsRmCommand(sessions, global, result);
  AddSessionsArchiveCommands(sessions, global, result);
  AddSessionsRenameCommand(sessions, global, result);
  AddSessionsPurgeCommand(sessions, global, result);
  AddSessionsExportCommand(sessions, global, result);
  AddSessionsImportCommand(sessions, global, result);
  AddSessionsMigrateCommand(sessions, global, result);
  AddSessionsUsageCommand(sessions, global, result);
  AddSessionsServeCommand(sessions, global, result);
}

}  // namespace codex::cli
