// PromptHistory: the prompts typed in interactive sessions, persisted in
// $CODEX_HOME/history.jsonl (one JSON object per line, the Codex format:
// {"session_id":"…","ts":<unix seconds>,"text":"…"}) so Up recalls prompts
// from earlier runs. The file is created with mode 0600 and appended to with
// O_APPEND, one write per entry, so several processes can share it. Lines
// that do not parse are skipped; an entry appended after a line a crash cut
// off (no newline) starts a line of its own. With a byte limit (Codex's history.max_bytes)
// an append that takes the file over it drops the oldest entries, under an
// exclusive lock, so the file is at most that size. Not thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace codex::cli {

class PromptHistory {
 public:
  // max_bytes 0 = no limit.
  explicit PromptHistory(std::string path, int64_t max_bytes = 0)
      : path_(std::move(path)), max_bytes_(max_bytes) {}

  // The newest `max_entries` texts, oldest first (an absent file is empty).
  std::vector<std::string> Load(size_t max_entries = 1000) const;
  // Appends one entry; blank texts are ignored.
  Status Append(std::string_view session_id, std::string_view text, int64_t unix_seconds) const;

  const std::string& path() const { return path_; }

 private:
  // Keeps the newest whole lines that fit in max_bytes_ (fd: the file, locked).
  Status Trim(int fd) const;
  std::string path_;
  int64_t max_bytes_ = 0;
};

}  // namespace codex::cli
