#include "cli/interactive/interactive_app.h"

#include <stdio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "cli/exit_codes.h"
#include "cli/interactive/approval_prompt.h"
#include "cli/interactive/drawn_lines.h"
#include "cli/interactive/file_search.h"
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
#include "core/sandboxed_runner.h"
#include "core/tool_router.h"
#include "core/uuid.h"
#include "sandbox/truncate.h"
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

// The record a "!cmd" leaves in the transcript starts with this (as in Codex).
constexpr std::string_view kShellRecord = "<user_shell_command>";

bool IsShellRecord(std::string_view text) {
  return text.substr(0, kShellRecord.size()) == kShellRecord;
}

// Whether `text` (one submitted input) is blank.
bool Blank(std::string_view text) {
  return text.find_first_not_of(" \t\r\n") == std::string_view::npos;
}

// Without a terminal: every assistant message goes to stdout once, as it
// completes (so a message before a tool call is not lost either), and the
// rest of the progress to stderr.
class PlainObserver final : public core::TurnObserver {
 public:
  explicit PlainObserver(std::FILE* err) : progress_(err) {}

  void OnItemCompleted(const core::Item& item) override {
    if (item.kind != core::ItemKind::kMessage || item.role != "assistant") return;
    std::string text = core::MessageText(item);
    if (text.empty()) return;
    if (text.back() != '\n') text += '\n';
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
  }
  void OnToolStarted(const core::ToolActivity& a) override { progress_.OnToolStarted(a); }
  void OnToolCompleted(const core::ToolActivity& a) override { progress_.OnToolCompleted(a); }
  void OnCompaction(const core::CompactionNotice& n) override { progress_.OnCompaction(n); }
  void OnTurnFailed(const Status& s) override { progress_.OnTurnFailed(s); }
  void OnNotice(std::string_view m) override { progress_.OnNotice(m); }

 private:
  ProgressPrinter progress_;
};

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
  // The composer (queued messages, then the prompt with `buffer`) as drawn.
  EditorLayout ComposerLayout(std::string_view buffer, size_t cursor, bool with_popup) const;
  void ShowComposer();
  // Leaves `text` in the transcript as the submitted prompt.
  void EchoPrompt(const std::string& text);
  // Decodes `bytes` (after what is pending) and hands each key to the popup
  // or the editor until one gives an event; `flush` resolves a lone Esc.
  EditorEvent FeedKeys(std::string_view bytes, bool flush);
  // The popup for the composer's current text: "/" commands, "@" files.
  void UpdatePopup();
  // Handles `key` when the popup wants it (true), setting *event.
  bool PopupKey(const Key& key, EditorEvent* event);
  std::string PopupText(int columns) const;
  // Esc-Esc on an empty composer: the user's messages of this session,
  // newest first, put in the composer one by one; sending an edited one
  // branches the session just before it (ForkForEdit).
  void StartBacktrack();
  void StepBacktrack();
  Status ForkForEdit(std::optional<int64_t> target);

  // Runs one user turn; failures are shown and the session goes on.
  void RunUserTurn(const std::string& text);
  // On a terminal: runs `work` on a thread of its own while this one keeps
  // the composer live (typing, queueing with Enter, Esc or Ctrl-C to cancel)
  // and runs what the work hands over (approval menus).
  void RunLive(const std::function<void()>& work, core::CancelToken& cancel);
  // Runs `fn` on the thread reading the keys and returns when it has run.
  void RunOnUi(const std::function<void()>& fn);
  void RunUiCalls();
  // Moves the queued messages back into the composer.
  void Unqueue();
  // Runs a slash command; false to quit.
  bool RunSlash(const SlashCommand& cmd);
  // "!cmd": runs `command` with bash under the session's sandbox, shows it
  // like a tool call, and records it and its output in the transcript (a
  // <user_shell_command> user message) for the model's next request.
  void RunLocalShell(const std::string& command);

  Status StartEngine(const RunFlags& flags, std::unique_ptr<Engine>* out);
  Status SwitchTo(core::SessionInfo session, bool announce);
  Result<std::optional<core::SessionInfo>> Pick(bool all);
  Status Reopen(const RunFlags& flags);

  // Opens a picker under the composer: choosing runs "/<command> <value>".
  void OpenChoice(const std::string& command, const std::string& current,
                  const std::vector<std::pair<std::string, std::string>>& choices);
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
  std::unique_ptr<ApprovalPrompt> approvals_;
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<core::Conversation> conversation_;
  std::unique_ptr<PromptHistory> history_;
  std::unique_ptr<PlainObserver> plain_;
  LineEditor editor_;
  std::deque<std::string> queued_;  // sent one by one when the turn ends
  KeyDecoder keys_;
  std::string composer_hint_;    // a dim line above the prompt ("" = none)
  bool esc_armed_ = false;       // one Esc on an empty composer: another starts backtracking
  bool quit_requested_ = false;  // Ctrl-D (or Ctrl-C twice) during a turn

  struct EditTarget {
    std::string text;
    std::optional<int64_t> parent;  // the item before the message (nullopt: the session's start)
  };
  struct Backtrack {
    std::vector<EditTarget> messages;  // oldest first
    size_t index = 0;                  // the one in the composer
  };
  std::optional<Backtrack> backtrack_;
  std::optional<EditTarget> pending_edit_;  // set when an edited message was sent

  // The popup under the composer.
  // kHistory (Ctrl-R) and kChoice (the /model and /approvals pickers) stay
  // open until an item is taken or Esc closes them.
  enum class PopupKind { kNone, kSlash, kFile, kHistory, kChoice };
  PopupKind popup_ = PopupKind::kNone;
  std::vector<std::string> popup_items_;  // "/name" or a path
  std::vector<std::string> popup_help_;   // kSlash: the one-line descriptions
  size_t popup_selected_ = 0;
  size_t popup_word_start_ = 0;                    // kFile: where the "@word" starts
  std::string popup_dismissed_for_;                // the buffer Esc closed the popup on
  std::optional<std::vector<std::string>> files_;  // the workspace, listed on first "@"
  core::TokenUsage usage_;                         // this run's usage, all sessions

  // Closures handed to the thread reading the keys (RunOnUi).
  std::mutex ui_mutex_;
  std::condition_variable ui_done_;
  std::deque<const std::function<void()>*> ui_calls_;
  size_t ui_calls_run_ = 0;
};

void InteractiveSession::Say(std::string_view text) {
  if (tty_) {
    view_->Print(text);  // above the composer when it is drawn
  } else {
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
  }
}

void InteractiveSession::Warn(std::string_view message) {
  if (tty_) {
    view_->Print(style_.Red("error: " + std::string(message)) + "\n");
  } else {
    std::fprintf(stderr, "error: %.*s\n", static_cast<int>(message.size()), message.data());
  }
}

Status InteractiveSession::StartEngine(const RunFlags& flags, std::unique_ptr<Engine>* out) {
  ASSIGN_OR_RETURN(auto engine, Engine::Open(global_, flags));
  engine->set_approver(approvals_.get());
  core::TurnObserver& observer =
      tty_ ? static_cast<core::TurnObserver&>(*view_) : static_cast<core::TurnObserver&>(*plain_);
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
    if (item.role == "assistant" || (item.role == "user" && storage::IsRealUserMessage(item) &&
                                     !IsShellRecord(core::MessageText(item)))) {
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

EditorLayout InteractiveSession::ComposerLayout(std::string_view buffer, size_t cursor,
                                                bool with_popup) const {
  const int columns = terminal_->Columns();
  std::string queued;
  int rows = 0;
  for (const auto& q : queued_) {
    std::string line = q.substr(0, q.find('\n'));
    std::string shown = "↳ queued: ";
    int room = columns - 1 - DisplayWidth(shown);
    size_t i = 0;
    int w = 0;
    while (i < line.size()) {
      size_t next = NextGrapheme(line, i);
      int cw = DisplayWidth(std::string_view(line).substr(i, next - i));
      if (w + cw > room - 1) break;
      w += cw;
      i = next;
    }
    shown += line.substr(0, i) + (i < line.size() || line.size() < q.size() ? "…" : "");
    queued += style_.Dim(shown) + "\r\n";
    ++rows;
  }
  if (with_popup && !composer_hint_.empty()) {
    std::string hint = composer_hint_;
    size_t i = 0;
    int w = 0;
    while (i < hint.size()) {  // one row: cut to the width
      size_t next = NextGrapheme(hint, i);
      w += DisplayWidth(std::string_view(hint).substr(i, next - i));
      if (w > columns - 2) break;
      i = next;
    }
    queued += style_.Dim(hint.substr(0, i)) + "\r\n";
    ++rows;
  }
  EditorLayout layout = LayoutEditor(style_.Bold(style_.Cyan("› ")), "  ", buffer, cursor, columns);
  layout.text = queued + layout.text;
  layout.rows += rows;
  layout.cursor_row += rows;
  layout.end_row += rows;
  if (with_popup && popup_ != PopupKind::kNone) {
    // The popup goes under the prompt; the cursor stays in the prompt.
    std::string popup = PopupText(columns);
    int popup_rows =
        static_cast<int>(popup_items_.size()) + (popup_ == PopupKind::kHistory ? 1 : 0);
    layout.text += popup;
    layout.rows += popup_rows;
    layout.end_row += popup_rows;
    layout.end_col = 0;
  }
  return layout;
}

EditorEvent InteractiveSession::FeedKeys(std::string_view bytes, bool flush) {
  keys_.Feed(bytes);
  while (true) {
    std::optional<Key> key = flush ? keys_.Flush() : keys_.Next();
    if (!key) return {};
    EditorEvent ev;
    if (!PopupKey(*key, &ev)) ev = editor_.HandleKey(*key);
    UpdatePopup();
    if (key->code != KeyCode::kEsc && esc_armed_) {  // another key: no Esc-Esc
      esc_armed_ = false;
      composer_hint_.clear();
    }
    if (backtrack_ && editor_.buffer().empty() && ev.kind == EditorEventKind::kNone) {
      // Ctrl-C or deleting it all: the edit is cancelled
      backtrack_.reset();
      composer_hint_.clear();
    }
    if (ev.kind != EditorEventKind::kNone) return ev;
  }
}

void InteractiveSession::UpdatePopup() {
  const std::string& buffer = editor_.buffer();
  const size_t cursor = editor_.cursor();
  if (popup_ == PopupKind::kChoice) return;
  if (popup_ == PopupKind::kHistory) {
    // The composer's text is the query: entries holding it, newest first.
    std::string query = buffer;
    for (char& c : query) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::vector<std::string> items;
    const auto& history = editor_.history();
    for (auto it = history.rbegin(); it != history.rend() && items.size() < 8; ++it) {
      std::string lower = *it;
      for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (lower.find(query) != std::string::npos &&
          std::find(items.begin(), items.end(), *it) == items.end()) {
        items.push_back(*it);
      }
    }
    if (items != popup_items_) popup_selected_ = 0;
    popup_items_ = std::move(items);
    popup_help_.clear();
    return;
  }
  popup_ = PopupKind::kNone;
  if (!popup_dismissed_for_.empty() && buffer == popup_dismissed_for_) return;
  popup_dismissed_for_.clear();
  std::vector<std::string> items;
  std::vector<std::string> help;
  PopupKind kind = PopupKind::kNone;
  if (!buffer.empty() && buffer[0] == '/' && cursor == buffer.size() &&
      buffer.find_first_of(" \t\n") == std::string::npos) {
    for (const SlashSpec* c : MatchSlashCommands(std::string_view(buffer).substr(1))) {
      items.emplace_back(c->name);
      help.emplace_back(c->help);
    }
    kind = PopupKind::kSlash;
  } else {
    size_t start = cursor;
    while (start > 0 && buffer[start - 1] != ' ' && buffer[start - 1] != '\n') --start;
    if (start < buffer.size() && buffer[start] == '@') {
      if (!files_) files_ = ListWorkspaceFiles(engine_->config().cwd);
      items = FuzzyFind(*files_, std::string_view(buffer).substr(start + 1, cursor - start - 1), 8);
      popup_word_start_ = start;
      kind = PopupKind::kFile;
    }
  }
  if (items.empty()) return;
  if (items != popup_items_) popup_selected_ = 0;
  popup_items_ = std::move(items);
  popup_help_ = std::move(help);
  popup_ = kind;
}

bool InteractiveSession::PopupKey(const Key& key, EditorEvent* event) {
  if (key.code == KeyCode::kCtrl && key.ctrl == 'r') {
    if (popup_ == PopupKind::kHistory) {
      if (!popup_items_.empty()) popup_selected_ = (popup_selected_ + 1) % popup_items_.size();
    } else {
      popup_ = PopupKind::kHistory;
      popup_items_.clear();
    }
    return true;
  }
  if (popup_ == PopupKind::kNone) return false;
  const size_t n = popup_items_.size();
  if (n == 0) {
    if (key.code == KeyCode::kEsc) popup_ = PopupKind::kNone;
    return key.code == KeyCode::kEsc;
  }
  switch (key.code) {
    case KeyCode::kUp:
      popup_selected_ = (popup_selected_ + n - 1) % n;
      return true;
    case KeyCode::kDown:
      popup_selected_ = (popup_selected_ + 1) % n;
      return true;
    case KeyCode::kEsc:
      if (popup_ == PopupKind::kHistory || popup_ == PopupKind::kChoice) {
        popup_ = PopupKind::kNone;
      } else {
        popup_dismissed_for_ = editor_.buffer();
      }
      return true;
    case KeyCode::kTab:
    case KeyCode::kEnter: {
      const std::string item = popup_items_[popup_selected_];
      if (popup_ == PopupKind::kHistory) {  // the entry is put in the composer to edit or send
        popup_ = PopupKind::kNone;
        editor_.SetBuffer(item);
        return true;
      }
      if (popup_ == PopupKind::kChoice) {  // the picker's choice runs at once
        popup_ = PopupKind::kNone;
        editor_.SetBuffer(item);
        *event = editor_.HandleKey(Key{KeyCode::kEnter, "", 0});
        return true;
      }
      if (popup_ == PopupKind::kSlash) {
        const SlashSpec* spec = nullptr;
        for (const auto& c : SlashCommands()) {
          if (c.name == item) spec = &c;
        }
        // Enter runs a command that needs no argument; otherwise (and on
        // Tab) the name is completed for the argument to be typed.
        if (key.code == KeyCode::kEnter && spec != nullptr &&
            (spec->args.empty() || spec->args[0] == '[')) {
          editor_.SetBuffer(item);
          *event = editor_.HandleKey(key);
        } else {
          editor_.SetBuffer(item + " ");
        }
        return true;
      }
      // A file: the "@word" becomes the path.
      std::string buffer = editor_.buffer();
      size_t end = editor_.cursor();
      std::string path = item.find(' ') == std::string::npos ? item : "\"" + item + "\"";
      buffer.replace(popup_word_start_, end - popup_word_start_, path + " ");
      std::string after = buffer.substr(popup_word_start_ + path.size() + 1);
      editor_.SetBuffer(buffer);
      editor_.SetCursor(buffer.size() - after.size());
      return true;
    }
    default:
      return false;
  }
}

std::string InteractiveSession::PopupText(int columns) const {
  if (popup_ == PopupKind::kNone) return "";
  std::string out;
  if (popup_ == PopupKind::kHistory) {
    out += "\r\n" + style_.Dim(popup_items_.empty() ? "history search: no match (Esc closes)"
                                                    : "history search: ↑↓ or Ctrl-R to choose, "
                                                      "Enter to edit, Esc to close");
  }
  size_t name_width = 0;
  for (const auto& item : popup_items_) name_width = std::max(name_width, item.size());
  for (size_t i = 0; i < popup_items_.size(); ++i) {
    std::string line = (i == popup_selected_ ? "› " : "  ") + popup_items_[i];
    if (i < popup_help_.size()) {
      line += std::string(name_width + 2 - popup_items_[i].size(), ' ') + popup_help_[i];
    }
    for (char& c : line) {
      if (c == '\n') c = ' ';  // a multi-line history entry on one row
    }
    // One row each: cut to the width.
    std::string cut;
    int w = 0;
    size_t pos = 0;
    while (pos < line.size()) {
      size_t next = NextGrapheme(line, pos);
      int cw = DisplayWidth(std::string_view(line).substr(pos, next - pos));
      if (w + cw > columns - 2) break;
      cut += line.substr(pos, next - pos);
      w += cw;
      pos = next;
    }
    out += "\r\n" + (i == popup_selected_ ? style_.Cyan(cut) : style_.Dim(cut));
  }
  return out;
}

void InteractiveSession::ShowComposer() {
  view_->SetFooter(ComposerLayout(editor_.buffer(), editor_.cursor(), true));
}

void InteractiveSession::EchoPrompt(const std::string& text) {
  std::deque<std::string> queued;
  queued.swap(queued_);
  view_->SetFooter(ComposerLayout(text, text.size(), false));
  view_->CommitFooter();
  queued.swap(queued_);
}

std::optional<std::string> InteractiveSession::ReadInput() {
  if (quit_requested_) {
    composer_hint_.clear();
    if (tty_) {  // the composer stays in the transcript as it was
      view_->SetFooter(ComposerLayout(editor_.buffer(), editor_.buffer().size(), false));
      view_->CommitFooter();
    }
    return std::nullopt;
  }
  if (tty_ && !queued_.empty()) {
    std::string next = queued_.front();
    queued_.pop_front();
    EchoPrompt(next);
    return next;
  }
  return tty_ ? ReadInputTty() : ReadInputPlain();
}

std::optional<std::string> InteractiveSession::ReadInputTty() {
  while (true) {
    EditorEvent ev = FeedKeys("", false);
    ShowComposer();
    while (ev.kind == EditorEventKind::kNone) {
      std::string bytes;
      ReadStatus status = terminal_->Read(&bytes, keys_.has_pending() ? 50 : -1);
      if (status == ReadStatus::kEof) {
        ev.kind = EditorEventKind::kEof;
        break;
      }
      if (status == ReadStatus::kTimeout) ev = FeedKeys("", true);
      if (status == ReadStatus::kData) ev = FeedKeys(bytes, false);
      if (ev.kind == EditorEventKind::kNone) ShowComposer();
    }
    switch (ev.kind) {
      case EditorEventKind::kSubmit:
        if (backtrack_) {
          pending_edit_ = backtrack_->messages[backtrack_->index];
          backtrack_.reset();
          composer_hint_.clear();
        }
        EchoPrompt(ev.text);
        return ev.text;
      case EditorEventKind::kEof:
        view_->SetFooter(ComposerLayout(editor_.buffer(), editor_.buffer().size(), false));
        view_->CommitFooter();
        return std::nullopt;
      case EditorEventKind::kInterrupt:
        if (ev.count >= 2) {
          EchoPrompt("");
          return std::nullopt;
        }
        EchoPrompt("");
        terminal_->Write(style_.Dim("Press Ctrl-C again to quit (or Ctrl-D)") + "\r\n");
        break;
      case EditorEventKind::kClearScreen:
        terminal_->Write("\x1b[H\x1b[2J");
        view_->Redraw(true);
        break;
      case EditorEventKind::kEscape:
        if (backtrack_) {
          StepBacktrack();
        } else if (editor_.buffer().empty() && esc_armed_) {
          esc_armed_ = false;
          StartBacktrack();
        } else if (editor_.buffer().empty()) {
          esc_armed_ = true;
          composer_hint_ = "Esc again to edit a previous message";
        }
        break;
      case EditorEventKind::kNone:
        break;
    }
  }
}

void InteractiveSession::StartBacktrack() {
  composer_hint_.clear();
  auto items = engine_->store().LoadTranscript(conversation_->session());
  if (!items.ok()) {
    Warn(items.status().message());
    return;
  }
  Backtrack b;
  for (const auto& stored : *items) {
    if (stored.item.kind == core::ItemKind::kMessage && stored.item.role == "user" &&
        storage::IsRealUserMessage(stored.item) && !IsShellRecord(core::MessageText(stored.item))) {
      b.messages.push_back({core::MessageText(stored.item), stored.parent_id});
    }
  }
  if (b.messages.empty()) {
    composer_hint_ = "no message to edit yet";
    return;
  }
  b.index = b.messages.size();
  backtrack_ = std::move(b);
  StepBacktrack();
}

void InteractiveSession::StepBacktrack() {
  if (backtrack_->index > 0) --backtrack_->index;
  editor_.SetBuffer(backtrack_->messages[backtrack_->index].text);
  composer_hint_ = "editing message " + std::to_string(backtrack_->index + 1) + " of " +
                   std::to_string(backtrack_->messages.size()) +
                   ": Enter sends it on a new branch (this one is kept) · Esc: an earlier one · "
                   "Ctrl-C: cancel";
}

Status InteractiveSession::ForkForEdit(std::optional<int64_t> target) {
  // A fork is a new pointer into the item tree: the branch shares every item
  // before the edited message, so the prefix stays cached.
  const std::string from = conversation_->session().id;
  ASSIGN_OR_RETURN(core::SessionInfo fork, engine_->store().Fork(from, std::nullopt));
  RETURN_IF_ERROR(engine_->store().MoveHead(fork.id, fork.head_item_id, target));
  ASSIGN_OR_RETURN(core::SessionInfo moved, engine_->store().FindSession(fork.id));
  RETURN_IF_ERROR(SwitchTo(moved, false));
  Say(style_.Dim("branched before that message into " + fork.id + "; the old branch " + from +
                 " is kept (/sessions, codex sessions tree)") +
      "\n");
  return OkStatus();
}

void InteractiveSession::RunOnUi(const std::function<void()>& fn) {
  std::unique_lock<std::mutex> lock(ui_mutex_);
  ui_calls_.push_back(&fn);
  size_t ticket = ui_calls_run_ + ui_calls_.size();
  terminal_->Wake();
  ui_done_.wait(lock, [&] { return ui_calls_run_ >= ticket; });
}

void InteractiveSession::RunUiCalls() {
  std::unique_lock<std::mutex> lock(ui_mutex_);
  while (!ui_calls_.empty()) {
    const std::function<void()>* fn = ui_calls_.front();
    lock.unlock();
    (*fn)();
    ShowComposer();
    lock.lock();
    ui_calls_.pop_front();
    ++ui_calls_run_;
    ui_done_.notify_all();
  }
}

void InteractiveSession::RunLive(const std::function<void()>& work, core::CancelToken& cancel) {
  std::atomic<bool> done{false};
  std::thread worker([&] {
    work();
    done = true;
    terminal_->Wake();
  });
  ShowComposer();
  bool cancelled_here = false;
  while (!done) {
    RunUiCalls();
    std::string bytes;
    ReadStatus status = terminal_->Read(&bytes, keys_.has_pending() ? 50 : -1);
    if (status == ReadStatus::kEof) {
      cancel.Cancel();  // the terminal is gone: stop the turn, then leave
      break;
    }
    if (status == ReadStatus::kWoken || status == ReadStatus::kResized) {
      ShowComposer();  // laid out again for the terminal's width
      continue;
    }
    EditorEvent ev;
    if (status == ReadStatus::kTimeout) ev = FeedKeys("", true);
    if (status == ReadStatus::kData) ev = FeedKeys(bytes, false);
    while (true) {
      switch (ev.kind) {
        case EditorEventKind::kSubmit:
          if (!Blank(ev.text)) queued_.push_back(ev.text);
          break;
        case EditorEventKind::kEscape:
        case EditorEventKind::kInterrupt:
          if (!cancelled_here) {
            cancelled_here = true;
            cancel.Cancel();
          }
          // Ctrl-C again right after: quit, as at the prompt.
          if (ev.kind == EditorEventKind::kInterrupt && ev.count >= 2) quit_requested_ = true;
          break;
        case EditorEventKind::kClearScreen:
          terminal_->Write("\x1b[H\x1b[2J");
          view_->Redraw(true);
          break;
        case EditorEventKind::kEof:
          // Ctrl-D on an empty composer: leave once the turn has ended (it is
          // not cut short: Esc or Ctrl-C do that).
          quit_requested_ = true;
          composer_hint_ = "leaving when this turn ends (Esc interrupts it)";
          break;
        case EditorEventKind::kNone:
          break;
      }
      if (ev.kind == EditorEventKind::kNone) break;
      ev = FeedKeys("", false);
    }
    ShowComposer();
  }
  while (!done) {  // after EOF: let the cancelled turn finish, answering what it asks
    RunUiCalls();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // Read() would return at once
  }
  worker.join();
  RunUiCalls();
}

void InteractiveSession::Unqueue() {
  if (queued_.empty()) return;
  std::string back;
  for (const auto& q : queued_) back += (back.empty() ? "" : "\n") + q;
  if (!editor_.buffer().empty()) back += "\n" + editor_.buffer();
  queued_.clear();
  editor_.SetBuffer(back);
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
    TurnInterrupt interrupt(&cancel);  // a SIGINT from elsewhere stops the turn too
    view_->BeginTurn();
    RunLive([&] { result = conversation_->RunTurn(text, cancel); }, cancel);
    view_->EndTurn();
  } else {
    InstallInterruptHandler(&cancel);
    result = conversation_->RunTurn(text, cancel);
    RemoveInterruptHandler();
  }
  if (!result.ok()) {
    if (result.status().code() == StatusCode::kCancelled) {
      if (tty_) editor_.NoteInterrupt();  // another Ctrl-C now quits
      // What was queued behind an interrupted turn is not sent: it goes back
      // into the composer to be sent or edited.
      if (tty_) Unqueue();
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
  if (tty_) view_->Print("\n");  // the answer itself went out as it streamed
}

void InteractiveSession::RunLocalShell(const std::string& command) {
  const core::Config& config = engine_->config();
  core::CommandSpec spec;
  spec.argv = {"bash", "-c", command};  // not a login shell: no profile noise in the output
  spec.cwd = config.cwd;
  spec.timeout_ms = 10 * 60 * 1000;  // the user's own command: Esc or Ctrl-C stop it sooner
  spec.sandbox.mode = config.sandbox_mode;
  spec.sandbox.workspace_root = config.cwd;
  spec.sandbox.writable_roots = config.writable_roots;
  spec.sandbox.network = config.sandbox_network_access;
  spec.env_policy = config.shell_environment_policy;
  core::ToolActivity activity;
  activity.tool = "shell";
  activity.command = core::JoinCommand(spec.argv);
  core::SandboxedRunner runner;
  core::CancelToken cancel;
  Result<core::CommandResult> result = InternalError("the command did not run");
  core::TurnObserver& observer =
      tty_ ? static_cast<core::TurnObserver&>(*view_) : static_cast<core::TurnObserver&>(*plain_);
  // Shown as it runs, the way the model's commands are (TurnObserver::OnToolOutput).
  spec.on_output = [&observer](std::string_view chunk) { observer.OnToolOutput("", chunk); };
  if (tty_) {
    TurnInterrupt interrupt(&cancel);
    view_->BeginTurn("Running");
    view_->OnToolStarted(activity);
    RunLive([&] { result = runner.Run(spec, cancel); }, cancel);
  } else {
    InstallInterruptHandler(&cancel);
    plain_->OnToolStarted(activity);
    result = runner.Run(spec, cancel);
    RemoveInterruptHandler();
  }
  if (!result.ok() && result.status().code() == StatusCode::kCancelled) {
    // Stopped by Esc or Ctrl-C: what it printed so far stays on the screen.
    observer.OnTurnFailed(result.status());
    if (tty_) view_->EndTurn();
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
  observer.OnToolCompleted(activity);
  if (tty_) view_->EndTurn();
  if (!result.ok()) {
    Warn(result.status().message());
    return;
  }
  // The model sees what the user ran and what it printed, cut like tool output.
  std::string record =
      std::string(kShellRecord) + "\n<command>\n" + command +
      "\n</command>\n<result>\nExit code: " + std::to_string(result->exit_code) + "\nOutput:\n" +
      sandbox::TruncateHeadTail(result->output, sandbox::kModelOutputBytes, result->dropped_bytes) +
      "\n</result>\n</user_shell_command>";
  auto session = engine_->store().FindSession(conversation_->session().id);
  Status saved = session.status();
  if (session.ok()) {
    auto appended = engine_->store().Append(session->id, session->head_item_id, core::NewUuidV7(),
                                            {core::UserMessage(record)});
    saved = appended.status();
    if (appended.ok()) {
      // The conversation reloads the session it now trails (approvals kept).
      auto fresh = engine_->store().FindSession(session->id);
      saved = fresh.status();
      if (fresh.ok()) {
        auto resumed = core::Conversation::Resume(engine_->config(), engine_->Deps(), *fresh);
        saved = resumed.status();
        if (resumed.ok()) conversation_ = std::move(*resumed);
      }
    }
  }
  if (!saved.ok()) Warn("the command's output was not added to the session: " + saved.message());
  if (tty_) view_->Print("\n");
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
  if (result == PickerResult::kCancelled) return std::optional<core::SessionInfo>();
  return std::optional<core::SessionInfo>(picker.chosen());
}

// The models offered by /model: the current one, then the usual ones.
std::vector<std::pair<std::string, std::string>> ModelChoices(const std::string& current) {
  std::vector<std::pair<std::string, std::string>> out = {{current, "the current model"}};
  for (const char* m : {"gpt-5-codex", "gpt-5", "gpt-5-mini", "o4-mini"}) {
    if (m != current) out.emplace_back(m, "");
  }
  return out;
}

void InteractiveSession::OpenChoice(
    const std::string& command, const std::string& current,
    const std::vector<std::pair<std::string, std::string>>& choices) {
  popup_items_.clear();
  popup_help_.clear();
  popup_selected_ = 0;
  for (size_t i = 0; i < choices.size(); ++i) {
    popup_items_.push_back("/" + command + " " + choices[i].first);
    popup_help_.push_back(choices[i].second);
    if (choices[i].first == current) popup_selected_ = i;
  }
  popup_ = PopupKind::kChoice;
  Say(style_.Dim("choose with ↑↓ and Enter (Esc closes); current: " + current) + "\n");
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
  // Tokens summed over requests and the context window are
  // different things: one row each, each saying what it counts.
  out += row("tokens", GroupThousands(session.tokens_used) + " over this session's requests · " +
                           GroupThousands(usage_.total_tokens) + " in this run");
  out += row("context", std::to_string(conversation_->ContextLeftPercent()) +
                            "% of the window left · the next request sends ~" +
                            GroupThousands(conversation_->EstimatedTokens()) + " tokens");
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
      if (cmd.arg.empty() && tty_) {
        OpenChoice("model", engine_->config().model, ModelChoices(engine_->config().model));
        return true;
      }
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
      if (cmd.arg.empty() && tty_) {
        OpenChoice("approvals",
                   std::string(core::ApprovalPolicyName(engine_->config().approval_policy)),
                   {{"untrusted", "ask before any command that is not known to be safe"},
                    {"on-request", "the model asks when it needs to leave the sandbox"},
                    {"on-failure", "run in the sandbox; ask to run outside it when that fails"},
                    {"never", "never ask; failures go back to the model"}});
        return true;
      }
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
    approvals_ = std::make_unique<TtyApprovalPrompt>(
        *terminal_, *view_, style_, [this](const std::function<void()>& fn) { RunOnUi(fn); });
  } else {
    plain_ = std::make_unique<PlainObserver>(stderr);
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
      EchoPrompt(options_.prompt);
      editor_.AddHistory(options_.prompt);
    }
    RunUserTurn(options_.prompt);
  }
  while (true) {
    std::optional<std::string> input = ReadInput();
    if (!input) break;
    if (Blank(*input)) continue;
    if (pending_edit_) {
      std::optional<int64_t> parent = pending_edit_->parent;
      pending_edit_.reset();
      Status forked = ForkForEdit(parent);
      if (!forked.ok()) {
        Warn(forked.message());
        continue;
      }
    }
    if ((*input)[0] == '!') {
      std::string command = input->substr(1);
      if (Blank(command)) {
        Warn("'!' needs a command to run, e.g. !ls -la");
        continue;
      }
      RunLocalShell(command);
      continue;
    }
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
