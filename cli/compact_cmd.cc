#include "cli/compact_cmd.h"

#include <memory>

#include "cli/engine.h"
#include "cli/exit_codes.h"
#include "cli/interrupt.h"
#include "cli/progress_printer.h"
#include "cli/session_resolution.h"
#include "core/compaction_checkpoint.h"

namespace codex::cli {

namespace {

struct CompactArgs {
  RunFlags flags;
  std::string id;
  bool last = false;
  std::string undo_id;
};

int RunCompact(const GlobalOptions& global, CompactArgs& args) {
  auto engine = Engine::Open(global, args.flags);
  if (!engine.ok()) return ReportError(engine.status());
  auto session = ResolveSession((*engine)->store(), args.id, args.last, (*engine)->config().cwd);
  if (!session.ok()) return ReportError(session.status());
  ProgressPrinter printer(stderr);
  Status started = (*engine)->StartModel(printer);
  if (!started.ok()) return ReportError(started);
  (*engine)->BindSession(session->id);
  auto conversation = core::Conversation::Resume((*engine)->config(), (*engine)->Deps(), *session);
  if (!conversation.ok()) return ReportError(conversation.status());
  core::CancelToken cancel;
  InstallInterruptHandler(&cancel);
  Result<bool> compacted = (*conversation)->CompactNow(cancel);
  RemoveInterruptHandler();
  if (!compacted.ok()) return ReportError(compacted.status());
  if (!*compacted) {
    std::printf(
        "session %s not compacted: ~%lld tokens, under half the auto-compact limit or "
        "already as small as a compaction would make it; %d%% of the context window "
        "left\n",
        session->id.c_str(), static_cast<long long>((*conversation)->EstimatedTokens()),
        (*conversation)->ContextLeftPercent());
    return kExitOk;
  }
  std::printf("compacted session %s; %d%% of the context window left\n", session->id.c_str(),
              (*conversation)->ContextLeftPercent());
  return kExitOk;
}

int RunUndo(const GlobalOptions& global, CompactArgs& args) {
  auto engine = Engine::Open(global, args.flags);
  if (!engine.ok()) return ReportError(engine.status());
  core::SessionStore& store = (*engine)->store();
  auto found = store.FindSession(args.undo_id);
  if (!found.ok()) return ReportError(found.status());
  // Moving the head is a write like a turn's: refused while a turn (or a
  // compaction) runs on the session, and read again once the lease is held.
  auto lease = store.AcquireTurnLease(found->id);
  if (!lease.ok()) return ReportError(lease.status());
  auto session = store.FindSession(found->id);
  if (!session.ok()) return ReportError(session.status());
  auto history = store.LoadHistory(*session);
  if (!history.ok()) return ReportError(history.status());
  const auto& items = *history;
  size_t k = items.size();
  for (size_t i = items.size(); i-- > 0;) {
    if (items[i].item.kind == core::ItemKind::kCompactionCheckpoint) {
      k = i;
      break;
    }
  }
  if (k == items.size()) {
    return ReportError(
        FailedPreconditionError("session " + session->id + " has no compaction to undo"));
  }
  auto checkpoint = core::ParseCheckpointItem(items[k].item);
  if (!checkpoint.ok()) return ReportError(checkpoint.status());
  const auto after = static_cast<int64_t>(items.size() - 1 - k);
  if (after != checkpoint->replacement_items) {
    return ReportError(
        FailedPreconditionError("the conversation went on after the last compaction of session " +
                                session->id + ", so it cannot be undone; use 'codex fork " +
                                session->id + " --at-turn N' to branch from an earlier turn"));
  }
  Status s = store.MoveHead(session->id, session->head_item_id, items[k].parent_id);
  if (!s.ok()) return ReportError(s);
  std::printf(
      "undid the last compaction of session %s: its %zu earlier items are the "
      "transcript again\n",
      session->id.c_str(), k);
  return kExitOk;
}

}  // namespace

void RegisterCompactCommand(CLI::App& app, GlobalOptions& global, int* exit_code) {
  auto args = std::make_shared<CompactArgs>();
  CLI::App* compact = app.add_subcommand("compact", "Compact a session now (or undo the last)");
  compact->add_option("ID", args->id, "Session id, unique prefix or name");
  compact->add_flag("--last", args->last, "The most recent session");
  compact->add_option("-m,--model", args->flags.model, "Model for the compaction request");
  compact->add_flag("--oss", args->flags.oss, "Use the local open-source provider");
  compact->require_subcommand(0, 1);
  CLI::App* undo = compact->add_subcommand("undo", "Move the head back before the last compaction");
  undo->add_option("ID", args->undo_id, "Session id, unique prefix or name")->required();
  compact->callback([&global, args, exit_code, undo]() {
    if (undo->parsed()) {
      *exit_code = RunUndo(global, *args);
      return;
    }
    if (args->id.empty() && !args->last) {
      *exit_code = ReportError(InvalidArgumentError("codex compact needs a session id or --last"));
      return;
    }
    *exit_code = RunCompact(global, *args);
  });
}

}  // namespace codex::cli
