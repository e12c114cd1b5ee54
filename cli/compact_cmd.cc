#include "cli/compact_cmd.h"

#include <memory>

#include "cli/engine.h"
#include "cli/interrupt.h"
#include "cli/progress_printer.h"
#include "cli/session_controller.h"
#include "cli/session_resolution.h"
#include "cli/terminal_text.h"
#include "core/compaction_checkpoint.h"

namespace codex::cli {

namespace {

struct CompactArgs {
  RunFlags flags;
  std::string id;
  bool last = false;
  bool all = false;  // with --last: the newest of every directory
  std::string undo_id;
};

Status RunCompact(const GlobalOptions& global, CompactArgs& args) {
  if (args.all && !args.last) return InvalidArgumentError("--all only applies to compact --last");
  if (args.id.empty() && !args.last) {
    return InvalidArgumentError("codex compact needs a session id or --last");
  }
  ASSIGN_OR_RETURN(std::unique_ptr<SessionController> controller,
                   SessionController::Open(global, args.flags));
  ASSIGN_OR_RETURN(
      core::SessionInfo session,
      ResolveSession(controller->store(), args.id, args.last, args.all, controller->config().cwd));
  ProgressPrinter printer(stderr);
  RETURN_IF_ERROR(controller->StartModel(printer, /*approver=*/nullptr));
  controller->engine().BindSession(session.id);
  RETURN_IF_ERROR(controller->Resume(session));
  core::Conversation* conversation = &controller->conversation();
  core::CancelToken cancel;
  InstallInterruptHandler(&cancel);
  Result<bool> compacted = controller->CompactNow(cancel, /*asked=*/false);
  RemoveInterruptHandler();
  if (!compacted.ok()) return compacted.status();
  if (!*compacted) {
    PrintF(stdout,
           "session %s not compacted: ~%lld tokens, under half the auto-compact limit or "
           "already as small as a compaction would make it; %d%% of the context window "
           "left\n",
           session.id.c_str(), static_cast<long long>(conversation->EstimatedTokens()),
           conversation->ContextLeftPercent());
    return OkStatus();
  }
  PrintF(stdout, "compacted session %s; %d%% of the context window left\n", session.id.c_str(),
         conversation->ContextLeftPercent());
  return OkStatus();
}

Status RunUndo(const GlobalOptions& global, CompactArgs& args) {
  ASSIGN_OR_RETURN(std::unique_ptr<Engine> engine, Engine::Open(global, args.flags));
  core::SessionStore& store = engine->store();
  ASSIGN_OR_RETURN(core::SessionInfo found, store.FindSession(args.undo_id));
  // Moving the head is a write like a turn's: refused while a turn (or a
  // compaction) runs on the session, and read again once the lease is held.
  ASSIGN_OR_RETURN(auto lease, store.AcquireTurnLease(found.id));
  ASSIGN_OR_RETURN(core::SessionInfo session, store.FindSession(found.id));
  ASSIGN_OR_RETURN(const auto items, store.LoadHistory(session));
  size_t k = items.size();
  for (size_t i = items.size(); i-- > 0;) {
    if (items[i].item.kind == core::ItemKind::kCompactionCheckpoint) {
      k = i;
      break;
    }
  }
  if (k == items.size()) {
    return FailedPreconditionError("session " + session.id + " has no compaction to undo");
  }
  ASSIGN_OR_RETURN(const auto checkpoint, core::ParseCheckpointItem(items[k].item));
  const auto after = static_cast<int64_t>(items.size() - 1 - k);
  if (after != checkpoint.replacement_items) {
    return FailedPreconditionError(
        "the conversation went on after the last compaction of session " + session.id +
        ", so it cannot be undone; use 'codex fork " + session.id +
        " --at-turn N' to branch from an earlier turn");
  }
  RETURN_IF_ERROR(store.MoveHead(session.id, session.head_item_id, items[k].parent_id));
  PrintF(stdout,
         "undid the last compaction of session %s: its %zu earlier items are the "
         "transcript again\n",
         session.id.c_str(), k);
  return OkStatus();
}

}  // namespace

void RegisterCompactCommand(CLI::App& app, const GlobalOptions& global, CommandOutcome& result) {
  auto args = std::make_shared<CompactArgs>();
  CLI::App* compact = app.add_subcommand("compact", "Compact a session now (or undo the last)");
  compact->add_option("ID", args->id, "Session id, unique prefix or name");
  compact->add_flag("--last", args->last, "The most recent session of this directory (or project)");
  compact->add_flag("--all", args->all, "With --last: the most recent session of every directory");
  compact->add_option("-m,--model", args->flags.model, "Model for the compaction request");
  compact->add_flag("--oss", args->flags.oss, "Use the local open-source provider");
  compact->require_subcommand(0, 1);
  CLI::App* undo = compact->add_subcommand("undo", "Move the head back before the last compaction");
  undo->add_option("ID", args->undo_id, "Session id, unique prefix or name")->required();
  compact->callback([&global, args, &result, undo]() {
    result.Set(undo->parsed() ? RunUndo(global, *args) : RunCompact(global, *args));
  });
}

}  // namespace codex::cli
