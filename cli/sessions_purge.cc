#include "cli/sessions_purge.h"

#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/json.h"
#include "base/time.h"
#include "cli/age_arg.h"
#include "cli/config_overrides.h"
#include "cli/interrupt.h"
#include "cli/session_json.h"
#include "cli/sessions_common.h"
#include "cli/store_open.h"
#include "cli/terminal_text.h"
#include "cli/work_progress.h"
#include "core/config.h"
#include "core/session_lease.h"

namespace codex::cli {

namespace {

using Json = nlohmann::ordered_json;

struct PurgeArgs {
  std::string older_than;
  bool dry_run = false;
  bool yes = false;
  bool all = false;
  std::string cwd;
  bool json = false;
};

Status RunPurge(const GlobalOptions& global, const PurgeArgs& args) {
  int64_t age_ms = 0;
  if (!args.older_than.empty()) {
    ASSIGN_OR_RETURN(auto age, ParseAge(args.older_than, "--older-than"));
    age_ms = age;
  } else {
    ASSIGN_OR_RETURN(auto config,
                     core::LoadConfig(core::DefaultCodexHome(), GlobalOverrides(global)));
    if (!config.history_retention_days) {
      return InvalidArgumentError(
          "purge needs --older-than AGE (e.g. 30d) or [history] retention_days in config.toml");
    }
    if (*config.history_retention_days < 0) {
      return InvalidArgumentError("[history] retention_days must not be negative");
    }
    age_ms = int64_t{*config.history_retention_days} * 86'400'000;
  }
  storage::PurgeQuery q;
  ASSIGN_OR_RETURN(auto scope, ScopeDir(args.all, args.cwd));
  q.cwd = scope;
  const int64_t now = NowMs();
  q.updated_before_ms = now - age_ms;
  const std::string where = q.cwd ? " in " + *q.cwd : std::string(" in every directory");
  if (args.json && !args.dry_run && !args.yes) {
    return InvalidArgumentError("purge --json does not ask: pass --yes, or --dry-run to list them");
  }
  ASSIGN_OR_RETURN(auto store, OpenConfiguredStore(global));
  q.dry_run = true;
  storage::RemoveStats seen;
  ASSIGN_OR_RETURN(auto candidates, store->Purge(q, &seen));
  // Sessions a running turn holds are skipped (SessionDatabase::Remove), and
  // said so: one busy line each, exit 3.
  auto skipped = [](const std::vector<storage::BusySession>& busy) -> Status {
    Status last = OkStatus();
    for (const storage::BusySession& b : busy) {
      if (!last.ok()) PrintError(last);
      last = core::SessionBusyError(b.session.id, b.holder,
                                    "purge skipped it; run purge again once the turn has ended");
    }
    return last;
  };
  auto busy_ids = [](const std::vector<storage::BusySession>& busy) {
    Json ids = Json::array();
    for (const storage::BusySession& b : busy) ids.push_back(b.session.id);
    return ids;
  };
  // --json: one summary object, no progress and no listing.
  if (args.json && (args.dry_run || candidates.empty())) {
    Json would = Json::array();
    for (const auto& si : candidates) would.push_back(SessionJson(si));
    Json out = {{"dry_run", args.dry_run},
                {"updated_before_ms", q.updated_before_ms},
                {"sessions", candidates.size()},
                {"busy", busy_ids(seen.busy)}};
    if (args.dry_run) out["would_remove"] = would;
    if (!args.dry_run) out["items"] = 0;
    PrintText(stdout, Dump(out) + "\n");
    return args.dry_run || seen.busy.empty() ? OkStatus() : skipped(seen.busy);
  }
  if (candidates.empty() && !seen.busy.empty()) return skipped(seen.busy);
  if (candidates.empty()) {
    PrintF(stdout, "no session%s was last updated before %s; nothing to purge\n", where.c_str(),
           LocalTime(q.updated_before_ms).c_str());
    return OkStatus();
  }
  auto list = [&](FILE* out) {
    for (const auto& si : candidates) {
      PrintF(out, "  %s  %s  %s\n", si.id.c_str(), LocalTime(si.updated_at_ms).c_str(),
             Clip(SessionLabel(si), 60).c_str());
    }
  };
  const std::string count =
      std::to_string(candidates.size()) + " session" + (candidates.size() == 1 ? "" : "s");
  if (args.dry_run) {
    PrintF(stdout, "would remove %s%s last updated before %s:\n", count.c_str(), where.c_str(),
           LocalTime(q.updated_before_ms).c_str());
    list(stdout);
    for (const storage::BusySession& b : seen.busy) {
      PrintF(stdout, "would skip %s: a turn is running on it (codex pid %lld)\n",
             b.session.id.c_str(), static_cast<long long>(b.holder.pid));
    }
    return OkStatus();
  }
  if (!args.yes) {
    if (!isatty(STDIN_FILENO)) {
      return InvalidArgumentError(
          "purge would remove " + count + where +
          "; pass --yes to confirm (stdin is not a terminal), or --dry-run to list them");
    }
    PrintF(stderr, "remove %s%s last updated before %s?\n", count.c_str(), where.c_str(),
           LocalTime(q.updated_before_ms).c_str());
    list(stderr);
    PrintF(stderr, "remove them? [y/N] ");
    std::fflush(stderr);
    std::string answer;
    std::getline(std::cin, answer);
    if (answer != "y" && answer != "Y" && answer != "yes") {
      PrintF(stderr, "nothing removed\n");
      return OkStatus();
    }
  }
  q.dry_run = false;
  // Thousands of sessions take a while: the progress of import and migrate.
  WorkProgress progress("purging", "sessions", static_cast<int64_t>(candidates.size()),
                        WorkProgress::OutputFor(/*silent=*/args.json));
  q.progress = [&progress](int64_t done, int64_t) { progress.Update(done); };
  // Ctrl-C before the commit rolls the purge back (it is one transaction)
  // and says so; a second one exits at once, with the same effect.
  core::CancelToken interrupted;
  q.cancel = &interrupted;
  InstallInterruptHandler(&interrupted);
  storage::RemoveStats stats;
  auto removed = store->Purge(q, &stats);
  RemoveInterruptHandler();
  progress.Finish();
  RETURN_IF_ERROR(removed.status());
  if (args.json) {
    PrintText(stdout, Dump(Json{{"dry_run", false},
                                {"updated_before_ms", q.updated_before_ms},
                                {"sessions", stats.sessions},
                                {"items", stats.items},
                                {"busy", busy_ids(stats.busy)}}) +
                          "\n");
    return skipped(stats.busy);
  }
  PrintF(stdout, "purged %lld sessions (%lld items)%s last updated before %s\n",
         static_cast<long long>(stats.sessions), static_cast<long long>(stats.items), where.c_str(),
         LocalTime(q.updated_before_ms).c_str());
  return skipped(stats.busy);
}

}  // namespace

void AddSessionsPurgeCommand(CLI::App* sessions, const GlobalOptions& global,
                             CommandOutcome& result) {
  auto purge_args = std::make_shared<PurgeArgs>();
  CLI::App* purge = sessions->add_subcommand(
      "purge",
      "Delete sessions of this directory not updated for a while (--older-than, or [history] "
      "retention_days); asks first on a terminal. With retention_days set, codex also applies it "
      "by itself at start (at most once an hour, every directory)");
  purge->add_option("--older-than", purge_args->older_than, "Age such as 30d, 12h, 2w");
  purge->add_flag("--dry-run", purge_args->dry_run, "List what would be removed; remove nothing");
  purge->add_flag("-y,--yes", purge_args->yes, "Do not ask (needed when stdin is not a terminal)");
  auto* purge_all = purge->add_flag("--all", purge_args->all, "Every directory");
  purge->add_option("--cwd", purge_args->cwd, "Sessions started in DIR (default: current)")
      ->excludes(purge_all);
  purge->add_flag(
      "--json", purge_args->json,
      "No progress or listing: one summary object on stdout (needs --yes or --dry-run)");
  purge->callback([&global, purge_args, &result] { result.Set(RunPurge(global, *purge_args)); });
}

}  // namespace codex::cli
