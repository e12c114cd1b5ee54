// /undo in the interactive session: the snapshots taken around each turn
// and the command that reverts the newest recorded one (core/undo.h holds
// the logic; this file only asks, prints and tells the model).
#include <stdio.h>
#include <unistd.h>

#include <string>

#include "cli/interactive/interactive_session.h"
#include "core/item.h"

namespace codex::cli::interactive_internal {

namespace {

// One line per file: what /undo did to it.
std::string UndoneLine(const core::UndoFile& f) {
  const std::string path = NeutralizeControls(f.path);
  switch (f.change) {
    case core::UndoChange::kCreated:
      return "  removed " + path + " (the turn created it)\n";
    case core::UndoChange::kDeleted:
      return "  restored " + path + " (the turn deleted it)\n";
    case core::UndoChange::kModified:
      return "  restored " + path + "\n";
  }
  return "";
}

std::string NameList(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += "  " + NeutralizeControls(n) + "\n";
  return out;
}

}  // namespace

core::WorkspaceUndo* InteractiveSession::UndoForSession() {
  const std::string& id = conversation().session().id;
  if (undo_ && undo_->session_id() == id) return undo_.get();
  undo_.reset();
  auto opened =
      core::WorkspaceUndo::Open(engine().config().cwd, engine().config().codex_home + "/undo", id);
  if (!opened.ok()) {
    if (undo_warned_for_ != id) Warn("/undo is off for this session: " + opened.status().message());
    undo_warned_for_ = id;
    return nullptr;
  }
  undo_ = std::move(*opened);
  return undo_.get();
}

void InteractiveSession::BeginUndoSnapshot() {
  // Off for the rest of a session once it failed (a directory over the
  // limits would only fail again, after walking it again).
  if (undo_warned_for_ == conversation().session().id) return;
  core::WorkspaceUndo* undo = UndoForSession();
  if (undo == nullptr) return;
  Status s = undo->BeginTurn();
  if (!s.ok()) {
    // The turn runs regardless; only it cannot be undone.
    Warn("/undo is off for this session: " + s.message());
    undo_warned_for_ = undo->session_id();
  }
}

void InteractiveSession::EndUndoSnapshot(const std::string& turn_id) {
  if (!undo_) return;
  Result<std::vector<core::UndoFile>> files = undo_->EndTurn(turn_id);
  if (!files.ok()) Warn("/undo could not record this turn's files: " + files.status().message());
}

bool InteractiveSession::AskYesNo(const std::string& question) {
  if (!tty_) {
    PrintText(stderr, question + " [y/N] ");
    std::fflush(stderr);
    std::string line;
    int c;
    while ((c = std::fgetc(stdin)) != EOF && c != '\n') line += static_cast<char>(c);
    return !line.empty() && (line[0] == 'y' || line[0] == 'Y');
  }
  // Whole lines: what the view prints goes above the composer, line by line.
  Say(style_.Bold(question) + " [y/N]\n");
  while (true) {
    std::string bytes;
    ReadStatus status = terminal_->Read(&bytes, -1);
    if (status == ReadStatus::kEof) return false;
    if (status != ReadStatus::kData || bytes.empty()) continue;
    const char key = bytes[0];
    const bool yes = key == 'y' || key == 'Y';
    Say(yes ? "› y\n" : "› n\n");
    return yes;
  }
}

void InteractiveSession::UndoCommand() {
  core::WorkspaceUndo* undo = UndoForSession();
  if (undo == nullptr) return;
  Result<std::optional<core::UndoPlan>> plan = undo->Plan();
  if (!plan.ok()) {
    Warn(plan.status().message());
    return;
  }
  if (!plan->has_value()) {
    Say("nothing to undo: no turn of this session changed files\n");
    return;
  }
  const core::UndoPlan& p = **plan;
  core::UndoConflicts conflicts = core::UndoConflicts::kRefuse;
  if (!p.conflicts.empty()) {
    Say("changed since that turn (restoring overwrites these changes):\n" + NameList(p.conflicts));
    if (!AskYesNo("overwrite them?")) {
      Say("nothing was restored\n");
      return;
    }
    conflicts = core::UndoConflicts::kOverwrite;
  }
  Result<core::UndoResult> done = undo->Undo(p.turn_id, conflicts);
  if (!done.ok()) {
    Warn(done.status().message());
    return;
  }
  std::string text = "undid the file changes of the last turn that made any:\n";
  for (const auto& f : done->restored) text += UndoneLine(f);
  if (!done->skipped.empty()) {
    text += "not restored (a symlink or a file too large to snapshot):\n" + NameList(done->skipped);
  }
  text += done->turns_left == 0 ? "no earlier turn to undo\n"
                                : "/undo again undoes the turn before (" +
                                      std::to_string(done->turns_left) + " left)\n";
  Say(text);
  // The model learns what happened with the next request.
  Status told = AppendRecord(core::DeveloperMessage(core::UndoMessageText(*done)));
  if (!told.ok()) Warn("the model was not told about the undo: " + told.message());
}

}  // namespace codex::cli::interactive_internal
