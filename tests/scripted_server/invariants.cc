#include "tests/scripted_server/invariants.h"

#include <string>
#include <unordered_map>
#include <vector>

namespace codex::testing {

namespace {

Violation Reject(std::string code, std::string message) {
  return Violation{std::move(code), std::move(message)};
}

std::string Quote(std::string_view s) { return "\"" + std::string(s) + "\""; }

std::string Where(size_t index, std::string_view type) {
  return "input[" + std::to_string(index) + "] (" + std::string(type) + ")";
}

bool IsCallType(std::string_view type) {
  return type == "function_call" || type == "custom_tool_call" || type == "local_shell_call";
}

bool IsOutputType(std::string_view type) {
  return type == "function_call_output" || type == "custom_tool_call_output" ||
         type == "local_shell_call_output";
}

// Whether an output of `output_type` may answer a call of `call_type`.
bool Answers(std::string_view call_type, std::string_view output_type) {
  if (call_type == "function_call") return output_type == "function_call_output";
  if (call_type == "custom_tool_call") return output_type == "custom_tool_call_output";
  // local_shell_call: Codex answers with function_call_output; accept either.
  return output_type == "local_shell_call_output" || output_type == "function_call_output";
}

std::string ExpectedOutputFor(std::string_view call_type) {
  if (call_type == "custom_tool_call") return "custom_tool_call_output";
  return "function_call_output";
}

struct CallState {
  size_t index;
  std::string type;
  int outputs = 0;
};

Verdict CheckCommon(const Json& body) {
  if (!body.is_object()) {
    return Reject("invalid_json", "the request body must be a JSON object");
  }
  if (!body.contains("model") || !body["model"].is_string() ||
      body["model"].get<std::string>().empty()) {
    return Reject("missing_required_parameter", "missing required parameter: \"model\"");
  }
  if (body.contains("previous_response_id") && !body["previous_response_id"].is_null()) {
    return Reject("previous_response_id_not_allowed",
                  "\"previous_response_id\" was sent, but this client is stateless (store:false): "
                  "resend the whole transcript in \"input\" instead");
  }
  return std::nullopt;
}

}  // namespace

Verdict CheckInput(const Json& input, const IssuedState& issued, const InvariantOptions& options) {
  if (input.is_null() || input.is_string()) return std::nullopt;
  if (!input.is_array()) {
    return Reject("invalid_type", "\"input\" must be a string or an array of items");
  }
  std::unordered_map<std::string, CallState> calls;
  std::vector<std::string> call_order;
  for (size_t i = 0; i < input.size(); ++i) {
    const Json& item = input[i];
    if (!item.is_object()) {
      return Reject("invalid_input_item", "input[" + std::to_string(i) + "] is not an object");
    }
    std::string type;
    if (item.contains("type")) {
      if (!item["type"].is_string()) {
        return Reject("invalid_input_item",
                      "input[" + std::to_string(i) + "] has a non-string \"type\"");
      }
      type = item["type"].get<std::string>();
    } else if (item.contains("role")) {
      type = "message";
    } else {
      return Reject("invalid_input_item",
                    "input[" + std::to_string(i) + "] has neither \"type\" nor \"role\"");
    }

    if (!options.allow_item_ids && item.contains("id") && item["id"].is_string() &&
        issued.item_ids.count(item["id"].get<std::string>()) != 0) {
      return Reject("server_item_id_resent",
                    Where(i, type) + " carries id " + Quote(item["id"].get<std::string>()) +
                        " that this server issued; with store:false the server keeps no items, "
                        "so strip \"id\" from items before resending them");
    }

    if (type == "compaction_trigger" && i + 1 != input.size()) {
      return Reject("invalid_input_item", Where(i, type) +
                                              ": the 'compaction_trigger' item must be the final "
                                              "input item");
    }

    if (type == "reasoning" || type == "compaction") {
      const Json* content =
          item.contains("encrypted_content") ? &item["encrypted_content"] : nullptr;
      if (content == nullptr || content->is_null()) {
        if (type == "compaction" || !issued.issued_reasoning_without_content) {
          return Reject("unknown_encrypted_content",
                        Where(i, type) +
                            " has no encrypted_content; with store:false it must be resent "
                            "exactly as the server returned it");
        }
      } else if (!content->is_string() ||
                 issued.encrypted_contents.count(content->get<std::string>()) == 0) {
        return Reject("unknown_encrypted_content",
                      Where(i, type) +
                          " carries an encrypted_content this server never issued (it must be "
                          "resent byte-identical to the one in response.output_item.done)");
      }
      continue;
    }

    if (IsCallType(type) || IsOutputType(type)) {
      if (!item.contains("call_id") || !item["call_id"].is_string() ||
          item["call_id"].get<std::string>().empty()) {
        return Reject("invalid_input_item", Where(i, type) + " has no \"call_id\"");
      }
    }
    if (IsCallType(type)) {
      std::string call_id = item["call_id"].get<std::string>();
      auto [it, inserted] = calls.emplace(call_id, CallState{i, type, 0});
      if (!inserted) {
        return Reject("duplicate_call_id", Where(i, type) + " repeats call_id " + Quote(call_id) +
                                               " already used by input[" +
                                               std::to_string(it->second.index) + "]");
      }
      call_order.push_back(call_id);
    } else if (IsOutputType(type)) {
      std::string call_id = item["call_id"].get<std::string>();
      auto it = calls.find(call_id);
      if (it == calls.end()) {
        return Reject("orphan_call_output",
                      Where(i, type) + " answers call_id " + Quote(call_id) +
                          " but no earlier input item is a call with that call_id");
      }
      CallState& call = it->second;
      if (!Answers(call.type, type)) {
        return Reject("mismatched_call_output", Where(i, type) + " answers the " + call.type +
                                                    " at input[" + std::to_string(call.index) +
                                                    "]; expected " + ExpectedOutputFor(call.type));
      }
      if (++call.outputs > 1) {
        return Reject("duplicate_call_output", Where(i, type) + " is a second output for call_id " +
                                                   Quote(call_id) +
                                                   "; every call needs exactly one output");
      }
    }
  }
  for (const auto& call_id : call_order) {
    const CallState& call = calls.at(call_id);
    if (call.outputs == 0) {
      return Reject("missing_call_output",
                    Where(call.index, call.type) + " with call_id " + Quote(call_id) + " has no " +
                        ExpectedOutputFor(call.type) +
                        " in input; every call needs exactly one output (send \"aborted\" for "
                        "an interrupted call)");
    }
  }
  return std::nullopt;
}

Verdict CheckResponsesRequest(const Json& body, const IssuedState& issued,
                              const InvariantOptions& options) {
  if (Verdict v = CheckCommon(body)) return v;
  if (!body.contains("store") || body["store"] != false) {
    return Reject("store_must_be_false",
                  body.contains("store")
                      ? "\"store\" must be false (zero data retention); got " + body["store"].dump()
                      : "\"store\" is missing and defaults to true; send \"store\": false");
  }
  if (!body.contains("stream") || body["stream"] != true) {
    return Reject("stream_required",
                  "this server only streams: send \"stream\": true (got " +
                      (body.contains("stream") ? body["stream"].dump() : std::string("nothing")) +
                      ")");
  }
  if (!body.contains("input")) {
    return Reject("missing_required_parameter", "missing required parameter: \"input\"");
  }
  return CheckInput(body["input"], issued, options);
}

Verdict CheckCompactRequest(const Json& body, const IssuedState& issued,
                            const InvariantOptions& options) {
  if (Verdict v = CheckCommon(body)) return v;
  if (!body.contains("input")) {
    return Reject("missing_required_parameter", "missing required parameter: \"input\"");
  }
  return CheckInput(body["input"], issued, options);
}

}  // namespace codex::testing
