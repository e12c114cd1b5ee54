#include "core/http_client.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>

namespace codex::core {

// The libssl/libcrypto functions used, resolved by dlopen (not in the anonymous
// namespace: HttpConnection::Tls holds a pointer to it).
namespace http_tls {
struct LibSsl {
  decltype(&::TLS_client_method) client_method;
  decltype(&::SSL_CTX_new) ctx_new;
  decltype(&::SSL_CTX_free) ctx_free;
  decltype(&::SSL_CTX_set_verify) ctx_set_verify;
  decltype(&::SSL_CTX_load_verify_locations) ctx_load_verify_locations;
  decltype(&::SSL_CTX_set_default_verify_paths) ctx_set_default_verify_paths;
  decltype(&::SSL_new) ssl_new;
  decltype(&::SSL_free) ssl_free;
  decltype(&::SSL_set_fd) set_fd;
  decltype(&::SSL_ctrl) ctrl;
  decltype(&::SSL_set1_host) set1_host;
  decltype(&::SSL_get0_param) get0_param;
  decltype(&::SSL_connect) connect;
  decltype(&::SSL_read) read;
  decltype(&::SSL_write) write;
  decltype(&::SSL_get_error) get_error;
  decltype(&::SSL_get_verify_result) get_verify_result;
  decltype(&::SSL_shutdown) shutdown;
  decltype(&::X509_VERIFY_PARAM_set1_ip_asc) param_set1_ip_asc;
  decltype(&::X509_verify_cert_error_string) verify_cert_error_string;
  decltype(&::ERR_clear_error) err_clear_error;
};
}  // namespace http_tls
using http_tls::LibSsl;

namespace {

// ---- OpenSSL, loaded on the first https connection ----

constexpr const char* kLibSslName = "libssl.so.3";
constexpr const char* kLibCryptoName = "libcrypto.so.3";

template <typename Fn>
bool ResolveSslSymbol(void* handle, const char* name, Fn* slot, std::string* missing) {
  void* sym = ::dlsym(handle, name);
  if (sym == nullptr) {
    *missing = name;
    return false;
  }
  *slot = reinterpret_cast<Fn>(sym);
  return true;
}

// The table, or null with `why` set; loaded once, never unloaded.
const LibSsl* LoadLibSsl(std::string* why) {
  static LibSsl table{};
  static std::string error;
  static std::once_flag once;
  std::call_once(once, [] {
    void* crypto = ::dlopen(kLibCryptoName, RTLD_NOW | RTLD_LOCAL);
    void* ssl = crypto == nullptr ? nullptr : ::dlopen(kLibSslName, RTLD_NOW | RTLD_LOCAL);
    if (ssl == nullptr) {
      const char* e = ::dlerror();
      error = std::string("https needs ") + kLibSslName + " and " + kLibCryptoName +
              ", which cannot be loaded (" + (e ? e : "unknown error") +
              "); install libssl3 (apt-get install libssl3)";
      return;
    }
    std::string missing;
    LibSsl& t = table;
    const bool ok =
        ResolveSslSymbol(ssl, "TLS_client_method", &t.client_method, &missing) &&
        ResolveSslSymbol(ssl, "SSL_CTX_new", &t.ctx_new, &missing) &&
        ResolveSslSymbol(ssl, "SSL_CTX_free", &t.ctx_free, &missing) &&
        ResolveSslSymbol(ssl, "SSL_CTX_set_verify", &t.ctx_set_verify, &missing) &&
        ResolveSslSymbol(ssl, "SSL_CTX_load_verify_locations", &t.ctx_load_verify_locations,
                         &missing) &&
        ResolveSslSymbol(ssl, "SSL_CTX_set_default_verify_paths", &t.ctx_set_default_verify_paths,
                         &missing) &&
        ResolveSslSymbol(ssl, "SSL_new", &t.ssl_new, &missing) &&
        ResolveSslSymbol(ssl, "SSL_free", &t.ssl_free, &missing) &&
        ResolveSslSymbol(ssl, "SSL_set_fd", &t.set_fd, &missing) &&
        ResolveSslSymbol(ssl, "SSL_ctrl", &t.ctrl, &missing) &&
        ResolveSslSymbol(ssl, "SSL_set1_host", &t.set1_host, &missing) &&
        ResolveSslSymbol(ssl, "SSL_get0_param", &t.get0_param, &missing) &&
        ResolveSslSymbol(ssl, "SSL_connect", &t.connect, &missing) &&
        ResolveSslSymbol(ssl, "SSL_read", &t.read, &missing) &&
        ResolveSslSymbol(ssl, "SSL_write", &t.write, &missing) &&
        ResolveSslSymbol(ssl, "SSL_get_error", &t.get_error, &missing) &&
        ResolveSslSymbol(ssl, "SSL_get_verify_result", &t.get_verify_result, &missing) &&
        ResolveSslSymbol(ssl, "SSL_shutdown", &t.shutdown, &missing) &&
        ResolveSslSymbol(crypto, "X509_VERIFY_PARAM_set1_ip_asc", &t.param_set1_ip_asc, &missing) &&
        ResolveSslSymbol(crypto, "X509_verify_cert_error_string", &t.verify_cert_error_string,
                         &missing) &&
        ResolveSslSymbol(crypto, "ERR_clear_error", &t.err_clear_error, &missing);
    if (!ok) {
      error = std::string(kLibSslName) + " lacks " + missing + "; install libssl3 3.x";
    }
  });
  if (!error.empty()) {
    *why = error;
    return nullptr;
  }
  return &table;
}

// Blocks SIGPIPE on this thread while it lives and swallows one raised by a
// write to a closed connection (OpenSSL writes with write(2), not send).
class PipeSignalGuard {
 public:
  PipeSignalGuard() {
    sigemptyset(&set_);
    sigaddset(&set_, SIGPIPE);
    sigset_t pending;
    sigpending(&pending);
    was_pending_ = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &set_, &old_);
  }
  ~PipeSignalGuard() {
    if (!was_pending_) {
      sigset_t pending;
      sigpending(&pending);
      if (sigismember(&pending, SIGPIPE) == 1) {
        const timespec zero{0, 0};
        while (sigtimedwait(&set_, nullptr, &zero) == -1 && errno == EINTR) {
        }
      }
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  PipeSignalGuard(const PipeSignalGuard&) = delete;
  PipeSignalGuard& operator=(const PipeSignalGuard&) = delete;

 private:
  sigset_t set_;
  sigset_t old_;
  bool was_pending_ = false;
};

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

std::string TrimHttpSpace(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return std::string(s);
}

std::string ProxyBasicCredentials(std::string_view text) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < text.size(); i += 3) {
    const uint32_t n = (uint32_t(uint8_t(text[i])) << 16) | (uint32_t(uint8_t(text[i + 1])) << 8) |
                       uint32_t(uint8_t(text[i + 2]));
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += kAlphabet[(n >> 6) & 63];
    out += kAlphabet[n & 63];
  }
  if (i < text.size()) {
    uint32_t n = uint32_t(uint8_t(text[i])) << 16;
    if (i + 1 < text.size()) n |= uint32_t(uint8_t(text[i + 1])) << 8;
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += i + 1 < text.size() ? kAlphabet[(n >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

bool IsIpLiteral(const std::string& host) {
  in6_addr a6;
  in_addr a4;
  return inet_pton(AF_INET, host.c_str(), &a4) == 1 || inet_pton(AF_INET6, host.c_str(), &a6) == 1;
}

// host[:port] as a Host header or CONNECT target: IPv6 in brackets, the port
// only when it is not the scheme's default (always for CONNECT).
std::string HostPort(const std::string& host, int port, bool always_port, bool https) {
  std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  if (always_port || port != (https ? 443 : 80)) h += ":" + std::to_string(port);
  return h;
}

constexpr size_t kMaxHeadBytes = 256 * 1024;

}  // namespace

struct HttpConnection::Tls {
  const LibSsl* lib = nullptr;
  SSL_CTX* ctx = nullptr;
  SSL* ssl = nullptr;
  ~Tls() {
    if (ssl != nullptr) lib->ssl_free(ssl);
    if (ctx != nullptr) lib->ctx_free(ctx);
  }
};

std::string HttpResponseHead::Header(std::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (EqualsIgnoreCase(k, name)) return v;
  }
  return "";
}

bool HttpResponseHead::Has(std::string_view name) const {
  return std::any_of(headers.begin(), headers.end(),
                     [&](const auto& kv) { return EqualsIgnoreCase(kv.first, name); });
}

std::string HttpErrorText(HttpError error) {
  switch (error) {
    case HttpError::kSuccess:
      return "success";
    case HttpError::kConnection:
      return "connection failed";
    case HttpError::kConnectionTimeout:
      return "connection timed out";
    case HttpError::kWrite:
      return "connection closed while sending the request";
    case HttpError::kRead:
      return "connection closed while reading the response";
    case HttpError::kProxy:
      return "the proxy refused the connection";
    case HttpError::kTlsLibrary:
      return "TLS is not available";
    case HttpError::kTlsLoadingCerts:
      return "cannot load CA certificates";
    case HttpError::kTlsVerification:
      return "TLS certificate verification failed";
    case HttpError::kTlsHandshake:
      return "TLS handshake failed";
    case HttpError::kProtocol:
      return "the reply is not HTTP/1.1";
    case HttpError::kStopped:
      return "the request was stopped";
  }
  return "unknown error";
}

HttpConnection::HttpConnection(HttpTarget target) : target_(std::move(target)) {}

HttpConnection::~HttpConnection() { Close(); }

void HttpConnection::Stop() {
  stopped_.store(true);
  std::lock_guard<std::mutex> lock(fd_mu_);
  if (fd_ >= 0) ::shutdown(fd_, SHUT_RDWR);
}

void HttpConnection::Close() {
  tls_.reset();
  buffered_.clear();
  std::lock_guard<std::mutex> lock(fd_mu_);
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

// A kept-alive socket is reusable when nothing is waiting on it: readable
// means the server closed it (or sent something unasked).
bool HttpConnection::ReusableNow() {
  if (fd_ < 0 || !buffered_.empty()) return false;
  pollfd p{fd_, POLLIN, 0};
  return ::poll(&p, 1, 0) == 0;
}

HttpError HttpConnection::Connect() {
  const bool via_proxy = !target_.proxy_host.empty();
  const std::string& host = via_proxy ? target_.proxy_host : target_.host;
  const int port = via_proxy ? target_.proxy_port : target_.port;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0) {
    return HttpError::kConnection;
  }
  HttpError result = HttpError::kConnection;
  for (addrinfo* ai = found; ai != nullptr; ai = ai->ai_next) {
    const int fd =
        ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
    if (fd < 0) continue;
    {
      std::lock_guard<std::mutex> lock(fd_mu_);
      fd_ = fd;
    }
    bool connected = ::connect(fd, ai->ai_addr, ai->ai_addrlen) == 0;
    if (!connected && errno == EINPROGRESS) {
      // Wait in slices so that Stop is noticed.
      const auto until =
          std::chrono::steady_clock::now() +
          std::chrono::milliseconds(std::max<int64_t>(target_.connect_timeout_ms, 1));
      for (;;) {
        if (stopped_.load()) break;
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                              until - std::chrono::steady_clock::now())
                              .count();
        if (left <= 0) {
          result = HttpError::kConnectionTimeout;
          break;
        }
        pollfd p{fd, POLLOUT, 0};
        const int n = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 50)));
        if (n > 0) {
          int err = 0;
          socklen_t len = sizeof(err);
          ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
          connected = err == 0;
          break;
        }
        if (n < 0 && errno != EINTR) break;
      }
    }
    if (connected) {
      ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
      const int64_t io = std::max<int64_t>(target_.io_timeout_ms, 1);
      timeval tv{static_cast<time_t>(io / 1000), static_cast<suseconds_t>((io % 1000) * 1000)};
      ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
      ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
      const int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      result = HttpError::kSuccess;
      break;
    }
    Close();
    if (stopped_.load()) {
      result = HttpError::kStopped;
      break;
    }
  }
  ::freeaddrinfo(found);
  if (result != HttpError::kSuccess) return result;
  if (stopped_.load()) {
    Close();
    return HttpError::kStopped;
  }
  if (target_.scheme != "https") return HttpError::kSuccess;
  if (via_proxy) {
    const HttpError e = Tunnel();
    if (e != HttpError::kSuccess) return e;
  }
  return StartTls();
}

// CONNECT host:port through the proxy; the reply's head is read and dropped.
HttpError HttpConnection::Tunnel() {
  const std::string where = HostPort(target_.host, target_.port, true, true);
  std::string out = "CONNECT " + where + " HTTP/1.1\r\nHost: " + where + "\r\n";
  if (!target_.proxy_user.empty()) {
    out += "Proxy-Authorization: Basic " +
           ProxyBasicCredentials(target_.proxy_user + ":" + target_.proxy_password) + "\r\n";
  }
  out += "\r\n";
  HttpError e = WriteAll(out);
  if (e != HttpError::kSuccess) return e;
  HttpResponseHead head;
  e = ReadHead(head);
  if (e != HttpError::kSuccess) return e;
  if (head.status / 100 != 2 || !buffered_.empty()) {
    detail_ = "the proxy answered HTTP " + std::to_string(head.status) + " to CONNECT";
    Close();
    return HttpError::kProxy;
  }
  return HttpError::kSuccess;
}

HttpError HttpConnection::StartTls() {
  std::string why;
  const LibSsl* lib = LoadLibSsl(&why);
  if (lib == nullptr) {
    detail_ = why;
    Close();
    return HttpError::kTlsLibrary;
  }
  auto tls = std::make_unique<Tls>();
  tls->lib = lib;
  lib->err_clear_error();
  tls->ctx = lib->ctx_new(lib->client_method());
  if (tls->ctx == nullptr) {
    Close();
    return HttpError::kTlsHandshake;
  }
  lib->ctx_set_verify(tls->ctx, SSL_VERIFY_PEER, nullptr);
  const bool loaded =
      target_.ca_file.empty() && target_.ca_dir.empty()
          ? lib->ctx_set_default_verify_paths(tls->ctx) == 1
          : lib->ctx_load_verify_locations(
                tls->ctx, target_.ca_file.empty() ? nullptr : target_.ca_file.c_str(),
                target_.ca_dir.empty() ? nullptr : target_.ca_dir.c_str()) == 1;
  if (!loaded) {
    Close();
    return HttpError::kTlsLoadingCerts;
  }
  tls->ssl = lib->ssl_new(tls->ctx);
  if (tls->ssl == nullptr || lib->set_fd(tls->ssl, fd_) != 1) {
    Close();
    return HttpError::kTlsHandshake;
  }
  // The name the certificate must carry: an IP address is matched against
  // the certificate's IP addresses, a host name against its DNS names (and
  // sent as SNI).
  bool named = false;
  if (IsIpLiteral(target_.host)) {
    named = lib->param_set1_ip_asc(lib->get0_param(tls->ssl), target_.host.c_str()) == 1;
  } else {
    named = lib->set1_host(tls->ssl, target_.host.c_str()) == 1 &&
            lib->ctrl(tls->ssl, SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
                      const_cast<char*>(target_.host.c_str())) == 1;
  }
  if (!named) {
    Close();
    return HttpError::kTlsHandshake;
  }
  PipeSignalGuard guard;
  if (lib->connect(tls->ssl) != 1) {
    const long verify = lib->get_verify_result(tls->ssl);
    Close();
    if (stopped_.load()) return HttpError::kStopped;
    if (verify != X509_V_OK) {
      verify_error_ =
          verify == X509_V_ERR_HOSTNAME_MISMATCH || verify == X509_V_ERR_IP_ADDRESS_MISMATCH
              ? ""
              : lib->verify_cert_error_string(verify);
      return HttpError::kTlsVerification;
    }
    return HttpError::kTlsHandshake;
  }
  // SSL_VERIFY_PEER fails the handshake on any error; this only guards
  // against a library that would not.
  if (lib->get_verify_result(tls->ssl) != X509_V_OK) {
    verify_error_ = lib->verify_cert_error_string(lib->get_verify_result(tls->ssl));
    Close();
    return HttpError::kTlsVerification;
  }
  tls_ = std::move(tls);
  return HttpError::kSuccess;
}

HttpError HttpConnection::WriteAll(std::string_view bytes) {
  PipeSignalGuard guard;
  while (!bytes.empty()) {
    if (stopped_.load()) return HttpError::kStopped;
    long n = 0;
    if (tls_ != nullptr) {
      const int len = static_cast<int>(std::min<size_t>(bytes.size(), 1 << 20));
      n = tls_->lib->write(tls_->ssl, bytes.data(), len);
      if (n <= 0) n = -1;
    } else {
      n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
    }
    if (n <= 0) return stopped_.load() ? HttpError::kStopped : HttpError::kWrite;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return HttpError::kSuccess;
}

long HttpConnection::ReadSome(char* buf, size_t len) {
  if (tls_ != nullptr) {
    const int n = tls_->lib->read(tls_->ssl, buf, static_cast<int>(std::min<size_t>(len, 1 << 20)));
    if (n > 0) return n;
    const int err = tls_->lib->get_error(tls_->ssl, n);
    // A close_notify, or a close without one (many servers end bodies so).
    if (err == SSL_ERROR_ZERO_RETURN || (err == SSL_ERROR_SYSCALL && n == 0 && errno == 0)) {
      return 0;
    }
    return -1;
  }
  for (;;) {
    const long n = ::recv(fd_, buf, len, 0);
    if (n < 0 && errno == EINTR) continue;
    return n;
  }
}

HttpError HttpConnection::ReadLine(std::string& line) {
  for (;;) {
    const size_t eol = buffered_.find('\n');
    if (eol != std::string::npos) {
      line.assign(buffered_, 0, eol);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      buffered_.erase(0, eol + 1);
      return HttpError::kSuccess;
    }
    if (buffered_.size() > kMaxHeadBytes) return HttpError::kProtocol;
    char buf[16 * 1024];
    const long n = ReadSome(buf, sizeof(buf));
    if (stopped_.load()) return HttpError::kStopped;
    if (n <= 0) return HttpError::kRead;
    buffered_.append(buf, static_cast<size_t>(n));
  }
}

HttpError HttpConnection::ReadHead(HttpResponseHead& head) {
  std::string line;
  // 1xx interim replies (100 Continue) are skipped.
  for (;;) {
    HttpError e = ReadLine(line);
    if (e != HttpError::kSuccess) return e;
    if (line.rfind("HTTP/1.", 0) != 0 || line.size() < 12) return HttpError::kProtocol;
    head.status = std::atoi(line.c_str() + 9);
    head.headers.clear();
    size_t total = 0;
    for (;;) {
      e = ReadLine(line);
      if (e != HttpError::kSuccess) return e;
      if (line.empty()) break;
      total += line.size();
      if (total > kMaxHeadBytes) return HttpError::kProtocol;
      const size_t colon = line.find(':');
      if (colon == std::string::npos) return HttpError::kProtocol;
      head.headers.emplace_back(TrimHttpSpace(std::string_view(line).substr(0, colon)),
                                TrimHttpSpace(std::string_view(line).substr(colon + 1)));
    }
    if (head.status < 100 || head.status > 999) return HttpError::kProtocol;
    if (head.status >= 200 || head.status == 101) return HttpError::kSuccess;
  }
}

HttpError HttpConnection::ReadBody(const HttpRequest& request, const HttpResponseHead& head,
                                   const std::function<bool(std::string_view)>& on_body,
                                   bool& reusable) {
  auto deliver = [&](std::string_view piece) {
    return piece.empty() || (on_body && on_body(piece)) || !on_body;
  };
  if (request.method == "HEAD" || head.status == 204 || head.status == 304)
    return HttpError::kSuccess;
  std::string encoding = head.Header("Transfer-Encoding");
  std::transform(encoding.begin(), encoding.end(), encoding.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  char buf[16 * 1024];
  auto fill = [&]() -> HttpError {
    const long n = ReadSome(buf, sizeof(buf));
    if (stopped_.load()) return HttpError::kStopped;
    if (n <= 0) return HttpError::kRead;
    buffered_.append(buf, static_cast<size_t>(n));
    return HttpError::kSuccess;
  };
  if (encoding.find("chunked") != std::string::npos) {
    std::string line;
    for (;;) {
      HttpError e = ReadLine(line);
      if (e != HttpError::kSuccess) return e;
      char* end = nullptr;
      const unsigned long long size = std::strtoull(line.c_str(), &end, 16);
      if (end == line.c_str()) return HttpError::kProtocol;
      if (size == 0) {
        // Trailers, up to the empty line.
        do {
          e = ReadLine(line);
          if (e != HttpError::kSuccess) return e;
        } while (!line.empty());
        return HttpError::kSuccess;
      }
      unsigned long long left = size;
      while (left > 0) {
        if (buffered_.empty()) {
          e = fill();
          if (e != HttpError::kSuccess) return e;
        }
        const size_t take =
            static_cast<size_t>(std::min<unsigned long long>(left, buffered_.size()));
        const std::string piece = buffered_.substr(0, take);
        buffered_.erase(0, take);
        left -= take;
        if (!deliver(piece)) return HttpError::kStopped;
      }
      e = ReadLine(line);  // the CRLF after the chunk
      if (e != HttpError::kSuccess) return e;
      if (!line.empty()) return HttpError::kProtocol;
    }
  }
  const std::string length = head.Header("Content-Length");
  if (!length.empty()) {
    char* end = nullptr;
    unsigned long long left = std::strtoull(length.c_str(), &end, 10);
    if (end == length.c_str()) return HttpError::kProtocol;
    while (left > 0) {
      if (buffered_.empty()) {
        const HttpError e = fill();
        if (e != HttpError::kSuccess) return e;
      }
      const size_t take = static_cast<size_t>(std::min<unsigned long long>(left, buffered_.size()));
      const std::string piece = buffered_.substr(0, take);
      buffered_.erase(0, take);
      left -= take;
      if (!deliver(piece)) return HttpError::kStopped;
    }
    return HttpError::kSuccess;
  }
  // Neither: the body runs to the close.
  reusable = false;
  if (!deliver(buffered_)) return HttpError::kStopped;
  buffered_.clear();
  for (;;) {
    const long n = ReadSome(buf, sizeof(buf));
    if (stopped_.load()) return HttpError::kStopped;
    if (n == 0) return HttpError::kSuccess;
    if (n < 0) return HttpError::kRead;
    if (!deliver(std::string_view(buf, static_cast<size_t>(n)))) return HttpError::kStopped;
  }
}

HttpError HttpConnection::Send(const HttpRequest& request,
                               const std::function<bool(const HttpResponseHead&)>& on_head,
                               const std::function<bool(std::string_view)>& on_body) {
  verify_error_.clear();
  detail_.clear();
  if (stopped_.load()) return HttpError::kStopped;
  if (!ReusableNow()) {
    Close();
    const HttpError e = Connect();
    if (e != HttpError::kSuccess) {
      Close();
      return e;
    }
  }
  const bool https = target_.scheme == "https";
  const bool absolute = !https && !target_.proxy_host.empty();
  std::string out = request.method + " ";
  if (absolute) out += "http://" + HostPort(target_.host, target_.port, false, false);
  out += request.path.empty() ? "/" : request.path;
  out += " HTTP/1.1\r\nHost: " + HostPort(target_.host, target_.port, false, https) + "\r\n";
  bool has_accept = false;
  for (const auto& [name, value] : request.headers) {
    out += name + ": " + value + "\r\n";
    has_accept = has_accept || EqualsIgnoreCase(name, "Accept");
  }
  if (!has_accept) out += "Accept: */*\r\n";
  if (absolute && !target_.proxy_user.empty()) {
    out += "Proxy-Authorization: Basic " +
           ProxyBasicCredentials(target_.proxy_user + ":" + target_.proxy_password) + "\r\n";
  }
  if (!request.keep_alive) out += "Connection: close\r\n";
  if (!request.body.empty() || request.method == "POST" || request.method == "PUT") {
    out += "Content-Length: " + std::to_string(request.body.size()) + "\r\n";
  }
  out += "\r\n";
  out += request.body;
  HttpError e = WriteAll(out);
  HttpResponseHead head;
  if (e == HttpError::kSuccess) e = ReadHead(head);
  if (e != HttpError::kSuccess) {
    Close();
    return e;
  }
  if (on_head && !on_head(head)) {
    Close();
    return HttpError::kStopped;
  }
  std::string connection = head.Header("Connection");
  std::transform(connection.begin(), connection.end(), connection.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  bool reusable = request.keep_alive && connection.find("close") == std::string::npos;
  e = ReadBody(request, head, on_body, reusable);
  if (e != HttpError::kSuccess || !reusable) Close();
  return e;
}

}  // namespace codex::core
