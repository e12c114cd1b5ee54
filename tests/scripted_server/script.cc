#include "tests/scripted_server/script.h"

#include <fstream>
#include <initializer_list>
#include <sstream>
#include <utility>

namespace codex::testing {

namespace {

// A repeat may not expand a list beyond this many entries (guards overflow).
constexpr uint64_t kMaxExpandedEntries = 1'000'000'000'000ULL;

std::string ReplaceAll(std::string s, std::string_view from, std::string_view to) {
  size_t pos = 0;
  while ((pos = s.find(from, pos)) != std::string::npos) {
    s.replace(pos, from.size(), to);
    pos += to.size();
  }
  return s;
}

std::string SubstituteString(const std::string& s, const Substitutions& subs) {
  if (s.find("{{") == std::string::npos) return s;
  std::string out = ReplaceAll(s, "{{n}}", std::to_string(subs.n));
  out = ReplaceAll(std::move(out), "{{i}}", std::to_string(subs.n - 1));
  return ReplaceAll(std::move(out), "{{request}}", std::to_string(subs.request));
}

bool IsComment(const std::string& key) { return key == "comment" || key.starts_with("_"); }

std::string Quote(std::string_view s) { return "\"" + std::string(s) + "\""; }

std::string JoinKeys(std::initializer_list<std::string_view> keys) {
  std::string out;
  for (auto k : keys) {
    if (!out.empty()) out += ", ";
    out += k;
  }
  return out;
}

Status Invalid(const std::string& path, const std::string& what) {
  return InvalidArgumentError("script: " + path + ": " + what);
}

// Fails when `obj` has a key outside `allowed` (comments aside).
Status CheckKeys(const Json& obj, const std::string& path,
                 std::initializer_list<std::string_view> allowed) {
  for (const auto& [key, value] : obj.items()) {
    if (IsComment(key)) continue;
    bool known = false;
    for (auto a : allowed) known = known || key == a;
    if (!known) {
      return Invalid(path, "unknown key " + Quote(key) + "; expected one of: " + JoinKeys(allowed));
    }
  }
  return OkStatus();
}

Status ExpectString(const Json& obj, const char* key, const std::string& path) {
  if (obj.contains(key) && !obj[key].is_string()) {
    return Invalid(path + "." + key, "must be a string");
  }
  return OkStatus();
}

Status ExpectNonNegativeInt(const Json& obj, const char* key, const std::string& path) {
  if (obj.contains(key) && !(obj[key].is_number_integer() && obj[key].get<int64_t>() >= 0)) {
    return Invalid(path + "." + key, "must be a non-negative integer");
  }
  return OkStatus();
}

Status ExpectStringArray(const Json& value, const std::string& path) {
  if (!value.is_array() || value.empty()) {
    return Invalid(path, "must be a non-empty array of strings (argv)");
  }
  for (const auto& v : value) {
    if (!v.is_string()) return Invalid(path, "must be a non-empty array of strings (argv)");
  }
  return OkStatus();
}

}  // namespace

Json Substitute(const Json& value, const Substitutions& subs) {
  if (value.is_string()) return SubstituteString(value.get<std::string>(), subs);
  if (value.is_array()) {
    Json out = Json::array();
    for (const auto& v : value) out.push_back(Substitute(v, subs));
    return out;
  }
  if (value.is_object()) {
    Json out = Json::object();
    for (const auto& [k, v] : value.items()) out[k] = Substitute(v, subs);
    return out;
  }
  return value;
}

// Builds a Script from JSON, validating as it goes.
class ScriptParser {
 public:
  static Status ValidateItem(const Json& item, const std::string& path) {
    if (!item.is_object()) return Invalid(path, "an output item must be a JSON object");
    if (item.contains("type")) {
      if (!item["type"].is_string()) return Invalid(path + ".type", "must be a string");
      return OkStatus();  // a full wire item, sent as written (an id is added if missing)
    }
    if (item.contains("message")) {
      RETURN_IF_ERROR(CheckKeys(item, path, {"message", "phase", "role"}));
      RETURN_IF_ERROR(ExpectString(item, "message", path));
      RETURN_IF_ERROR(ExpectString(item, "phase", path));
      return ExpectString(item, "role", path);
    }
    if (item.contains("user")) {
      RETURN_IF_ERROR(CheckKeys(item, path, {"user"}));
      return ExpectString(item, "user", path);
    }
    if (item.contains("reasoning")) {
      RETURN_IF_ERROR(CheckKeys(item, path, {"reasoning", "encrypted_content", "content"}));
      const Json& r = item["reasoning"];
      bool ok = r.is_string() || r.is_array();
      if (r.is_array()) {
        for (const auto& part : r) ok = ok && part.is_string();
      }
      if (!ok) return Invalid(path + ".reasoning", "must be a summary string or array of strings");
      if (item.contains("encrypted_content") && !item["encrypted_content"].is_string() &&
          !item["encrypted_content"].is_null()) {
        return Invalid(path + ".encrypted_content", "must be a string or null");
      }
      return ExpectString(item, "content", path);
    }
    if (item.contains("function_call")) {
      RETURN_IF_ERROR(CheckKeys(item, path, {"function_call", "arguments", "call_id"}));
      RETURN_IF_ERROR(ExpectString(item, "function_call", path));
      RETURN_IF_ERROR(ExpectString(item, "call_id", path));
      if (item.contains("arguments") && !item["arguments"].is_string() &&
          !item["arguments"].is_object()) {
        return Invalid(path + ".arguments", "must be a JSON object or a string");
      }
      return OkStatus();
    }
    if (item.contains("shell") || item.contains("local_shell_call")) {
      const char* key = item.contains("shell") ? "shell" : "local_shell_call";
      RETURN_IF_ERROR(CheckKeys(item, path, {key, "workdir", "timeout_ms", "call_id"}));
      RETURN_IF_ERROR(ExpectStringArray(item[key], path + "." + key));
      RETURN_IF_ERROR(ExpectString(item, "call_id", path));
      if (item.contains("workdir") && !item["workdir"].is_string() && !item["workdir"].is_null()) {
        return Invalid(path + ".workdir", "must be a string or null");
      }
      return ExpectNonNegativeInt(item, "timeout_ms", path);
    }
    if (item.contains("custom_tool_call")) {
      RETURN_IF_ERROR(CheckKeys(item, path, {"custom_tool_call", "input", "call_id"}));
      RETURN_IF_ERROR(ExpectString(item, "custom_tool_call", path));
      RETURN_IF_ERROR(ExpectString(item, "input", path));
      return ExpectString(item, "call_id", path);
    }
    if (item.contains("compaction")) {
      RETURN_IF_ERROR(CheckKeys(item, path, {"compaction", "encrypted_content"}));
      RETURN_IF_ERROR(ExpectString(item, "compaction", path));
      return ExpectString(item, "encrypted_content", path);
    }
    return Invalid(path,
                   "unknown output item; write {\"type\":...} for a wire item or use one of "
                   "message, user, reasoning, function_call, shell, custom_tool_call, "
                   "local_shell_call, compaction");
  }

  static Status ValidateUsage(const Json& usage, const std::string& path) {
    if (usage.is_null()) return OkStatus();
    if (usage.is_string()) {
      if (usage == "auto") return OkStatus();
      return Invalid(path, "must be \"auto\", null, or an object");
    }
    if (!usage.is_object()) return Invalid(path, "must be \"auto\", null, or an object");
    if (usage.contains("input_tokens_details") || usage.contains("output_tokens_details")) {
      return OkStatus();  // wire shape, sent as written
    }
    RETURN_IF_ERROR(CheckKeys(
        usage, path,
        {"input_tokens", "cached_tokens", "output_tokens", "reasoning_tokens", "total_tokens"}));
    for (const char* key :
         {"input_tokens", "cached_tokens", "output_tokens", "reasoning_tokens", "total_tokens"}) {
      RETURN_IF_ERROR(ExpectNonNegativeInt(usage, key, path));
    }
    return OkStatus();
  }

  static Status ValidateHttpError(const Json& e, const std::string& path) {
    if (e.is_number_integer()) {
      int64_t status = e.get<int64_t>();
      if (status < 400 || status > 599) return Invalid(path, "HTTP status must be 400..599");
      return OkStatus();
    }
    if (!e.is_object()) return Invalid(path, "must be a status number or an object");
    RETURN_IF_ERROR(
        CheckKeys(e, path, {"status", "body", "retry_after", "headers", "code", "message"}));
    if (!e.contains("status") || !e["status"].is_number_integer() ||
        e["status"].get<int64_t>() < 400 || e["status"].get<int64_t>() > 599) {
      return Invalid(path + ".status", "is required and must be 400..599");
    }
    if (e.contains("retry_after") && !e["retry_after"].is_string() &&
        !e["retry_after"].is_number()) {
      return Invalid(path + ".retry_after", "must be seconds (number) or a string");
    }
    if (e.contains("headers")) {
      if (!e["headers"].is_object()) return Invalid(path + ".headers", "must be an object");
      for (const auto& [k, v] : e["headers"].items()) {
        if (!v.is_string()) return Invalid(path + ".headers." + k, "must be a string");
      }
    }
    RETURN_IF_ERROR(ExpectString(e, "code", path));
    return ExpectString(e, "message", path);
  }

  static Status ValidateOutput(const Json& entry, const std::string& path) {
    if (!entry.contains("output")) return OkStatus();
    if (!entry["output"].is_array()) return Invalid(path + ".output", "must be an array of items");
    for (size_t i = 0; i < entry["output"].size(); ++i) {
      RETURN_IF_ERROR(
          ValidateItem(entry["output"][i], path + ".output[" + std::to_string(i) + "]"));
    }
    return OkStatus();
  }

  // A /responses entry (README.md "Response entries"). Strings are normalized first.
  static Result<Json> ResponseEntry(const Json& raw, const std::string& path) {
    Json entry = raw.is_string() ? Json{{"message", raw}} : raw;
    if (!entry.is_object()) {
      return Invalid(path, "an entry must be an object or a message string");
    }
    RETURN_IF_ERROR(
        CheckKeys(entry, path,
                  {"output", "message", "usage", "id", "http_error", "failed", "incomplete", "raw",
                   "delay_ms", "header_delay_ms", "event_delay_ms", "pause_after", "pause_ms",
                   "drop_after", "end_after", "wait_for_file"}));
    RETURN_IF_ERROR(ValidateOutput(entry, path));
    RETURN_IF_ERROR(ExpectString(entry, "message", path));
    RETURN_IF_ERROR(ExpectString(entry, "id", path));
    RETURN_IF_ERROR(ExpectString(entry, "wait_for_file", path));
    for (const char* key : {"delay_ms", "header_delay_ms", "event_delay_ms", "pause_after",
                            "pause_ms", "drop_after", "end_after"}) {
      RETURN_IF_ERROR(ExpectNonNegativeInt(entry, key, path));
    }
    if (entry.contains("usage")) RETURN_IF_ERROR(ValidateUsage(entry["usage"], path + ".usage"));
    if (entry.contains("http_error")) {
      RETURN_IF_ERROR(ValidateHttpError(entry["http_error"], path + ".http_error"));
      for (const char* key : {"output", "message", "failed", "incomplete", "raw", "usage"}) {
        if (entry.contains(key)) {
          return Invalid(path, std::string("\"http_error\" cannot be combined with \"") + key +
                                   "\" (an HTTP error has no stream)");
        }
      }
    }
    if (entry.contains("raw")) {
      const Json& r = entry["raw"];
      bool ok = r.is_string() || r.is_array();
      if (r.is_array()) {
        for (const auto& chunk : r) ok = ok && chunk.is_string();
      }
      if (!ok) return Invalid(path + ".raw", "must be SSE text or an array of SSE chunks");
      for (const char* key : {"output", "message", "failed", "incomplete", "usage", "id"}) {
        if (entry.contains(key)) {
          return Invalid(path, std::string("\"raw\" cannot be combined with \"") + key +
                                   "\" (raw text is sent verbatim)");
        }
      }
    }
    if (entry.contains("failed")) {
      const Json& f = entry["failed"];
      if (f.is_object()) {
        RETURN_IF_ERROR(CheckKeys(f, path + ".failed", {"code", "message", "error_event"}));
        RETURN_IF_ERROR(ExpectString(f, "code", path + ".failed"));
        RETURN_IF_ERROR(ExpectString(f, "message", path + ".failed"));
        if (f.contains("error_event") && !f["error_event"].is_boolean()) {
          return Invalid(path + ".failed.error_event", "must be true or false");
        }
      } else if (!f.is_string()) {
        return Invalid(path + ".failed", "must be an error code string or {code, message}");
      }
      if (entry.contains("incomplete")) {
        return Invalid(path, "\"failed\" and \"incomplete\" cannot both be set");
      }
    }
    if (entry.contains("incomplete")) {
      const Json& inc = entry["incomplete"];
      if (!(inc.is_string() ||
            (inc.is_object() && inc.contains("reason") && inc["reason"].is_string()))) {
        return Invalid(path + ".incomplete", "must be a reason string or {\"reason\": ...}");
      }
    }
    return entry;
  }

  // A /responses/compact entry (README.md "Compact entries").
  static Result<Json> CompactEntry(const Json& entry, const std::string& path) {
    if (!entry.is_object()) return Invalid(path, "a compact entry must be an object");
    RETURN_IF_ERROR(CheckKeys(
        entry, path,
        {"output", "keep_user_messages", "usage", "http_error", "header_delay_ms", "id"}));
    RETURN_IF_ERROR(ValidateOutput(entry, path));
    RETURN_IF_ERROR(ExpectNonNegativeInt(entry, "header_delay_ms", path));
    RETURN_IF_ERROR(ExpectString(entry, "id", path));
    if (entry.contains("keep_user_messages") && !entry["keep_user_messages"].is_boolean()) {
      return Invalid(path + ".keep_user_messages", "must be true or false");
    }
    if (entry.contains("usage")) RETURN_IF_ERROR(ValidateUsage(entry["usage"], path + ".usage"));
    if (entry.contains("http_error")) {
      RETURN_IF_ERROR(ValidateHttpError(entry["http_error"], path + ".http_error"));
    } else if (!entry.contains("output")) {
      return Invalid(path, "needs \"output\" (items) or \"http_error\"");
    }
    return entry;
  }

  using EntryParser = Result<Json> (*)(const Json&, const std::string&);

  static Status ParseList(const Json& list, const std::string& path, EntryParser parse,
                          Script::Node* out) {
    if (!list.is_array()) return Invalid(path, "must be an array of entries");
    out->is_leaf = false;
    out->length = 0;
    for (size_t i = 0; i < list.size(); ++i) {
      const Json& raw = list[i];
      std::string item_path = path + "[" + std::to_string(i) + "]";
      Script::Node child;
      if (raw.is_object() && raw.contains("repeat")) {
        RETURN_IF_ERROR(CheckKeys(raw, item_path, {"repeat", "entries", "entry"}));
        if (!raw["repeat"].is_number_integer() || raw["repeat"].get<int64_t>() < 0) {
          return Invalid(item_path + ".repeat", "must be a non-negative integer");
        }
        Json body;
        if (raw.contains("entries")) {
          body = raw["entries"];
        } else if (raw.contains("entry")) {
          body = Json::array({raw["entry"]});
        } else {
          return Invalid(item_path, "a repeat needs \"entries\": [...] (or \"entry\": {...})");
        }
        RETURN_IF_ERROR(ParseList(body, item_path + ".entries", parse, &child));
        child.is_repeat = true;
        child.repeat = raw["repeat"].get<int64_t>();
        uint64_t once = child.length;
        uint64_t times = static_cast<uint64_t>(child.repeat);
        if (once != 0 && times > kMaxExpandedEntries / once) {
          return Invalid(item_path, "repeat expands to too many entries");
        }
        child.length = once * times;
      } else {
        ASSIGN_OR_RETURN(child.entry, parse(raw, item_path));
        child.is_leaf = true;
        child.length = 1;
      }
      if (out->length + child.length > kMaxExpandedEntries) {
        return Invalid(path, "the list expands to too many entries");
      }
      out->length += child.length;
      out->children.push_back(std::move(child));
    }
    return OkStatus();
  }

  static Result<Script> Parse(const Json& root) {
    Script script;
    Json responses;
    if (root.is_array()) {
      responses = root;
    } else if (root.is_object()) {
      RETURN_IF_ERROR(CheckKeys(root, "(top level)",
                                {"responses", "default", "compact", "allow_item_ids",
                                 "max_input_tokens", "inline_compaction", "routes"}));
      responses = root.contains("responses") ? root["responses"] : Json::array();
      if (root.contains("allow_item_ids")) {
        if (!root["allow_item_ids"].is_boolean()) {
          return Invalid("allow_item_ids", "must be true or false");
        }
        script.allow_item_ids_ = root["allow_item_ids"].get<bool>();
      }
      if (root.contains("inline_compaction")) {
        if (!root["inline_compaction"].is_boolean()) {
          return Invalid("inline_compaction", "must be true or false");
        }
        script.inline_compaction_ = root["inline_compaction"].get<bool>();
      }
      if (root.contains("max_input_tokens") && !root["max_input_tokens"].is_null()) {
        if (!root["max_input_tokens"].is_number_integer() ||
            root["max_input_tokens"].get<int64_t>() <= 0) {
          return Invalid("max_input_tokens", "must be a positive integer");
        }
        script.max_input_tokens_ = root["max_input_tokens"].get<int64_t>();
      }
      if (root.contains("default") && !root["default"].is_null()) {
        ASSIGN_OR_RETURN(script.default_, ResponseEntry(root["default"], "default"));
        script.has_default_ = true;
      }
      if (root.contains("compact")) {
        RETURN_IF_ERROR(ParseList(root["compact"], "compact", &CompactEntry, &script.compact_));
      }
      if (root.contains("routes")) {
        if (!root["routes"].is_array()) return Invalid("routes", "must be an array");
        for (size_t r = 0; r < root["routes"].size(); ++r) {
          const Json& route = root["routes"][r];
          const std::string path = "routes[" + std::to_string(r) + "]";
          if (!route.is_object()) return Invalid(path, "must be an object");
          RETURN_IF_ERROR(CheckKeys(route, path, {"when", "responses"}));
          if (!route.contains("when") || !route["when"].is_string() ||
              route["when"].get<std::string>().empty()) {
            return Invalid(path + ".when", "must be a non-empty string");
          }
          Script::Route out;
          out.when = route["when"].get<std::string>();
          RETURN_IF_ERROR(
              ParseList(route.contains("responses") ? route["responses"] : Json::array(),
                        path + ".responses", &ResponseEntry, &out.responses));
          script.routes_.push_back(std::move(out));
        }
      }
    } else {
      return InvalidArgumentError(
          "script: the top level must be an array of entries or an object with \"responses\"");
    }
    RETURN_IF_ERROR(ParseList(responses, "responses", &ResponseEntry, &script.responses_));
    if (script.compact_.is_leaf) {
      script.compact_.is_leaf = false;
      script.compact_.length = 0;
    }
    return script;
  }
};

std::optional<Script::EntryRef> Script::Find(const Node& node, uint64_t k, int64_t n) {
  if (node.is_leaf) {
    if (k != 0) return std::nullopt;
    return EntryRef{&node.entry, n};
  }
  if (k >= node.length) return std::nullopt;
  uint64_t once = node.length / static_cast<uint64_t>(node.is_repeat ? node.repeat : 1);
  uint64_t iteration = k / once;
  uint64_t offset = k % once;
  int64_t child_n = node.is_repeat ? static_cast<int64_t>(iteration) + 1 : n;
  for (const Node& child : node.children) {
    if (offset < child.length) return Find(child, offset, child_n);
    offset -= child.length;
  }
  return std::nullopt;
}

Result<Script> Script::Parse(std::string_view json_text) {
  Json root = Json::parse(json_text, nullptr, /*allow_exceptions=*/false, /*ignore_comments=*/true);
  if (root.is_discarded()) {
    // Parse again with exceptions only to get the position for the message.
    try {
      Json ignored = Json::parse(json_text, nullptr, true, true);
    } catch (const Json::exception& e) {
      return InvalidArgumentError(std::string("script: not valid JSON: ") + e.what());
    }
    return InvalidArgumentError("script: not valid JSON");
  }
  return ScriptParser::Parse(root);
}

Result<Script> Script::LoadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFoundError("cannot read script file " + path + "; check the path");
  std::stringstream ss;
  ss << in.rdbuf();
  Result<Script> script = Parse(ss.str());
  if (!script.ok()) {
    return Status(script.status().code(), path + ": " + script.status().message());
  }
  return script;
}

}  // namespace codex::testing
