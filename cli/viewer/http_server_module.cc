// codex-viewer-http.so: the loopback server of http_server_module.h on
// cpp-httplib.
#include "cli/viewer/http_server_module.h"

#include <httplib.h>
#include <sys/socket.h>

namespace codex::cli::viewer {
namespace {

class HttplibLoopbackServer : public LoopbackServer {
 public:
  explicit HttplibLoopbackServer(const ServeHandler* handler) : handler_(handler) {
    // SO_REUSEADDR alone: httplib's default adds SO_REUSEPORT, with which a
    // second listener (another viewer, or any process of this user) could
    // share the port and take half the requests, tokens included.
    server_.set_socket_options([](int sock) {
      int yes = 1;
      ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    });
    // Small JSON answers on a kept-alive connection would otherwise wait for
    // the peer's delayed ACK (~40 ms each).
    server_.set_tcp_nodelay(true);
    // Every request, whatever its method or path, goes to the handler.
    server_.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
      ServedRequest in;
      in.method = req.method;
      in.host = req.get_header_value("Host");
      in.path = req.path;
      in.params.insert(req.params.begin(), req.params.end());
      ServedResponse out;
      (*handler_)(in, out);
      res.status = out.status;
      for (const auto& [name, value] : out.headers) res.set_header(name, value);
      if (!out.content_type.empty()) res.set_content(out.body, out.content_type);
      return httplib::Server::HandlerResponse::Handled;
    });
  }

  int Bind(int port) override {
    if (port == 0) return server_.bind_to_any_port("127.0.0.1");
    return server_.bind_to_port("127.0.0.1", port) ? port : -1;
  }
  bool Listen() override { return server_.listen_after_bind(); }
  void Stop() override { server_.stop(); }

 private:
  const ServeHandler* handler_;
  httplib::Server server_;
};

}  // namespace
}  // namespace codex::cli::viewer

extern "C" __attribute__((visibility("default"))) codex::cli::viewer::LoopbackServer*
codex_viewer_make_server(const codex::cli::viewer::ServeHandler* handler) {
  return new codex::cli::viewer::HttplibLoopbackServer(handler);
}
