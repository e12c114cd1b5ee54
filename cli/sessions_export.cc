#include "cli/sessions_export.h"

#include <cstdio>
#include <memory>
#include <string>

#include "base/file.h"
#include "cli/store_open.h"
#include "cli/terminal_text.h"
#include "cli/work_progress.h"
#include "storage/rollout.h"

namespace codex::cli {

namespace {

struct ExportArgs {
  std::string id;
  std::string format = "jsonl";
  std::string output;
};

Status RunExport(const GlobalOptions& global, const std::string& id, const std::string& format,
                 const std::string& output) {
  storage::ExportFormat fmt;
  if (format == "jsonl") {
    fmt = storage::ExportFormat::kJsonl;
  } else if (format == "markdown" || format == "md") {
    fmt = storage::ExportFormat::kMarkdown;
  } else {
    return InvalidArgumentError("unknown export format '" + format + "'; use jsonl or markdown");
  }
  ASSIGN_OR_RETURN(auto store, OpenConfiguredStore(global, /*read_only=*/true));
  ASSIGN_OR_RETURN(auto s, store->FindSession(id));
  // A big session takes a while: progress on stderr (stdout may be the export).
  std::unique_ptr<WorkProgress> progress;
  auto text = storage::ExportSession(*store, s.id, fmt, [&](int64_t done, int64_t total) {
    if (!progress) {
      progress = std::make_unique<WorkProgress>("exporting", "items", total,
                                                WorkProgress::OutputFor(/*silent=*/false));
    }
    progress->Update(done);
  });
  if (progress) progress->Finish();
  if (!text.ok()) return text.status();
  if (output.empty() || output == "-") {
    PrintText(stdout, *text);
    return StdoutWritten();
  }
  if (Status written = ReplaceWholeFile(output, *text); !written.ok()) {
    return FailedPreconditionError("cannot write the export to " + written.message() +
                                   "; choose a writable file");
  }
  PrintF(stderr, "exported session %s to %s\n", s.id.c_str(), output.c_str());
  return OkStatus();
}

}  // namespace

void AddSessionsExportCommand(CLI::App* sessions, const GlobalOptions& global,
                              CommandOutcome& result) {
  auto export_args = std::make_shared<ExportArgs>();
  CLI::App* exp =
      sessions->add_subcommand("export", "Write a session as a Codex rollout or Markdown");
  exp->add_option("ID", export_args->id, "Session id, unique prefix or name")->required();
  exp->add_option("--format", export_args->format, "jsonl (Codex rollout, default) or markdown");
  exp->add_option("-o,--output", export_args->output, "Write to FILE instead of stdout");
  exp->callback([&global, export_args, &result] {
    result.Set(RunExport(global, export_args->id, export_args->format, export_args->output));
  });
}

}  // namespace codex::cli
