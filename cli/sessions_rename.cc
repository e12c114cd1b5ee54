#include "cli/sessions_rename.h"

#include <cstdio>
#include <memory>
#include <string>
#include <utility>

#include "cli/store_open.h"
#include "cli/terminal_text.h"

namespace codex::cli {

namespace {

Status RunRename(const GlobalOptions& global, const std::string& id, const std::string& name) {
  ASSIGN_OR_RETURN(auto store, OpenConfiguredStore(global));
  ASSIGN_OR_RETURN(auto s, store->FindSession(id));
  RETURN_IF_ERROR(store->Rename(s.id, name));
  PrintF(stdout, "renamed session %s to '%s'\n", s.id.c_str(), name.c_str());
  return OkStatus();
}

}  // namespace

void AddSessionsRenameCommand(CLI::App* sessions, const GlobalOptions& global,
                              CommandOutcome& result) {
  auto rename_args = std::make_shared<std::pair<std::string, std::string>>();
  CLI::App* rename =
      sessions->add_subcommand("rename", "Name a session (usable instead of its id)");
  rename->add_option("ID", rename_args->first, "Session id, unique prefix or name")->required();
  rename->add_option("NAME", rename_args->second, "The new name (\"\" clears it)")->required();
  rename->callback([&global, rename_args, &result] {
    result.Set(RunRename(global, rename_args->first, rename_args->second));
  });
}

}  // namespace codex::cli
