#include "cli/viewer/viewer_server.h"

#include <dlfcn.h>
#include <sys/random.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <nlohmann/json.hpp>

#include "base/json.h"
#include "cli/viewer/viewer_assets.h"
#include "sandbox/launcher.h"

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

void SendJson(ServedResponse& res, const Result<std::string>& body) {
  if (body.ok()) {
    res.body = *body;
    res.content_type = "application/json; charset=utf-8";
    return;
  }
  const Status& s = body.status();
  res.status = s.code() == StatusCode::kNotFound          ? 404
               : s.code() == StatusCode::kInvalidArgument ? 400
                                                          : 500;
  nlohmann::json err = {{"error", s.message()}};
  res.body = Dump(err);
  res.content_type = "application/json; charset=utf-8";
}

// The factory of codex-viewer-http.so into `out`; kFailedPrecondition naming what to do
// when the module is missing or broken.
Status LoadViewerHttpModule(MakeLoopbackServerFn* out) {
  static MakeLoopbackServerFn make = nullptr;
  static std::string error;
  static std::once_flag once;
  std::call_once(once, [] {
    const std::string path = sandbox::FileBesideSelf(kViewerHttpModule);
    void* handle = path.empty() ? nullptr : ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    void* fn = handle == nullptr ? nullptr : ::dlsym(handle, kViewerHttpSymbol);
    if (fn == nullptr) {
      const char* why = path.empty() ? "not found beside codex" : ::dlerror();
      error = std::string("the session viewer needs ") + kViewerHttpModule +
              " beside codex, which cannot be loaded (" + (why ? why : "unknown error") +
              "); reinstall codex with its modules";
      return;
    }
    make = reinterpret_cast<MakeLoopbackServerFn>(fn);
  });
  if (make == nullptr) return FailedPreconditionError(error);
  *out = make;
  return OkStatus();
}

// The id of /TOKEN/api/<kind>/<id> (one segment, not empty), "" otherwise.
std::string_view IdAfter(std::string_view rest, std::string_view prefix) {
  if (rest.substr(0, prefix.size()) != prefix) return {};
  const std::string_view id = rest.substr(prefix.size());
  return id.find('/') == std::string_view::npos ? id : std::string_view{};
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
    : api_(api), token_(std::move(token)) {
  handler_ = [this](const ServedRequest& req, ServedResponse& res) { Handle(req, res); };
}

ViewerServer::~ViewerServer() = default;

Result<std::unique_ptr<ViewerServer>> ViewerServer::Bind(ViewerApi& api, int port,
                                                         std::string token) {
  MakeLoopbackServerFn make = nullptr;
  RETURN_IF_ERROR(LoadViewerHttpModule(&make));
  std::unique_ptr<ViewerServer> server(new ViewerServer(api, std::move(token)));
  server->server_.reset(make(&server->handler_));
  server->port_ = server->server_->Bind(port);
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
  if (!server_->Listen()) {
    return UnavailableError("the viewer stopped serving on 127.0.0.1:" + std::to_string(port_));
  }
  return OkStatus();
}

void ViewerServer::Stop() { server_->Stop(); }

void ViewerServer::Handle(const ServedRequest& req, ServedResponse& res) {
  const int refused = CheckRequest(req.method, req.host, req.path, token_, port_);
  if (refused == 0) {
    Route(req, res);
  } else {
    res.status = refused;
    res.body = refused == 403   ? "forbidden host\n"
               : refused == 405 ? "read-only: only GET\n"
                                : "not found\n";
    res.content_type = "text/plain; charset=utf-8";
    if (refused == 405) res.headers.emplace_back("Allow", "GET");
  }
  res.headers.emplace_back("Content-Security-Policy", kCsp);
  res.headers.emplace_back("X-Content-Type-Options", "nosniff");
  res.headers.emplace_back("Referrer-Policy", "no-referrer");
  res.headers.emplace_back("X-Frame-Options", "DENY");
  res.headers.emplace_back("Cache-Control", "no-store");
}

// The token segment was checked by Handle.
void ViewerServer::Route(const ServedRequest& req, ServedResponse& res) {
  const std::string_view rest = std::string_view(req.path).substr(1 + token_.size());
  if (rest.empty()) {
    res.status = 302;
    res.headers.emplace_back("Location", "/" + token_ + "/");
    return;
  }
  if (rest == "/" || rest == "/index.html" || rest == "/app.js" || rest == "/style.css") {
    const ViewerAsset* asset = FindViewerAsset(rest == "/" ? "index.html" : rest.substr(1));
    if (asset == nullptr) {
      res.status = 404;
      return;
    }
    res.body = std::string(asset->body);
    res.content_type = std::string(asset->content_type);
    return;
  }
  const Params params(req.params.begin(), req.params.end());
  if (rest == "/api/sessions") return SendJson(res, api_.Sessions(params));
  if (rest == "/api/search") return SendJson(res, api_.Search(params));
  if (const std::string_view id = IdAfter(rest, "/api/session/"); !id.empty()) {
    return SendJson(res, api_.Session(std::string(id)));
  }
  if (const std::string_view id = IdAfter(rest, "/api/tree/"); !id.empty()) {
    return SendJson(res, api_.Tree(std::string(id)));
  }
  res.status = 404;
}

}  // namespace codex::cli::viewer
