// The wire invariants a stateless (store:false) Codex client must keep, checked
// on every request the scripted server receives (README.md "Invariants").
//
// Each check returns nullopt or the Violation: a stable wire error code (e.g.
// "missing_call_output", sent as the 400's error.code) and a message naming the
// offending input item. Pure functions; thread-safe given a stable IssuedState.
#pragma once

#include <optional>
#include <string>

#include "tests/scripted_server/render.h"

namespace codex::testing {

// Why the scripted server refuses a request (a 400 invalid_request_error).
struct Violation {
  std::string code;     // the wire error code, e.g. "missing_call_output"
  std::string message;  // the error message sent with it
};

// nullopt when the request keeps every invariant.
using Verdict = std::optional<Violation>;

struct InvariantOptions {
  bool allow_item_ids = false;  // accept input items carrying ids this server issued
};

// Checks a POST /responses body: JSON object with a model, store:false,
// stream:true, no previous_response_id, and a valid input (CheckInput).
Verdict CheckResponsesRequest(const Json& body, const IssuedState& issued,
                              const InvariantOptions& options);

// Checks a POST /responses/compact body: a model, no previous_response_id,
// and a valid input (CheckInput).
Verdict CheckCompactRequest(const Json& body, const IssuedState& issued,
                            const InvariantOptions& options);

// Checks `input` (a string or an array of items): every function_call,
// custom_tool_call and local_shell_call is followed by exactly one output with
// its call_id and no output lacks a call; reasoning and compaction items carry
// an encrypted_content this server issued, byte for byte; and, unless
// options.allow_item_ids, no item carries an id this server issued.
Verdict CheckInput(const Json& input, const IssuedState& issued, const InvariantOptions& options);

}  // namespace codex::testing
