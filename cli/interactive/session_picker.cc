#include "cli/interactive/session_picker.h"

#include <algorithm>
#include <cctype>

#include "base/strings.h"
#include "base/time.h"
#include "cli/terminal_text.h"

namespace codex::cli {

namespace {

// `s` on one line, cut to `width` columns (with "…" when cut), then padded.
std::string Fit(std::string_view s, int width) {
  std::string flat(s);
  for (char& c : flat) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  int total = DisplayWidth(flat);
  if (total > width) {
    std::string cut;
    int w = 0;
    size_t i = 0;
    while (i < flat.size()) {
      size_t start = i;
      int cw = CodePointWidth(DecodeUtf8(flat, &i));
      if (w + cw > width - 1) break;
      cut.append(flat, start, i - start);
      w += cw;
    }
    flat = cut + "…";
    total = w + 1;
  }
  if (total < width) flat.append(static_cast<size_t>(width - total), ' ');
  return flat;
}

}  // namespace

SessionPicker::SessionPicker(std::vector<core::SessionInfo> sessions, int64_t now_ms, bool show_cwd)
    : sessions_(std::move(sessions)), now_ms_(now_ms), show_cwd_(show_cwd) {
  Refilter();
}

void SessionPicker::Refilter() {
  visible_.clear();
  std::string needle = Lower(filter_);
  // What the transcripts say, by the store's full-text search.
  std::set<std::string> content;
  if (hooks_.search && needle.find_first_not_of(' ') != std::string::npos) {
    content = hooks_.search(filter_);
  }
  for (size_t i = 0; i < sessions_.size(); ++i) {
    const auto& s = sessions_[i];
    if (needle.empty() || Lower(s.title).find(needle) != std::string::npos ||
        Lower(s.name).find(needle) != std::string::npos ||
        Lower(s.id).find(needle) != std::string::npos ||
        Lower(s.cwd).find(needle) != std::string::npos || content.count(s.id) > 0) {
      visible_.push_back(i);
    }
  }
  selected_ = 0;
}

void SessionPicker::Sort() {
  std::stable_sort(sessions_.begin(), sessions_.end(),
                   [&](const core::SessionInfo& a, const core::SessionInfo& b) {
                     return by_created_ ? a.created_at_ms > b.created_at_ms
                                        : a.updated_at_ms > b.updated_at_ms;
                   });
  Refilter();
}

void SessionPicker::RemoveSelected() {
  if (visible_.empty()) return;
  const size_t at = selected_;
  sessions_.erase(sessions_.begin() + static_cast<long>(visible_[selected_]));
  Refilter();
  selected_ = visible_.empty() ? 0 : std::min(at, visible_.size() - 1);
}

void SessionPicker::Move(long delta) {
  if (visible_.empty()) return;
  long next = static_cast<long>(selected_) + delta;
  next = std::clamp(next, 0L, static_cast<long>(visible_.size()) - 1);
  selected_ = static_cast<size_t>(next);
}

PickerResult SessionPicker::HandleKey(const Key& key) {
  switch (key.code) {
    case KeyCode::kUp:
      Move(-1);
      return PickerResult::kPending;
    case KeyCode::kDown:
      Move(1);
      return PickerResult::kPending;
    case KeyCode::kPageUp:
      Move(-10);
      return PickerResult::kPending;
    case KeyCode::kPageDown:
      Move(10);
      return PickerResult::kPending;
    case KeyCode::kHome:
      selected_ = 0;
      return PickerResult::kPending;
    case KeyCode::kEnd:
      if (!visible_.empty()) selected_ = visible_.size() - 1;
      return PickerResult::kPending;
    case KeyCode::kEnter:
      return visible_.empty() ? PickerResult::kPending : PickerResult::kChosen;
    case KeyCode::kTab:
      preview_ = !preview_;
      return PickerResult::kPending;
    case KeyCode::kEsc:
      if (filtering_) {
        filtering_ = false;
        filter_.clear();
        Refilter();
        return PickerResult::kPending;
      }
      return PickerResult::kCancelled;
    case KeyCode::kBackspace:
      if (filtering_) {
        if (filter_.empty()) {
          filtering_ = false;
        } else {
          filter_.erase(PrevCodePoint(filter_, filter_.size()));
          Refilter();
        }
      }
      return PickerResult::kPending;
    case KeyCode::kPaste:
    case KeyCode::kText:
      if (filtering_) {
        for (char c : key.text) {
          if (c != '\n' && c != '\r') filter_ += c;
        }
        Refilter();
        return PickerResult::kPending;
      }
      if (key.text == "/") {
        filtering_ = true;
      } else if (key.text == "s") {
        by_created_ = !by_created_;
        Sort();
      } else if (key.text == "t" && !visible_.empty()) {
        return PickerResult::kTranscript;
      } else if (key.text == "a" && !visible_.empty()) {
        return PickerResult::kArchive;
      } else if (key.text == "A") {
        return PickerResult::kToggleAll;
      } else if (key.text == "k") {
        Move(-1);
      } else if (key.text == "j") {
        Move(1);
      } else if (key.text == "q") {
        return PickerResult::kCancelled;
      }
      return PickerResult::kPending;
    case KeyCode::kCtrl:
      if (key.ctrl == 'c') return PickerResult::kCancelled;
      if (key.ctrl == 'p') Move(-1);
      if (key.ctrl == 'n') Move(1);
      if (key.ctrl == 'u' && filtering_) {
        filter_.clear();
        Refilter();
      }
      return PickerResult::kPending;
    default:
      return PickerResult::kPending;
  }
}

std::string SessionPicker::Render(const Style& style, int columns, int max_rows) const {
  if (columns < 20) columns = 20;
  std::vector<std::string> lines;
  std::string heading = style.Bold("Resume a session");
  std::string hints = style.Dim(
      std::string("  ↑/↓ move · Enter open · / search · Tab preview · t transcript · a archive · "
                  "s sort · A ") +
      (show_cwd_ ? "this directory" : "all directories") + " · Esc cancel");
  if (DisplayWidth(heading) + DisplayWidth(hints) >= columns) {
    hints = style.Dim("  Enter open · / search · Tab preview · Esc cancel");
  }
  heading += style.Dim(by_created_ ? " (by creation)" : "");
  lines.push_back(DisplayWidth(heading) + DisplayWidth(hints) < columns ? heading + hints
                                                                        : heading);
  if (filtering_ || !filter_.empty()) {
    lines.push_back(style.Cyan("/ ") + filter_ + (filtering_ ? "▏" : ""));
  }
  std::vector<std::string> preview;
  if (preview_ && hooks_.preview && !visible_.empty()) {
    preview = hooks_.preview(sessions_[visible_[selected_]]);
    const size_t room = static_cast<size_t>(std::max(0, max_rows / 2 - 1));
    if (preview.size() > room)
      preview.erase(preview.begin(), preview.end() - static_cast<long>(room));
  }
  int list_rows = std::max(1, max_rows - static_cast<int>(lines.size()) - 1 -
                                  static_cast<int>(preview.size() + (preview.empty() ? 0 : 1)));
  if (visible_.empty()) {
    lines.push_back(
        style.Dim(sessions_.empty() ? "  no sessions yet" : "  no session matches the filter"));
  } else {
    size_t rows = std::min(visible_.size(), static_cast<size_t>(list_rows));
    size_t first = selected_ >= rows ? selected_ - rows + 1 : 0;
    const int when_w = 9;
    // The whole id: UUIDv7 prefixes are timestamps, alike for sessions of the same hour.
    const int id_w = 36;
    int cwd_w = show_cwd_ ? std::min(30, columns / 4) : 0;
    int title_w = std::max(10, columns - 2 - when_w - 1 - id_w - 2 - (cwd_w ? cwd_w + 1 : 0));
    for (size_t r = first; r < first + rows; ++r) {
      const core::SessionInfo& s = sessions_[visible_[r]];
      // Names and titles may come from an imported rollout or a shared store.
      std::string title = NeutralizeControls(s.name.empty() ? s.title : s.name + ": " + s.title);
      if (title.empty()) title = "(no message yet)";
      std::string row = Fit(Ago(s.updated_at_ms, now_ms_), when_w) + " " + Fit(title, title_w) +
                        " " + (show_cwd_ ? Fit(NeutralizeControls(s.cwd), cwd_w) + " " : "") +
                        Fit(NeutralizeControls(s.id), id_w);
      lines.push_back(r == selected_ ? style.Cyan("› ") + style.Bold(row) : "  " + row);
    }
  }
  if (!preview.empty()) {
    lines.push_back(style.Dim(std::string(static_cast<size_t>(std::min(columns - 1, 40)), '-')));
    for (const auto& p : preview) lines.push_back(Fit(p, columns - 1));
  }
  lines.push_back(style.Dim(std::to_string(visible_.size()) + " of " +
                            std::to_string(sessions_.size()) + " sessions"));
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i > 0) out += "\r\n";
    out += lines[i];
  }
  return out;
}

}  // namespace codex::cli
