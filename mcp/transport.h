// Transports of the MCP client: how JSON-RPC messages reach a server and come
// back. StdioTransport runs the server as a child process (newline-delimited
// JSON on its stdin/stdout, its stderr appended to a log file);
// HttpTransport speaks streamable HTTP (POST, JSON or SSE answers,
// Mcp-Session-Id). Incoming messages are handed to the callbacks given to
// Start, from a reader thread (stdio) or from within Send (HTTP).
// Send is thread-safe; Start and Close are called once, by the owner.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"
#include "core/mcp_config.h"
#include "sandbox/environment.h"

namespace codex::mcp {

// Appends "[codex] <line>" records to a server's log file. Thread-safe.
class ServerLog {
 public:
  // Opens (creating, mode 0600) `path`; when that fails, logging is off.
  explicit ServerLog(const std::string& path);
  ~ServerLog();
  ServerLog(const ServerLog&) = delete;
  ServerLog& operator=(const ServerLog&) = delete;
  void Note(const std::string& line);
  int fd() const { return fd_; }  // -1 when logging is off
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
};

class Transport {
 public:
  using MessageFn = std::function<void(std::string)>;
  using ClosedFn = std::function<void(std::string)>;  // why it closed
  virtual ~Transport() = default;
  virtual Status Start(MessageFn on_message, ClosedFn on_closed) = 0;
  // Sends one JSON-RPC message. `should_abort` is polled while waiting.
  virtual Status Send(const std::string& message, int64_t timeout_ms,
                      const std::function<bool()>& should_abort) = 0;
  virtual void Close() = 0;
};

struct StdioOptions {
  core::McpServerConfig config;
  std::string default_cwd;        // the session's cwd, when config.cwd is ""
  sandbox::EnvPolicy env_policy;  // filtering of codex's environment
  ServerLog* log = nullptr;       // borrowed; the child's stderr goes to log->fd()
  // The session's model-writable roots: PATH entries inside them are not
  // searched for `command` (sandbox/host_path.h).
  std::vector<std::string> writable_roots;
};

// Runs `command args...` in its own process group (Ctrl-C on the terminal
// does not reach it) with the filtered environment plus `env` and `env_vars`,
// stdin/stdout on pipes and stderr in the log. Close() closes stdin, then
// SIGTERMs and at last SIGKILLs the group, and reaps the child.
class StdioTransport final : public Transport {
 public:
  explicit StdioTransport(StdioOptions options);
  ~StdioTransport() override;
  Status Start(MessageFn on_message, ClosedFn on_closed) override;
  Status Send(const std::string& message, int64_t timeout_ms,
              const std::function<bool()>& should_abort) override;
  void Close() override;

 private:
  void ReadLoop();
  std::string ExitDescription();

  StdioOptions options_;
  MessageFn on_message_;
  ClosedFn on_closed_;
  pid_t pid_ = -1;
  int stdin_fd_ = -1;
  int stdout_fd_ = -1;
  std::mutex write_mu_;
  std::mutex reap_mu_;
  bool reaped_ = false;
  int wait_status_ = 0;
  std::atomic<bool> stopping_{false};
  std::thread reader_;
};

struct HttpOptions {
  core::McpServerConfig config;
  ServerLog* log = nullptr;
};

// Streamable HTTP: every message is a POST to the url (Accept: application/json,
// text/event-stream); a JSON body or the SSE events of the answer are
// delivered as messages; the Mcp-Session-Id the server assigns is sent back,
// with MCP-Protocol-Version once negotiated, and a DELETE ends the session.
class HttpTransport final : public Transport {
 public:
  explicit HttpTransport(HttpOptions options);
  ~HttpTransport() override;
  Status Start(MessageFn on_message, ClosedFn on_closed) override;
  Status Send(const std::string& message, int64_t timeout_ms,
              const std::function<bool()>& should_abort) override;
  void Close() override;
  void set_protocol_version(const std::string& v);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace codex::mcp
