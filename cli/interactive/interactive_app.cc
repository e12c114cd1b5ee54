#include "cli/interactive/interactive_app.h"

#include <stdio.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>

#include "base/shell.h"
#include "base/strings.h"
#include "base/time.h"
#include "cli/config_overrides.h"
#include "cli/interactive/file_search.h"
#include "cli/interactive/interactive_session.h"
#include "cli/interactive/local_shell.h"
#include "cli/interactive/session_reports.h"
#include "cli/interactive/trust_prompt.h"
#include "cli/interrupt.h"
#include "cli/notify.h"
#include "cli/session_resolution.h"
#include "cli/terminal_text.h"
#include "core/mcp_config_edit.h"
#include "core/project_trust.h"
#include "core/sandboxed_runner.h"
#include "core/tool_router.h"
#include "core/transcript.h"
#include "core/uuid.h"

namespace codex::cli {

namespace interactive_internal {

namespace {

bool UseTerminal() {
  if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) return false;
  const char* term = std::getenv("TERM");
  return term != nullptr && *term != '\0' && std::string_view(term) != "dumb";
}

}  // namespace

bool Blank(std::string_view text) { return Trim(text).empty(); }

InteractiveSession::InteractiveSession(const GlobalOptions& global, InteractiveOptions options)
    : global_(global),
      options_(std::move(options)),
      tty_(UseTerminal()),
      style_(tty_ ? DetectColor(STDOUT_FILENO) : Color::kDisabled),
      composer_(style_, [this] { return ListWorkspaceFiles(engine().config().cwd); }) {}

// --- start and the engine ---

Result<bool> InteractiveSession::ApplyTrust() {
  ASSIGN_OR_RETURN(core::ConfigOverrides overrides, OverridesFrom(global_, flags_));
  ASSIGN_OR_RETURN(core::Config config, core::LoadConfig(core::DefaultCodexHome(), overrides));
  ASSIGN_OR_RETURN(core::ProjectTrust trust,
                   core::LoadProjectTrust(config.codex_home, overrides, config.cwd));
  std::string level = trust.level;
  if (level.empty() && !trust.sandbox_mode_named && !trust.approval_policy_named) {
    const TrustAnswer answer = AskTrust(*terminal_, style_, trust.project);
    if (answer == TrustAnswer::kQuit) return false;
    level = answer == TrustAnswer::kTrusted ? "trusted" : "untrusted";
    Status saved = core::WriteProjectTrust(config.codex_home, trust.project, level);
    if (!saved.ok()) {
      Warn("the answer was not recorded (asked again next time): " + saved.message());
    } else {
      Say(style_.Dim((level == "trusted" ? "trusted " : "not trusted: ") +
                     NeutralizeControls(trust.project) + " (recorded in " + config.codex_home +
                     "/config.toml)") +
          "\n");
    }
  }
  if (!trust.sandbox_mode_named) flags_.sandbox = TrustSandbox(level);
  if (!trust.approval_policy_named) flags_.approval = TrustApproval(level);
  return true;
}

Result<bool> InteractiveSession::Open() {
  if (tty_) {
    ASSIGN_OR_RETURN(terminal_, Terminal::Open(STDIN_FILENO, STDOUT_FILENO));
    view_ = std::make_unique<TurnView>(*terminal_, style_);
    live_ = std::make_unique<LiveTurn>(*terminal_, *view_, composer_, [this] { ShowComposer(); });
    approvals_ = std::make_unique<TtyApprovalPrompt>(
        *terminal_, *view_, style_,
        [this](const std::function<void()>& fn) { live_->RunOnUi(fn); });
  } else {
    plain_ = std::make_unique<PlainObserver>(stderr);
    approvals_ = std::make_unique<LineApprovalPrompt>(stdin, stderr);
  }
  if (tty_) {
    ASSIGN_OR_RETURN(const bool go_on, ApplyTrust());
    if (!go_on) return false;
  }
  RETURN_IF_ERROR(StartEngine(flags_, &session_));
  const core::Config& config = engine().config();
  if (view_) {
    view_->set_hide_reasoning(config.hide_agent_reasoning);
    view_->set_show_raw_reasoning(config.show_raw_agent_reasoning);
    view_->set_file_opener(config.file_opener, config.cwd);
  }
  history_ = std::make_unique<PromptHistory>(config.codex_home + "/history.jsonl",
                                             config.history_max_bytes.value_or(0));
  if (tty_) {
    composer_.editor() = LineEditor(history_->Load());
    composer_.editor().SetCompletions(SlashCompletions());
  }
  return true;
}

Result<bool> InteractiveSession::OpenConversation(bool* resumed) {
  *resumed = options_.start != SessionStart::kNew;
  std::optional<core::SessionInfo> session;
  if (options_.start == SessionStart::kPick) {
    ASSIGN_OR_RETURN(session, Pick(options_.all));
    if (!session) return false;
  } else if (options_.start == SessionStart::kResumeLast) {
    // None in scope (cli/session_resolution.h): a new session, as Codex
    // 0.169 starts, unless --existing asked for an error.
    ASSIGN_OR_RETURN(session, LatestInScope(engine().store(), engine().config().cwd, options_.all));
    if (!session && options_.existing) {
      return NoSessionInScope(engine().config().cwd, options_.all);
    }
    *resumed = session.has_value();
  } else if (*resumed) {
    ASSIGN_OR_RETURN(session, ResolveSession(engine().store(), options_.session_id, false, false,
                                             engine().config().cwd));
  }
  if (session) {
    RETURN_IF_ERROR(session_->Resume(*session));
  } else {
    RETURN_IF_ERROR(session_->StartNew("interactive"));
  }
  return true;
}

Status InteractiveSession::StartEngine(const RunFlags& flags,
                                       std::unique_ptr<SessionController>* out) {
  RunFlags session_flags = flags;
  session_flags.runs_commands = true;
  ASSIGN_OR_RETURN(auto session, SessionController::Open(global_, session_flags));
  RETURN_IF_ERROR(session->StartModel(observer(), approvals_.get()));
  *out = std::move(session);
  return OkStatus();
}

Status InteractiveSession::SwitchTo(core::SessionInfo session, bool announce) {
  RETURN_IF_ERROR(session_->Resume(session));
  if (approvals_) approvals_->ResetSession();
  if (announce) {
    Banner(true);
    ReplayTranscript();
  }
  return OkStatus();
}

Status InteractiveSession::Reopen(const RunFlags& flags) {
  RunFlags session_flags = flags;
  session_flags.runs_commands = true;
  RETURN_IF_ERROR(session_->Reopen(global_, session_flags));
  flags_ = flags;
  return OkStatus();
}

// --- output ---

// `text` with each line wider than the screen wrapped at word boundaries
// (CJK between characters), so the terminal does not cut it mid-word; lines
// that fit are left as they are (tables keep their padding).
std::string InteractiveSession::FitToScreen(std::string_view text) const {
  const int width = terminal_->Columns() - 1;
  std::string out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    const bool last = nl == std::string_view::npos;
    if (last) nl = text.size();
    std::string_view line = text.substr(pos, nl - pos);
    if (width > 10 && DisplayWidth(line) > width) {
      std::string wrapped = WrapLine(line, width, "", "");
      if (last && !wrapped.empty()) wrapped.pop_back();
      out += wrapped;
    } else {
      out.append(line);
      if (!last) out += '\n';
    }
    pos = nl + 1;
  }
  return out;
}

void InteractiveSession::Say(std::string_view text) {
  if (tty_) {
    view_->Print(FitToScreen(text));  // above the composer when it is drawn
  } else {
    PrintText(stdout, text);
    std::fflush(stdout);
  }
}

void InteractiveSession::Warn(std::string_view message) {
  if (tty_) {
    view_->Print(FitToScreen(style_.Red("error: " + NeutralizeControls(message)) + "\n"));
  } else {
    PrintF(stderr, "error: %.*s\n", static_cast<int>(message.size()), message.data());
  }
}

void InteractiveSession::Banner(bool resumed) {
  if (!tty_) {
    PrintF(stderr, "%s\n",
           BannerLine(engine().config(), conversation().session(), resumed).c_str());
    return;
  }
  Say(BannerText(style_, engine().config(), conversation().session(), resumed,
                 terminal_->Columns() - 1));
}

// Shows the tail of a resumed transcript: what was asked and answered.
void InteractiveSession::ReplayTranscript() {
  if (!tty_) return;
  auto items = engine().store().LoadTranscript(conversation().session());
  if (!items.ok()) return;
  Say(ReplayText(style_, *items, terminal_->Columns() - 1));
}

// --- input ---

void InteractiveSession::UpdateStatus() {
  const core::Config& config = engine().config();
  std::string dir = config.cwd;
  const char* home = std::getenv("HOME");
  if (home != nullptr && *home != '\0' && dir.rfind(home, 0) == 0 &&
      (dir.size() == std::strlen(home) || dir[std::strlen(home)] == '/')) {
    dir = "~" + dir.substr(std::strlen(home));
  }
  std::string model = config.model;
  if (!config.model_reasoning_effort.empty()) model += " " + config.model_reasoning_effort;
  composer_.set_status(NeutralizeControls(model + " · " +
                                          std::to_string(conversation().ContextLeftPercent()) +
                                          "% context left · " + dir));
}

void InteractiveSession::ShowComposer() {
  view_->SetFooter(composer_.Layout(terminal_->Columns()));
}

void InteractiveSession::EchoPrompt(const std::string& text) {
  view_->SetFooter(composer_.Layout(text, text.size(), terminal_->Columns(), false, false));
  view_->CommitFooter();
}

void InteractiveSession::CommitComposer() {
  const std::string& buffer = composer_.editor().buffer();
  view_->SetFooter(composer_.Layout(buffer, buffer.size(), terminal_->Columns(), true, false));
  view_->CommitFooter();
}

std::optional<std::string> InteractiveSession::ReadInput() {
  if (tty_ && live_->quit_requested()) {
    composer_.clear_hint();
    CommitComposer();  // the composer stays in the transcript as it was
    return std::nullopt;
  }
  if (tty_) {
    if (std::optional<std::string> next = composer_.PopQueued()) {
      EchoPrompt(*next);
      return next;
    }
  }
  return tty_ ? ReadInputTty() : ReadInputPlain();
}

std::optional<std::string> InteractiveSession::ReadInputTty() {
  UpdateStatus();
  while (true) {
    EditorEvent ev = composer_.Feed("", false);
    ShowComposer();
    while (ev.kind == EditorEventKind::kNone) {
      std::string bytes;
      ReadStatus status = terminal_->Read(&bytes, composer_.has_pending() ? 50 : -1);
      if (status == ReadStatus::kEof) {
        ev.kind = EditorEventKind::kEof;
        break;
      }
      if (status == ReadStatus::kTimeout) ev = composer_.Feed("", true);
      if (status == ReadStatus::kData) ev = composer_.Feed(bytes, false);
      if (ev.kind == EditorEventKind::kNone) ShowComposer();  // a resize too
    }
    if (std::optional<std::optional<std::string>> done = OnPromptEvent(ev)) return *done;
  }
}

std::optional<std::optional<std::string>> InteractiveSession::OnPromptEvent(const EditorEvent& ev) {
  switch (ev.kind) {
    case EditorEventKind::kSubmit:
      pending_edit_ = composer_.TakeEdit();
      EchoPrompt(ev.text);
      return std::optional<std::string>(ev.text);
    case EditorEventKind::kEof:
      CommitComposer();
      return std::optional<std::string>();
    case EditorEventKind::kInterrupt:
      EchoPrompt("");
      if (ev.count >= 2) return std::optional<std::string>();
      terminal_->Write(style_.Dim("Press Ctrl-C again to quit (or Ctrl-D)") + "\r\n");
      break;
    case EditorEventKind::kClearScreen:
      terminal_->Write("\x1b[H\x1b[2J");
      view_->Redraw(true);
      break;
    case EditorEventKind::kEscape:
      if (composer_.OnEscape()) StartBacktrack();
      break;
    case EditorEventKind::kNone:
      break;
  }
  return std::nullopt;
}

std::optional<std::string> InteractiveSession::ReadInputPlain() {
  const bool prompt = isatty(STDIN_FILENO) == 1;
  std::string text;
  while (true) {
    if (prompt) {
      PrintText(stderr, text.empty() ? "› " : "  ");
      std::fflush(stderr);
    }
    std::string line;
    int c;
    while ((c = std::fgetc(stdin)) != EOF && c != '\n') line += static_cast<char>(c);
    if (c == EOF && line.empty()) {
      if (text.empty()) return std::nullopt;
      return text;
    }
    if (!line.empty() && line.back() == '\r') line.pop_back();
    // A trailing backslash continues the prompt on the next line.
    if (!line.empty() && line.back() == '\\') {
      line.back() = '\n';
      text += line;
      continue;
    }
    text += line;
    return text;
  }
}

void InteractiveSession::StartBacktrack() {
  auto items = engine().store().LoadTranscript(conversation().session());
  if (!items.ok()) {
    Warn(items.status().message());
    return;
  }
  std::vector<EditTarget> messages;
  for (const auto& stored : *items) {
    if (core::IsTypedUserMessage(stored.item)) {
      messages.push_back({core::MessageText(stored.item), stored.parent_id});
    }
  }
  composer_.StartBacktrack(std::move(messages));
}

Status InteractiveSession::ForkForEdit(std::optional<int64_t> target, const std::string& edit) {
  // A fork is a new pointer into the item tree: the branch shares every item
  // before the edited message and keeps its parent's prompt_cache_key
  // (core::Conversation::cache_key), so the provider serves that prefix from
  // its cache. It is recorded at the branch point, the last item of the turn
  // before the edited message, as `codex fork --at-turn N` records it.
  const core::SessionInfo parent = conversation().session();
  ASSIGN_OR_RETURN(std::vector<core::StoredItem> history, engine().store().LoadHistory(parent));
  int turns_before = 0;
  for (const auto& stored : history) {
    if (core::IsRealUserMessage(stored.item)) ++turns_before;
    if (target && stored.id == *target) break;
  }
  if (!target) turns_before = 0;
  // 0 for the first message: the branch starts before turn 1 (its context).
  Result<core::SessionInfo> forked = engine().store().Fork(parent.id, turns_before);
  if (!forked.ok()) forked = engine().store().Fork(parent.id, std::nullopt);
  ASSIGN_OR_RETURN(core::SessionInfo fork, std::move(forked));
  if (fork.head_item_id != target) {
    // A view a compaction rewrote (turns counted differently there): the
    // head is moved to the item before the edited message.
    RETURN_IF_ERROR(engine().store().MoveHead(fork.id, fork.head_item_id, target));
  }
  ASSIGN_OR_RETURN(core::SessionInfo moved, engine().store().FindSession(fork.id));
  RETURN_IF_ERROR(SwitchTo(moved, false));
  if (tty_) {
    // The abandoned turns leave the screen (they stay in the old branch):
    // the screen and its scrollback are drawn again from the branch.
    terminal_->Write("\x1b[H\x1b[2J\x1b[3J");
    view_->ForgetPrinted();  // what a resize would print again is the branch's now
    view_->Redraw(true);
    Banner(true);
    ReplayTranscript();
  }
  Say(style_.Dim("branched before that message into " + fork.id + "; the old branch " + parent.id +
                 " is kept (/sessions, codex sessions tree)") +
      "\n");
  if (tty_) EchoPrompt(edit);
  return OkStatus();
}

// --- turns ---

bool InteractiveSession::Dispatch(const std::string& input) {
  if (pending_edit_) {
    std::optional<int64_t> parent = pending_edit_->parent;
    pending_edit_.reset();
    Status forked = ForkForEdit(parent, input);
    if (!forked.ok()) {
      Warn(forked.message());
      return true;
    }
  }
  if (input[0] == '!') {
    std::string command = input.substr(1);
    if (Blank(command)) {
      Warn("'!' needs a command to run, e.g. !ls -la");
      return true;
    }
    RunLocalShell(command);
    return true;
  }
  if (auto slash = ParseSlashCommand(input)) {
    if (!slash->ok()) {
      Warn(slash->status().message());
      return true;
    }
    return RunSlash(**slash);
  }
  RunUserTurn(input);
  return true;
}

void InteractiveSession::RunUserTurn(const std::string& text) {
  // [history] persistence = "none": prompts are not written to history.jsonl.
  if (auto it = in_history_.find(text); it != in_history_.end()) {
    in_history_.erase(it);  // steered too late for its turn: recorded already
  } else if (history_ && engine().config().history_persistence) {
    Status s = history_->Append(conversation().session().id, text, NowMs() / 1000);
    (void)s;  // history is a convenience; a read-only CODEX_HOME must not stop the session
  }
  core::CancelToken cancel;
  Result<core::TurnResult> result = InternalError("turn did not run");
  if (tty_) {
    TurnInterrupt interrupt(&cancel);  // a SIGINT from elsewhere stops the turn too
    view_->BeginTurn();
    BeginUndoSnapshot();  // under the spinner: the turn has visibly started
    // Enter during the turn steers it: the message is shown now and goes to
    // the model at the turn's next request boundary.
    auto steer = [this](const std::string& message) {
      view_->Print(style_.Cyan("› ") + style_.Dim(NeutralizeControls(message)) + "\n");
      if (history_ && engine().config().history_persistence) {
        (void)history_->Append(conversation().session().id, message, NowMs() / 1000);
      }
      conversation().Steer(message);
    };
    live_->Run([&] { result = session_->RunTurn(text, cancel); }, cancel, steer);
    view_->EndTurn();
  } else {
    BeginUndoSnapshot();
    InstallInterruptHandler(&cancel);
    result = session_->RunTurn(text, cancel);
    RemoveInterruptHandler();
  }
  EndUndoSnapshot(result.ok() ? result->turn_id : "");  // failed turns change files too
  // Steered too late for the turn: sent next, or given back when it stopped.
  for (std::string& message : conversation().TakeSteered()) {
    in_history_.insert(message);  // written to history.jsonl when it was steered
    composer_.Queue(std::move(message));
  }
  if (!result.ok()) {
    if (result.status().code() == StatusCode::kCancelled) {
      if (tty_) {
        // What was queued or steered behind an interrupted turn is not sent:
        // it goes back into the composer to be sent or edited. Ctrl-C now
        // warns before it quits, as at any prompt.
        if (live_->quit_warned()) {
          composer_.editor().NoteInterrupt();  // warned already: the next Ctrl-C quits
        } else {
          composer_.editor().ClearInterrupts();
        }
        composer_.Unqueue();
      }
      return;
    }
    Warn(result.status().message());
    return;
  }
  usage_ += result->usage;
  const core::Config& config = engine().config();
  RunNotify(config.notify,
            NotificationJson({conversation().session().id,
                              result->turn_id,
                              config.cwd,
                              {text},
                              result->final_message}),
            core::ModelWritableRootsFor(core::SandboxPolicyFor(config), config.cwd));
  if (tty_) view_->Print("\n");  // the answer itself went out as it streamed
}

void InteractiveSession::RunLocalShell(const std::string& command) {
  core::CommandSpec spec = LocalShellSpec(engine().config(), command);
  core::ToolActivity activity;
  activity.tool = "shell";
  activity.command = ShellJoin(spec.argv);
  core::SandboxedRunner runner;
  core::CancelToken cancel;
  Result<core::CommandResult> result = InternalError("the command did not run");
  core::TurnObserver& shown = observer();
  // Shown as it runs, the way the model's commands are (TurnObserver::OnToolOutput).
  spec.on_output = [&shown](std::string_view chunk) { shown.OnToolOutput("", chunk); };
  if (tty_) {
    TurnInterrupt interrupt(&cancel);
    view_->BeginTurn("Running");
    view_->OnToolStarted(activity);
    live_->Run([&] { result = runner.Run(spec, cancel); }, cancel);
  } else {
    InstallInterruptHandler(&cancel);
    plain_->OnToolStarted(activity);
    result = runner.Run(spec, cancel);
    RemoveInterruptHandler();
  }
  if (!result.ok() && result.status().code() == StatusCode::kCancelled) {
    // Stopped by Esc or Ctrl-C: what it printed so far stays on the screen.
    shown.OnTurnFailed(result.status());
    if (tty_) {
      view_->EndTurn();
      if (live_->quit_warned()) {
        composer_.editor().NoteInterrupt();  // warned already: the next Ctrl-C quits
      } else {
        composer_.editor().ClearInterrupts();  // the next Ctrl-C warns first
      }
    }
    return;
  }
  if (result.ok()) {
    activity.output = result->output;
    activity.exit_code = result->exit_code;
    activity.success = result->exit_code == 0;
  } else {
    activity.output = result.status().message();
    activity.success = false;
  }
  shown.OnToolCompleted(activity);
  if (tty_) view_->EndTurn();
  if (!result.ok()) {
    Warn(result.status().message());
    return;
  }
  // The model sees what the user ran and what it printed, cut like tool output.
  Status saved = AppendUserRecord(LocalShellRecord(command, *result));
  if (!saved.ok()) Warn("the command's output was not added to the session: " + saved.message());
  if (tty_) view_->Print("\n");
}

Status InteractiveSession::AppendUserRecord(const std::string& record) {
  return AppendRecord(core::UserMessage(record));
}

Status InteractiveSession::AppendRecord(core::Item record) {
  if (!conversation().persisted()) {
    // The first action of a session (or after /new): the record is what
    // creates the session row, as a first message does.
    return conversation().AppendRecord(std::move(record));
  }
  ASSIGN_OR_RETURN(core::SessionInfo session,
                   engine().store().FindSession(conversation().session().id));
  RETURN_IF_ERROR(engine()
                      .store()
                      .Append(session.id, session.head_item_id, core::NewUuidV7(), {record})
                      .status());
  // The conversation reloads the session it now trails (approvals kept).
  ASSIGN_OR_RETURN(core::SessionInfo fresh, engine().store().FindSession(session.id));
  return session_->Resume(fresh);
}

// --- the session ---

Status InteractiveSession::Run() {
  flags_ = options_.flags;
  if (!tty_ && options_.start == SessionStart::kPick) {
    return InvalidArgumentError(
        "codex resume needs a session id or --last when not run on a terminal; "
        "'codex sessions list' shows the ids");
  }
  bool resumed = false;
  Result<bool> opened = Open();
  if (opened.ok() && !*opened) return OkStatus();  // left at the trust question
  Result<bool> chosen = opened.ok() ? OpenConversation(&resumed) : Result<bool>(opened.status());
  if (!chosen.ok()) {
    terminal_.reset();  // the terminal restored before the error is printed
    return chosen.status();
  }
  if (!*chosen) {
    terminal_->Write("no session chosen\r\n");
    return OkStatus();
  }
  Banner(resumed);
  if (resumed) ReplayTranscript();

  if (!Blank(options_.prompt)) {
    if (tty_) {
      EchoPrompt(options_.prompt);
      composer_.editor().AddHistory(options_.prompt);
    }
    RunUserTurn(options_.prompt);
  }
  while (true) {
    std::optional<std::string> input = ReadInput();
    if (!input) break;
    if (Blank(*input)) continue;
    if (!Dispatch(*input)) break;
  }
  if (usage_.total_tokens > 0) {
    // As Codex prints on exit: what this run used, all sessions together.
    std::string used = TokenUsageLine(usage_);
    if (tty_) {
      Say(used + "\n");
    } else {
      PrintF(stderr, "%s\n", used.c_str());
    }
  }
  // A session that never got a message was never stored: nothing to resume.
  if (!conversation().persisted()) return OkStatus();
  std::string bye = "resume this session with: codex resume " + conversation().session().id;
  if (tty_) {
    Say(style_.Dim(bye) + "\n");
  } else {
    PrintF(stderr, "%s\n", bye.c_str());
  }
  return OkStatus();
}

}  // namespace interactive_internal

Status RunInteractive(const GlobalOptions& global, InteractiveOptions options) {
  interactive_internal::InteractiveSession session(global, std::move(options));
  return session.Run();
}

}  // namespace codex::cli
