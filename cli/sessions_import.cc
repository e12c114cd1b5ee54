#include "cli/sessions_import.h"

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/json.h"
#include "cli/exit_codes.h"
#include "cli/interrupt.h"
#include "cli/store_open.h"
#include "cli/terminal_text.h"
#include "cli/work_progress.h"
#include "storage/rollout.h"

namespace codex::cli {

namespace {

using Json = nlohmann::ordered_json;

// Goes on after a path or file that fails (its error line printed at once);
// exits 1 when any failed (README, Exit codes), 0 otherwise. Progress on
// stderr (cli/work_progress.h); with --json only a summary object on stdout.
Result<int> RunImport(const GlobalOptions& global, const std::vector<std::string>& paths,
                      bool json) {
  storage::RolloutFiles collected = storage::CollectRolloutFiles(paths);
  int failed = 0;
  for (const Status& error : collected.errors) {
    PrintError(error);
    ++failed;
  }
  if (collected.files.empty()) {
    if (failed == 0) {
      PrintError(FailedPreconditionError(
          "no .jsonl rollout files found under the given paths; Codex keeps them in "
          "~/.codex/sessions"));
    }
    return kExitError;
  }
  ASSIGN_OR_RETURN(auto store, OpenConfiguredStore(global));
  int imported = 0, skipped = 0, cut = 0, extended = 0;
  size_t malformed = 0;
  WorkProgress progress("importing", "files", static_cast<int64_t>(collected.files.size()),
                        WorkProgress::OutputFor(json));
  int64_t done = 0;
  // Ctrl-C stops after the file being imported (each is one transaction);
  // a second one exits at once, that file's transaction rolled back.
  core::CancelToken interrupted;
  InstallInterruptHandler(&interrupted);
  for (const std::string& file : collected.files) {
    if (interrupted.cancelled()) break;
    // A big rollout takes seconds: the bar moves as its items are stored.
    auto outcome = storage::ImportRolloutFile(*store, file, [&](size_t stored, size_t items) {
      progress.Update(done,
                      items > 0 ? static_cast<double>(stored) / static_cast<double>(items) : 0);
    });
    ++done;
    // The bar (stderr) and the per-file lines (stdout, often the same
    // terminal) take turns: the bar is erased before a line, drawn after it.
    progress.Clear();
    if (!outcome.ok()) {
      PrintError(outcome.status());
      ++failed;
      progress.Update(done);
      continue;
    }
    if (outcome->imported) {
      ++imported;
      if (!json) PrintF(stdout, "imported %s from %s\n", outcome->session_id.c_str(), file.c_str());
    } else if (outcome->items_added + outcome->events_added > 0) {
      ++extended;
      if (!json) {
        PrintF(stdout, "added %zu items and %zu events to %s from %s (the file grew since)\n",
               outcome->items_added, outcome->events_added, outcome->session_id.c_str(),
               file.c_str());
      }
    } else {
      ++skipped;
      if (!json) {
        PrintF(stdout, "skipped %s from %s (already imported)\n", outcome->session_id.c_str(),
               file.c_str());
      }
    }
    if (outcome->dropped_tail) {
      ++cut;
      PrintF(stderr,
             "warning: %s:%zu: the last line was cut off (%zu bytes without a newline, "
             "what a crash leaves); it was dropped, lines 1-%zu were imported\n",
             file.c_str(), outcome->dropped_tail->line, outcome->dropped_tail->bytes,
             outcome->dropped_tail->line - 1);
    }
    // Each malformed line (Codex skips them too), the first few by line.
    constexpr size_t kNamed = 3;
    const auto& dropped = outcome->dropped_lines;
    malformed += dropped.size();
    for (size_t i = 0; i < dropped.size() && i < kNamed; ++i) {
      PrintF(stderr, "warning: %s:%zu: %s; the line was dropped, the others were imported\n",
             file.c_str(), dropped[i].line, dropped[i].why.c_str());
    }
    if (dropped.size() > kNamed) {
      PrintF(stderr, "warning: %s: %zu more malformed lines were dropped\n", file.c_str(),
             dropped.size() - kNamed);
    }
    FlushStdout();
    progress.Update(done);
  }
  RemoveInterruptHandler();
  progress.Finish();
  FlushStdout();
  const bool stopped = interrupted.cancelled();
  if (json) {
    PrintText(stdout, Dump(Json{{"imported", imported},
                                {"already_present", skipped},
                                {"extended", extended},
                                {"failed", failed},
                                {"cut_off_last_lines_dropped", cut},
                                {"malformed_lines_dropped", malformed},
                                {"interrupted", stopped}}) +
                          "\n");
  } else if (stopped) {
    PrintF(stderr,
           "interrupted after %lld of %zu files: %d imported, %d extended, %d already present, "
           "%d failed; what was imported stays, run the same command again to import the rest\n",
           static_cast<long long>(done), collected.files.size(), imported, extended, skipped,
           failed);
  } else {
    if (extended > 0) {
      PrintF(stderr, "%d imported, %d extended, %d already present, %d failed\n", imported,
             extended, skipped, failed);
    } else {
      PrintF(stderr, "%d imported, %d already present, %d failed\n", imported, skipped, failed);
    }
  }
  if (stopped) return kExitInterrupted;
  return failed > 0 ? kExitError : kExitOk;
}

}  // namespace

void AddSessionsImportCommand(CLI::App* sessions, const GlobalOptions& global,
                              CommandOutcome& result) {
  auto import_paths = std::make_shared<std::vector<std::string>>();
  auto import_json = std::make_shared<bool>(false);
  CLI::App* imp = sessions->add_subcommand(
      "import", "Import Codex rollout files (directories are searched for *.jsonl)");
  imp->add_option("PATH", *import_paths, "Rollout files or directories")->required();
  imp->add_flag("--json", *import_json,
                "No per-file lines or progress: one summary object on stdout at the end");
  imp->footer(
      "A crash's cut-off last line and any malformed line are dropped, each named on stderr, and "
      "the other lines imported (as Codex reads such a file). A session already imported is "
      "left as it is, or extended by what its file grew since (Codex resumed it).\n"
      "Exit status: 0 every file imported; 1 a path or file failed (named on stderr; the others "
      "are imported); 130 interrupted by Ctrl-C (what was imported stays; run it again).");
  imp->callback([&global, import_paths, import_json, &result] {
    result.Set(RunImport(global, *import_paths, *import_json));
  });
}

}  // namespace codex::cli
