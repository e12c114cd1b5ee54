#include "cli/sessions_tree.h"

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/json.h"
#include "cli/session_json.h"
#include "cli/sessions_common.h"
#include "cli/store_open.h"
#include "cli/terminal_text.h"
#include "storage/rollout.h"

namespace codex::cli {

namespace {

using Json = nlohmann::ordered_json;

using storage::SessionDatabase;

// The turn of `parent`'s history that `fork` branched after (1-based; 0 =
// before the first turn), counted with TurnStartIndexes.
int ForkTurn(SessionDatabase& store, const core::SessionInfo& fork) {
  if (!fork.forked_from_item) return 0;
  core::SessionInfo at = fork;
  at.head_item_id = fork.forked_from_item;
  auto chain = store.LoadHistory(at);
  if (!chain.ok()) return 0;
  return static_cast<int>(storage::TurnStartIndexes(*chain).size());
}

Status RunTree(const GlobalOptions& global, const std::string& id, bool json) {
  ASSIGN_OR_RETURN(auto store, OpenConfiguredStore(global, /*read_only=*/true));
  ASSIGN_OR_RETURN(auto s, store->FindSession(id));
  ASSIGN_OR_RETURN(auto tree, store->Tree(s.id));
  const auto& nodes = tree;
  // last[d]: whether the newest node at depth d is the last of its siblings,
  // which decides "└─" against "├─" and whether "│" continues below it.
  std::vector<bool> last;
  for (size_t n = 0; n < nodes.size(); ++n) {
    const auto& node = nodes[n];
    const int fork_turn = node.depth > 0 ? ForkTurn(*store, node.session) : 0;
    if (json) {
      Json j = SessionJson(node.session);
      j["depth"] = node.depth;
      j["fork_turn"] = node.depth > 0 ? Json(fork_turn) : Json(nullptr);
      j["current"] = node.session.id == s.id;
      PrintText(stdout, Dump(j) + "\n");
      continue;
    }
    bool is_last = true;
    for (size_t m = n + 1; m < nodes.size() && nodes[m].depth >= node.depth; ++m) {
      if (nodes[m].depth == node.depth) {
        is_last = false;
        break;
      }
    }
    last.resize(static_cast<size_t>(node.depth) + 1);
    last[static_cast<size_t>(node.depth)] = is_last;
    std::string indent;
    for (int d = 1; d < node.depth; ++d) indent += last[static_cast<size_t>(d)] ? "   " : "│  ";
    if (node.depth > 0) indent += is_last ? "└─ " : "├─ ";
    std::string where;
    if (node.depth > 0 && node.session.source == "subagent") {
      where = "  (sub-agent)";
    } else if (node.depth > 0) {
      where = fork_turn == 0 ? "  (forked before turn 1)"
                             : "  (forked after turn " + std::to_string(fork_turn) + ")";
    }
    PrintF(stdout, "%s%s %s  %s  %s%s\n", indent.c_str(), node.session.id == s.id ? "*" : " ",
           node.session.id.c_str(), LocalTime(node.session.updated_at_ms).c_str(),
           Clip(SessionLabel(node.session), 60).c_str(), where.c_str());
  }
  return OkStatus();
}

}  // namespace

void AddSessionsTreeCommand(CLI::App* sessions, const GlobalOptions& global,
                            CommandOutcome& result) {
  auto tree_id = std::make_shared<std::string>();
  auto tree_json = std::make_shared<bool>(false);
  CLI::App* tree = sessions->add_subcommand("tree", "Show the fork tree a session belongs to");
  tree->add_option("ID", *tree_id, "Session id, unique prefix or name")->required();
  tree->add_flag("--json", *tree_json, "JSON Lines: one session per line, parents first");
  tree->callback([&global, tree_id, tree_json, &result] {
    result.Set(RunTree(global, *tree_id, *tree_json));
  });
}

}  // namespace codex::cli
