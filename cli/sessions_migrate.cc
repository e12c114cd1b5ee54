#include "cli/sessions_migrate.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/config_overrides.h"
#include "cli/interrupt.h"
#include "cli/store_open.h"
#include "cli/terminal_text.h"
#include "cli/work_progress.h"
#include "core/config.h"
#include "core/store_location.h"
#include "storage/copy_sessions.h"

namespace codex::cli {

namespace {

struct MigrateArgs {
  std::string to;
  std::string from;
  bool json = false;
};

// How long a session with a running turn is waited for (retried after the
// others) before the command stops, saying to run it again.
constexpr std::chrono::milliseconds kBusyWait{10'000};

bool SameLocation(const core::StoreLocation& a, const core::StoreLocation& b) {
  return a.kind == b.kind && a.path == b.path && a.url == b.url;
}

std::string CountsLine(const storage::StoreCounts& c) {
  return std::to_string(c.sessions) + " sessions, " + std::to_string(c.items) + " items, " +
         std::to_string(c.turns) + " turns, " + std::to_string(c.events) + " events";
}

Status RunMigrate(const GlobalOptions& global, const MigrateArgs& args) {
  const core::ConfigOverrides overrides = GlobalOverrides(global);
  const std::string home = core::DefaultCodexHome();
  ASSIGN_OR_RETURN(auto config, core::LoadConfig(home, overrides));
  ASSIGN_OR_RETURN(auto to, core::ParseStoreLocation(args.to, home, "--to"));
  core::StoreLocation from_location = config.session_store;
  if (!args.from.empty()) {
    ASSIGN_OR_RETURN(auto from, core::ParseStoreLocation(args.from, home, "--from"));
    from_location = from;
  }
  if (SameLocation(from_location, to)) {
    return InvalidArgumentError("--to names the store sessions are read from (" +
                                core::DescribeStoreLocation(to) +
                                "); give another database or file");
  }
  const std::string from_name = core::DescribeStoreLocation(from_location);
  const std::string to_name = core::DescribeStoreLocation(to);
  ASSIGN_OR_RETURN(auto source, OpenCliStore(from_location, /*read_only=*/true));
  ASSIGN_OR_RETURN(auto dest, OpenCliStore(to));
  if (dest->read_only()) {
    return FailedPreconditionError("cannot write to " + to_name + "; check its permissions");
  }
  if (!args.json) {
    PrintF(stderr, "copying sessions from %s to %s\n", from_name.c_str(), to_name.c_str());
  }
  std::unique_ptr<WorkProgress> progress;
  // Ctrl-C stops before the next session (each is one transaction); a
  // second one exits at once.
  core::CancelToken interrupted;
  InstallInterruptHandler(&interrupted);
  auto stats = storage::CopyAllSessions(
      *source, *dest,
      [&](int64_t done, int64_t total) {
        if (!progress) {
          progress = std::make_unique<WorkProgress>("migrating", "sessions", total,
                                                    WorkProgress::OutputFor(args.json));
        }
        progress->Update(done);
      },
      kBusyWait, &interrupted);
  RemoveInterruptHandler();
  if (progress) progress->Finish();
  if (!stats.ok()) {
    Status stopped(stats.status().code(),
                   "migrating to " + to_name + " stopped: " + stats.status().message() +
                       "; what was copied stays, run the same command again to finish");
    stopped.WithReason(stats.status().reason());  // a busy session exits 3
    return stopped;
  }
  storage::StoreCounts from_counts;
  storage::StoreCounts to_counts;
  RETURN_IF_ERROR(storage::VerifyCopy(*source, *dest, &from_counts, &to_counts));
  if (args.json) {
    auto counts = [](const storage::StoreCounts& c) {
      return nlohmann::ordered_json{
          {"sessions", c.sessions}, {"items", c.items}, {"turns", c.turns}, {"events", c.events}};
    };
    PrintF(stdout, "%s\n",
           nlohmann::ordered_json{{"copied", stats->copied},
                                  {"already_there", stats->present},
                                  {"from", from_name},
                                  {"to", to_name},
                                  {"verified", true},
                                  {"source", counts(from_counts)},
                                  {"destination", counts(to_counts)}}
               .dump()
               .c_str());
    return OkStatus();
  }
  PrintF(stdout, "migrated %lld sessions (%lld already there) from %s to %s\n",
         static_cast<long long>(stats->copied), static_cast<long long>(stats->present),
         from_name.c_str(), to_name.c_str());
  PrintF(stdout, "verified: source %s; destination %s\n", CountsLine(from_counts).c_str(),
         CountsLine(to_counts).c_str());
  return OkStatus();
}

}  // namespace

void AddSessionsMigrateCommand(CLI::App* sessions, const GlobalOptions& global,
                               CommandOutcome& result) {
  auto args = std::make_shared<MigrateArgs>();
  CLI::App* migrate = sessions->add_subcommand(
      "migrate",
      "Copy every session (items, forks, checkpoints, turns, usage, events) to another store "
      "and verify the copy; safe to run again after an interruption");
  migrate
      ->add_option("--to", args->to,
                   "postgresql://USER@HOST:PORT/DB?sslmode=..., sqlite:PATH or a file path")
      ->required();
  migrate->add_option("--from", args->from,
                      "The store to copy from (default: the configured session_store)");
  migrate->add_flag("--json", args->json, "No progress: one summary object on stdout at the end");
  migrate->callback([&global, args, &result] { result.Set(RunMigrate(global, *args)); });
}

}  // namespace codex::cli
