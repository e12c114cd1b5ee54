// Composer: the interactive session's input box as state, apart from the
// terminal: the line editor, the messages queued while a turn runs, a dim
// hint line above the prompt, the popup under it ("/" commands with their
// descriptions, "@" files, Ctrl-R history, the /model and /approvals
// choices) and Esc-Esc backtracking through the user's earlier messages.
//
// Fed raw key bytes, it hands each key to the popup when the popup wants it
// and otherwise to the editor, and answers with the editor's events; Layout()
// says what to draw at a given width (queued messages and hint, the prompt,
// the popup). The choice picker (/model, /approvals, /permissions, /review)
// nests: a list opened by choosing from another goes back to it on Esc, and a
// list may be searched by typing. Pure: the workspace's files come from the lister it is given
// (asked once, on the first "@"). Not thread-safe: the thread reading the
// keys owns it.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cli/interactive/keys.h"
#include "cli/interactive/line_editor.h"
#include "cli/interactive/style.h"

namespace codex::cli {

// A message of the session the user may edit (Esc-Esc): its text, and the
// item before it, where the edited one branches off (nullopt: the start).
struct EditTarget {
  std::string text;
  std::optional<int64_t> parent;
};

// One item of a choice picker: choosing it submits "/<command> <value>".
struct Choice {
  Choice(std::string v, std::string h = "", std::string s = "")
      : value(std::move(v)), help(std::move(h)), search(std::move(s)) {}
  std::string value;
  std::string help;    // a description drawn beside it ("" = none)
  std::string search;  // what type-to-search matches ("" = the value)
};

// A choice picker: its items, the one selected at first, a title drawn above
// them (it may hold a repository's text: drawn terminal-safe), and whether
// typing searches it (as Codex's branch and commit lists do; its /model,
// /approvals and /permissions lists do not).
struct ChoiceList {
  std::string command;
  std::string current;  // the value selected at first ("" = the first)
  std::vector<Choice> choices;
  std::string title;
  std::string search;  // "" = no search; else the placeholder: "Type to search branches"
};

class Composer {
 public:
  using FileLister = std::function<std::vector<std::string>()>;
  Composer(const Style& style, FileLister files) : style_(style), files_(std::move(files)) {}

  LineEditor& editor() { return editor_; }
  const LineEditor& editor() const { return editor_; }

  // Decodes `bytes` (after what is pending) and handles key by key until one
  // gives an event; `flush` resolves a lone Esc. Feed("", false) continues
  // with keys left over from an earlier call.
  EditorEvent Feed(std::string_view bytes, bool flush);
  bool has_pending() const { return keys_.has_pending(); }

  // The composer as drawn at `columns`: the queued messages, the hint (with
  // the popup), the prompt holding `buffer` with the cursor at byte
  // `cursor`, then the popup when `with_popup`.
  EditorLayout Layout(std::string_view buffer, size_t cursor, int columns, bool with_queue,
                      bool with_popup) const;
  // The same for what the editor holds now.
  EditorLayout Layout(int columns) const {
    return Layout(editor_.buffer(), editor_.cursor(), columns, true, true);
  }

  // Messages typed during a turn, sent one by one when it ends.
  void Queue(std::string text) { queued_.push_back(std::move(text)); }
  std::optional<std::string> PopQueued();
  // Puts the queued messages back into the editor (before what it holds),
  // when the turn they waited for was interrupted.
  void Unqueue();

  // While a turn runs, Tab on a message submits it to be queued
  // (EditorEvent::queue) rather than completing a word.
  void set_turn_running(bool running) { turn_running_ = running; }

  // The persistent footer under the prompt (model, context left, directory),
  // drawn dim on one row while no popup is open and nothing is typed; "" for
  // none.
  void set_status(std::string status) { status_ = std::move(status); }

  void set_hint(std::string hint) { hint_ = std::move(hint); }
  void clear_hint() { hint_.clear(); }

  // A lone Esc reached the composer with no popup to close: during
  // backtracking it steps to an earlier message; on an empty composer the
  // first arms Esc-Esc (the hint says so) and the second returns true: the
  // session then calls StartBacktrack with the messages.
  bool OnEscape();
  // Puts the newest of `messages` (oldest first) in the editor to edit.
  void StartBacktrack(std::vector<EditTarget> messages);
  // On Enter: the message being edited when the sent text is an edit of one.
  std::optional<EditTarget> TakeEdit();

  // /mention: an "@" in the composer, its file search open.
  void Mention() {
    editor_.SetBuffer("@");
    UpdatePopup();
  }

  // Puts `text` in the editor, the cursor at its end (/review custom: "/review ").
  void Prefill(const std::string& text) {
    editor_.SetBuffer(text);
    UpdatePopup();
  }

  // A picker under the prompt: choosing an item submits "/<command> <value>".
  // Opened right after a choice from another picker (by the command that
  // choice ran), it is that one's child: Esc, Ctrl-C, or Enter when the
  // search matches nothing go back to it; on a list of its own they close it,
  // as in Codex 0.169. A searchable list filters as the user types: the
  // items whose search text holds the query, case-insensitively (Backspace
  // edits it); the selection stays on its item while that item still shows.
  void OpenChoice(ChoiceList list);
  // The text being submitted was chosen in a picker (until the next key).
  bool chose_from_picker() const { return !chosen_from_.empty(); }

 private:
  enum class PopupKind { kNone, kSlash, kFile, kHistory, kChoice };
  struct Backtrack {
    std::vector<EditTarget> messages;  // oldest first
    size_t index = 0;                  // the one in the editor
  };

  // An open choice list: the items its query matches (indices), the selected one among them.
  struct OpenList {
    ChoiceList list;
    std::string query;
    std::vector<size_t> shown;
    size_t selected = 0;
  };

  void StepBacktrack();
  // The popup for the open choice list after its query or the stack changed.
  void RefreshChoice();
  bool ChoiceKey(const Key& key, EditorEvent* event);
  // Esc in a choice list: back to the list it was chosen from, or closed.
  void ChoiceBack();
  // Submits the shown row `shown_index` of the open list ("/<command> <value>").
  void Choose(size_t shown_index, EditorEvent* event);
  // The popup for the editor's text now: "/" commands, "@" files, history.
  void UpdatePopup();
  // Handles `key` when the popup wants it (true), setting *event.
  bool PopupKey(const Key& key, EditorEvent* event);
  bool ChooseFromPopup(const Key& key, EditorEvent* event);
  std::string PopupText(int columns) const;

  Style style_;
  FileLister files_;
  LineEditor editor_;
  KeyDecoder keys_;
  std::deque<std::string> queued_;
  std::string hint_;        // a dim line above the prompt ("" = none)
  std::string status_;      // the footer under the prompt ("" = none)
  bool esc_armed_ = false;  // one Esc on an empty composer: another starts backtracking
  bool turn_running_ = false;
  std::optional<Backtrack> backtrack_;

  // kHistory (Ctrl-R) and kChoice stay open until an item is taken or Esc
  // closes them; kSlash and kFile follow the text.
  PopupKind popup_ = PopupKind::kNone;
  std::vector<std::string> popup_items_;  // "/name", a path, a history entry
  std::vector<std::string> popup_help_;   // one-line descriptions (kSlash, kChoice)
  size_t popup_selected_ = 0;
  bool popup_numbered_ = false;  // rows drawn "1. …" and digits 1-9 choose (kChoice, no search)
  size_t popup_word_start_ = 0;  // kFile: where the "@word" starts
  std::string popup_dismissed_for_;                       // the buffer Esc closed the popup on
  std::optional<std::vector<std::string>> files_listed_;  // on the first "@"
  std::vector<OpenList> choices_;      // kChoice: the open list last, its parents before it
  std::vector<OpenList> chosen_from_;  // the lists a choice was just made in (until the next key)
};

}  // namespace codex::cli
