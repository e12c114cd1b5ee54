#include <httplib.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "core/sse_parser.h"
#include "mcp/transport.h"

namespace codex::mcp {
namespace {

// What a server said about refusing a POST, from the body of its non-2xx
// answer, as a fragment of one line: a JSON-RPC error's message and its data
// when that is text (the SDK servers put the real cause there, e.g. a 400
// "Parse error" whose data is "ReferenceError: crypto is not defined"), else
// the body itself; whitespace runs (newlines too) become one space, and it is
// cut at 300 bytes on a character boundary. Empty when the body says nothing.
std::string HttpRefusalReason(const std::string& body) {
  std::string text = body;
  const nlohmann::json parsed = nlohmann::json::parse(body, nullptr, false);
  if (parsed.is_object() && parsed.contains("error") && parsed["error"].is_object()) {
    const nlohmann::json& e = parsed["error"];
    text = e.contains("message") && e["message"].is_string() ? e["message"].get<std::string>() : "";
    if (e.contains("data") && e["data"].is_string()) {
      const std::string data = e["data"].get<std::string>();
      text += text.empty() ? data : ": " + data;
    }
  }
  std::string line;
  bool space = false;
  for (const char c : text) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      space = !line.empty();
      continue;
    }
    if (space) line += ' ';
    space = false;
    line += c;
  }
  constexpr size_t kMax = 300;
  if (line.size() > kMax) {
    size_t cut = kMax;
    while (cut > 0 && (static_cast<unsigned char>(line[cut]) & 0xC0) == 0x80) --cut;
    line = line.substr(0, cut) + "...";
  }
  return line;
}

}  // namespace

struct HttpTransport::Impl {
  HttpOptions options;
  MessageFn on_message;
  ClosedFn on_closed;
  std::string origin;  // scheme://host[:port]
  std::string path;
  std::mutex mu;
  std::string session_id;
  std::string protocol_version;
  httplib::Headers base_headers;
  bool closed = false;

  httplib::Headers Headers() {
    httplib::Headers h = base_headers;
    std::lock_guard<std::mutex> lock(mu);
    if (!session_id.empty()) h.emplace("Mcp-Session-Id", session_id);
    if (!protocol_version.empty()) h.emplace("MCP-Protocol-Version", protocol_version);
    return h;
  }
};

HttpTransport::HttpTransport(HttpOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
}

HttpTransport::~HttpTransport() { Close(); }

void HttpTransport::set_protocol_version(const std::string& v) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->protocol_version = v;
}

Status HttpTransport::Start(MessageFn on_message, ClosedFn on_closed) {
  Impl& d = *impl_;
  d.on_message = std::move(on_message);
  d.on_closed = std::move(on_closed);
  const std::string& url = d.options.config.url;
  const size_t scheme_end = url.find("://");
  const size_t path_start = url.find('/', scheme_end + 3);
  d.origin = path_start == std::string::npos ? url : url.substr(0, path_start);
  d.path = path_start == std::string::npos ? "/" : url.substr(path_start);
  for (const auto& [k, v] : d.options.config.http_headers) d.base_headers.emplace(k, v);
  for (const auto& [header, var] : d.options.config.env_http_headers) {
    if (const char* v = std::getenv(var.c_str()); v != nullptr && *v != '\0') {
      d.base_headers.emplace(header, v);
    }
  }
  if (!d.options.config.bearer_token_env_var.empty()) {
    const char* token = std::getenv(d.options.config.bearer_token_env_var.c_str());
    if (token == nullptr || *token == '\0') {
      return UnauthenticatedError("set " + d.options.config.bearer_token_env_var +
                                  " (bearer_token_env_var of this server)");
    }
    d.base_headers.emplace("Authorization", std::string("Bearer ") + token);
  }
  return OkStatus();
}

Status HttpTransport::Send(const std::string& message, int64_t timeout_ms,
                           const std::function<bool()>& should_abort) {
  Impl& d = *impl_;
  httplib::Client client(d.origin);
  const int64_t t = timeout_ms > 0 ? timeout_ms : 60'000;
  client.set_connection_timeout(std::chrono::milliseconds(std::min<int64_t>(t, 30'000)));
  client.set_read_timeout(std::chrono::milliseconds(t));
  client.set_write_timeout(std::chrono::milliseconds(t));
  httplib::Headers headers = d.Headers();
  headers.emplace("Accept", "application/json, text/event-stream");

  std::string body;
  bool sse = false;
  bool sse_known = false;
  Status parse_status = OkStatus();
  core::SseParser parser([&](const core::SseEvent& e) {
    if (!e.data.empty()) d.on_message(std::string(e.data));
    return OkStatus();
  });
  httplib::Request req;
  req.method = "POST";
  req.path = d.path;
  req.headers = headers;
  req.body = message;
  req.set_header("Content-Type", "application/json");
  int status_code = 0;
  req.response_handler = [&](const httplib::Response& r) {
    status_code = r.status;
    sse = r.get_header_value("Content-Type").find("text/event-stream") != std::string::npos;
    sse_known = true;
    if (r.has_header("Mcp-Session-Id")) {
      std::lock_guard<std::mutex> lock(d.mu);
      d.session_id = r.get_header_value("Mcp-Session-Id");
    }
    return true;
  };
  req.content_receiver = [&](const char* data, size_t len, uint64_t, uint64_t) {
    if (should_abort && should_abort()) return false;
    if (sse_known && sse && status_code / 100 == 2) {
      parse_status = parser.Feed(std::string_view(data, len));
      return parse_status.ok();
    }
    body.append(data, len);
    return body.size() < (64u << 20);
  };
  httplib::Response res;
  httplib::Error err = httplib::Error::Success;
  const bool ok = client.send(req, res, err);
  if (!ok) {
    if (should_abort && should_abort()) return CancelledError("interrupted");
    return UnavailableError("POST " + d.options.config.url + " failed: " + httplib::to_string(err));
  }
  if (status_code == 404 && !d.session_id.empty()) {
    return UnavailableError("the server ended the MCP session (HTTP 404)");
  }
  if (status_code / 100 != 2) {
    const std::string reason = HttpRefusalReason(body);
    return UnavailableError("POST " + d.options.config.url + " answered HTTP " +
                            std::to_string(status_code) + (reason.empty() ? "" : ": " + reason) +
                            (status_code == 401 ? " (check bearer_token_env_var)" : ""));
  }
  if (sse) {
    (void)parser.Finish();
  } else if (!body.empty()) {
    d.on_message(body);
  }
  return OkStatus();
}

void HttpTransport::Close() {
  Impl& d = *impl_;
  std::string session;
  {
    std::lock_guard<std::mutex> lock(d.mu);
    if (d.closed) return;
    d.closed = true;
    session = d.session_id;
  }
  if (!session.empty() && !d.origin.empty()) {
    httplib::Client client(d.origin);
    client.set_connection_timeout(std::chrono::seconds(2));
    client.set_read_timeout(std::chrono::seconds(2));
    (void)client.Delete(d.path, d.Headers());
  }
}

}  // namespace codex::mcp
