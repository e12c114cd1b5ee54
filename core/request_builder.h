// Building Responses API request bodies from stored item bytes.
//
// The body is assembled by concatenation: every item's stored JSON text goes
// into `input` unchanged, so a request's `input` is a byte prefix of the next
// request's whenever the transcript only grew (the prompt cache hits). Fields
// are written in a fixed order and `tools` is a fixed string per session.
// Pure functions; thread-safe.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "core/item.h"

namespace codex::core {

struct RequestOptions {
  std::string model;
  std::string instructions;       // "" = omitted
  std::string tools_json = "[]";  // a JSON array, fixed for the session
  bool parallel_tool_calls = false;
  std::string reasoning_effort;            // "" = omitted
  std::string reasoning_summary = "auto";  // "" = omitted
  std::string prompt_cache_key;            // the session id
  bool send_item_ids = false;              // splice server ids back (per provider)
  std::string verbosity;                   // text.verbosity; "" = omitted
  std::string output_schema_json;          // text.format json_schema (a JSON object); "" = none
};

// {"model":…,"instructions":…,"tools":…,"tool_choice":"auto",
//  "parallel_tool_calls":…,"reasoning":{…},"text":{"verbosity":…,"format":{…}}?,
//  "store":false,"stream":true,
//  "include":["reasoning.encrypted_content"],"prompt_cache_key":…,"input":[…]}
// `input` comes last, so a request whose transcript grew (or a compaction
// request, which appends its ask) starts with the previous body minus "]}".
// Items of kind kCompactionCheckpoint are never sent.
std::string BuildResponsesRequest(const RequestOptions& options, std::span<const Item> input);

// The `input` array alone, as BuildResponsesRequest writes it (for tests of
// prefix stability and for /responses/compact bodies).
std::string BuildInputArray(std::span<const Item> input, bool send_item_ids);

// {"model":…,"input":[…],"instructions":…} for POST /responses/compact.
std::string BuildCompactRequest(std::string_view model, std::string_view instructions,
                                std::span<const Item> input, bool send_item_ids);

// A JSON string literal (quoted, escaped) for `text`.
std::string JsonQuote(std::string_view text);

}  // namespace codex::core
