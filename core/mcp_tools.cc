#include "core/mcp_tools.h"

#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "base/json.h"
#include "base/sha.h"
#include "sandbox/truncate.h"

namespace codex::core {

using Json = nlohmann::ordered_json;

namespace {

constexpr size_t kMaxToolNameBytes = 64;

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

std::string SanitizeMcpName(const std::string& name) {
  // Codex 0.169: "my-srv" is offered as mcp__my_srv, "rich.shape-x" as rich_shape_x.
  std::string out;
  for (char c : name) {
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    out += ok ? c : '_';
  }
  return out.empty() ? "_" : out;
}

std::string WallHeader(double wall_seconds) {
  char header[64];
  std::snprintf(header, sizeof header, "Wall time: %.4f seconds\nOutput:", wall_seconds);
  return header;
}

bool IsMcpResourceTool(const std::string& name) {
  for (const char* n : kMcpResourceToolNames) {
    if (name == n) return true;
  }
  return false;
}

bool OffersMcpResourceTools(const Config& config) {
  for (const auto& [name, server] : config.mcp_servers) {
    if (server.enabled) return true;
  }
  return false;
}

std::string McpResourceToolsJson() {
  // Codex 0.169's definitions (tests/compat/codex-0.169-mcp-capture.json).
  auto str = [](const char* description) {
    return Json{{"type", "string"}, {"description", description}};
  };
  auto list = [&](const char* name, const char* description, const char* cursor,
                  const char* server) {
    return Json{{"type", "function"},
                {"name", name},
                {"description", description},
                {"strict", false},
                {"parameters",
                 {{"type", "object"},
                  {"properties", {{"cursor", str(cursor)}, {"server", str(server)}}},
                  {"additionalProperties", false}}}};
  };
  const Json tools = Json::array(
      {list("list_mcp_resources",
            "Lists resources provided by MCP servers. Resources allow servers to share data that "
            "provides context to language models, such as files, database schemas, or "
            "application-specific information. Prefer resources over web search when possible.",
            "Opaque cursor from a previous list_mcp_resources call; omit for the first page.",
            "MCP server name. Omit to list resources from every configured server."),
       list("list_mcp_resource_templates",
            "Lists resource templates provided by MCP servers. Parameterized resource templates "
            "allow servers to share data that takes parameters and provides context to language "
            "models, such as files, database schemas, or application-specific information. "
            "Prefer resource templates over web search when possible.",
            "Opaque cursor from a previous list_mcp_resource_templates call; omit for the first "
            "page.",
            "MCP server name. Omit to list resource templates from every configured server."),
       {{"type", "function"},
        {"name", "read_mcp_resource"},
        {"description",
         "Read a specific resource from an MCP server given the server name and resource URI."},
        {"strict", false},
        {"parameters",
         {{"type", "object"},
          {"properties",
           {{"server", str("MCP server name exactly as configured. Must match the 'server' "
                           "field returned by list_mcp_resources.")},
            {"uri", str("Resource URI to read. Must be one of the URIs returned by "
                        "list_mcp_resources.")}}},
          {"required", Json::array({"server", "uri"})},
          {"additionalProperties", false}}}}});
  std::string out;
  for (const auto& t : tools) out += "," + Dump(t);
  return out;
}

std::string McpNamespacesJson(const std::vector<McpToolInfo>& tools) {
  std::string out;
  std::vector<std::string> order;
  std::map<std::string, std::string> members;  // namespace -> ",def,def"
  std::map<std::string, std::string> descriptions;
  for (const auto& t : tools) {
    if (!members.contains(t.namespace_name)) {
      order.push_back(t.namespace_name);
      descriptions[t.namespace_name] = t.namespace_description;
    }
    members[t.namespace_name] += "," + t.definition_json;
  }
  for (const std::string& ns : order) {
    Json head = {{"type", "namespace"},
                 {"name", ns},
                 {"description", descriptions[ns].empty() ? "Tools in the " + ns + " namespace."
                                                          : descriptions[ns]}};
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
  if (!result.is_object()) {
    return FormatMcpError("tool call error: the server sent a result that is not an object",
                          wall_seconds);
  }
  out.success = !(result.contains("isError") && result["isError"] == true);
  auto cut = [&](const std::string& text) { return sandbox::TruncateHeadTail(text, max_bytes); };
  const std::string header = WallHeader(wall_seconds);
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
    const std::string type = StringField(block, "type");
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

McpOutput FormatMcpError(const std::string& text, double wall_seconds) {
  McpOutput out;
  out.success = false;
  out.output_json = Dump(Json::array({{{"type", "input_text"}, {"text", WallHeader(wall_seconds)}},
                                      {{"type", "input_text"}, {"text", text}}}));
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
