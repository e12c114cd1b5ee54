#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "core/http_client.h"
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
  core::HttpTarget target;  // scheme, host, port
  std::string path;
  std::mutex mu;
  std::string session_id;
  std::string protocol_version;
  core::HttpHeaders base_headers;
  bool closed = false;

  core::HttpHeaders Headers() {
    core::HttpHeaders h = base_headers;
    std::lock_guard<std::mutex> lock(mu);
    if (!session_id.empty()) h.emplace_back("Mcp-Session-Id", session_id);
    if (!protocol_version.empty()) h.emplace_back("MCP-Protocol-Version", protocol_version);
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
  const size_t path_start =
      scheme_end == std::string::npos ? std::string::npos : url.find_first_of("/?", scheme_end + 3);
  d.target.scheme = scheme_end == std::string::npos ? "" : url.substr(0, scheme_end);
  if (d.target.scheme != "http" && d.target.scheme != "https") {
    return InvalidArgumentError("the url of an MCP server must start with http:// or https://: " +
                                url);
  }
  const std::string authority =
      url.substr(scheme_end + 3,
                 path_start == std::string::npos ? std::string::npos : path_start - scheme_end - 3);
  d.path = path_start == std::string::npos ? "/" : url.substr(path_start);
  if (d.path.front() == '?') d.path.insert(0, "/");
  d.target.port = d.target.scheme == "https" ? 443 : 80;
  std::string port;
  if (!authority.empty() && authority.front() == '[') {
    const size_t close = authority.find(']');
    d.target.host = authority.substr(1, close == std::string::npos ? std::string::npos : close - 1);
    if (close != std::string::npos && close + 1 < authority.size() && authority[close + 1] == ':') {
      port = authority.substr(close + 2);
    }
  } else {
    const size_t colon = authority.rfind(':');
    d.target.host = authority.substr(0, colon);
    if (colon != std::string::npos) port = authority.substr(colon + 1);
  }
  if (!port.empty()) {
    const bool digits = port.size() <= 5 && std::all_of(port.begin(), port.end(), [](char c) {
                          return c >= '0' && c <= '9';
                        });
    if (!digits || std::stoi(port) == 0 || std::stoi(port) > 65535) {
      return InvalidArgumentError("the url of an MCP server has a bad port: " + url);
    }
    d.target.port = std::stoi(port);
  }
  if (d.target.host.empty()) {
    return InvalidArgumentError("the url of an MCP server names no host: " + url);
  }
  for (const auto& [k, v] : d.options.config.http_headers) d.base_headers.emplace_back(k, v);
  for (const auto& [header, var] : d.options.config.env_http_headers) {
    if (const char* v = std::getenv(var.c_str()); v != nullptr && *v != '\0') {
      d.base_headers.emplace_back(header, v);
    }
  }
  if (!d.options.config.bearer_token_env_var.empty()) {
    const char* token = std::getenv(d.options.config.bearer_token_env_var.c_str());
    if (token == nullptr || *token == '\0') {
      return UnauthenticatedError("set " + d.options.config.bearer_token_env_var +
                                  " (bearer_token_env_var of this server)");
    }
    d.base_headers.emplace_back("Authorization", std::string("Bearer ") + token);
  }
  return OkStatus();
}

Status HttpTransport::Send(const std::string& message, int64_t timeout_ms,
                           const std::function<bool()>& should_abort) {
  Impl& d = *impl_;
  const int64_t t = timeout_ms > 0 ? timeout_ms : 60'000;
  core::HttpTarget target = d.target;
  target.connect_timeout_ms = std::min<int64_t>(t, 30'000);
  target.io_timeout_ms = t;
  core::HttpConnection client(std::move(target));

  std::string body;
  bool sse = false;
  Status parse_status = OkStatus();
  core::SseParser parser([&](const core::SseEvent& e) {
    if (!e.data.empty()) d.on_message(std::string(e.data));
    return OkStatus();
  });
  core::HttpRequest req;
  req.method = "POST";
  req.path = d.path;
  req.headers = d.Headers();
  req.headers.emplace_back("Accept", "application/json, text/event-stream");
  req.headers.emplace_back("Content-Type", "application/json");
  req.body = message;
  req.keep_alive = false;
  int status_code = 0;
  auto on_head = [&](const core::HttpResponseHead& r) {
    status_code = r.status;
    sse = r.Header("Content-Type").find("text/event-stream") != std::string::npos;
    if (r.Has("Mcp-Session-Id")) {
      std::lock_guard<std::mutex> lock(d.mu);
      d.session_id = r.Header("Mcp-Session-Id");
    }
    return true;
  };
  auto on_body = [&](std::string_view data) {
    if (should_abort && should_abort()) return false;
    if (sse && status_code / 100 == 2) {
      parse_status = parser.Feed(data);
      return parse_status.ok();
    }
    body.append(data);
    return body.size() < (64u << 20);
  };
  const core::HttpError err = client.Send(req, on_head, on_body);
  if (err != core::HttpError::kSuccess) {
    if (should_abort && should_abort()) return CancelledError("interrupted");
    return UnavailableError("POST " + d.options.config.url +
                            " failed: " + core::HttpErrorText(err) +
                            (client.detail().empty() ? "" : " (" + client.detail() + ")"));
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
  if (!session.empty() && !d.target.host.empty()) {
    core::HttpTarget target = d.target;
    target.connect_timeout_ms = 2'000;
    target.io_timeout_ms = 2'000;
    core::HttpConnection client(std::move(target));
    core::HttpRequest req;
    req.method = "DELETE";
    req.path = d.path;
    req.headers = d.Headers();
    req.keep_alive = false;
    (void)client.Send(req, nullptr, nullptr);
  }
}

}  // namespace codex::mcp
