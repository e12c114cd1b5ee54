// The session viewer's HTTP server (`codex sessions serve`, docs/viewer.md):
// read-only, on 127.0.0.1 only, every route behind a random token.
//
// The rules every request meets, in order, before any route runs (one home:
// CheckRequest):
//   1. Host must be 127.0.0.1:PORT or localhost:PORT, else 403 (a page of
//      another site whose name was rebound to 127.0.0.1 sends its own name).
//   2. Only GET, else 405 (there is nothing to write).
//   3. The path's first segment must be the token (compared in constant
//      time), else 404: without the token nothing is served, not even the
//      page's script or style.
// Every response, refused ones included, carries a Content-Security-Policy
// that allows only this origin's script, style and fetches (no inline
// script, no other origin, no framing), X-Content-Type-Options: nosniff,
// Referrer-Policy: no-referrer and Cache-Control: no-store.
//
// Routes under /TOKEN/: "" (the page), app.js, style.css (embedded at build
// time, viewer_assets.h), and the JSON of ViewerApi under api/.
//
// The server itself (cpp-httplib, which brings OpenSSL) lives in the module
// codex-viewer-http.so beside codex (http_server_module.h), loaded by Bind.
//
// Thread-safety: Run blocks on the calling thread and serves from a pool;
// Stop may be called from any thread (e.g. a signal-waiting one).
#pragma once

#include <memory>
#include <string>

#include "base/status.h"
#include "cli/viewer/http_server_module.h"
#include "cli/viewer/viewer_api.h"

namespace codex::cli::viewer {

// 32 hex digits from getrandom (128 bits).
Result<std::string> NewViewerToken();

// Why a request is refused, or 0 when it may be routed (the rules above).
int CheckRequest(std::string_view method, std::string_view host, std::string_view path,
                 std::string_view token, int port);

class ViewerServer {
 public:
  // Binds 127.0.0.1:`port` (0 = any free port). kUnavailable when the port
  // cannot be bound, kFailedPrecondition when the module cannot be loaded.
  // `api` must outlive the server.
  static Result<std::unique_ptr<ViewerServer>> Bind(ViewerApi& api, int port, std::string token);
  ~ViewerServer();

  int port() const { return port_; }
  // http://127.0.0.1:PORT/TOKEN/
  std::string url() const;

  // Serves until Stop.
  Status Run();
  void Stop();

 private:
  ViewerServer(ViewerApi& api, std::string token);
  // The rules, then the routes, then the headers every response carries.
  void Handle(const ServedRequest& req, ServedResponse& res);
  void Route(const ServedRequest& req, ServedResponse& res);

  ViewerApi& api_;
  std::string token_;
  int port_ = 0;
  ServeHandler handler_;
  std::unique_ptr<LoopbackServer> server_;
};

}  // namespace codex::cli::viewer
