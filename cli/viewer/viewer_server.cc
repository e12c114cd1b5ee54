#include "cli/viewer/viewer_server.h"

#include <httplib.h>
#include <sys/random.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

#include "base/json.h"
#include "cli/viewer/viewer_assets.h"

namespace codex::cli::viewer {

namespace {

constexpr char kCsp[] =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

// Equal length and bytes, in time that depends only on the lengths.
bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  }
  return diff == 0;
}

void SendJson(httplib::Response& res, const Result<std::string>& body) {
  if (body.ok()) {
    res.set_content(*body, "application/json; charset=utf-8");
    return;
  }
  const Status& s = body.status();
  res.status = s.code() == StatusCode::kNotFound          ? 404
               : s.code() == StatusCode::kInvalidArgument ? 400
                                                          : 500;
  nlohmann::json err = {{"error", s.message()}};
  res.set_content(Dump(err), "application/json; charset=utf-8");
}

Params QueryParams(const httplib::Request& req) {
  return Params(req.params.begin(), req.params.end());
}

}  // namespace

Result<std::string> NewViewerToken() {
  unsigned char bytes[16];
  size_t got = 0;
  while (got < sizeof bytes) {
    const ssize_t n = ::getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return InternalError(std::string("cannot read random bytes for the viewer token: ") +
                           std::strerror(errno));
    }
    got += static_cast<size_t>(n);
  }
  static const char kHex[] = "0123456789abcdef";
  std::string token;
  for (unsigned char b : bytes) {
    token += kHex[b >> 4];
    token += kHex[b & 15];
  }
  return token;
}

int CheckRequest(std::string_view method, std::string_view host, std::string_view path,
                 std::string_view token, int port) {
  const std::string suffix = ":" + std::to_string(port);
  if (host != "127.0.0.1" + suffix && host != "localhost" + suffix) return 403;
  if (method != "GET") return 405;
  if (path.size() < 2 || path[0] != '/') return 404;
  const size_t slash = path.find('/', 1);
  const std::string_view first =
      path.substr(1, slash == std::string_view::npos ? path.size() - 1 : slash - 1);
  if (!ConstantTimeEquals(first, token)) return 404;
  return 0;
}

ViewerServer::ViewerServer(ViewerApi& api, std::string token)
    : api_(api), token_(std::move(token)), server_(std::make_unique<httplib::Server>()) {}

ViewerServer::~ViewerServer() = default;

Result<std::unique_ptr<ViewerServer>> ViewerServer::Bind(ViewerApi& api, int port,
                                                         std::string token) {
  std::unique_ptr<ViewerServer> server(new ViewerServer(api, std::move(token)));
  // SO_REUSEADDR alone: httplib's default adds SO_REUSEPORT, with which a
  // second listener (another viewer, or any process of this user) could
  // share the port and take half the requests, tokens included.
  server->server_->set_socket_options([](int sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  // Small JSON answers on a kept-alive connection would otherwise wait for
  // the peer's delayed ACK (~40 ms each).
  server->server_->set_tcp_nodelay(true);
  server->AddRoutes();
  if (port == 0) {
    server->port_ = server->server_->bind_to_any_port("127.0.0.1");
  } else if (server->server_->bind_to_port("127.0.0.1", port)) {
    server->port_ = port;
  } else {
    server->port_ = -1;
  }
  if (server->port_ <= 0) {
    return UnavailableError("cannot listen on 127.0.0.1:" + std::to_string(port) +
                            "; choose another --port (or leave it out for any free port)");
  }
  return server;
}

std::string ViewerServer::url() const {
  return "http://127.0.0.1:" + std::to_string(port_) + "/" + token_ + "/";
}

Status ViewerServer::Run() {
  if (!server_->listen_after_bind()) {
    return UnavailableError("the viewer stopped serving on 127.0.0.1:" + std::to_string(port_));
  }
  return OkStatus();
}

void ViewerServer::Stop() { server_->stop(); }

void ViewerServer::AddRoutes() {
  httplib::Server& s = *server_;
  s.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    const int refused =
        CheckRequest(req.method, req.get_header_value("Host"), req.path, token_, port_);
    if (refused == 0) return httplib::Server::HandlerResponse::Unhandled;
    res.status = refused;
    res.set_content(refused == 403   ? "forbidden host\n"
                    : refused == 405 ? "read-only: only GET\n"
                                     : "not found\n",
                    "text/plain; charset=utf-8");
    if (refused == 405) res.set_header("Allow", "GET");
    return httplib::Server::HandlerResponse::Handled;
  });
  s.set_post_routing_handler([](const httplib::Request&, httplib::Response& res) {
    res.set_header("Content-Security-Policy", kCsp);
    res.set_header("X-Content-Type-Options", "nosniff");
    res.set_header("Referrer-Policy", "no-referrer");
    res.set_header("X-Frame-Options", "DENY");
    res.set_header("Cache-Control", "no-store");
  });
  // The token segment was checked by the pre-routing handler.
  s.Get(R"(/[0-9a-f]+)", [this](const httplib::Request&, httplib::Response& res) {
    res.set_redirect("/" + token_ + "/");
  });
  s.Get(R"(/[0-9a-f]+/(|index\.html|app\.js|style\.css))", [](const httplib::Request& req,
                                                              httplib::Response& res) {
    const std::string name = req.matches[1].str().empty() ? "index.html" : req.matches[1].str();
    const ViewerAsset* asset = FindViewerAsset(name);
    if (asset == nullptr) {
      res.status = 404;
      return;
    }
    res.set_content(std::string(asset->body), std::string(asset->content_type));
  });
  s.Get(R"(/[0-9a-f]+/api/sessions)", [this](const httplib::Request& req, httplib::Response& res) {
    SendJson(res, api_.Sessions(QueryParams(req)));
  });
  s.Get(R"(/[0-9a-f]+/api/search)", [this](const httplib::Request& req, httplib::Response& res) {
    SendJson(res, api_.Search(QueryParams(req)));
  });
  s.Get(R"(/[0-9a-f]+/api/session/([^/]+))",
        [this](const httplib::Request& req, httplib::Response& res) {
          SendJson(res, api_.Session(req.matches[1].str()));
        });
  s.Get(R"(/[0-9a-f]+/api/tree/([^/]+))",
        [this](const httplib::Request& req, httplib::Response& res) {
          SendJson(res, api_.Tree(req.matches[1].str()));
        });
}

}  // namespace codex::cli::viewer
