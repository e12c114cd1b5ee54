// LoopbackListener: a TCP socket listening on 127.0.0.1 at a kernel-chosen
// port (test support, never linked into codex). Nobody accepts: up to
// `backlog` connections complete in the kernel, so a client's connect()
// succeeds exactly when the network lets it reach the port. The socket is
// close-on-exec. When it cannot be set up the process prints why and aborts.
// Not thread-safe.
#pragma once

namespace codex::testing {

class LoopbackListener {
 public:
  explicit LoopbackListener(int backlog = 8);
  ~LoopbackListener();
  LoopbackListener(const LoopbackListener&) = delete;
  LoopbackListener& operator=(const LoopbackListener&) = delete;

  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

}  // namespace codex::testing
