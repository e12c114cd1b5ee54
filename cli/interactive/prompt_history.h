// PromptHistory: the prompts typed in interactive sessions, persisted in
// $CODEX_HOME/history.jsonl (one JSON object per line, the Codex format:
// {"session_id":"…","ts":<unix seconds>,"text":"…"}) so Up recalls prompts
// from earlier runs. The file is created with mode 0600 and appended to with
// O_APPEND, one write per entry, so several processes can share it. Lines
// that do not parse are skipped. Not thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace codex::cli {

class PromptHistory {
 public:
  explicit PromptHistory(std::string path) : path_(std::move(path)) {}

  // The newest `max_entries` texts, oldest first (an absent file is empty).
  std::vector<std::string> Load(size_t max_entries = 1000) const;
  // Appends one entry; blank texts are ignored.
  Status Append(std::string_view session_id, std::string_view text, int64_t unix_seconds) const;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace codex::cli
