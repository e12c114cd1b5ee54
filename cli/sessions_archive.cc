#include "cli/sessions_archive.h"

#include <cstdio>
#include <memory>
#include <string>

#include "cli/store_open.h"
#include "cli/terminal_text.h"

namespace codex::cli {

namespace {

Status RunArchive(const GlobalOptions& global, const std::string& id, bool archive) {
  ASSIGN_OR_RETURN(auto store, OpenConfiguredStore(global));
  ASSIGN_OR_RETURN(auto s, store->FindSession(id));
  RETURN_IF_ERROR(archive ? store->Archive(s.id) : store->Unarchive(s.id));
  PrintF(stdout, "%s session %s\n", archive ? "archived" : "unarchived", s.id.c_str());
  return OkStatus();
}

}  // namespace

void AddSessionsArchiveCommands(CLI::App* sessions, const GlobalOptions& global,
                                CommandOutcome& result) {
  auto archive_id = std::make_shared<std::string>();
  CLI::App* archive = sessions->add_subcommand("archive", "Hide a session from lists and --last");
  archive->add_option("ID", *archive_id, "Session id, unique prefix or name")->required();
  archive->callback(
      [&global, archive_id, &result] { result.Set(RunArchive(global, *archive_id, true)); });

  auto unarchive_id = std::make_shared<std::string>();
  CLI::App* unarchive = sessions->add_subcommand("unarchive", "Bring an archived session back");
  unarchive->add_option("ID", *unarchive_id, "Session id, unique prefix or name")->required();
  unarchive->callback(
      [&global, unarchive_id, &result] { result.Set(RunArchive(global, *unarchive_id, false)); });
}

}  // namespace codex::cli
