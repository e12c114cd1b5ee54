// The interface of codex-viewer-http.so, the module beside codex that holds
// the session viewer's HTTP server (cpp-httplib). Debian's cpp-httplib is a
// shared library built with OpenSSL, which it loads and initialises when it
// is mapped; only `codex sessions serve` needs a server, so codex loads the
// module (dlopen) there instead of mapping httplib and OpenSSL at every
// start (tests/lean_start_e2e_test.cc).
//
// The module is a plain loopback server: every request is handed to one
// handler, which decides everything (the rules and routes of
// viewer_server.h). Both sides are built together by the same compiler, so
// C++ types cross the boundary.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace codex::cli::viewer {

// The module's file name, found beside the codex executable.
inline constexpr const char* kViewerHttpModule = "codex-viewer-http.so";
// The one function it exports (extern "C"): MakeLoopbackServerFn.
inline constexpr const char* kViewerHttpSymbol = "codex_viewer_make_server";

struct ServedRequest {
  std::string method;
  std::string host;                                // the Host header
  std::string path;                                // percent-decoded, without the query
  std::multimap<std::string, std::string> params;  // the query, decoded
};

struct ServedResponse {
  int status = 200;
  std::string body;
  std::string content_type;  // "" = no body
  std::vector<std::pair<std::string, std::string>> headers;
};

using ServeHandler = std::function<void(const ServedRequest&, ServedResponse&)>;

class LoopbackServer {
 public:
  virtual ~LoopbackServer() = default;
  // Binds 127.0.0.1:`port` (0 = any free port) with SO_REUSEADDR only; the
  // bound port, or -1.
  virtual int Bind(int port) = 0;
  // Serves until Stop; false when listening failed.
  virtual bool Listen() = 0;
  // Any thread; a no-op before Listen has started.
  virtual void Stop() = 0;
};

// Makes a server that hands every request to `handler` (which must outlive
// it); the caller owns the result (delete it).
using MakeLoopbackServerFn = LoopbackServer* (*)(const ServeHandler* handler);

}  // namespace codex::cli::viewer
