#include "cli/fork_cmd.h"

#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "cli/session_resolution.h"
#include "cli/store_open.h"
#include "cli/terminal_text.h"

namespace codex::cli {

namespace {

Status RunFork(const GlobalOptions& global, const std::string& id, int at_turn) {
  ASSIGN_OR_RETURN(auto store, OpenConfiguredStore(global));
  ASSIGN_OR_RETURN(auto s, store->FindSession(id));
  std::optional<int> turn;
  if (at_turn != kNoTurn) turn = at_turn;
  ASSIGN_OR_RETURN(auto fork, store->Fork(s.id, turn));
  PrintF(stdout, "%s\n", fork.id.c_str());
  return OkStatus();
}

}  // namespace

void RegisterForkCommand(CLI::App& app, const GlobalOptions& global, CommandOutcome& result) {
  auto fork_id = std::make_shared<std::string>();
  auto fork_turn = std::make_shared<int>(kNoTurn);
  CLI::App* fork = app.add_subcommand("fork", "Branch a session; prints the new session id");
  fork->add_option("ID", *fork_id, "Session id, unique prefix or name")->required();
  fork->add_option("--at-turn", *fork_turn,
                   "Branch after turn N (1 to the session's turn count; 0: before the first turn) "
                   "instead of the head");
  fork->callback([&global, fork_id, fork_turn, &result] {
    result.Set(RunFork(global, *fork_id, *fork_turn));
  });
}

}  // namespace codex::cli
