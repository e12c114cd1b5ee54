#include "cli/interactive/interactive_app.h"

#include <stdio.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>

#include "cli/exit_codes.h"
#include "cli/interactive/approval_prompt.h"
#include "cli/interactive/line_editor.h"
#include "cli/interactive/markdown.h"
#include "cli/interactive/prompt_history.h"
#include "cli/interactive/session_picker.h"
#include "cli/interactive/slash_commands.h"
#include "cli/interactive/style.h"
#include "cli/interactive/terminal.h"
#include "cli/interactive/turn_view.h"
#include "cli/interrupt.h"
#include "cli/notify.h"
#include "cli/progress_printer.h"
#include "storage/sqlite_session_store.h"

namespace codex::cli {

namespace {

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

// Runs a shell command line, capturing stdout; the exit status in *status.
std::string Capture(const std::string& command, int* status) {
  std::string out;
  FILE* p = ::popen(command.c_str(), "r");
  if (p == nullptr) {
    *status = -1;
    return out;
  }
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  *status = ::pclose(p);
  return out;
}

bool UseTerminal() {
  if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) return false;
  const char* term = std::getenv("TERM");
  return term != nullptr && *term != '\0' && std::string_view(term) != "dumb";
}

// Whether `text` (one submitted input) is blank.
bool Blank(std::string_view text) {
  return text.find_first_not_of(" \t\r\n") == std::string_view::npos;
}

class InteractiveSession {
 public:
  InteractiveSession(const GlobalOptions& global, InteractiveOptions options)
      : global_(global),
        options_(std::move(options)),
        tty_(UseTerminal()),
        style_(tty_ ? DetectColor(STDOUT_FILENO) : Color::kDisabled) {}

  int Run();

 private:
  // Output: `Say` for results of commands, `Warn` for errors.
  void Say(std::string_view text);
  void Warn(std::string_view message);
  void Banner(bool resumed);
  void ReplayTranscript();

  std::optional<std::string> ReadInput();
  std::optional<std::string> ReadInputTty();
  std::optional<std::string> ReadInputPlain();
  void DrawPrompt(std::string_view buffer, size_t cursor);

  // Runs one user turn; failures are shown and the session goes on.
  void RunUserTurn(const std::string& text);
  // Runs a slash command; false to quit.
  bool RunSlash(const SlashCommand& cmd);

  Status StartEngine(const RunFlags& flags, std::unique_ptr<Engine>* out);
  Status SwitchTo(core::SessionInfo session, bool announce);
  Result<std::optional<core::SessionInfo>> Pick(bool all);
  Status Reopen(const RunFlags& flags);

  void ShowHelp();
  void ShowStatus();
  void ShowSessions();
  void ShowDiff();
  void Compact();

  const GlobalOptions& global_;
  InteractiveOptions options_;
  RunFlags flags_;
  const bool tty_;
  Style style_;
  std::unique_ptr<Terminal> terminal_;
  std::unique_ptr<TurnView> view_;
  std::unique_ptr<ProgressPrinter> printer_;
  std::unique_ptr<ApprovalPrompt> approvals_;
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<core::Conversation> conversation_;
  std::unique_ptr<PromptHistory> history_;
  LineEditor editor_;
  int prompt_cursor_row_ = 0;  // where the editing cursor sits in the drawn prompt
  core::TokenUsage usage_;     // this run's usage, all sessions
};

void InteractiveSession::Say(std::string_view text) {
  if (tty_) {
    terminal_->Write(text);
  } else {
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
  }
}

void InteractiveSession::Warn(std::string_view message) {
  if (tty_) {
    terminal_->Write(style_.Red("error: " + std::string(message)) + "\n");
  } else {
    std::fprintf(stderr, "error: %.*s\n", static_cast<int>(message.size()), message.data());
  }
}

Status InteractiveSession::StartEngine(const RunFlags& flags, std::unique_ptr<Engine>* out) {
  ASSIGN_OR_RETURN(auto engine, Engine::Open(global_, flags));
  engine->set_approver(approvals_.get());
  core::TurnObserver& observer =
      tty_ ? static_cast<core::TurnObserver&>(*view_) : static_cast<core::TurnObserver&>(*printer_);
  RETURN_IF_ERROR(engine->StartModel(observer));
  *out = std::move(engine);
  return OkStatus();
}

void InteractiveSession::Banner(bool resumed) {
  const core::Config& config = engine_->config();
  const core::SessionInfo& s = conversation_->session();
  std::string details = std::string(resumed ? "resumed " : "") + "session " + s.id + " · model " +
                        config.model + " · provider " + config.model_provider_id;
  if (!tty_) {
    std::fprintf(stderr, "%s\n", details.c_str());
    return;
  }
  const int width = terminal_->Columns() - 1;
  std::string settings = config.cwd + " · approval " +
                         std::string(core::ApprovalPolicyName(config.approval_policy)) +
                         " · sandbox " + std::string(core::SandboxModeName(config.sandbox_mode)) +
                         " · /help for commands, Ctrl-D to exit";
  Say(WrapLine(style_.Bold(">_ codex") + "  " + style_.Dim(details), width, "", "   ") +
      WrapLine(style_.Dim(settings), width, "   ", "   ") + "\n");
}

// Shows the tail of a resumed transcript: what was asked and answered.
void InteractiveSession::ReplayTranscript() {
  if (!tty_) return;
  auto items = engine_->store().LoadTranscript(conversation_->session());
  if (!items.ok()) return;
  std::vector<const core::Item*> messages;
  for (const auto& stored : *items) {
    const core::Item& item = stored.item;
    if (item.kind != core::ItemKind::kMessage) continue;
    if (item.role == "assistant" || (item.role == "user" && storage::IsRealUserMessage(item))) {
      messages.push_back(&item);
    }
  }
  constexpr size_t kShown = 6;
  size_t first = messages.size() > kShown ? messages.size() - kShown : 0;
  if (first > 0) Say(style_.Dim("  … " + std::to_string(first) + " earlier messages") + "\n");
  int width = terminal_->Columns() - 1;
  for (size_t i = first; i < messages.size(); ++i) {
    std::string text = core::MessageText(*messages[i]);
    if (messages[i]->role == "user") {
      Say(style_.Cyan("› ") + style_.Dim(text) + "\n\n");
    } else {
      Say(style_.Bold(style_.Magenta("codex")) + "\n" + RenderMarkdown(text, style_, width) + "\n");
    }
  }
}

void InteractiveSession::DrawPrompt(std::string_view buffer, size_t cursor) {
  EditorLayout layout =
      LayoutEditor(style_.Bold(style_.Cyan("› ")), "  ", buffer, cursor, terminal_->Columns());
  std::string out;
  if (prompt_cursor_row_ > 0) out += "\x1b[" + std::to_string(prompt_cursor_row_) + "A";
  out += "\r\x1b[J" + layout.text;
  int up = layout.end_row - layout.cursor_row;
  if (up > 0) out += "\x1b[" + std::to_string(up) + "A";
  out += "\r";
  if (layout.cursor_col > 0) out += "\x1b[" + std::to_string(layout.cursor_col) + "C";
  prompt_cursor_row_ = layout.cursor_row;
  terminal_->Write(out);
}

std::optional<std::string> InteractiveSession::ReadInput() {
  return tty_ ? ReadInputTty() : ReadInputPlain();
}

std::optional<std::string> InteractiveSession::ReadInputTty() {
  prompt_cursor_row_ = 0;
  while (true) {
    EditorEvent ev = editor_.Feed("");
    DrawPrompt(editor_.buffer(), editor_.cursor());
    while (ev.kind == EditorEventKind::kNone) {
      std::string bytes;
      ReadStatus status = terminal_->Read(&bytes, editor_.has_pending_input() ? 50 : -1);
      if (status == ReadStatus::kEof) {
        ev.kind = EditorEventKind::kEof;
        break;
      }
      if (status == ReadStatus::kTimeout) ev = editor_.Flush();
      if (status == ReadStatus::kData) ev = editor_.Feed(bytes);
      if (ev.kind == EditorEventKind::kNone) DrawPrompt(editor_.buffer(), editor_.cursor());
    }
    switch (ev.kind) {
      case EditorEventKind::kSubmit:
        DrawPrompt(ev.text, ev.text.size());
        terminal_->Write("\r\n");
        return ev.text;
      case EditorEventKind::kEof:
        DrawPrompt(editor_.buffer(), editor_.buffer().size());
        terminal_->Write("\r\n");
        return std::nullopt;
      case EditorEventKind::kInterrupt:
        DrawPrompt("", 0);
        if (ev.count >= 2) {
          terminal_->Write("\r\n");
          return std::nullopt;
        }
        terminal_->Write("\r\n" + style_.Dim("Press Ctrl-C again to quit (or Ctrl-D)") + "\r\n");
        prompt_cursor_row_ = 0;
        break;
      case EditorEventKind::kClearScreen:
        terminal_->Write("\x1b[H\x1b[2J");
        prompt_cursor_row_ = 0;
        break;
      case EditorEventKind::kNone:
        break;
    }
  }
}

std::optional<std::string> InteractiveSession::ReadInputPlain() {
  const bool prompt = isatty(STDIN_FILENO) == 1;
  std::string text;
  while (true) {
    if (prompt) {
      std::fputs(text.empty() ? "› " : "  ", stderr);
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

void InteractiveSession::RunUserTurn(const std::string& text) {
  // [history] persistence = "none": prompts are not written to history.jsonl.
  if (history_ && engine_->config().history_persistence) {
    Status s = history_->Append(conversation_->session().id, text, NowMs() / 1000);
    (void)s;  // history is a convenience; a read-only CODEX_HOME must not stop the session
  }
  engine_->BindSession(conversation_->session().id);
  core::CancelToken cancel;
  Result<core::TurnResult> result = InternalError("turn did not run");
  if (tty_) {
    terminal_->SetCtrlC(CtrlC::kAsSignal);
    {
      TurnInterrupt interrupt(&cancel);
      view_->BeginTurn();
      result = conversation_->RunTurn(text, cancel);
      view_->EndTurn();
      terminal_->SetCtrlC(CtrlC::kAsKey);
    }
  } else {
    InstallInterruptHandler(&cancel);
    result = conversation_->RunTurn(text, cancel);
    RemoveInterruptHandler();
  }
  if (!result.ok()) {
    if (result.status().code() == StatusCode::kCancelled) {
      if (tty_) editor_.NoteInterrupt();  // another Ctrl-C now quits
      return;
    }
    Warn(result.status().message());
    return;
  }
  usage_ += result->usage;
  const core::Config& config = engine_->config();
  RunNotify(config.notify, NotificationJson({conversation_->session().id,
                                             result->turn_id,
                                             config.cwd,
                                             {text},
                                             result->final_message}));
  if (tty_) {
    Say("\n");
    return;
  }
  std::string answer = result->final_message;
  if (answer.empty() || answer.back() != '\n') answer += '\n';
  Say(answer);
}

Status InteractiveSession::SwitchTo(core::SessionInfo session, bool announce) {
  ASSIGN_OR_RETURN(auto conversation,
                   core::Conversation::Resume(engine_->config(), engine_->Deps(), session));
  conversation_ = std::move(conversation);
  if (approvals_) approvals_->ResetSession();
  if (announce) {
    Banner(true);
    ReplayTranscript();
  }
  return OkStatus();
}

Status InteractiveSession::Reopen(const RunFlags& flags) {
  std::unique_ptr<Engine> engine;
  RETURN_IF_ERROR(StartEngine(flags, &engine));
  if (conversation_->persisted()) {
    ASSIGN_OR_RETURN(auto session, engine->store().FindSession(conversation_->session().id));
    ASSIGN_OR_RETURN(conversation_,
                     core::Conversation::Resume(engine->config(), engine->Deps(), session));
  } else {
    // Nothing asked yet, so nothing stored: start afresh with the new settings.
    ASSIGN_OR_RETURN(conversation_,
                     core::Conversation::Create(engine->config(), engine->Deps(), "interactive",
                                                conversation_->session().id));
  }
  engine_ = std::move(engine);
  flags_ = flags;
  return OkStatus();
}

Result<std::optional<core::SessionInfo>> InteractiveSession::Pick(bool all) {
  core::ListQuery query;
  if (!all) query.cwd = engine_->config().cwd;
  query.limit = 200;
  ASSIGN_OR_RETURN(core::ListPage page, engine_->store().ListSessions(query));
  if (page.sessions.empty()) {
    return NotFoundError(all ? "there are no sessions yet; start one with 'codex'"
                             : "no session in " + engine_->config().cwd +
                                   " yet; 'codex resume --all' shows every directory");
  }
  SessionPicker picker(std::move(page.sessions), NowMs(), all);
  int drawn_rows = 0;  // rows of the last drawing above the cursor
  auto draw = [&] {
    int columns = terminal_->Columns();
    std::string text = picker.Render(style_, columns, std::max(5, terminal_->Rows() - 2));
    std::string out;
    if (drawn_rows > 0) out += "\x1b[" + std::to_string(drawn_rows) + "A";
    out += "\r\x1b[J" + text;
    drawn_rows = 0;
    size_t pos = 0;
    while (pos <= text.size()) {
      size_t nl = text.find("\r\n", pos);
      if (nl == std::string::npos) nl = text.size();
      int w = DisplayWidth(std::string_view(text).substr(pos, nl - pos));
      if (nl != text.size()) drawn_rows += std::max(1, (w + columns - 1) / columns);
      pos = nl + 2;
    }
    terminal_->Write(out);
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
  std::string clear;
  if (drawn_rows > 0) clear += "\x1b[" + std::to_string(drawn_rows) + "A";
  terminal_->Write(clear + "\r\x1b[J");
  if (result == PickerResult::kCancelled) return std::optional<core::SessionInfo>();
  return std::optional<core::SessionInfo>(picker.chosen());
}

void InteractiveSession::ShowHelp() {
  std::string out = style_.Bold("Commands") + "\n";
  for (const auto& c : SlashCommands()) {
    std::string name = std::string(c.name) + (c.args.empty() ? "" : " " + std::string(c.args));
    out += "  " + style_.Cyan(name) + std::string(name.size() < 20 ? 20 - name.size() : 1, ' ') +
           std::string(c.help) + "\n";
  }
  if (tty_) {
    out += style_.Bold("Keys") + "\n" +
           "  Enter send · Alt-Enter, Shift-Enter, Ctrl-J or a trailing \\ new line · ↑/↓ history\n"
           "  Ctrl-C interrupt the turn (twice: quit) · Ctrl-D quit · Tab complete a command\n";
  }
  Say(out);
}

void InteractiveSession::ShowStatus() {
  const core::Config& config = engine_->config();
  core::SessionInfo session = conversation_->session();
  if (auto fresh = engine_->store().FindSession(session.id); fresh.ok()) session = *fresh;
  auto row = [&](std::string_view key, const std::string& value) {
    std::string k(key);
    k.resize(12, ' ');
    return "  " + style_.Dim(k) + value + "\n";
  };
  std::string out = style_.Bold("Status") + "\n";
  out += row("model", config.model);
  out += row("provider", config.model_provider_id + " (" + config.provider.base_url + ")");
  out += row("session", session.id + (session.name.empty() ? "" : " (" + session.name + ")"));
  if (!session.forked_from_session.empty()) out += row("forked from", session.forked_from_session);
  out += row("directory", config.cwd);
  out += row("approval", std::string(core::ApprovalPolicyName(config.approval_policy)));
  out += row("sandbox", std::string(core::SandboxModeName(config.sandbox_mode)));
  out += row("tokens", GroupThousands(session.tokens_used) + " used in this session (" +
                           GroupThousands(usage_.total_tokens) + " in this run); next request ~" +
                           GroupThousands(conversation_->EstimatedTokens()));
  out += row("context", std::to_string(conversation_->ContextLeftPercent()) + "% left");
  Say(out);
}

void InteractiveSession::ShowSessions() {
  core::ListQuery query;
  query.cwd = engine_->config().cwd;
  query.limit = 15;
  auto page = engine_->store().ListSessions(query);
  if (!page.ok()) {
    Warn(page.status().message());
    return;
  }
  if (page->sessions.empty()) {
    Say("no sessions in " + engine_->config().cwd + "\n");
    return;
  }
  std::string out = style_.Bold("Recent sessions in " + engine_->config().cwd) + "\n";
  int64_t now = NowMs();
  for (const auto& s : page->sessions) {
    bool current = s.id == conversation_->session().id;
    std::string when = Ago(s.updated_at_ms, now);
    when.resize(std::max<size_t>(when.size(), 9), ' ');
    std::string title = s.name.empty() ? s.title : s.name + ": " + s.title;
    if (title.empty()) title = "(no message yet)";
    out +=
        (current ? style_.Cyan("* ") : "  ") + s.id + "  " + style_.Dim(when) + " " + title + "\n";
  }
  out += style_.Dim("/resume ID switches to one") + "\n";
  Say(out);
}

void InteractiveSession::ShowDiff() {
  const std::string dir = ShellQuote(engine_->config().cwd);
  int status = 0;
  Capture("git -C " + dir + " rev-parse --is-inside-work-tree 2>/dev/null", &status);
  if (status != 0) {
    Warn(engine_->config().cwd + " is not inside a git repository; /diff needs one");
    return;
  }
  std::string color = style_.color() ? "always" : "never";
  std::string diff =
      Capture("git -C " + dir + " --no-pager diff --color=" + color + " 2>&1", &status);
  std::string untracked =
      Capture("git -C " + dir + " ls-files --others --exclude-standard -z 2>/dev/null", &status);
  size_t pos = 0;
  while (pos < untracked.size()) {
    size_t end = untracked.find('\0', pos);
    if (end == std::string::npos) end = untracked.size();
    std::string file = untracked.substr(pos, end - pos);
    pos = end + 1;
    diff += Capture("git -C " + dir + " --no-pager diff --no-index --color=" + color +
                        " -- /dev/null " + ShellQuote(file) + " 2>&1",
                    &status);
  }
  if (Blank(diff)) {
    Say("no changes in the workspace\n");
    return;
  }
  if (diff.back() != '\n') diff += '\n';
  Say(diff);
}

void InteractiveSession::Compact() {
  core::CancelToken cancel;
  Result<bool> s = false;
  if (tty_) {
    terminal_->SetCtrlC(CtrlC::kAsSignal);
    {
      TurnInterrupt interrupt(&cancel);
      view_->BeginTurn("Compacting");
      s = conversation_->CompactNow(cancel);
      view_->EndTurn();
      terminal_->SetCtrlC(CtrlC::kAsKey);
    }
  } else {
    InstallInterruptHandler(&cancel);
    s = conversation_->CompactNow(cancel);
    RemoveInterruptHandler();
  }
  if (!s.ok()) {
    Warn(s.status().code() == StatusCode::kCancelled ? "compaction interrupted; nothing changed"
                                                     : s.status().message());
    return;
  }
  if (!*s) return;  // the observer already said why nothing was compacted
  Say("compacted; context " + std::to_string(conversation_->ContextLeftPercent()) + "% left\n");
}

bool InteractiveSession::RunSlash(const SlashCommand& cmd) {
  switch (cmd.kind) {
    case SlashKind::kHelp:
      ShowHelp();
      return true;
    case SlashKind::kStatus:
      ShowStatus();
      return true;
    case SlashKind::kCompact:
      Compact();
      return true;
    case SlashKind::kFork: {
      std::string from = conversation_->session().id;
      auto forked = engine_->store().Fork(from, cmd.turn);
      if (!forked.ok()) {
        Warn(forked.status().message());
        return true;
      }
      Status s = SwitchTo(*forked, false);
      if (!s.ok()) {
        Warn(s.message());
        return true;
      }
      Say("forked " + from + (cmd.turn ? " after turn " + std::to_string(*cmd.turn) : "") +
          " into " + style_.Bold(forked->id) + "; you are now in the branch\n");
      return true;
    }
    case SlashKind::kSessions:
      ShowSessions();
      return true;
    case SlashKind::kResume: {
      std::optional<core::SessionInfo> target;
      if (cmd.arg.empty()) {
        if (!tty_) {
          Warn("/resume needs a session id here; /sessions lists them");
          return true;
        }
        auto picked = Pick(false);
        if (!picked.ok()) {
          Warn(picked.status().message());
          return true;
        }
        if (!picked->has_value()) return true;
        target = **picked;
      } else {
        auto found = ResolveSession(engine_->store(), cmd.arg, false, engine_->config().cwd);
        if (!found.ok()) {
          Warn(found.status().message());
          return true;
        }
        target = *found;
      }
      Status s = SwitchTo(*target, true);
      if (!s.ok()) Warn(s.message());
      return true;
    }
    case SlashKind::kModel: {
      if (cmd.arg.empty()) {
        Say("model: " + engine_->config().model + "\n");
        return true;
      }
      RunFlags flags = flags_;
      flags.model = cmd.arg;
      Status s = Reopen(flags);
      if (!s.ok()) {
        Warn(s.message());
        return true;
      }
      Say("model set to " + style_.Bold(engine_->config().model) + " for this session\n");
      return true;
    }
    case SlashKind::kApprovals: {
      if (cmd.arg.empty()) {
        Say("approval policy: " +
            std::string(core::ApprovalPolicyName(engine_->config().approval_policy)) + "\n");
        return true;
      }
      if (!core::ParseApprovalPolicy(cmd.arg)) {
        Warn("'" + cmd.arg + "' is not one of untrusted, on-failure, on-request, never");
        return true;
      }
      RunFlags flags = flags_;
      flags.approval = cmd.arg;
      flags.full_auto = false;
      flags.bypass = false;
      Status s = Reopen(flags);
      if (!s.ok()) {
        Warn(s.message());
        return true;
      }
      Say("approval policy set to " + style_.Bold(cmd.arg) + "\n");
      return true;
    }
    case SlashKind::kDiff:
      ShowDiff();
      return true;
    case SlashKind::kNew: {
      auto created = core::Conversation::Create(engine_->config(), engine_->Deps(), "interactive");
      if (!created.ok()) {
        Warn(created.status().message());
        return true;
      }
      conversation_ = std::move(*created);
      if (approvals_) approvals_->ResetSession();
      Banner(false);
      return true;
    }
    case SlashKind::kQuit:
      return false;
  }
  return true;
}

int InteractiveSession::Run() {
  flags_ = options_.flags;
  if (!tty_ && options_.start == SessionStart::kPick) {
    return ReportError(InvalidArgumentError(
        "codex resume needs a session id or --last when not run on a terminal; "
        "'codex sessions list' shows the ids"));
  }
  if (tty_) {
    auto terminal = Terminal::Open(STDIN_FILENO, STDOUT_FILENO);
    if (!terminal.ok()) return ReportError(terminal.status());
    terminal_ = std::move(*terminal);
    view_ = std::make_unique<TurnView>(*terminal_, style_);
    approvals_ = std::make_unique<TtyApprovalPrompt>(*terminal_, *view_, style_);
  } else {
    printer_ = std::make_unique<ProgressPrinter>(stderr);
    approvals_ = std::make_unique<LineApprovalPrompt>(stdin, stderr);
  }
  Status started = StartEngine(flags_, &engine_);
  if (!started.ok()) {
    terminal_.reset();
    return ReportError(started);
  }
  const core::Config& config = engine_->config();
  if (view_) view_->set_hide_reasoning(config.hide_agent_reasoning);
  history_ = std::make_unique<PromptHistory>(config.codex_home + "/history.jsonl");
  if (tty_) {
    editor_ = LineEditor(history_->Load());
    editor_.SetCompletions(SlashCompletions());
  }

  bool resumed = options_.start != SessionStart::kNew;
  std::optional<core::SessionInfo> session;
  if (options_.start == SessionStart::kPick) {
    auto picked = Pick(options_.all);
    if (!picked.ok()) {
      terminal_.reset();
      return ReportError(picked.status());
    }
    if (!picked->has_value()) {
      terminal_->Write("no session chosen\r\n");
      return kExitOk;
    }
    session = **picked;
  } else if (resumed) {
    auto found = ResolveSession(engine_->store(), options_.session_id,
                                options_.start == SessionStart::kResumeLast, config.cwd);
    if (!found.ok()) {
      terminal_.reset();
      return ReportError(found.status());
    }
    session = *found;
  }
  if (session) {
    auto c = core::Conversation::Resume(engine_->config(), engine_->Deps(), *session);
    if (!c.ok()) {
      terminal_.reset();
      return ReportError(c.status());
    }
    conversation_ = std::move(*c);
  } else {
    auto c = core::Conversation::Create(engine_->config(), engine_->Deps(), "interactive");
    if (!c.ok()) {
      terminal_.reset();
      return ReportError(c.status());
    }
    conversation_ = std::move(*c);
  }
  Banner(resumed);
  if (resumed) ReplayTranscript();

  if (!Blank(options_.prompt)) {
    if (tty_) {
      DrawPrompt(options_.prompt, options_.prompt.size());
      terminal_->Write("\r\n");
      editor_.AddHistory(options_.prompt);
    }
    RunUserTurn(options_.prompt);
  }
  while (true) {
    std::optional<std::string> input = ReadInput();
    if (!input) break;
    if (Blank(*input)) continue;
    if (auto slash = ParseSlashCommand(*input)) {
      if (!slash->ok()) {
        Warn(slash->status().message());
        continue;
      }
      if (!RunSlash(**slash)) break;
      continue;
    }
    RunUserTurn(*input);
  }
  // A session that never got a message was never stored: nothing to resume.
  if (!conversation_->persisted()) return kExitOk;
  std::string bye = "resume this session with: codex resume " + conversation_->session().id;
  if (tty_) {
    Say(style_.Dim(bye) + "\n");
  } else {
    std::fprintf(stderr, "%s\n", bye.c_str());
  }
  return kExitOk;
}

}  // namespace

int RunInteractive(const GlobalOptions& global, InteractiveOptions options) {
  InteractiveSession session(global, std::move(options));
  return session.Run();
}

}  // namespace codex::cli
