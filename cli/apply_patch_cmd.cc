#include "cli/apply_patch_cmd.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "base/file.h"
#include "cli/exit_codes.h"
#include "cli/terminal_text.h"
#include "core/apply_patch.h"

namespace codex::cli {
namespace {

constexpr const char* kUsage =
    "Usage: codex apply-patch 'PATCH'\n"
    "       echo 'PATCH' | codex apply-patch\n";

// The reference apply_patch's contract (apply_patch_cmd.h): its own "Error:"
// lines and exit codes, not the `error:` line of a Status.
Result<int> RunApplyPatch(std::vector<std::string> args) {
  if (args.size() > 1) {
    PrintF(stderr,
           "Error: codex apply-patch accepts exactly one argument (the whole patch); "
           "quote it, or pipe it on stdin.\n");
    return kExitUsage;
  }
  std::string patch;
  if (args.empty()) {
    Result<std::string> read = ReadToEnd(STDIN_FILENO, "stdin");
    if (!read.ok()) {
      PrintF(stderr, "Error: Failed to read PATCH from %s\n", read.status().message().c_str());
      return kExitError;
    }
    patch = std::move(*read);
    if (patch.empty()) {
      PrintText(stderr, kUsage);
      return kExitUsage;
    }
  } else {
    patch = std::move(args.front());
  }
  auto outcome = core::ApplyPatch(patch, core::ApplyPatchOptions{});
  if (!outcome.ok()) {
    PrintF(stderr, "%s\n", outcome.status().message().c_str());
    return kExitError;
  }
  std::string summary = outcome->Summary();
  PrintText(stdout, summary);
  FlushStdout();
  return kExitOk;
}

}  // namespace

void RegisterApplyPatchCommand(CLI::App& app, const GlobalOptions& global, CommandOutcome& result) {
  (void)global;
  CLI::App* sub = app.add_subcommand(
      "apply-patch",
      "Apply a '*** Begin Patch' patch to the current directory (PATCH, or stdin when absent)");
  // The patch is taken verbatim: positionals (also after "--") and, through
  // allow_extras, arguments that look like options (a patch starting with '-').
  auto positionals = std::make_shared<std::vector<std::string>>();
  sub->add_option("PATCH", *positionals, "The whole patch as one argument (default: stdin)")
      ->expected(1, -1)
      ->allow_extra_args();
  sub->allow_extras();
  sub->footer(
      "Example:\n"
      "  codex apply-patch \"$(cat change.patch)\"    or    codex apply-patch < change.patch");
  sub->callback([sub, positionals, &result] {
    std::vector<std::string> args = *positionals;
    bool saw_mark = false;
    for (std::string& extra : sub->remaining()) {
      if (extra == "--" && !saw_mark) {
        saw_mark = true;  // CLI11 keeps the "--" separator among the extras
        continue;
      }
      args.push_back(std::move(extra));
    }
    result.Set(RunApplyPatch(std::move(args)));
  });
}

}  // namespace codex::cli
