#include "core/request_builder.h"

#include <nlohmann/json.hpp>

#include "base/json.h"

namespace codex::core {

std::string JsonQuote(std::string_view text) { return Dump(nlohmann::json(std::string(text))); }

std::string BuildInputArray(std::span<const Item> input, bool send_item_ids) {
  size_t total = 2;
  for (const Item& item : input) total += item.body.size() + 1;
  std::string out;
  out.reserve(total + (send_item_ids ? input.size() * 48 : 0));
  out += '[';
  bool first = true;
  for (const Item& item : input) {
    if (item.kind == ItemKind::kCompactionCheckpoint) continue;
    if (!first) out += ',';
    first = false;
    if (send_item_ids) {
      out += WireBody(item, true);
    } else {
      out += item.body;
    }
  }
  out += ']';
  return out;
}

std::string BuildResponsesRequest(const RequestOptions& options, std::span<const Item> input) {
  std::string input_json = BuildInputArray(input, options.send_item_ids);
  std::string out;
  out.reserve(input_json.size() + options.tools_json.size() + options.instructions.size() + 512);
  out += "{\"model\":";
  out += JsonQuote(options.model);
  if (!options.instructions.empty()) {
    out += ",\"instructions\":";
    out += JsonQuote(options.instructions);
  }
  out += ",\"tools\":";
  out += options.tools_json.empty() ? "[]" : options.tools_json;
  out += ",\"tool_choice\":\"auto\",\"parallel_tool_calls\":";
  out += options.parallel_tool_calls ? "true" : "false";
  if (!options.reasoning_effort.empty() || !options.reasoning_summary.empty()) {
    out += ",\"reasoning\":{";
    bool first = true;
    if (!options.reasoning_effort.empty()) {
      out += "\"effort\":" + JsonQuote(options.reasoning_effort);
      first = false;
    }
    if (!options.reasoning_summary.empty()) {
      if (!first) out += ',';
      out += "\"summary\":" + JsonQuote(options.reasoning_summary);
    }
    out += '}';
  }
  if (!options.verbosity.empty() || !options.output_schema_json.empty()) {
    out += ",\"text\":{";
    if (!options.verbosity.empty()) out += "\"verbosity\":" + JsonQuote(options.verbosity);
    if (!options.output_schema_json.empty()) {
      if (!options.verbosity.empty()) out += ',';
      out += "\"format\":{\"type\":\"json_schema\",\"name\":\"codex_output_schema\",\"schema\":";
      out += options.output_schema_json;
      out += ",\"strict\":true}";
    }
    out += '}';
  }
  out += ",\"store\":false,\"stream\":true,\"include\":[\"reasoning.encrypted_content\"]";
  if (!options.prompt_cache_key.empty()) {
    out += ",\"prompt_cache_key\":";
    out += JsonQuote(options.prompt_cache_key);
  }
  // The input last: the request is then a byte prefix of the next one up to
  // its closing "]}", as the provider's prompt cache sees it (instructions and
  // tools are rendered before the conversation).
  out += ",\"input\":";
  out += input_json;
  out += '}';
  return out;
}

std::string BuildCompactRequest(std::string_view model, std::string_view instructions,
                                std::span<const Item> input, bool send_item_ids) {
  std::string out = "{\"model\":" + JsonQuote(model) + ",\"input\":";
  out += BuildInputArray(input, send_item_ids);
  out += ",\"instructions\":" + JsonQuote(instructions) + "}";
  return out;
}

}  // namespace codex::core
