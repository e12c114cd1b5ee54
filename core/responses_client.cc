#include "core/responses_client.h"

#include <httplib.h>
#include <openssl/x509.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <thread>
#include <utility>

#include "core/response_stream.h"
#include "core/uuid.h"

namespace codex::core {

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr milliseconds kPollInterval{50};
constexpr size_t kMaxErrorBody = 64 * 1024;
constexpr size_t kMaxCompactBody = 256u << 20;
constexpr long long kMaxRetryAfterMs = 120'000;
constexpr const char* kSystemCaFile = "/etc/ssl/certs/ca-certificates.crt";

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

const char* Env(const char* name) {
  const char* v = std::getenv(name);
  return (v != nullptr && *v != '\0') ? v : nullptr;
}

bool HasLineBreak(std::string_view s) { return s.find_first_of("\r\n") != std::string_view::npos; }

std::string PercentEncode(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
        c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

std::string PercentDecode(std::string_view s) {
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && hex(s[i + 1]) >= 0 && hex(s[i + 2]) >= 0) {
      out.push_back(static_cast<char>(hex(s[i + 1]) * 16 + hex(s[i + 2])));
      i += 2;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

std::optional<int> ParsePort(std::string_view s) {
  if (s.empty() || s.size() > 5) return std::nullopt;
  int port = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    port = port * 10 + (c - '0');
  }
  if (port < 1 || port > 65535) return std::nullopt;
  return port;
}

// host[:port] or [v6][:port]; host is returned without brackets.
bool SplitHostPort(std::string_view authority, std::string& host, std::optional<int>& port) {
  std::string_view port_text;
  if (!authority.empty() && authority.front() == '[') {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) return false;
    host = std::string(authority.substr(1, close - 1));
    std::string_view rest = authority.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return false;
      port_text = rest.substr(1);
    }
  } else {
    const size_t colon = authority.rfind(':');
    if (colon != std::string_view::npos) {
      host = std::string(authority.substr(0, colon));
      port_text = authority.substr(colon + 1);
    } else {
      host = std::string(authority);
    }
  }
  if (host.empty()) return false;
  if (host.find_first_of(" /?#@\\") != std::string::npos) return false;
  port.reset();
  if (!port_text.empty()) {
    port = ParsePort(port_text);
    if (!port) return false;
  }
  return true;
}

std::string HostForUrl(const std::string& host) {
  return host.find(':') != std::string::npos ? "[" + host + "]" : host;
}

struct ProxySetting {
  std::string host;
  int port = 0;
  std::string user;
  std::string password;
};

// Parses "http://[user:pass@]host[:port][/]" or "host[:port]".
Result<ProxySetting> ParseProxy(std::string_view var, std::string_view value) {
  const std::string bad = "invalid proxy in " + std::string(var) +
                          ": expected http://host:port; fix or unset the variable";
  std::string_view rest = Trim(value);
  if (const size_t sep = rest.find("://"); sep != std::string_view::npos) {
    if (Lower(rest.substr(0, sep)) != "http") {
      return InvalidArgumentError("unsupported proxy scheme in " + std::string(var) +
                                  ": only http:// proxies are supported");
    }
    rest.remove_prefix(sep + 3);
  }
  if (const size_t slash = rest.find('/'); slash != std::string_view::npos) {
    rest = rest.substr(0, slash);
  }
  ProxySetting proxy;
  if (const size_t at = rest.rfind('@'); at != std::string_view::npos) {
    std::string_view cred = rest.substr(0, at);
    rest.remove_prefix(at + 1);
    const size_t colon = cred.find(':');
    proxy.user = PercentDecode(cred.substr(0, colon));
    if (colon != std::string_view::npos) proxy.password = PercentDecode(cred.substr(colon + 1));
  }
  std::optional<int> port;
  if (!SplitHostPort(rest, proxy.host, port)) return InvalidArgumentError(bad);
  proxy.port = port.value_or(1080);  // curl's default proxy port
  return proxy;
}

// The server's error {code, message} from an error body (JSON or text).
struct ServerError {
  std::string code;
  std::string message;
};

ServerError ParseServerError(const std::string& body) {
  ServerError e;
  auto j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_object()) {
    const nlohmann::json* err = &j;
    if (auto it = j.find("error"); it != j.end()) {
      if (it->is_object()) {
        err = &*it;
      } else if (it->is_string()) {
        e.message = it->get<std::string>();
      }
    }
    if (auto it = err->find("code"); it != err->end() && it->is_string()) {
      e.code = it->get<std::string>();
    }
    if (e.code.empty()) {
      if (auto it = err->find("type"); it != err->end() && it->is_string()) {
        e.code = it->get<std::string>();
      }
    }
    if (auto it = err->find("message"); it != err->end() && it->is_string()) {
      e.message = it->get<std::string>();
    }
  }
  if (e.message.empty()) {
    for (char c : std::string_view(body).substr(0, 300)) {
      e.message.push_back(c == '\n' || c == '\r' || c == '\t' ? ' ' : c);
    }
    e.message = std::string(Trim(e.message));
  }
  return e;
}

// Retry-After in seconds (integer or decimal); HTTP dates are ignored.
std::optional<long long> ParseRetryAfterHeader(std::string_view value) {
  value = Trim(value);
  if (value.empty()) return std::nullopt;
  for (char c : value) {
    if ((c < '0' || c > '9') && c != '.') return std::nullopt;
  }
  const double seconds = std::strtod(std::string(value).c_str(), nullptr);
  if (!std::isfinite(seconds) || seconds < 0) return std::nullopt;
  return static_cast<long long>(std::min(seconds * 1000.0, static_cast<double>(kMaxRetryAfterMs)));
}

long long BackoffMs(int64_t base_ms, int retry) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  std::uniform_real_distribution<double> jitter(0.9, 1.1);
  const double exp = std::ldexp(static_cast<double>(base_ms), std::min(retry - 1, 20));
  return static_cast<long long>(std::min(exp * jitter(rng), static_cast<double>(kMaxRetryAfterMs)));
}

// Sleeps up to `ms`, waking early when cancelled; false when cancelled.
bool SleepUnlessCancelled(long long ms, const CancelToken& cancel) {
  const auto until = Clock::now() + milliseconds(ms);
  while (Clock::now() < until) {
    if (cancel.cancelled()) return false;
    std::this_thread::sleep_for(std::min<Clock::duration>(kPollInterval, until - Clock::now()));
  }
  return !cancel.cancelled();
}

std::string TransportErrorText(httplib::Error error) {
  switch (error) {
    case httplib::Error::Connection:
      return "connection failed";
    case httplib::Error::ConnectionTimeout:
      return "connection timed out";
    case httplib::Error::Read:
      return "connection closed while reading the response";
    case httplib::Error::Write:
      return "connection closed while sending the request";
    case httplib::Error::SSLConnection:
      return "TLS handshake failed";
    default:
      return httplib::to_string(error);
  }
}

}  // namespace

bool HostMatchesNoProxy(std::string_view host_in, std::string_view no_proxy) {
  const std::string host = Lower(host_in);
  size_t start = 0;
  while (start <= no_proxy.size()) {
    size_t comma = no_proxy.find(',', start);
    if (comma == std::string_view::npos) comma = no_proxy.size();
    std::string entry = Lower(Trim(no_proxy.substr(start, comma - start)));
    start = comma + 1;
    if (entry.empty()) continue;
    if (entry == "*") return true;
    if (entry.front() == '[') {
      const size_t close = entry.find(']');
      entry = entry.substr(1, close == std::string::npos ? std::string::npos : close - 1);
    } else if (std::count(entry.begin(), entry.end(), ':') == 1) {
      entry = entry.substr(0, entry.find(':'));
    }
    if (entry.rfind("*.", 0) == 0) entry.erase(0, 1);
    if (!entry.empty() && entry.front() == '.') entry.erase(0, 1);
    if (entry.empty()) continue;
    if (host == entry) return true;
    if (host.size() > entry.size() &&
        host.compare(host.size() - entry.size(), entry.size(), entry) == 0 &&
        host[host.size() - entry.size() - 1] == '.') {
      return true;
    }
  }
  return false;
}

namespace internal {

// Consumes the body of a successful reply on the calling thread.
class ResponseSink {
 public:
  virtual ~ResponseSink() = default;
  virtual void Reset() = 0;  // a new attempt starts
  virtual Status Consume(std::string_view bytes) = 0;
  // The body ended; `transport_ok` is false when the connection broke.
  virtual Status Finish(bool transport_ok) = 0;
  virtual bool delivered() const = 0;  // no silent retry once true
  virtual bool terminal() const = 0;   // the outcome is known even if the body is cut
};

}  // namespace internal

struct ResponsesClient::Attempt {
  bool retry = false;  // true: `status` is retryable and nothing was delivered
  Status status;       // the final status (OK on success) or why to retry
  long long retry_after_ms = 0;
};

ResponsesClient::ResponsesClient(ProviderInfo provider, std::string api_key, ClientOptions options,
                                 Endpoint endpoint, std::string ca_file, std::string ca_dir,
                                 std::map<std::string, std::string> headers, std::string proxy_user,
                                 std::string proxy_password)
    : provider_(std::move(provider)),
      api_key_(std::move(api_key)),
      options_(std::move(options)),
      endpoint_(std::move(endpoint)),
      ca_file_(std::move(ca_file)),
      ca_dir_(std::move(ca_dir)),
      headers_(std::move(headers)),
      proxy_user_(std::move(proxy_user)),
      proxy_password_(std::move(proxy_password)) {
  for (const auto& [key, value] : provider_.query_params) {
    query_ += query_.empty() ? "?" : "&";
    query_ += PercentEncode(key) + "=" + PercentEncode(value);
  }
}

ResponsesClient::~ResponsesClient() = default;

Result<std::unique_ptr<ResponsesClient>> ResponsesClient::Create(const ProviderInfo& provider,
                                                                 std::string api_key,
                                                                 ClientOptions options) {
  const std::string where = "model provider '" + provider.id + "'";
  const std::string bad_url = "invalid base_url '" + provider.base_url + "' for " + where +
                              ": expected http(s)://host[:port][/path]; fix it in config.toml";
  Endpoint ep;
  std::string_view url = Trim(provider.base_url);
  const size_t sep = url.find("://");
  if (sep == std::string_view::npos) return InvalidArgumentError(bad_url);
  ep.scheme = Lower(url.substr(0, sep));
  if (ep.scheme != "http" && ep.scheme != "https") return InvalidArgumentError(bad_url);
  url.remove_prefix(sep + 3);
  if (url.find_first_of("?#") != std::string_view::npos) {
    return InvalidArgumentError("base_url for " + where +
                                " must not contain '?' or '#'; put parameters in query_params");
  }
  const size_t slash = url.find('/');
  const std::string_view authority = url.substr(0, slash);
  if (authority.find('@') != std::string_view::npos) {
    return InvalidArgumentError("base_url for " + where +
                                " must not contain credentials; use env_key for the API key");
  }
  std::optional<int> port;
  if (!SplitHostPort(authority, ep.host, port)) return InvalidArgumentError(bad_url);
  ep.port = port.value_or(ep.scheme == "https" ? 443 : 80);
  if (slash != std::string_view::npos) {
    std::string_view path = url.substr(slash);
    while (!path.empty() && path.back() == '/') path.remove_suffix(1);
    ep.path_prefix = std::string(path);
  }

  if (HasLineBreak(api_key)) {
    return InvalidArgumentError("the API key for " + where + " contains a line break; fix " +
                                (provider.env_key.empty() ? "it" : provider.env_key));
  }
  std::map<std::string, std::string> headers;
  for (const auto& [name, value] : provider.http_headers) {
    if (HasLineBreak(name) || HasLineBreak(value) || name.empty()) {
      return InvalidArgumentError("http_headers entry '" + name + "' of " + where +
                                  " is not a valid header; fix it in config.toml");
    }
    headers[name] = value;
  }
  for (const auto& [name, var] : provider.env_http_headers) {
    const char* value = Env(var.c_str());
    if (value == nullptr) continue;  // unset variables are skipped, as Codex does
    if (HasLineBreak(name) || HasLineBreak(value) || name.empty()) {
      return InvalidArgumentError("env_http_headers entry '" + name + "' of " + where + " (from $" +
                                  var + ") is not a valid header");
    }
    headers[name] = value;
  }

  // Proxy from the environment, unless NO_PROXY covers the host.
  ProxySetting proxy;
  const char* no_proxy = Env("no_proxy") ? Env("no_proxy") : Env("NO_PROXY");
  if (no_proxy == nullptr || !HostMatchesNoProxy(ep.host, no_proxy)) {
    const std::vector<const char*> vars =
        ep.scheme == "https"
            ? std::vector<const char*>{"https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"}
            : std::vector<const char*>{"http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"};
    for (const char* var : vars) {
      if (const char* value = Env(var)) {
        ASSIGN_OR_RETURN(proxy, ParseProxy(var, value));
        break;
      }
    }
  }
  ep.proxy_host = proxy.host;
  ep.proxy_port = proxy.port;

  // CA certificates: explicit file, $SSL_CERT_FILE, $SSL_CERT_DIR, system bundle.
  std::string ca_file;
  std::string ca_dir;
  std::error_code ec;
  if (!options.ca_cert_file.empty()) {
    ca_file = options.ca_cert_file;
  } else if (const char* f = Env("SSL_CERT_FILE")) {
    ca_file = f;
  } else if (const char* d = Env("SSL_CERT_DIR")) {
    ca_dir = d;
    if (!std::filesystem::is_directory(ca_dir, ec)) {
      return InvalidArgumentError("SSL_CERT_DIR names '" + ca_dir +
                                  "', which is not a directory; fix or unset it");
    }
  } else if (std::filesystem::exists(kSystemCaFile, ec)) {
    ca_file = kSystemCaFile;
  }
  if (!ca_file.empty() && !std::filesystem::is_regular_file(ca_file, ec)) {
    return InvalidArgumentError("CA certificate file '" + ca_file +
                                "' (SSL_CERT_FILE) does not exist; fix or unset SSL_CERT_FILE");
  }

  return std::unique_ptr<ResponsesClient>(new ResponsesClient(
      provider, std::move(api_key), std::move(options), std::move(ep), std::move(ca_file),
      std::move(ca_dir), std::move(headers), std::move(proxy.user), std::move(proxy.password)));
}

std::string ResponsesClient::DisplayUrl(std::string_view suffix) const {
  const bool default_port = (endpoint_.scheme == "https" && endpoint_.port == 443) ||
                            (endpoint_.scheme == "http" && endpoint_.port == 80);
  return endpoint_.scheme + "://" + HostForUrl(endpoint_.host) +
         (default_port ? "" : ":" + std::to_string(endpoint_.port)) + endpoint_.path_prefix +
         std::string(suffix);
}

ResponsesClient::Attempt ResponsesClient::RunOnce(std::string_view suffix, std::string_view accept,
                                                  std::string_view body,
                                                  internal::ResponseSink& sink,
                                                  const CancelToken& cancel) {
  const std::string url = DisplayUrl(suffix);  // no query: it may hold secrets
  // One client (and its kept-alive connection) for the requests of a session;
  // a fresh one after any attempt that did not end cleanly.
  if (http_ == nullptr) {
    http_ =
        std::make_unique<httplib::Client>(endpoint_.scheme + "://" + HostForUrl(endpoint_.host) +
                                          ":" + std::to_string(endpoint_.port));
  }
  httplib::Client& cli = *http_;
  const int64_t idle_ms = std::max<int64_t>(provider_.stream_idle_timeout_ms, 1);
  // httplib's own read timeout only backs up our idle timer, so it is longer.
  const auto transport_timeout = milliseconds(idle_ms + 5'000);
  cli.set_connection_timeout(milliseconds(std::max<int64_t>(options_.connect_timeout_ms, 1)));
  cli.set_read_timeout(transport_timeout);
  cli.set_write_timeout(transport_timeout);
  cli.set_keep_alive(true);
  cli.set_url_encode(false);
  cli.set_follow_location(false);
  if (!endpoint_.proxy_host.empty()) {
    cli.set_proxy(endpoint_.proxy_host, endpoint_.proxy_port);
    if (!proxy_user_.empty()) cli.set_proxy_basic_auth(proxy_user_, proxy_password_);
  }
  if (endpoint_.scheme == "https") {
    cli.enable_server_certificate_verification(true);
    if (!ca_file_.empty() || !ca_dir_.empty()) cli.set_ca_cert_path(ca_file_, ca_dir_);
  }

  httplib::Request req;
  req.method = "POST";
  req.path = endpoint_.path_prefix + std::string(suffix) + query_;
  req.body = std::string(body);
  for (const auto& [name, value] : headers_) req.set_header(name, value);
  req.set_header("Content-Type", "application/json");
  req.set_header("Accept", std::string(accept));
  if (accept == "text/event-stream") req.set_header("Accept-Encoding", "identity");
  req.set_header("User-Agent", options_.user_agent);
  if (!options_.originator.empty()) req.set_header("originator", options_.originator);
  if (!options_.session_id.empty()) {
    // session_id as earlier Codex versions send it; session-id and thread-id
    // as 0.169 does (../shared/reference/codex-0.169/requests).
    req.set_header("session_id", options_.session_id);
    req.set_header("session-id", options_.session_id);
    req.set_header("thread-id", options_.session_id);
  }
  req.set_header("x-client-request-id", request_id_);
  if (!api_key_.empty()) req.set_header("Authorization", "Bearer " + api_key_);

  // State shared with the worker; guarded by `mu` except `stop`.
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::string> chunks;
  int status = -1;
  std::string retry_after;
  std::string error_body;
  bool done = false;
  httplib::Error error = httplib::Error::Success;
  std::atomic<bool> stop{false};

  req.response_handler = [&](const httplib::Response& res) {
    std::lock_guard<std::mutex> lock(mu);
    status = res.status;
    retry_after = res.get_header_value("Retry-After");
    cv.notify_all();
    return !stop.load();
  };
  req.content_receiver = [&](const char* data, size_t len, uint64_t, uint64_t) {
    if (stop.load()) return false;
    std::lock_guard<std::mutex> lock(mu);
    if (status / 100 == 2) {
      chunks.emplace_back(data, len);
    } else if (error_body.size() < kMaxErrorBody) {
      error_body.append(data, std::min(len, kMaxErrorBody - error_body.size()));
    }
    cv.notify_all();
    return true;
  };

  std::thread worker([&] {
    httplib::Response res;
    httplib::Error err = httplib::Error::Success;
    try {
      cli.send(req, res, err);
    } catch (...) {
      err = httplib::Error::Unknown;
    }
    std::lock_guard<std::mutex> lock(mu);
    if (status < 0 && res.status > 0) status = res.status;
    error = err;
    done = true;
    cv.notify_all();
  });

  // Consume on this thread until the exchange ends, is cancelled, goes idle
  // or the sink refuses; then make sure the worker stops and is joined.
  bool cancelled = false;
  bool idle = false;
  Status sink_error;
  auto last_activity = Clock::now();
  int seen_status = -1;
  {
    std::deque<std::string> batch;
    bool finished = false;
    while (!finished) {
      {
        std::unique_lock<std::mutex> lock(mu);
        cv.wait_for(lock, kPollInterval,
                    [&] { return !chunks.empty() || done || status != seen_status; });
        batch.swap(chunks);
        finished = done;
        if (status != seen_status) {
          seen_status = status;
          last_activity = Clock::now();
        }
      }
      if (cancel.cancelled()) {
        cancelled = true;
        break;
      }
      if (!batch.empty()) last_activity = Clock::now();
      for (const std::string& chunk : batch) {
        sink_error = sink.Consume(chunk);
        if (!sink_error.ok()) break;
      }
      batch.clear();
      if (!sink_error.ok()) break;
      if (!finished && Clock::now() - last_activity > milliseconds(idle_ms)) {
        idle = true;
        break;
      }
    }
  }
  stop.store(true);
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu);
      if (done) break;
    }
    cli.stop();  // shuts the socket down under the worker's feet
    std::unique_lock<std::mutex> lock(mu);
    cv.wait_for(lock, kPollInterval, [&] { return done; });
  }
  worker.join();
  const long verify_result = cli.get_openssl_verify_result();
  // Keep the connection only after an exchange that ended cleanly.
  if (cancelled || idle || !sink_error.ok() || error != httplib::Error::Success ||
      status / 100 != 2) {
    http_.reset();
  }

  Attempt a;
  if (cancelled) {
    a.status = CancelledError("request cancelled");
    return a;
  }
  if (!sink_error.ok()) {
    a.status = sink_error;
    return a;
  }

  if (status / 100 == 2) {
    if (idle && !sink.terminal()) {
      a.status =
          UnavailableError("idle timeout waiting for SSE").WithReason(StatusReason::kStreamClosed);
      a.retry = !sink.delivered();
      return a;
    }
    a.status = sink.Finish(error == httplib::Error::Success || idle);
    a.retry = !a.status.ok() && a.status.code() == StatusCode::kUnavailable &&
              a.status.reason() == StatusReason::kStreamClosed && !sink.delivered();
    return a;
  }
  if (status < 0) {
    if (idle) {
      a.status = UnavailableError("idle timeout waiting for a response from " + url)
                     .WithReason(StatusReason::kTransport);
      a.retry = true;
      return a;
    }
    if (error == httplib::Error::SSLServerVerification) {
      const long verify = verify_result;
      const std::string hint =
          verify != 0 ? std::string(X509_verify_cert_error_string(verify)) +
                            "; if you use a private CA, set SSL_CERT_FILE to its certificate "
                            "bundle"
                      : "the certificate is not valid for host " + endpoint_.host +
                            "; check base_url in config.toml";
      a.status = UnavailableError("TLS certificate verification failed for " + url + ": " + hint)
                     .WithReason(StatusReason::kTls);
      return a;
    }
    if (error == httplib::Error::SSLLoadingCerts) {
      a.status = InvalidArgumentError("cannot load CA certificates from '" +
                                      (ca_file_.empty() ? ca_dir_ : ca_file_) +
                                      "'; fix SSL_CERT_FILE / SSL_CERT_DIR");
      return a;
    }
    a.status = UnavailableError("cannot reach " + url + ": " + TransportErrorText(error) +
                                "; check base_url in config.toml or your network")
                   .WithReason(StatusReason::kTransport);
    a.retry = true;
    return a;
  }

  const ServerError server = ParseServerError(error_body);
  const std::string http = "HTTP " + std::to_string(status);
  if (status == 401 || status == 403) {
    if (provider_.env_key.empty()) {
      a.status = UnauthenticatedError("the server refused the request (" + http +
                                      ") and model provider '" + provider_.id +
                                      "' sends no API key; set env_key in config.toml");
    } else {
      a.status = UnauthenticatedError("the API key was rejected (" + http + "); check " +
                                      provider_.env_key);
    }
    return a;
  }
  if (server.code == "context_length_exceeded" || server.code == "insufficient_quota" ||
      server.code == "usage_not_included") {
    a.status = ClassifyResponseError(server.code, server.message);
    return a;
  }
  const std::string detail = server.message.empty() ? "" : ": " + server.message;
  if (status == 429) {
    a.status = ResourceExhaustedError("rate limited by " + url + " (" + http + ")" + detail)
                   .WithReason(StatusReason::kRateLimitExceeded);
    std::optional<long long> ms = ParseRetryAfterHeader(retry_after);
    if (!ms) ms = ParseRetryAfterMs(server.message);
    if (ms) {
      a.retry_after_ms = std::min(*ms, kMaxRetryAfterMs);
      a.status.WithRetryAfterMs(a.retry_after_ms);
    }
    a.retry = true;
    return a;
  }
  if (status >= 500) {
    a.status = UnavailableError("server error from " + url + " (" + http + ")" + detail)
                   .WithReason(StatusReason::kServerError);
    a.retry = true;
    return a;
  }
  if (status >= 400) {
    a.status = InvalidArgumentError("the server rejected the request (" + http + ")" + detail)
                   .WithReason(StatusReason::kRejectedByServer);
    return a;
  }
  a.status = UnavailableError("unexpected " + http + " from " + url)
                 .WithReason(StatusReason::kServerError);
  return a;
}

Status ResponsesClient::Run(std::string_view suffix, std::string_view accept, std::string_view body,
                            internal::ResponseSink& sink, StreamObserver* observer,
                            const CancelToken& cancel) {
  const int max_retries = std::max(0, provider_.request_max_retries);
  request_id_ = NewUuidV7();  // x-client-request-id: one per request, kept across its retries
  for (int attempt = 0;; ++attempt) {
    if (cancel.cancelled()) return CancelledError("request cancelled");
    sink.Reset();
    Attempt a = RunOnce(suffix, accept, body, sink, cancel);
    if (!a.retry) return a.status;
    if (attempt >= max_retries) {
      // Already retried here: callers must not retry again on top.
      return a.status.WithReason(StatusReason::kRetriesExhausted);
    }
    const int n = attempt + 1;
    const long long delay =
        a.retry_after_ms > 0 ? a.retry_after_ms : BackoffMs(options_.backoff_base_ms, n);
    if (observer != nullptr) {
      observer->OnRetry("Reconnecting " + std::to_string(n) + "/" + std::to_string(max_retries) +
                        "\u2026 (" + a.status.message() + ")");
    }
    if (!SleepUnlessCancelled(delay, cancel)) return CancelledError("request cancelled");
  }
}

namespace {

class StreamSinkImpl : public internal::ResponseSink {
 public:
  explicit StreamSinkImpl(StreamObserver& observer) : observer_(observer) {}
  void Reset() override {
    stream_ = std::make_unique<ResponseStream>(observer_);
    response_.reset();
  }
  Status Consume(std::string_view bytes) override { return stream_->Feed(bytes); }
  Status Finish(bool) override {
    Result<ModelResponse> r = stream_->Finish();
    if (!r.ok()) return r.status();
    response_ = std::move(r).value();
    return OkStatus();
  }
  bool delivered() const override { return stream_ != nullptr && stream_->delivered(); }
  bool terminal() const override { return stream_ != nullptr && stream_->terminal(); }
  ModelResponse TakeResponse() { return std::move(*response_); }

 private:
  StreamObserver& observer_;
  std::unique_ptr<ResponseStream> stream_;
  std::optional<ModelResponse> response_;
};

class BodySink : public internal::ResponseSink {
 public:
  void Reset() override { body_.clear(); }
  Status Consume(std::string_view bytes) override {
    if (body_.size() + bytes.size() > kMaxCompactBody) {
      return ResourceExhaustedError("the compact response is larger than " +
                                    std::to_string(kMaxCompactBody >> 20) + " MiB");
    }
    body_.append(bytes);
    return OkStatus();
  }
  Status Finish(bool transport_ok) override {
    if (!transport_ok) {
      return UnavailableError("connection closed while reading the compact response")
          .WithReason(StatusReason::kStreamClosed);
    }
    if (!nlohmann::json::accept(body_)) {
      return UnavailableError("the compact endpoint returned a body that is not JSON")
          .WithReason(StatusReason::kServerError);
    }
    return OkStatus();
  }
  bool delivered() const override { return false; }
  bool terminal() const override { return false; }
  std::string TakeBody() { return std::move(body_); }

 private:
  std::string body_;
};

}  // namespace

Result<ModelResponse> ResponsesClient::Stream(std::string_view request_body,
                                              StreamObserver& observer, const CancelToken& cancel) {
  StreamSinkImpl sink(observer);
  RETURN_IF_ERROR(Run("/responses", "text/event-stream", request_body, sink, &observer, cancel));
  return sink.TakeResponse();
}

Result<std::string> ResponsesClient::Compact(std::string_view request_body,
                                             const CancelToken& cancel) {
  BodySink sink;
  RETURN_IF_ERROR(
      Run("/responses/compact", "application/json", request_body, sink, nullptr, cancel));
  return sink.TakeBody();
}

}  // namespace codex::core
