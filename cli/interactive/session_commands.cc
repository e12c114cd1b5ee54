// The slash commands and the session picker of InteractiveSession.
#include <algorithm>
#include <cstdint>
#include <set>

#include "base/time.h"
#include "cli/interactive/drawn_lines.h"
#include "cli/interactive/interactive_session.h"
#include "cli/interactive/session_picker.h"
#include "cli/interactive/session_reports.h"
#include "cli/interrupt.h"
#include "cli/session_resolution.h"
#include "cli/terminal_text.h"
#include "core/transcript.h"
#include "storage/session_database.h"

namespace codex::cli::interactive_internal {

namespace {

// Text for the terminal in raw mode: "\n" becomes "\r\n".
std::string ToCrLf(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\n') out += '\r';
    out += c;
  }
  return out;
}

}  // namespace

// --- slash commands ---

bool InteractiveSession::RunSlash(const SlashCommand& cmd) {
  switch (cmd.kind) {
    case SlashKind::kHelp:
      Say(HelpText(style_, tty_));
      return true;
    case SlashKind::kStatus:
      ShowStatus();
      return true;
    case SlashKind::kCompact:
      Compact();
      return true;
    case SlashKind::kFork:
      ForkCommand(cmd);
      return true;
    case SlashKind::kSessions:
      ShowSessions();
      return true;
    case SlashKind::kResume:
      ResumeCommand(cmd);
      return true;
    case SlashKind::kModel:
      ModelCommand(cmd);
      return true;
    case SlashKind::kApprovals:
      ApprovalsCommand(cmd);
      return true;
    case SlashKind::kDiff:
      ShowDiff();
      return true;
    case SlashKind::kNew:
      NewCommand();
      return true;
    case SlashKind::kInit:
      InitCommand();
      return true;
    case SlashKind::kMention:
      composer_.Mention();
      return true;
    case SlashKind::kPermissions:
      PermissionsCommand(cmd);
      return true;
    case SlashKind::kCopy:
      CopyCommand();
      return true;
    case SlashKind::kExport:
      ExportCommand(cmd);
      return true;
    case SlashKind::kMcp:
      McpCommand();
      return true;
    case SlashKind::kUndo:
      UndoCommand();
      return true;
    case SlashKind::kRename:
      RenameCommand(cmd);
      return true;
    case SlashKind::kReview:
      ReviewCommand(cmd);
      return true;
    case SlashKind::kQuit:
      return false;
  }
  return true;
}

void InteractiveSession::ForkCommand(const SlashCommand& cmd) {
  std::string from = conversation().session().id;
  auto forked = engine().store().Fork(from, cmd.turn);
  if (!forked.ok()) {
    Warn(forked.status().message());
    return;
  }
  Status s = SwitchTo(*forked, false);
  if (!s.ok()) {
    Warn(s.message());
    return;
  }
  Say("forked " + from + (cmd.turn ? " after turn " + std::to_string(*cmd.turn) : "") + " into " +
      style_.Bold(forked->id) + "; you are now in the branch\n");
}

void InteractiveSession::ResumeCommand(const SlashCommand& cmd) {
  std::optional<core::SessionInfo> target;
  if (cmd.arg.empty()) {
    if (!tty_) {
      Warn("/resume needs a session id here; /sessions lists them");
      return;
    }
    auto picked = Pick(false);
    if (!picked.ok()) {
      Warn(picked.status().message());
      return;
    }
    if (!picked->has_value()) return;
    target = **picked;
  } else {
    auto found = ResolveSession(engine().store(), cmd.arg, false, false, engine().config().cwd);
    if (!found.ok()) {
      Warn(found.status().message());
      return;
    }
    target = *found;
  }
  Status s = SwitchTo(*target, true);
  if (!s.ok()) Warn(s.message());
}

void InteractiveSession::ModelCommand(const SlashCommand& cmd) {
  const bool picked = composer_.chose_from_picker();  // then an effort follows
  if (cmd.arg.empty() && tty_) {
    OpenChoice("model", engine().config().model, ModelChoices(engine().config().model));
    return;
  }
  if (cmd.arg.empty()) {
    Say("model: " + engine().config().model + "\n");
    return;
  }
  if (cmd.effort.empty() && tty_ && picked) {
    // A model chosen in the picker: then the reasoning effort for it: the picker submits "/model
    // NAME EFFORT".
    const std::string current = engine().config().model_reasoning_effort.empty()
                                    ? "medium"
                                    : engine().config().model_reasoning_effort;
    OpenChoice("model " + cmd.arg, current,
               {{"minimal", "fastest, least thinking"},
                {"low", "quick answers"},
                {"medium", "the default balance"},
                {"high", "most thorough, slowest"}});
    return;
  }
  RunFlags flags = flags_;
  flags.model = cmd.arg;
  const GlobalOptions before = global_;
  if (!cmd.effort.empty()) {
    auto& dash_c = global_.dash_c;
    std::erase_if(
        dash_c, [](const std::string& kv) { return kv.rfind("model_reasoning_effort=", 0) == 0; });
    dash_c.push_back("model_reasoning_effort=\"" + cmd.effort + "\"");
  }
  Status s = Reopen(flags);
  if (!s.ok()) {
    global_ = before;
    Warn(s.message());
    return;
  }
  std::string effort = engine().config().model_reasoning_effort;
  Say("model set to " + style_.Bold(engine().config().model) +
      (effort.empty() ? "" : " (reasoning effort " + effort + ")") + " for this session\n");
}

void InteractiveSession::ApprovalsCommand(const SlashCommand& cmd) {
  const std::string current(core::ApprovalPolicyName(engine().config().approval_policy));
  if (cmd.arg.empty() && tty_) {
    OpenChoice("approvals", current, ApprovalChoices());
    return;
  }
  if (cmd.arg.empty()) {
    Say("approval policy: " + current + "\n");
    return;
  }
  if (!core::ParseApprovalPolicy(cmd.arg)) {
    Warn("'" + cmd.arg + "' is not one of untrusted, on-failure, on-request, never");
    return;
  }
  RunFlags flags = flags_;
  flags.approval = cmd.arg;
  flags.full_auto = false;
  flags.bypass = false;
  Status s = Reopen(flags);
  if (!s.ok()) {
    Warn(s.message());
    return;
  }
  Say("approval policy set to " + style_.Bold(cmd.arg) + "\n");
}

void InteractiveSession::NewCommand() {
  if (Status created = session_->StartNew("interactive"); !created.ok()) {
    Warn(created.message());
    return;
  }
  if (approvals_) approvals_->ResetSession();
  Banner(false);
}

void InteractiveSession::OpenChoice(const std::string& command, const std::string& current,
                                    std::vector<Choice> choices, const std::string& title,
                                    const std::string& search) {
  composer_.OpenChoice({command, current, std::move(choices), title, search});
}

void InteractiveSession::ShowStatus() {
  core::SessionInfo session = conversation().session();
  if (auto fresh = engine().store().FindSession(session.id); fresh.ok()) session = *fresh;
  Say(StatusText(style_, engine().config(), session, usage_.total_tokens,
                 conversation().ContextLeftPercent(), conversation().EstimatedTokens()));
}

void InteractiveSession::ShowSessions() {
  core::ListQuery query;
  query.cwd = engine().config().cwd;
  query.limit = 15;
  auto page = engine().store().ListSessions(query);
  if (!page.ok()) {
    Warn(page.status().message());
    return;
  }
  Say(SessionsText(style_, page->sessions, conversation().session().id, engine().config().cwd,
                   NowMs()));
}

void InteractiveSession::ShowDiff() {
  Result<std::string> diff = WorkspaceDiff(engine().config().cwd, style_);
  if (!diff.ok()) {
    Warn(diff.status().message());
    return;
  }
  Say(diff->empty() ? "no changes in the workspace\n" : *diff);
}

void InteractiveSession::Compact() {
  core::CancelToken cancel;
  Result<bool> s = false;
  if (tty_) {
    terminal_->SetCtrlC(CtrlC::kAsSignal);
    {
      TurnInterrupt interrupt(&cancel);
      view_->BeginTurn("Compacting");
      s = session_->CompactNow(cancel, true);  // asked for: run unless it would grow
      view_->EndTurn();
      terminal_->SetCtrlC(CtrlC::kAsKey);
    }
  } else {
    InstallInterruptHandler(&cancel);
    s = session_->CompactNow(cancel, true);
    RemoveInterruptHandler();
  }
  if (!s.ok()) {
    Warn(s.status().code() == StatusCode::kCancelled ? "compaction interrupted; nothing changed"
                                                     : s.status().message());
    return;
  }
  if (!*s) return;  // the observer already said why nothing was compacted
  Say("compacted; context " + std::to_string(conversation().ContextLeftPercent()) + "% left\n");
}

Result<std::optional<core::SessionInfo>> InteractiveSession::Pick(bool all) {
  core::ListQuery query;
  if (!all) query.cwd = engine().config().cwd;
  query.limit = 200;
  ASSIGN_OR_RETURN(core::ListPage page, engine().store().ListSessions(query));
  if (page.sessions.empty()) {
    return NotFoundError(all ? "there are no sessions yet; start one with 'codex'"
                             : "no session in " + engine().config().cwd +
                                   " yet; 'codex resume --all' shows every directory");
  }
  SessionPicker picker(std::move(page.sessions), NowMs(), all);
  auto* database = dynamic_cast<storage::SessionDatabase*>(&engine().store());
  PickerHooks hooks;
  if (database != nullptr) {
    // "/" finds sessions by what was said in them: the store's full-text
    // search (FTS5 on SQLite, tsvector on PostgreSQL), not titles alone.
    hooks.search = [this, database, all](const std::string& text) {
      std::set<std::string> ids;
      storage::SearchQuery q;
      q.text = text;
      if (!all) q.cwd = engine().config().cwd;
      q.limit = 200;
      if (auto hits = database->Search(q); hits.ok()) {
        for (const auto& hit : *hits) {
          for (const auto& where : hit.sessions) ids.insert(where.session.id);
        }
      }
      return ids;
    };
  }
  hooks.preview = [this](const core::SessionInfo& session) {
    std::vector<std::string> lines;
    auto items = engine().store().LoadTranscript(session);
    if (!items.ok()) return lines;
    for (const auto& stored : *items) {
      const core::Item& item = stored.item;
      const bool user = core::IsTypedUserMessage(item);
      if (!user && !(item.kind == core::ItemKind::kMessage && item.role == "assistant")) continue;
      std::string text = core::MessageText(item);
      for (char& c : text) {
        if (c == '\n' || c == '\t') c = ' ';
      }
      lines.push_back((user ? "› " : "  ") + NeutralizeControls(text));
    }
    return lines;
  };
  picker.set_hooks(hooks);
  DrawnLines drawn;  // the last drawing, to erase it (re-wrapped after a resize)
  auto erase = [&] {
    std::string out;
    if (!drawn.empty()) {
      int up = drawn.RowsAboveCursor(terminal_->Columns(), terminal_->reflows());
      if (up > 0) out += "\x1b[" + std::to_string(up) + "A";
    }
    return out + kEraseToEnd;
  };
  auto draw = [&] {
    // Laid out for the width now, after erasing what the last width left.
    int columns = terminal_->Columns();
    std::string text = picker.Render(style_, columns, std::max(5, terminal_->Rows() - 2));
    std::string out = erase();
    drawn.Record(text, text.size(), columns);
    terminal_->Write(out + text);
  };
  draw();
  KeyDecoder decoder;
  PickerResult result = PickerResult::kPending;
  while (result == PickerResult::kPending) {
    std::string bytes;
    ReadStatus status = terminal_->Read(&bytes, decoder.has_pending() ? 50 : -1);
    if (status == ReadStatus::kEof) {
      result = PickerResult::kCancelled;
      break;
    }
    decoder.Feed(bytes);
    while (result == PickerResult::kPending) {
      std::optional<Key> key = status == ReadStatus::kTimeout ? decoder.Flush() : decoder.Next();
      if (!key) break;
      result = picker.HandleKey(*key);
    }
    draw();
  }
  terminal_->Write(erase());
  if (result == PickerResult::kTranscript) {
    // The whole conversation, then the picker again.
    auto items = engine().store().LoadTranscript(picker.chosen());
    if (items.ok()) {
      terminal_->Write(ToCrLf(TranscriptText(style_, *items, terminal_->Columns() - 1)) +
                       ToCrLf(style_.Dim("(any key: back to the list)")) + "\r\n");
      std::string bytes;
      (void)terminal_->Read(&bytes, -1);
    }
    return Pick(all);
  }
  if (result == PickerResult::kArchive) {
    const core::SessionInfo target = picker.chosen();
    Status archived = database != nullptr
                          ? database->Archive(target.id)
                          : FailedPreconditionError("this store cannot archive sessions");
    terminal_->Write(ToCrLf(archived.ok() ? style_.Dim("archived " + target.id +
                                                       " (codex sessions unarchive brings it back)")
                                          : style_.Red("error: " + archived.message())) +
                     "\r\n");
    return Pick(all);
  }
  if (result == PickerResult::kToggleAll) return Pick(!all);
  if (result == PickerResult::kCancelled) return std::optional<core::SessionInfo>();
  return std::optional<core::SessionInfo>(picker.chosen());
}

}  // namespace codex::cli::interactive_internal
