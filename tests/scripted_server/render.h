// Turns script entries into what goes on the wire: SSE event streams shaped
// like the real Responses API (see tests/data/conformance/responses), JSON
// bodies for /responses/compact, and JSON error bodies.
//
// Rendering is deterministic given the entry, the request and the IssuedState,
// and does no I/O. It records every item id and encrypted_content it hands out
// in the IssuedState, which the invariant checks later consult.
// Not thread-safe: the caller serializes access to the IssuedState.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "tests/scripted_server/script.h"

namespace codex::testing {

// Counters and everything a server has handed out so far.
struct IssuedState {
  uint64_t next_id = 1;        // shared by item ids (rs_N, fc_N, msg_N, ...) and call ids
  uint64_t next_response = 1;  // resp_N
  std::unordered_set<std::string> encrypted_contents;  // reasoning and compaction items
  std::unordered_set<std::string> item_ids;
  bool issued_reasoning_without_content = false;

  std::string NewId(std::string_view prefix) {
    return std::string(prefix) + "_" + std::to_string(next_id++);
  }
};

// The request being answered, as far as rendering cares.
struct RequestInfo {
  const Json* body = nullptr;  // the parsed request body (an object)
  size_t body_bytes = 0;
};

// Everything needed to answer one HTTP request.
struct Reply {
  enum class StopMode { kDrop, kEnd };

  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string content_type = "application/json";
  bool streaming = false;
  std::string body;                 // when !streaming
  std::vector<std::string> chunks;  // when streaming: one SSE event (or raw chunk) each

  std::string wait_for_file;    // before the status line: until it exists (30 s at most)
  int64_t header_delay_ms = 0;  // before the status line is written
  int64_t delay_ms = 0;         // after the headers, before the first chunk
  int64_t event_delay_ms = 0;   // between chunks
  int64_t pause_after = -1;     // after this many chunks, pause once for pause_ms
  int64_t pause_ms = 0;
  int64_t stop_after = -1;  // after this many chunks: close abruptly (kDrop) or end (kEnd)
  StopMode stop_mode = StopMode::kDrop;

  std::string outcome;  // short label for records and logs, e.g. "stream", "failed:server_error"
};

// The token estimate used everywhere here: bytes / 4.
inline int64_t EstimateTokens(size_t bytes) { return static_cast<int64_t>(bytes / 4); }

// Answers a /responses request with a (substituted) response entry.
Reply RenderResponse(const Json& entry, const RequestInfo& request, IssuedState& issued);

// A response.failed stream with code context_length_exceeded.
Reply RenderContextLengthExceeded(const RequestInfo& request, int64_t tokens, int64_t limit,
                                  IssuedState& issued);

// Answers a /responses/compact request; `entry` nullptr selects the built-in
// default (the input's user messages plus a compaction item).
Reply RenderCompact(const Json* entry, const RequestInfo& request, IssuedState& issued);

// Answers a /responses request whose last input item is a compaction_trigger
// (inline compaction): an SSE stream whose output is the entry's `output`
// (a compact entry; `http_error` is honoured) or, for `entry` nullptr, one
// `compaction` item whose content encodes a digest of the input.
Reply RenderInlineCompaction(const Json* entry, const RequestInfo& request, IssuedState& issued);

// {"error":{"message","type","param","code"}} with the given HTTP status.
Reply ErrorReply(int status, std::string_view type, std::string_view code,
                 std::string_view message);

// Splits text into up to `max_pieces` deltas at word (or UTF-8 character)
// boundaries; concatenating the pieces gives `text` back. Empty text gives none.
std::vector<std::string> SplitIntoDeltas(std::string_view text, size_t max_pieces);

}  // namespace codex::testing
