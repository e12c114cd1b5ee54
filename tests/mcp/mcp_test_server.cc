// mcp-test-server: a small MCP server over stdio for the fault tests of the
// MCP client (tests/mcp_e2e_test.cc, mcp/client_test.cc). Newline-delimited
// JSON-RPC on stdin/stdout, single-threaded.
//
// Flags: --log FILE (appends one line per message received and per event),
// --startup-delay-ms N (sleeps before reading anything), --garbage (writes
// non-JSON-RPC lines before every answer), --page-size N (tools/list pages),
// --protocol V (answers initialize with V instead of the client's version),
// --env-file FILE (writes its environment there at start), --stderr TEXT
// (written to stderr at start; --env-file also lists its open descriptors),
// --exit-at-start CODE, --resources (declares the resources capability and
// serves three resources, two per resources/list page, and one template),
// --wait-file PATH (before answering initialize, logs "waiting on PATH" and
// reads PATH to its end: a FIFO holds the server until the test opens it for
// writing and closes it).
//
// Tools: echo {text} (readOnlyHint), add {a, b} (structuredContent {sum}),
// image (a text and a PNG block), resource (an embedded text resource), fail
// (isError), crash (exits without answering), slow {ms} (answers after ms,
// or never once cancelled: logs "cancelled <id>"), huge {bytes} (a text of
// that size starting "HEAD" and ending "TAIL"), grow (adds the tool "grown"
// and sends notifications/tools/list_changed; destructiveHint), ask (sends
// the client a `ping` and a `sampling/createMessage` request and answers with
// what came back), gate {path} (answers once `path` is read to its end: a
// FIFO the test releases).
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace {

using Json = nlohmann::ordered_json;

std::string g_log;
bool g_garbage = false;
size_t g_page_size = 0;
std::string g_protocol;
bool g_grown = false;
bool g_resources = false;
bool g_rich = false;  // --rich-schema: the tool "rich.shape-x" and server instructions
std::string g_wait_file;

// Reads `path` to its end (a FIFO: until a writer opened and closed it).
void ReadToEnd(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char c;
  while (in.get(c)) {
  }
}

Json Resources() {
  return Json::array(
      {{{"uri", "test://one"},
        {"name", "one"},
        {"description", "The first resource"},
        {"mimeType", "text/plain"}},
       {{"uri", "test://two"}, {"name", "two"}, {"mimeType", "text/plain"}},
       {{"uri", "test://blob"}, {"name", "blob"}, {"mimeType", "application/octet-stream"}}});
}

void Log(const std::string& line) {
  if (g_log.empty()) return;
  std::ofstream(g_log, std::ios::app) << line << "\n";
}

void Send(const Json& j) {
  if (g_garbage) {
    std::fputs("this line is not JSON\n", stdout);
    std::fputs("{\"jsonrpc\":\"1.0\",\"id\":999999,\"result\":{}}\n", stdout);
    std::fputs("[1,2\n", stdout);
  }
  std::string s = j.dump();
  std::fwrite(s.data(), 1, s.size(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

Json Schema(Json properties, Json required = Json::array()) {
  return {{"type", "object"}, {"properties", properties}, {"required", required}};
}

Json ToolList() {
  Json tools = Json::array();
  tools.push_back({{"name", "echo"},
                   {"description", "Echoes the text back"},
                   {"inputSchema", Schema({{"text", {{"type", "string"}}}}, {"text"})},
                   {"annotations", {{"readOnlyHint", true}}}});
  tools.push_back(
      {{"name", "add"},
       {"description", "Adds two numbers"},
       {"inputSchema", Schema({{"a", {{"type", "number"}}}, {"b", {{"type", "number"}}}})}});
  tools.push_back({{"name", "image"},
                   {"description", "Returns a tiny PNG"},
                   {"inputSchema", Schema(Json::object())}});
  tools.push_back({{"name", "resource"},
                   {"description", "Returns an embedded resource"},
                   {"inputSchema", Schema(Json::object())}});
  tools.push_back({{"name", "fail"},
                   {"description", "Fails with isError"},
                   {"inputSchema", Schema(Json::object())}});
  tools.push_back({{"name", "crash"},
                   {"description", "Exits mid-call"},
                   {"inputSchema", Schema(Json::object())}});
  tools.push_back({{"name", "slow"},
                   {"description", "Answers after ms milliseconds"},
                   {"inputSchema", Schema({{"ms", {{"type", "number"}}}})}});
  tools.push_back({{"name", "huge"},
                   {"description", "Returns a text of `bytes` bytes"},
                   {"inputSchema", Schema({{"bytes", {{"type", "number"}}}})}});
  tools.push_back({{"name", "ask"},
                   {"description", "Asks the client two questions"},
                   {"inputSchema", Schema(Json::object())}});
  tools.push_back({{"name", "gate"},
                   {"description", "Answers once the file at path is read to its end"},
                   {"inputSchema", Schema({{"path", {{"type", "string"}}}}, {"path"})}});
  tools.push_back({{"name", "grow"},
                   {"description", "Adds a tool"},
                   {"inputSchema", Schema(Json::object())},
                   {"annotations", {{"destructiveHint", true}}}});
  if (g_rich) {
    Json p = Json::object();
    p["zeta"] = {{"type", "integer"}, {"description", "an int"}, {"minimum", 1}, {"default", 3}};
    p["alpha"] = {{"type", "array"}, {"items", {{"type", "string"}}}, {"description", "list"}};
    Json nested_props = Json::object();
    nested_props["b"] = {{"type", "boolean"}};
    nested_props["a"] = {{"type", Json::array({"string", "null"})}};
    p["nested"] = {{"type", "object"},
                   {"description", "obj"},
                   {"properties", nested_props},
                   {"required", Json::array({"a"})},
                   {"additionalProperties", false}};
    p["anything"] = {{"description", "no type"}};
    p["choice"] = {{"enum", Json::array({"x", "y"})}};
    p["num"] = {{"type", "number"}, {"format", "float"}, {"title", "T"}};
    p["arr2"] = {{"type", "array"}};
    p["map"] = {{"type", "object"}, {"additionalProperties", {{"type", "number"}}}};
    p["either"] = {{"anyOf", Json::array({Json{{"type", "string"}},
                                          Json{{"type", "number"}, {"description", "n"}}})},
                   {"description", "one of two"}};
    p["flag"] = {{"type", "boolean"}, {"description", "a flag"}, {"default", true}};
    p["fixed"] = {{"const", "k"}};
    p["other"] = {{"oneOf", Json::array({Json{{"type", "string"}}, Json{{"type", "boolean"}}})}};
    p["all"] = {{"type", "object"},
                {"allOf", Json::array({Json{{"properties", {{"x", {{"type", "string"}}}}}}})}};
    p["level"] = {{"type", "integer"}, {"enum", Json::array({1, 2})}};
    Json q = Json::object();
    q["q"] = {{"type", "string"}};
    p["items2"] = {{"type", "array"}, {"items", {{"type", "object"}, {"properties", q}}}};
    Json schema = {{"$schema", "http://json-schema.org/draft-07/schema#"},
                   {"type", "object"},
                   {"properties", p},
                   {"additionalProperties", false}};
    tools.push_back({{"name", "rich.shape-x"},
                     {"description", "A schema with every shape"},
                     {"inputSchema", schema}});
    tools.push_back({{"name", "bare"}, {"inputSchema", {{"type", "object"}}}});
  }
  if (g_grown) {
    tools.push_back({{"name", "grown"},
                     {"description", "Added by grow"},
                     {"inputSchema", Schema(Json::object())}});
  }
  return tools;
}

Json Text(const std::string& t) { return {{"type", "text"}, {"text", t}}; }

struct Pending {
  Json id;
  std::chrono::steady_clock::time_point due;
};

}  // namespace

int main(int argc, char** argv) {
  int startup_delay_ms = 0;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--log") {
      g_log = next();
    } else if (a == "--startup-delay-ms") {
      startup_delay_ms = std::atoi(next().c_str());
    } else if (a == "--garbage") {
      g_garbage = true;
    } else if (a == "--page-size") {
      g_page_size = static_cast<size_t>(std::atoi(next().c_str()));
    } else if (a == "--protocol") {
      g_protocol = next();
    } else if (a == "--env-file") {
      std::ofstream out(next());
      for (char** e = environ; *e != nullptr; ++e) out << *e << "\n";
      // And the descriptors it inherited, as "fd N -> target" lines.
      std::error_code ec;
      for (const auto& fd : std::filesystem::directory_iterator("/proc/self/fd", ec)) {
        out << "fd " << fd.path().filename().string() << " -> "
            << std::filesystem::read_symlink(fd.path(), ec).string() << "\n";
      }
    } else if (a == "--stderr") {
      std::string text = next();
      std::fprintf(stderr, "%s\n", text.c_str());
    } else if (a == "--rich-schema") {
      g_rich = true;
    } else if (a == "--resources") {
      g_resources = true;
    } else if (a == "--wait-file") {
      g_wait_file = next();
    } else if (a == "--exit-at-start") {
      return std::atoi(next().c_str());
    }
  }
  Log("started pid " + std::to_string(getpid()));
  if (startup_delay_ms > 0)
    std::this_thread::sleep_for(std::chrono::milliseconds(startup_delay_ms));

  std::vector<Pending> pending;
  Json ask_call;  // the id of a pending `ask` call
  std::string ask_answers;
  std::string buffer;
  while (true) {
    int wait_ms = -1;
    const auto now = std::chrono::steady_clock::now();
    for (const auto& p : pending) {
      int ms = static_cast<int>(
          std::chrono::duration_cast<std::chrono::milliseconds>(p.due - now).count());
      ms = std::max(ms, 0);
      wait_ms = wait_ms < 0 ? ms : std::min(wait_ms, ms);
    }
    pollfd pfd{0, POLLIN, 0};
    int r = poll(&pfd, 1, wait_ms);
    const auto after = std::chrono::steady_clock::now();
    for (size_t i = 0; i < pending.size();) {
      if (pending[i].due <= after) {
        Send({{"jsonrpc", "2.0"},
              {"id", pending[i].id},
              {"result", {{"content", {Text("slow done")}}}}});
        pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(i));
      } else {
        ++i;
      }
    }
    if (r <= 0) continue;
    char chunk[65536];
    ssize_t n = read(0, chunk, sizeof chunk);
    if (n <= 0) {
      Log("stdin closed");
      return 0;
    }
    buffer.append(chunk, static_cast<size_t>(n));
    size_t nl;
    while ((nl = buffer.find('\n')) != std::string::npos) {
      std::string line = buffer.substr(0, nl);
      buffer.erase(0, nl + 1);
      Json m = Json::parse(line, nullptr, false);
      if (!m.is_object()) continue;
      const std::string method = m.value("method", "");
      Log("recv " + (method.empty() ? std::string("response") : method) +
          (m.contains("params") ? " " + m["params"].dump() : ""));
      if (method.empty() && m.contains("id") && !ask_call.is_null()) {
        // An answer to one of our requests.
        ask_answers += m["id"].get<std::string>() + "=" +
                       (m.contains("result") ? "result:" + m["result"].dump()
                                             : "error:" + m["error"].value("message", ""));
        if (m["id"] == "srv-2") {
          Send({{"jsonrpc", "2.0"},
                {"id", ask_call},
                {"result", {{"content", {Text(ask_answers)}}}}});
          ask_call = Json();
        } else {
          ask_answers += "; ";
        }
        continue;
      }
      if (!m.contains("id")) {
        if (method == "notifications/cancelled") {
          const Json id = m["params"].value("requestId", Json());
          for (size_t i = 0; i < pending.size(); ++i) {
            if (pending[i].id == id) {
              Log("cancelled " + id.dump());
              pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(i));
              break;
            }
          }
        }
        continue;
      }
      const Json id = m["id"];
      Json reply = {{"jsonrpc", "2.0"}, {"id", id}};
      const Json params = m.value("params", Json::object());
      if (method == "initialize") {
        if (!g_wait_file.empty()) {
          Log("waiting on " + g_wait_file);
          ReadToEnd(g_wait_file);
          Log("released");
        }
        Json caps = {{"tools", {{"listChanged", true}}}};
        if (g_resources) caps["resources"] = Json::object();
        reply["result"] = {{"protocolVersion",
                            g_protocol.empty() ? params.value("protocolVersion", "") : g_protocol},
                           {"capabilities", caps},
                           {"serverInfo", {{"name", "mcp-test-server"}, {"version", "1.0"}}}};
        if (g_rich) reply["result"]["instructions"] = "Use these tools with care.";
      } else if (method == "tools/list") {
        Json all = ToolList();
        size_t start = 0;
        if (params.contains("cursor"))
          start = static_cast<size_t>(std::atoi(params["cursor"].get<std::string>().c_str()));
        size_t end = g_page_size == 0 ? all.size() : std::min(all.size(), start + g_page_size);
        Json page = Json::array();
        for (size_t i = start; i < end; ++i) page.push_back(all[i]);
        reply["result"] = {{"tools", page}};
        if (end < all.size()) reply["result"]["nextCursor"] = std::to_string(end);
      } else if (method == "tools/call") {
        const std::string name = params.value("name", "");
        const Json args = params.value("arguments", Json::object());
        if (name == "echo") {
          reply["result"] = {{"content", {Text("echo: " + args.value("text", ""))}}};
        } else if (name == "add") {
          double sum = args.value("a", 0.0) + args.value("b", 0.0);
          reply["result"] = {{"content", {Text(std::to_string(sum))}},
                             {"structuredContent", {{"sum", sum}}}};
        } else if (name == "image") {
          reply["result"] = {
              {"content",
               {Text("a tiny image"),
                {{"type", "image"}, {"data", "iVBORw0KGgo="}, {"mimeType", "image/png"}}}}};
        } else if (name == "resource") {
          reply["result"] = {{"content",
                              {{{"type", "resource"},
                                {"resource",
                                 {{"uri", "file:///notes.txt"},
                                  {"mimeType", "text/plain"},
                                  {"text", "resource text"}}}}}}};
        } else if (name == "fail") {
          reply["result"] = {{"content", {Text("the tool failed on purpose")}}, {"isError", true}};
        } else if (name == "crash") {
          Log("crashing");
          _exit(3);
        } else if (name == "slow") {
          pending.push_back(
              {id, std::chrono::steady_clock::now() +
                       std::chrono::milliseconds(static_cast<int64_t>(args.value("ms", 1000.0)))});
          continue;
        } else if (name == "huge") {
          size_t bytes = static_cast<size_t>(args.value("bytes", 1000.0));
          std::string text = "HEAD" + std::string(bytes > 8 ? bytes - 8 : 0, 'x') + "TAIL";
          reply["result"] = {{"content", {Text(text)}}};
        } else if (name == "ask") {
          ask_call = id;
          ask_answers.clear();
          Send({{"jsonrpc", "2.0"}, {"id", "srv-1"}, {"method", "ping"}});
          Send({{"jsonrpc", "2.0"},
                {"id", "srv-2"},
                {"method", "sampling/createMessage"},
                {"params", {{"messages", Json::array()}, {"maxTokens", 10}}}});
          continue;
        } else if (name == "grow") {
          g_grown = true;
          Send({{"jsonrpc", "2.0"}, {"method", "notifications/tools/list_changed"}});
          reply["result"] = {{"content", {Text("grown")}}};
        } else if (name == "gate") {
          ReadToEnd(args.value("path", ""));
          reply["result"] = {{"content", {Text("gate open")}}};
        } else if (name == "grown") {
          reply["result"] = {{"content", {Text("I am new")}}};
        } else {
          reply["error"] = {{"code", -32602}, {"message", "unknown tool " + name}};
        }
      } else if (g_resources &&
                 (method == "resources/list" || method == "resources/templates/list")) {
        if (method == "resources/templates/list") {
          reply["result"] = {{"resourceTemplates",
                              {{{"uriTemplate", "test://item/{id}"},
                                {"name", "item"},
                                {"description", "An item by id"}}}}};
        } else {
          // Two per page; the cursor is the index of the next one.
          const Json all = Resources();
          size_t from = 0;
          if (params.contains("cursor")) {
            from = static_cast<size_t>(std::atoi(params["cursor"].get<std::string>().c_str()));
          }
          Json page = Json::array();
          for (size_t i = from; i < all.size() && i < from + 2; ++i) page.push_back(all[i]);
          reply["result"] = {{"resources", page}};
          if (from + 2 < all.size()) reply["result"]["nextCursor"] = std::to_string(from + 2);
        }
      } else if (g_resources && method == "resources/read") {
        const std::string uri = params.value("uri", "");
        if (uri == "test://one" || uri == "test://two") {
          reply["result"] = {
              {"contents",
               {{{"uri", uri}, {"mimeType", "text/plain"}, {"text", "text of " + uri}}}}};
        } else if (uri == "test://blob") {
          reply["result"] = {
              {"contents",
               {{{"uri", uri}, {"mimeType", "application/octet-stream"}, {"blob", "AAEC"}}}}};
        } else {
          reply["error"] = {{"code", -32002}, {"message", "Resource not found: " + uri}};
        }
      } else if (method == "ping") {
        reply["result"] = Json::object();
      } else {
        reply["error"] = {{"code", -32601}, {"message", "method not found"}};
      }
      Send(reply);
    }
  }
}
