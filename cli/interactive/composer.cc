#include "cli/interactive/composer.h"

#include <algorithm>
#include <cctype>

#include "base/strings.h"
#include "cli/interactive/file_search.h"
#include "cli/interactive/slash_commands.h"
#include "cli/terminal_text.h"

namespace codex::cli {

namespace {

// The longest prefix of `s` at most `width` columns wide, whole clusters.
std::string CutToWidth(std::string_view s, int width) {
  size_t i = 0;
  int w = 0;
  while (i < s.size()) {
    size_t next = NextGrapheme(s, i);
    int cw = DisplayWidth(s.substr(i, next - i));
    if (w + cw > width) break;
    w += cw;
    i = next;
  }
  return std::string(s.substr(0, i));
}

}  // namespace

EditorEvent Composer::Feed(std::string_view bytes, bool flush) {
  keys_.Feed(bytes);
  while (true) {
    std::optional<Key> key = flush ? keys_.Flush() : keys_.Next();
    if (!key) return {};
    chosen_from_.clear();  // a choice's command has run by the next key
    EditorEvent ev;
    if (PopupKey(*key, &ev)) {
    } else if (key->code == KeyCode::kTab && turn_running_ &&
               editor_.buffer().find_first_not_of(" \t\r\n") != std::string::npos) {
      // Codex's Tab during a turn: the message waits for the turn's end.
      ev.kind = EditorEventKind::kSubmit;
      ev.text = editor_.buffer();
      ev.queue = true;
      editor_.SetBuffer("");
    } else {
      ev = editor_.HandleKey(*key);
    }
    UpdatePopup();
    if (key->code != KeyCode::kEsc && esc_armed_) {  // another key: no Esc-Esc
      esc_armed_ = false;
      hint_.clear();
    }
    if (backtrack_ && editor_.buffer().empty() && ev.kind == EditorEventKind::kNone) {
      // Ctrl-C or deleting it all: the edit is cancelled
      backtrack_.reset();
      hint_.clear();
    }
    if (ev.kind != EditorEventKind::kNone) return ev;
  }
}

EditorLayout Composer::Layout(std::string_view buffer, size_t cursor, int columns, bool with_queue,
                              bool with_popup) const {
  std::string above;
  int rows = 0;
  for (size_t k = 0; with_queue && k < queued_.size(); ++k) {
    const std::string& q = queued_[k];
    const std::string line = q.substr(0, q.find('\n'));
    const std::string label = "↳ queued: ";
    // One row: cut, with "…" when cut or when more lines follow.
    std::string shown = CutToWidth(line, columns - 2 - DisplayWidth(label));
    if (shown.size() < line.size() || line.size() < q.size()) shown += "…";
    above += style_.Dim(label + shown) + "\r\n";
    ++rows;
  }
  if (with_popup && !hint_.empty()) {
    above += style_.Dim(CutToWidth(hint_, columns - 2)) + "\r\n";
    ++rows;
  }
  EditorLayout layout = LayoutEditor(style_.Bold(style_.Cyan("› ")), "  ", buffer, cursor, columns);
  layout.text = above + layout.text;
  layout.cursor_offset += above.size();
  layout.rows += rows;
  layout.cursor_row += rows;
  layout.end_row += rows;
  if (with_popup && popup_ != PopupKind::kNone) {
    // The popup goes under the prompt; the cursor stays in the prompt.
    std::string popup = PopupText(columns);
    int popup_rows = 0;  // each of its rows starts with "\r\n"
    for (size_t at = popup.find("\r\n"); at != std::string::npos; at = popup.find("\r\n", at + 2)) {
      ++popup_rows;
    }
    layout.text += popup;
    layout.rows += popup_rows;
    layout.end_row += popup_rows;
    layout.end_col = 0;
  } else if (with_popup && !status_.empty() && buffer.empty() && columns > 4) {
    // Only under an empty prompt: while a message is typed its rows get the
    // room (and a re-wrapping terminal has fewer rows to push out of reach).
    const std::string footer = CutToWidth(status_, columns - 2);
    layout.text += "\r\n" + style_.Dim(footer);
    layout.rows += 1;
    layout.end_row += 1;
    layout.end_col = DisplayWidth(footer);
  }
  return layout;
}

std::optional<std::string> Composer::PopQueued() {
  if (queued_.empty()) return std::nullopt;
  std::string next = std::move(queued_.front());
  queued_.pop_front();
  return next;
}

void Composer::Unqueue() {
  if (queued_.empty()) return;
  std::string back;
  for (const auto& q : queued_) back += (back.empty() ? "" : "\n") + q;
  if (!editor_.buffer().empty()) back += "\n" + editor_.buffer();
  queued_.clear();
  editor_.SetBuffer(back);
}

bool Composer::OnEscape() {
  if (backtrack_) {
    StepBacktrack();
    return false;
  }
  if (!editor_.buffer().empty()) return false;
  if (esc_armed_) {
    esc_armed_ = false;
    hint_.clear();
    return true;
  }
  esc_armed_ = true;
  hint_ = "Esc again to edit a previous message";
  return false;
}

void Composer::StartBacktrack(std::vector<EditTarget> messages) {
  hint_.clear();
  if (messages.empty()) {
    hint_ = "no message to edit yet";
    return;
  }
  Backtrack b;
  b.messages = std::move(messages);
  b.index = b.messages.size();
  backtrack_ = std::move(b);
  StepBacktrack();
}

void Composer::StepBacktrack() {
  if (backtrack_->index > 0) --backtrack_->index;
  editor_.SetBuffer(backtrack_->messages[backtrack_->index].text);
  hint_ = "editing message " + std::to_string(backtrack_->index + 1) + " of " +
          std::to_string(backtrack_->messages.size()) +
          ": Enter sends it on a new branch (this one is kept) · Esc: an earlier one · "
          "Ctrl-C: cancel";
}

std::optional<EditTarget> Composer::TakeEdit() {
  if (!backtrack_) return std::nullopt;
  EditTarget target = backtrack_->messages[backtrack_->index];
  backtrack_.reset();
  hint_.clear();
  return target;
}

void Composer::OpenChoice(ChoiceList list) {
  // Right after a choice (before any other key), the new list is that list's child.
  choices_ = std::move(chosen_from_);
  chosen_from_.clear();
  OpenList open;
  for (size_t i = 0; i < list.choices.size(); ++i) {
    open.shown.push_back(i);
    if (list.choices[i].value == list.current) open.selected = i;
  }
  open.list = std::move(list);
  choices_.push_back(std::move(open));
  popup_ = PopupKind::kChoice;
  RefreshChoice();
}

void Composer::RefreshChoice() {
  OpenList& open = choices_.back();
  const std::vector<Choice>& all = open.list.choices;
  // The item selected before, kept when it still shows.
  const size_t was = open.selected < open.shown.size() ? open.shown[open.selected] : all.size();
  const std::string query = Lower(open.query);
  open.shown.clear();
  open.selected = 0;
  popup_items_.clear();
  popup_help_.clear();
  for (size_t i = 0; i < all.size(); ++i) {
    const std::string& text = all[i].search.empty() ? all[i].value : all[i].search;
    if (!query.empty() && Lower(text).find(query) == std::string::npos) continue;
    if (i == was) open.selected = open.shown.size();
    open.shown.push_back(i);
    popup_items_.push_back("/" + open.list.command + " " + all[i].value);
    popup_help_.push_back(all[i].help);
  }
  popup_selected_ = open.selected;
  popup_numbered_ = open.list.search.empty();
}

void Composer::ChoiceBack() {
  choices_.pop_back();
  if (choices_.empty()) {
    popup_ = PopupKind::kNone;
    popup_numbered_ = false;
    return;
  }
  RefreshChoice();
}

void Composer::Choose(size_t shown_index, EditorEvent* event) {
  const std::string item = popup_items_[shown_index];
  chosen_from_ = std::move(choices_);
  choices_.clear();
  popup_ = PopupKind::kNone;
  popup_numbered_ = false;
  editor_.SetBuffer(item);
  *event = editor_.HandleKey(Key{KeyCode::kEnter, "", 0});
}

bool Composer::ChoiceKey(const Key& key, EditorEvent* event) {
  OpenList& open = choices_.back();
  const size_t n = open.shown.size();
  const bool search = !open.list.search.empty();
  switch (key.code) {
    case KeyCode::kUp:
    case KeyCode::kDown:
      if (n > 0) open.selected = (open.selected + (key.code == KeyCode::kUp ? n - 1 : 1)) % n;
      popup_selected_ = open.selected;
      return true;
    case KeyCode::kEsc:
      ChoiceBack();
      return true;
    case KeyCode::kCtrl:
      if (key.ctrl != 'c') return false;
      ChoiceBack();  // Codex's Ctrl-C in a picker is its Esc
      return true;
    case KeyCode::kTab:
    case KeyCode::kEnter:
      if (n == 0) {  // the search matches nothing: Codex goes back, sending nothing
        ChoiceBack();
        return true;
      }
      Choose(open.selected, event);
      return true;
    case KeyCode::kText:
    case KeyCode::kPaste:
      // As in Codex's lists without search, a row's number chooses it at once.
      if (!search && key.code == KeyCode::kText && key.text.size() == 1 && key.text[0] >= '1' &&
          key.text[0] <= '9' && static_cast<size_t>(key.text[0] - '0') <= n) {
        Choose(static_cast<size_t>(key.text[0] - '1'), event);
        return true;
      }
      if (!search) return false;
      for (char c : key.text) {
        if (c != '\n' && c != '\r') open.query += c;
      }
      RefreshChoice();
      return true;
    case KeyCode::kBackspace:
      if (!search) return false;
      if (!open.query.empty()) {
        size_t last = 0;  // the start of the query's last character
        for (size_t i = 0; i < open.query.size(); i = NextGrapheme(open.query, i)) last = i;
        open.query.erase(last);
        RefreshChoice();
      }
      return true;
    default:
      return false;
  }
}

void Composer::UpdatePopup() {
  const std::string& buffer = editor_.buffer();
  const size_t cursor = editor_.cursor();
  if (popup_ == PopupKind::kChoice) return;
  if (popup_ == PopupKind::kHistory) {
    // The composer's text is the query: entries holding it, newest first.
    const std::string query = Lower(buffer);
    std::vector<std::string> items;
    const auto& history = editor_.history();
    for (auto it = history.rbegin(); it != history.rend() && items.size() < 8; ++it) {
      if (Lower(*it).find(query) != std::string::npos &&
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
      if (!files_listed_) files_listed_ = files_ ? files_() : std::vector<std::string>();
      items = FuzzyFind(*files_listed_,
                        std::string_view(buffer).substr(start + 1, cursor - start - 1), 8);
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

bool Composer::PopupKey(const Key& key, EditorEvent* event) {
  if (popup_ == PopupKind::kChoice && !choices_.empty()) return ChoiceKey(key, event);
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
      if (popup_ == PopupKind::kHistory) {
        popup_ = PopupKind::kNone;
      } else {
        popup_dismissed_for_ = editor_.buffer();
      }
      return true;
    case KeyCode::kTab:
    case KeyCode::kEnter:
      return ChooseFromPopup(key, event);
    default:
      return false;
  }
}

bool Composer::ChooseFromPopup(const Key& key, EditorEvent* event) {
  const std::string item = popup_items_[popup_selected_];
  if (popup_ == PopupKind::kHistory) {  // the entry is put in the composer to edit or send
    popup_ = PopupKind::kNone;
    editor_.SetBuffer(item);
    return true;
  }
  if (popup_ == PopupKind::kSlash) {
    const SlashSpec* spec = nullptr;
    for (const auto& c : SlashCommands()) {
      if (c.name == item) spec = &c;
    }
    // Enter runs a command that needs no argument; otherwise (and on Tab)
    // the name is completed for the argument to be typed.
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

std::string Composer::PopupText(int columns) const {
  if (popup_ == PopupKind::kNone) return "";
  std::string out;
  if (popup_ == PopupKind::kHistory) {
    out += "\r\n" + style_.Dim(popup_items_.empty() ? "history search: no match (Esc closes)"
                                                    : "history search: ↑↓ or Ctrl-R to choose, "
                                                      "Enter to edit, Esc to close");
  }
  if (popup_ == PopupKind::kChoice) {
    // Its title (a branch name is the repository's text), the search, or Codex's empty state.
    const OpenList& open = choices_.back();
    const ChoiceList& list = open.list;
    const std::string how = std::string("choose with ↑↓ and Enter") +
                            (list.search.empty() ? " or a number" : "") + " (Esc " +
                            (choices_.size() > 1 ? "goes back" : "closes") + ")";
    out +=
        "\r\n" + style_.Dim(CutToWidth(
                     NeutralizeControls((list.title.empty() ? "" : list.title + ": ") + how +
                                        (list.current.empty() ? "" : "; current: " + list.current)),
                     columns - 2));
    if (!list.search.empty()) {
      out += "\r\n" + (open.query.empty()
                           ? style_.Dim(CutToWidth(list.search, columns - 2))
                           : CutToWidth("search: " + NeutralizeControls(open.query), columns - 2));
    }
    if (open.shown.empty()) out += "\r\n" + style_.Dim("no matches");
  }
  const bool numbered = popup_ == PopupKind::kChoice && popup_numbered_;
  const size_t number_width = numbered ? std::to_string(popup_items_.size()).size() + 2 : 0;
  size_t name_width = 0;
  for (const auto& item : popup_items_) name_width = std::max(name_width, item.size());
  for (size_t i = 0; i < popup_items_.size(); ++i) {
    std::string line = i == popup_selected_ ? "› " : "  ";
    if (numbered) {  // "1. " as Codex numbers its rows, right-aligned past nine
      const std::string number = std::to_string(i + 1) + ". ";
      line += std::string(number_width - number.size(), ' ') + number;
    }
    line += popup_items_[i];
    if (i < popup_help_.size()) {
      line += std::string(name_width + 2 - popup_items_[i].size(), ' ') + popup_help_[i];
    }
    for (char& c : line) {
      if (c == '\n') c = ' ';  // a multi-line history entry on one row
    }
    // File names come from the workspace, which the model may have written.
    std::string cut = CutToWidth(NeutralizeControls(line), columns - 2);  // one row each
    out += "\r\n" + (i == popup_selected_ ? style_.Cyan(cut) : style_.Dim(cut));
  }
  return out;
}

}  // namespace codex::cli
