#include "core/mcp_tools.h"

#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "base/sha.h"
#include "sandbox/truncate.h"

namespace codex::core {

using Json = nlohmann::ordered_json;

namespace {

constexpr size_t kMaxToolNameBytes = 64;

std::string Dump(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

std::string Sanitize(const std::string& name) {
  std::string out;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-';
    out += ok ? c : '_';
  }
  return out.empty() ? "_" : out;
}

}  // namespace

std::string SanitizeMcpName(const std::string& name) { return Sanitize(name); }

std::string McpNamespacesJson(const std::vector<McpToolInfo>& tools) {
  std::string out;
  std::vector<std::string> order;
  std::map<std::string, std::string> members;  // namespace -> ",def,def"
  for (const auto& t : tools) {
    if (!members.contains(t.namespace_name)) order.push_back(t.namespace_name);
    members[t.namespace_name] += "," + t.definition_json;
  }
  for (const std::string& ns : order) {
    Json head = {
        {"type", "namespace"}, {"name", ns}, {"description", "Tools in the " + ns + " namespace."}};
    std::string text = Dump(head);
    text.pop_back();  // '}'
    out += "," + text + ",\"tools\":[" + members[ns].substr(1) + "]}";
  }
  return out;
}

const McpToolInfo* FindMcpTool(const std::vector<McpToolInfo>& tools, const std::string& ns,
                               const std::string& name) {
  for (const auto& t : tools) {
    if (ns.empty() ? t.qualified_name == name
                   : (t.namespace_name == ns && t.function_name == name)) {
      return &t;
    }
  }
  return nullptr;
}

std::vector<std::string> QualifyMcpToolNames(
    const std::vector<std::pair<std::string, std::string>>& server_and_tool) {
  std::vector<std::string> out;
  std::set<std::string> raw_seen;
  std::set<std::string> used;
  for (const auto& [server, tool] : server_and_tool) {
    const std::string raw = "mcp__" + server + "__" + tool;
    if (!raw_seen.insert(raw).second) {
      out.emplace_back();
      continue;
    }
    std::string name = Sanitize(raw);
    if (name.size() > kMaxToolNameBytes) {
      const std::string hash = Sha1Hex(raw);
      name = name.substr(0, kMaxToolNameBytes - hash.size()) + hash;
    }
    if (!used.insert(name).second) {
      out.emplace_back();
      continue;
    }
    out.push_back(name);
  }
  return out;
}

McpOutput FormatMcpResult(const std::string& result_json, size_t max_bytes, double wall_seconds) {
  McpOutput out;
  Json result = Json::parse(result_json, nullptr, false);
  if (!result.is_object()) return FormatMcpError("the server sent a result that is not an object");
  out.success = !(result.contains("isError") && result["isError"] == true);
  auto cut = [&](const std::string& text) { return sandbox::TruncateHeadTail(text, max_bytes); };
  char header[64];
  std::snprintf(header, sizeof header, "Wall time: %.4f seconds\nOutput:", wall_seconds);
  // As Codex 0.169 (tests/compat/codex-0.169-mcp-capture.json): structured
  // content as one text after the header; otherwise the header, then each
  // content block as an input item (text as text, images as images, any
  // other block as its JSON).
  if (auto sc = result.find("structuredContent"); sc != result.end() && !sc->is_null()) {
    out.output_json = Dump(Json(std::string(header) + "\n" + cut(Dump(*sc))));
    return out;
  }
  Json content = result.value("content", Json::array());
  if (!content.is_array()) content = Json::array();
  Json items = Json::array({{{"type", "input_text"}, {"text", header}}});
  for (const auto& block : content) {
    const std::string type = block.is_object() ? block.value("type", "") : "";
    if (type == "text" && block.value("text", Json()).is_string()) {
      items.push_back({{"type", "input_text"}, {"text", cut(block["text"].get<std::string>())}});
    } else if (type == "image" && block.value("data", Json()).is_string()) {
      std::string data = block["data"].get<std::string>();
      if (data.rfind("data:", 0) != 0) {
        std::string mime = block.value("mimeType", Json()).is_string()
                               ? block["mimeType"].get<std::string>()
                               : "application/octet-stream";
        data = "data:" + mime + ";base64," + data;
      }
      items.push_back({{"type", "input_image"}, {"image_url", data}});
    } else {
      items.push_back({{"type", "input_text"}, {"text", cut(Dump(block))}});
    }
  }
  out.output_json = Dump(items);
  return out;
}

McpOutput FormatMcpError(const std::string& message) {
  McpOutput out;
  out.success = false;
  Json content = Json::array({{{"type", "text"}, {"text", "tool call error: " + message}}});
  out.output_json = Dump(Json(Dump(content)));
  return out;
}

bool McpCallNeedsApproval(ApprovalPolicy policy, SandboxMode sandbox, const McpToolInfo& tool) {
  switch (policy) {
    case ApprovalPolicy::kNever:
      return false;
    case ApprovalPolicy::kUntrusted:
      return tool.read_only_hint != true;
    case ApprovalPolicy::kOnRequest:
    case ApprovalPolicy::kOnFailure:
      if (sandbox == SandboxMode::kDangerFullAccess) return false;
      if (tool.destructive_hint == true) return true;
      return tool.read_only_hint == false && tool.open_world_hint == true;
  }
  return true;
}

}  // namespace codex::core
