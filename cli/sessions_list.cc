#include "cli/sessions_list.h"

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "base/json.h"
#include "base/shell.h"
#include "cli/session_json.h"
#include "cli/sessions_common.h"
#include "cli/store_open.h"
#include "cli/terminal_text.h"

namespace codex::cli {

namespace {

using Json = nlohmann::ordered_json;

struct ListArgs {
  bool all = false;
  std::string cwd;
  int limit = 20;
  std::string cursor;
  bool archived = false;
  bool json = false;
};

Status RunSessionsList(const GlobalOptions& global, const ListArgs& args) {
  core::ListQuery q;
  ASSIGN_OR_RETURN(auto scope, ScopeDir(args.all, args.cwd));
  q.cwd = scope;
  q.limit = args.limit;
  q.cursor = args.cursor;
  q.archived = args.archived;
  ASSIGN_OR_RETURN(auto store, OpenConfiguredStore(global, /*read_only=*/true));
  ASSIGN_OR_RETURN(auto page, store->ListSessions(q));
  if (args.json) {
    for (const auto& s : page.sessions) PrintText(stdout, Dump(SessionJson(s)) + "\n");
    if (!page.next_cursor.empty()) {
      PrintText(stdout, Dump(Json{{"next_cursor", page.next_cursor}}) + "\n");
    }
    return OkStatus();
  }
  if (page.sessions.empty()) {
    std::string where = q.cwd ? " in " + *q.cwd : std::string();
    PrintF(stderr, "no %ssessions%s%s\n", args.archived ? "archived " : "", where.c_str(),
           q.cwd ? "; use --all to list every directory" : "");
    return OkStatus();
  }
  PrintF(stdout, "%-36s  %-16s  %-16s  %-30s  %s\n", "ID", "UPDATED", "HOST", "CWD", "TITLE");
  for (const auto& s : page.sessions) {
    std::string cwd = s.cwd;
    if (cwd.size() > 30) cwd = "…" + cwd.substr(cwd.size() - 29);
    PrintF(stdout, "%-36s  %-16s  %-16s  %-30s  %s\n", s.id.c_str(),
           LocalTime(s.updated_at_ms).c_str(), Clip(s.host.empty() ? "?" : s.host, 16).c_str(),
           cwd.c_str(), Clip(SessionLabel(s), 60).c_str());
  }
  if (!page.next_cursor.empty()) {
    std::string more = "next page: codex sessions list";
    if (args.all) {
      more += " --all";
    } else if (!args.cwd.empty()) {
      more += " --cwd " + ShellQuote(*q.cwd);  // valid shell for any directory name
    }
    if (args.archived) more += " --archived";
    if (args.limit != 20) more += " --limit " + std::to_string(args.limit);
    more += " --cursor " + ShellQuote(page.next_cursor);
    PrintF(stderr, "%s\n", more.c_str());
  }
  return OkStatus();
}

}  // namespace

void AddSessionsListCommand(CLI::App* sessions, const GlobalOptions& global,
                            CommandOutcome& result) {
  auto list_args = std::make_shared<ListArgs>();
  CLI::App* list = sessions->add_subcommand("list", "List sessions, newest first");
  auto* all = list->add_flag("--all", list_args->all, "Every directory, not just the current one");
  list->add_option("--cwd", list_args->cwd, "Sessions started in DIR (default: current directory)")
      ->excludes(all);
  list->add_option("--limit", list_args->limit, "Sessions per page (default 20)")
      ->check(CLI::Range(1, 10'000));
  list->add_option("--cursor", list_args->cursor, "Continue from a previous page");
  list->add_flag("--archived", list_args->archived, "List archived sessions instead");
  list->add_flag("--json", list_args->json,
                 "JSON Lines: one session per line, then {\"next_cursor\"} when there is more");
  list->callback(
      [&global, list_args, &result] { result.Set(RunSessionsList(global, *list_args)); });
}

}  // namespace codex::cli
