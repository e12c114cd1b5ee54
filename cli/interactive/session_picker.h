// SessionPicker: the list `codex resume` shows to choose a session: arrows
// (or Ctrl-P/Ctrl-N, k/j) move, PageUp/PageDown jump, Enter opens, "/"
// starts a filter (typed text narrows the list by title, name, id or
// directory, case-insensitively; Esc or Backspace on an empty filter leaves
// it), Esc, q or Ctrl-C cancel. With the hooks set, the filter also finds
// sessions by what their transcripts say (the store's full-text search), Tab
// shows a preview of the selected session's last messages, "s" sorts by
// creation instead of last update (and back), and "t" (transcript), "a"
// (archive) and "A" (this directory / all directories) end HandleKey with a
// result the caller acts on. Pure state plus Render(); the caller owns the
// terminal and the store. Not thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "cli/interactive/keys.h"
#include "cli/interactive/style.h"
#include "core/session_store.h"

namespace codex::cli {

enum class PickerResult {
  kPending,
  kChosen,
  kCancelled,
  kTranscript,  // "t": show the selected session's transcript, then pick again
  kArchive,     // "a": archive the selected session (RemoveSelected when done)
  kToggleAll,   // "A": this directory's sessions <-> every directory's
};

// What the picker asks its caller for (the store's answers).
struct PickerHooks {
  // Ids of the sessions whose transcripts match `query` (full-text search).
  std::function<std::set<std::string>(const std::string& query)> search;
  // The last lines of a session's conversation, for the preview.
  std::function<std::vector<std::string>(const core::SessionInfo& session)> preview;
};

class SessionPicker {
 public:
  // `sessions` newest first; `now_ms` is used for the "5m ago" column;
  // `show_cwd` adds the directory column (for --all).
  SessionPicker(std::vector<core::SessionInfo> sessions, int64_t now_ms, bool show_cwd);

  void set_hooks(PickerHooks hooks) { hooks_ = std::move(hooks); }
  PickerResult HandleKey(const Key& key);
  // Drops the selected session from the list (it was archived).
  void RemoveSelected();

  // The chosen session (valid after kChosen).
  const core::SessionInfo& chosen() const { return sessions_[visible_[selected_]]; }
  // Indices into the sessions of the rows the filter keeps.
  const std::vector<size_t>& visible() const { return visible_; }
  size_t selected() const { return selected_; }
  const std::string& filter() const { return filter_; }
  bool filtering() const { return filtering_; }
  bool by_created() const { return by_created_; }
  bool preview() const { return preview_; }

  // The picker drawn in at most `max_rows` rows of `columns` columns; lines
  // are separated by "\r\n" and the text does not end with one.
  std::string Render(const Style& style, int columns, int max_rows) const;

 private:
  void Refilter();
  void Move(long delta);
  void Sort();

  std::vector<core::SessionInfo> sessions_;
  int64_t now_ms_;
  bool show_cwd_;
  std::vector<size_t> visible_;
  size_t selected_ = 0;
  std::string filter_;
  bool filtering_ = false;
  bool by_created_ = false;  // sorted by creation time (else by last update)
  bool preview_ = false;
  PickerHooks hooks_;
};

}  // namespace codex::cli
