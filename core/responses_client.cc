// The Responses client: the connection, the request, one exchange on a worker
// thread, and the retry loop. Where requests go (base_url, proxy, CA) is
// core/http_endpoint.cc; what a failed reply means and how long to wait before
// a retry is core/http_errors.cc.
#include "core/responses_client.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>
#include <utility>

#include "core/http_client.h"
#include "core/http_errors.h"
#include "core/model_client.h"
#include "core/response_stream.h"
#include "core/retry_policy.h"
#include "core/uuid.h"

namespace codex::core {

using http_internal::AttemptResult;
using http_internal::CaLocation;
using http_internal::ClassifyHttpError;
using http_internal::Env;
using http_internal::FindCaCertificates;
using http_internal::HasLineBreak;
using http_internal::HostForUrl;
using http_internal::ParseBaseUrl;
using http_internal::PercentEncode;
using http_internal::ProxyFromEnvironment;
using http_internal::ProxySetting;

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr milliseconds kPollInterval{50};
constexpr size_t kMaxErrorBody = 64 * 1024;
constexpr size_t kMaxCompactBody = 256u << 20;

// Sleeps up to `ms`, waking early when cancelled; false when cancelled.
bool SleepUnlessCancelled(long long ms, const CancelToken& cancel) {
  const auto until = Clock::now() + milliseconds(ms);
  while (Clock::now() < until) {
    if (cancel.cancelled()) return false;
    std::this_thread::sleep_for(std::min<Clock::duration>(kPollInterval, until - Clock::now()));
  }
  return !cancel.cancelled();
}

}  // namespace

namespace internal {

// Consumes the body of a successful reply on the calling thread.
class ResponseSink {
 public:
  virtual ~ResponseSink() = default;
  virtual void Reset() = 0;  // a new attempt starts
  virtual Status Consume(std::string_view bytes) = 0;
  // What was received together has been consumed (StreamObserver::OnBatchEnd).
  virtual Status EndOfBatch() { return OkStatus(); }
  // The body ended; `transport_ok` is false when the connection broke.
  virtual Status Finish(bool transport_ok) = 0;
  virtual bool delivered() const = 0;  // no silent retry once true
  virtual bool terminal() const = 0;   // the outcome is known even if the body is cut
};

// What one HTTP exchange produced, before it is classified.
struct Exchange {
  int status = -1;          // the HTTP status; -1 when no response arrived
  std::string retry_after;  // the Retry-After header
  std::string error_body;   // the start (kMaxErrorBody) of a body that is not 2xx
  HttpError error = HttpError::kSuccess;
  bool cancelled = false;
  bool idle = false;         // nothing arrived for the idle timeout
  Status sink_error;         // the sink refused the body
  std::string verify_error;  // HttpConnection::verify_error()
  std::string detail;        // HttpConnection::detail()
};

// Sends `req` on `cli` from a worker thread and feeds a 2xx body to `sink` on
// this thread until the exchange ends, is cancelled, goes idle for `idle_ms`
// or the sink refuses; the worker is always stopped and joined before this
// returns.
// Long (~95 lines) on purpose: the worker's callbacks, the consumer loop and the
// stop-and-join handshake share one mutex, condition variable and queue whose
// lifetime must end only after the join; one scope keeps that visible.
Exchange RunExchange(HttpConnection& cli, const HttpRequest& req, ResponseSink& sink,
                     const CancelToken& cancel, int64_t idle_ms) {
  Exchange x;
  // State shared with the worker; guarded by `mu` except `stop` (and `x` once
  // the worker is joined).
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::string> chunks;
  bool done = false;
  std::atomic<bool> stop{false};

  auto on_head = [&](const HttpResponseHead& res) {
    std::lock_guard<std::mutex> lock(mu);
    x.status = res.status;
    x.retry_after = res.Header("Retry-After");
    cv.notify_all();
    return !stop.load();
  };
  auto on_body = [&](std::string_view data) {
    if (stop.load()) return false;
    std::lock_guard<std::mutex> lock(mu);
    if (x.status / 100 == 2) {
      chunks.emplace_back(data);
    } else if (x.error_body.size() < kMaxErrorBody) {
      x.error_body.append(data.substr(0, kMaxErrorBody - x.error_body.size()));
    }
    cv.notify_all();
    return true;
  };

  std::thread worker([&] {
    HttpError err = HttpError::kSuccess;
    try {
      err = cli.Send(req, on_head, on_body);
    } catch (...) {
      err = HttpError::kRead;
    }
    std::lock_guard<std::mutex> lock(mu);
    x.error = err;
    done = true;
    cv.notify_all();
  });

  // Consume on this thread until the exchange ends, is cancelled, goes idle
  // or the sink refuses; then make sure the worker stops and is joined.
  auto last_activity = Clock::now();
  int seen_status = -1;
  {
    std::deque<std::string> batch;
    bool finished = false;
    while (!finished) {
      {
        std::unique_lock<std::mutex> lock(mu);
        cv.wait_for(lock, kPollInterval,
                    [&] { return !chunks.empty() || done || x.status != seen_status; });
        batch.swap(chunks);
        finished = done;
        if (x.status != seen_status) {
          seen_status = x.status;
          last_activity = Clock::now();
        }
      }
      if (cancel.cancelled()) {
        x.cancelled = true;
        break;
      }
      if (!batch.empty()) last_activity = Clock::now();
      for (const std::string& chunk : batch) {
        x.sink_error = sink.Consume(chunk);
        if (!x.sink_error.ok()) break;
      }
      if (!batch.empty()) {
        // Even after a refused chunk: what was decoded before it is kept.
        Status end = sink.EndOfBatch();
        if (x.sink_error.ok()) x.sink_error = std::move(end);
      }
      batch.clear();
      if (!x.sink_error.ok()) break;
      if (!finished && Clock::now() - last_activity > milliseconds(idle_ms)) {
        x.idle = true;
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
    cli.Stop();  // shuts the socket down under the worker's feet
    std::unique_lock<std::mutex> lock(mu);
    cv.wait_for(lock, kPollInterval, [&] { return done; });
  }
  worker.join();
  x.verify_error = cli.verify_error();
  x.detail = cli.detail();
  return x;
}

}  // namespace internal

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
  ASSIGN_OR_RETURN(Endpoint ep, ParseBaseUrl(provider));
  const std::string where = "model provider '" + provider.id + "'";
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

  ASSIGN_OR_RETURN(ProxySetting proxy, ProxyFromEnvironment(ep));
  ep.proxy_host = proxy.host;
  ep.proxy_port = proxy.port;
  ASSIGN_OR_RETURN(CaLocation ca, FindCaCertificates(options.ca_cert_file));

  return std::unique_ptr<ResponsesClient>(new ResponsesClient(
      provider, std::move(api_key), std::move(options), std::move(ep), std::move(ca.file),
      std::move(ca.dir), std::move(headers), std::move(proxy.user), std::move(proxy.password)));
}

std::string ResponsesClient::DisplayUrl(std::string_view suffix) const {
  const bool default_port = (endpoint_.scheme == "https" && endpoint_.port == 443) ||
                            (endpoint_.scheme == "http" && endpoint_.port == 80);
  return endpoint_.scheme + "://" + HostForUrl(endpoint_.host) +
         (default_port ? "" : ":" + std::to_string(endpoint_.port)) + endpoint_.path_prefix +
         std::string(suffix);
}

HttpConnection& ResponsesClient::Connection() {
  // One connection kept alive for the requests of a session; a fresh one
  // after any attempt that did not end cleanly.
  if (http_ == nullptr) {
    HttpTarget t;
    t.scheme = endpoint_.scheme;
    t.host = endpoint_.host;
    t.port = endpoint_.port;
    t.proxy_host = endpoint_.proxy_host;
    t.proxy_port = endpoint_.proxy_port;
    t.proxy_user = proxy_user_;
    t.proxy_password = proxy_password_;
    t.ca_file = ca_file_;
    t.ca_dir = ca_dir_;
    t.connect_timeout_ms = std::max<int64_t>(options_.connect_timeout_ms, 1);
    // The socket's own timeout only backs up our idle timer, so it is longer.
    t.io_timeout_ms = IdleTimeoutMs() + 5'000;
    http_ = std::make_unique<HttpConnection>(std::move(t));
  }
  return *http_;
}

HttpRequest ResponsesClient::BuildRequest(std::string_view suffix, std::string_view accept,
                                          std::string_view body) const {
  HttpRequest req;
  req.method = "POST";
  req.path = endpoint_.path_prefix + std::string(suffix) + query_;
  req.body = std::string(body);
  for (const auto& [name, value] : headers_) req.headers.emplace_back(name, value);
  req.headers.emplace_back("Content-Type", "application/json");
  req.headers.emplace_back("Accept", std::string(accept));
  if (accept == "text/event-stream") req.headers.emplace_back("Accept-Encoding", "identity");
  req.headers.emplace_back("User-Agent", options_.user_agent);
  if (!options_.originator.empty()) req.headers.emplace_back("originator", options_.originator);
  if (!options_.session_id.empty()) {
    // session_id as earlier Codex versions send it; session-id and thread-id
    // as 0.169 does (the captured requests of tests/data/reference/codex-0.169/README.md).
    req.headers.emplace_back("session_id", options_.session_id);
    req.headers.emplace_back("session-id", options_.session_id);
    req.headers.emplace_back("thread-id", thread_id_.empty() ? options_.session_id : thread_id_);
    if (!thread_id_.empty()) {
      req.headers.emplace_back("x-openai-subagent", "collab_spawn");
      req.headers.emplace_back("x-codex-parent-thread-id", options_.session_id);
    }
  }
  req.headers.emplace_back("x-client-request-id", request_id_);
  if (!api_key_.empty()) req.headers.emplace_back("Authorization", "Bearer " + api_key_);
  return req;
}

int64_t ResponsesClient::IdleTimeoutMs() const {
  return std::max<int64_t>(provider_.stream_idle_timeout_ms, 1);
}

AttemptResult ResponsesClient::RunOnce(std::string_view suffix, std::string_view accept,
                                       std::string_view body, internal::ResponseSink& sink,
                                       const CancelToken& cancel) {
  const std::string url = DisplayUrl(suffix);  // no query: it may hold secrets
  HttpConnection& cli = Connection();
  const HttpRequest req = BuildRequest(suffix, accept, body);
  const internal::Exchange x = internal::RunExchange(cli, req, sink, cancel, IdleTimeoutMs());
  // Keep the connection only after an exchange that ended cleanly.
  if (x.cancelled || x.idle || !x.sink_error.ok() || x.error != HttpError::kSuccess ||
      x.status / 100 != 2) {
    http_.reset();
  }
  return Classify(x, sink, url);
}

AttemptResult ResponsesClient::Classify(const internal::Exchange& x, internal::ResponseSink& sink,
                                        const std::string& url) const {
  AttemptResult a;
  if (x.cancelled) {
    a.status = CancelledError("request cancelled");
    return a;
  }
  if (!x.sink_error.ok()) {
    a.status = x.sink_error;
    return a;
  }

  if (x.status / 100 == 2) {
    if (x.idle && !sink.terminal()) {
      a.status =
          UnavailableError("idle timeout waiting for SSE").WithReason(core::reason::kStreamClosed);
      a.retry = IsRetryable(a.status) && !sink.delivered();
      return a;
    }
    a.status = sink.Finish(x.error == HttpError::kSuccess || x.idle);
    // Only a stream that ended early is retried here; a response.failed is
    // the server's verdict, passed up (the turn loop retries it).
    a.retry = IsRetryable(a.status) && a.status.reason() == core::reason::kStreamClosed &&
              !sink.delivered();
    return a;
  }
  if (x.status < 0) {
    if (x.idle) {
      a.status = UnavailableError("idle timeout waiting for a response from " + url)
                     .WithReason(core::reason::kTransport);
      a.retry = IsRetryable(a.status);
      return a;
    }
    if (x.error == HttpError::kTlsVerification) {
      const std::string hint =
          !x.verify_error.empty()
              ? x.verify_error +
                    "; if you use a private CA, set SSL_CERT_FILE to its certificate bundle"
              : "the certificate is not valid for host " + endpoint_.host +
                    "; check base_url in config.toml";
      a.status = UnavailableError("TLS certificate verification failed for " + url + ": " + hint)
                     .WithReason(core::reason::kTls);
      return a;
    }
    if (x.error == HttpError::kTlsLoadingCerts) {
      a.status = InvalidArgumentError("cannot load CA certificates from '" +
                                      (ca_file_.empty() ? ca_dir_ : ca_file_) +
                                      "'; fix SSL_CERT_FILE / SSL_CERT_DIR");
      return a;
    }
    if (x.error == HttpError::kTlsLibrary) {
      a.status = FailedPreconditionError(x.detail);
      return a;
    }
    a.status = UnavailableError("cannot reach " + url + ": " + HttpErrorText(x.error) +
                                (x.detail.empty() ? "" : " (" + x.detail + ")") +
                                "; check base_url in config.toml or your network")
                   .WithReason(core::reason::kTransport);
    a.retry = IsRetryable(a.status);
    return a;
  }
  return ClassifyHttpError(x.status, x.error_body, x.retry_after, url, provider_);
}

Status ResponsesClient::Run(std::string_view suffix, std::string_view accept, std::string_view body,
                            internal::ResponseSink& sink, StreamObserver* observer,
                            const CancelToken& cancel) {
  const int max_retries = std::max(0, provider_.request_max_retries);
  // x-client-request-id: the thread (session) id, as Codex 0.169 sends it
  // (captured in docs/codex-compat.md); a fresh id only without a session.
  request_id_ = !thread_id_.empty()           ? thread_id_
                : options_.session_id.empty() ? NewUuidV7()
                                              : options_.session_id;
  for (int attempt = 0;; ++attempt) {
    if (cancel.cancelled()) return CancelledError("request cancelled");
    sink.Reset();
    AttemptResult a = RunOnce(suffix, accept, body, sink, cancel);
    if (!a.retry) return a.status;
    if (attempt >= max_retries) {
      // Already retried here: callers must not retry again on top.
      return a.status.WithReason(core::reason::kRetriesExhausted);
    }
    const int n = attempt + 1;
    const long long delay = RetryDelayMs(a.retry_after_ms, options_.backoff_base_ms, n);
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
  Status EndOfBatch() override { return observer_.OnBatchEnd(); }
  Status Finish(bool) override {
    Result<ModelResponse> r = stream_->Finish();
    // An event the parser completed only now (no blank line after it).
    RETURN_IF_ERROR(observer_.OnBatchEnd());
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
          .WithReason(core::reason::kStreamClosed);
    }
    if (!nlohmann::json::accept(body_)) {
      return UnavailableError("the compact endpoint returned a body that is not JSON")
          .WithReason(core::reason::kServerError);
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
