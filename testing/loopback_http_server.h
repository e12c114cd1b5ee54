// LoopbackHttpServer: an httplib server (httplib::Server, or SSLServer for
// TLS) on 127.0.0.1 at a kernel-chosen port, its accept loop on a thread of
// its own, stopped and joined when the object goes, also when a REQUIRE
// throws (test support, never linked into codex; header-only, so a test
// that includes it links PkgConfig::HTTPLIB). The test adds its handlers to
// server() before Start().
#pragma once

#include <httplib.h>

#include <chrono>
#include <string>
#include <thread>
#include <utility>

namespace codex::testing {

template <typename Server = httplib::Server>
class LoopbackHttpServer {
 public:
  // `args` go to Server's constructor (SSLServer: certificate and key paths).
  template <typename... Args>
  explicit LoopbackHttpServer(Args&&... args) : server_(std::forward<Args>(args)...) {}
  ~LoopbackHttpServer() { Stop(); }
  LoopbackHttpServer(const LoopbackHttpServer&) = delete;
  LoopbackHttpServer& operator=(const LoopbackHttpServer&) = delete;

  Server& server() { return server_; }

  // Binds a free port and starts the accept loop; returns once the loop
  // runs (Stop() before that would be lost, and the join would wait
  // forever). False when no port could be bound or the loop did not start
  // within 10 s.
  bool Start() {
    port_ = server_.bind_to_any_port("127.0.0.1");
    if (port_ <= 0) return false;
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    for (int i = 0; i < 10'000 && !server_.is_running(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return server_.is_running();
  }
  // Stops the loop and joins its thread; a second call does nothing.
  void Stop() {
    if (!thread_.joinable()) return;
    server_.stop();
    thread_.join();
  }

  int port() const { return port_; }
  // "http://127.0.0.1:PORT" ("https://..." for `scheme` "https").
  std::string base(const std::string& scheme = "http") const {
    return scheme + "://127.0.0.1:" + std::to_string(port_);
  }

 private:
  Server server_;
  int port_ = 0;
  std::thread thread_;
};

}  // namespace codex::testing
