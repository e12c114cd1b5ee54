// Import and export of Codex rollout files (JSON Lines, one object per line
// with "timestamp", "type" and "payload"; see
// tests/data/reference/codex-0.169/README.md).
//
// Import maps line kinds to the store:
//   session_meta   -> the session row (id, cwd, model_provider, timestamp)
//   response_item  -> an item (core::DecodeItem strips id/status/internal
//                     metadata; a payload that has none of those keeps its
//                     exact text, so export -> import is byte-identical)
//   compacted      -> a compaction_checkpoint item (body in the format of
//                     core/compaction_checkpoint.h, replacement_items = N)
//                     followed by the N replacement_history items (our own
//                     exports add "checkpoint": the original body, kept)
//   turn_context   -> the turn of the items that follow, and the model
//   event_msg      -> an event of type payload.type; other kinds (world_state,
//                     token_usage_record, ...) -> an event of the line's type
//   turns          <- task_started / task_complete / turn_aborted events and
//                     token_usage_record usage (or our own "codex_turn" lines)
// Importing is atomic per file and idempotent by session id: a session that
// already exists is left untouched, but for what a longer copy of the same
// rollout adds (ImportRolloutFile).
//
// Export writes the session's whole history in the same format: a
// session_meta line, a turn_context line where the turn changes, response_item lines whose payload
// is the stored body verbatim, a compacted line per checkpoint (its replacement items inside),
// events, and one "codex_turn" line per recorded turn, merged by time.
// Markdown export is a readable transcript. Functions never throw.
//
// Files: rollout_import.cc (ParseRollout, one step per line kind),
// rollout_export.cc (JSON Lines, ExportSession), rollout_markdown.cc (the
// Markdown renderer), rollout_format.h (the raw-JSON scanner and timestamps
// they share).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "storage/session_database.h"

namespace codex::storage {

// Parses a rollout file's text. `source_name` names it in errors
// ("<name>:<line>: ..."). A last line without a newline that is not a JSON
// object (what a crash of Codex leaves while writing it) is dropped and
// reported in `dropped_tail`; any other line that is not a rollout line (not
// JSON, an item that does not decode, a field of the wrong type) is dropped
// and reported in `dropped_lines`, the others kept, as Codex 0.169 reads the
// file. kInvalidArgument when no session_meta line is left.
Result<ImportedSession> ParseRollout(std::string_view text, const std::string& source_name);

// The files to import for the given paths: files as given, directories
// searched recursively for *.jsonl (sorted). A path that does not exist or
// cannot be read, and a directory inside one that cannot be read, is reported
// in `errors` (one line each) and skipped.
struct RolloutFiles {
  std::vector<std::string> files;
  std::vector<Status> errors;
};
RolloutFiles CollectRolloutFiles(const std::vector<std::string>& paths);

struct ImportOutcome {
  std::string path;
  std::string session_id;
  bool imported = false;  // false: the session was already in the store
  // Already there, and the file holds the stored history and more (Codex
  // resumed a file a crash had cut off): how many items and events were added.
  size_t items_added = 0;
  size_t events_added = 0;
  std::optional<DroppedTail> dropped_tail;  // a cut-off last line that was not imported
  std::vector<DroppedLine> dropped_lines;   // malformed complete lines, not imported
};

// Reads, parses and imports one rollout file. A session already in the store
// is left as it is, unless its stored history (items and events) is where the
// file starts and the file goes on: then what the file adds is appended
// (importing a crash's cut-off rollout, then the same file after Codex
// resumed it, leaves one session with every line; no duplicates). A stored
// session that went its own way since (continued here) is left untouched.
// `progress` (may be empty) is told as the items are stored: how many so
// far, of how many.
Result<ImportOutcome> ImportRolloutFile(
    SessionDatabase& store, const std::string& path,
    const std::function<void(size_t stored, size_t total)>& progress = {});

enum class ExportFormat { kJsonl, kMarkdown };

// Called as the items of an export are written: how many so far, of how many.
using ExportProgress = std::function<void(int64_t done, int64_t total)>;

// The session (full id) as rollout JSON Lines or Markdown text. `progress`
// (may be empty) is told of each item written.
Result<std::string> ExportSession(SessionDatabase& store, std::string_view session_id,
                                  ExportFormat format, const ExportProgress& progress = {});

}  // namespace codex::storage
