// HttpConnection: codex's one HTTP/1.1 client, used by the Responses client
// (core/responses_client.cc) and the MCP streamable HTTP transport
// (mcp/http_transport.cc).
//
// One connection to one origin, kept alive between exchanges when the server
// allows it and the previous exchange ended cleanly (else the next Send
// connects anew). A kept-alive socket the server has closed meanwhile is
// noticed before reuse and replaced. Bodies: Content-Length, chunked, or up
// to the close; each piece is handed to the body callback as it arrives (SSE
// streaming). No redirects, no compression (the request says what it
// accepts). Through an http:// proxy: absolute-form requests for http URLs,
// CONNECT tunnels for https URLs, with Basic proxy credentials.
//
// TLS (https only): OpenSSL is loaded with dlopen (libssl.so.3 and
// libcrypto.so.3, only the functions used) the first time an https
// connection is made, so a run against an http:// endpoint never maps it
// (tests/lean_start_e2e_test.cc). The server's certificate chain is verified
// against ca_file / ca_dir (or OpenSSL's default store when both are empty)
// and its name against the host (SSL_set1_host); the handshake fails on any
// verification error, and nothing is sent.
//
// Timeouts: connect_timeout_ms for the TCP connect (and each proxy step),
// io_timeout_ms for every read or write to block. Stop() may be called from
// any thread: it shuts the socket down under a blocked Send, which returns
// kStopped.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace codex::core {

using HttpHeaders = std::vector<std::pair<std::string, std::string>>;

struct HttpTarget {
  std::string scheme;  // "http" or "https"
  std::string host;    // without brackets for IPv6
  int port = 0;
  std::string proxy_host;  // an http:// proxy; "" = direct
  int proxy_port = 0;
  std::string proxy_user;  // Basic credentials for the proxy; "" = none
  std::string proxy_password;
  std::string ca_file;  // https: the trusted CAs; both "" = OpenSSL's default store
  std::string ca_dir;
  int64_t connect_timeout_ms = 10'000;
  int64_t io_timeout_ms = 60'000;
};

struct HttpRequest {
  std::string method = "POST";
  std::string path;  // origin-form, e.g. "/v1/responses?x=1"
  HttpHeaders headers;
  std::string body;
  bool keep_alive = true;  // false sends Connection: close
};

struct HttpResponseHead {
  int status = 0;
  HttpHeaders headers;
  // The first header named `name` (case-insensitive); "" when absent.
  std::string Header(std::string_view name) const;
  bool Has(std::string_view name) const;
};

enum class HttpError {
  kSuccess,
  kConnection,         // cannot resolve or connect
  kConnectionTimeout,  // the connect did not finish in time
  kWrite,              // the connection broke while sending
  kRead,               // the connection broke or timed out while receiving
  kProxy,              // the proxy refused the CONNECT
  kTlsLibrary,         // OpenSSL cannot be loaded
  kTlsLoadingCerts,    // ca_file / ca_dir cannot be read
  kTlsVerification,    // the certificate or its host name was refused
  kTlsHandshake,       // any other handshake failure
  kProtocol,           // the reply is not HTTP/1.x as expected
  kStopped,            // Stop() or a callback ended the exchange
};

// A short phrase for messages ("connection failed", ...).
std::string HttpErrorText(HttpError error);

class HttpConnection {
 public:
  explicit HttpConnection(HttpTarget target);
  ~HttpConnection();
  HttpConnection(const HttpConnection&) = delete;
  HttpConnection& operator=(const HttpConnection&) = delete;

  // One exchange. `on_head` sees the status and headers (false = stop);
  // `on_body` each piece of the body (false = stop). kSuccess only when the
  // whole body arrived.
  HttpError Send(const HttpRequest& request,
                 const std::function<bool(const HttpResponseHead&)>& on_head,
                 const std::function<bool(std::string_view)>& on_body);

  // Thread-safe: ends a blocked Send (kStopped) and closes the connection.
  void Stop();

  // After kTlsVerification: OpenSSL's text for the chain's error, or "" when
  // the chain was fine and the host name was not.
  const std::string& verify_error() const { return verify_error_; }
  // An extra line for kTlsLibrary / kTlsLoadingCerts / kProxy failures.
  const std::string& detail() const { return detail_; }

 private:
  struct Tls;
  HttpError Connect();
  HttpError Tunnel();
  HttpError StartTls();
  void Close();
  bool ReusableNow();
  HttpError WriteAll(std::string_view bytes);
  // >0 bytes read, 0 at the peer's close, <0 on error.
  long ReadSome(char* buf, size_t len);
  HttpError ReadLine(std::string& line);
  HttpError ReadHead(HttpResponseHead& head);
  HttpError ReadBody(const HttpRequest& request, const HttpResponseHead& head,
                     const std::function<bool(std::string_view)>& on_body, bool& reusable);

  HttpTarget target_;
  std::mutex fd_mu_;  // guards fd_ against Stop
  int fd_ = -1;
  std::atomic<bool> stopped_{false};
  std::unique_ptr<Tls> tls_;
  std::string buffered_;  // read but not yet consumed
  std::string verify_error_;
  std::string detail_;
};

}  // namespace codex::core
