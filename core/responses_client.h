// ResponsesClient: the ModelClient for the OpenAI Responses API over HTTP(S).
//
// Stream() POSTs the request body to {base_url}/responses (plus the
// provider's query_params) and parses the SSE reply as it arrives; Compact()
// POSTs to {base_url}/responses/compact and returns the JSON body. Headers:
// Authorization: Bearer <key> (when the key is non-empty), Content-Type:
// application/json, Accept, originator, session_id / session-id / thread-id
// (when set), x-client-request-id (the session id, as Codex
// 0.169 sends it; a new UUID per call when there is no session), the provider's http_headers, and
// env_http_headers whose variable is set. The connection is kept alive and reused by the next call
// when the server allows it and the previous exchange ended cleanly.
//
// Retries (inside the call, only while nothing has been delivered to the
// observer for the attempt): transport errors, 5xx, 429 (Retry-After
// honoured) and streams that end or go idle before any delivery, up to
// provider.request_max_retries times, with backoff 200 ms * 2^(n-1) +-10%.
// observer.OnRetry("Reconnecting n/m… (why)") precedes each retry. Errors:
//   401/403                  -> kUnauthenticated ("the API key was rejected …; check <env_key>")
//   other 4xx                -> kInvalidArgument with the server's message (a body whose
//                               error code is context_length_exceeded, insufficient_quota,
//                               … is classified like response.failed)
//   5xx after retries        -> kUnavailable reason "server_error"
//   429 after retries        -> kResourceExhausted reason "rate_limit_exceeded"
//   unreachable after retries-> kUnavailable reason "transport" ("cannot reach <url>: …")
//   TLS verification failure -> kUnavailable reason "tls" (not retried)
//   drop/idle after delivery -> kUnavailable reason "stream_closed"
//   CancelToken set          -> kCancelled (noticed within ~50 ms once connected)
// and everything ResponseStream classifies (see response_stream.h).
//
// Threads: each attempt runs the blocking HTTP exchange on a worker thread
// that hands received bytes over a queue; observer callbacks happen on the
// calling thread. The worker is always joined before a call returns. One
// call at a time per client (thread-compatible).
//
// TLS: certificates and host names are verified against, in order,
// ClientOptions::ca_cert_file, $SSL_CERT_FILE, $SSL_CERT_DIR, or the system
// store (/etc/ssl/certs/ca-certificates.crt). Proxies: https_proxy /
// HTTPS_PROXY (for https URLs), http_proxy / HTTP_PROXY (for http URLs), then
// all_proxy / ALL_PROXY; NO_PROXY / no_proxy ("*", hosts, domain suffixes)
// bypasses them. Only http:// proxies are supported. The API key, header
// values and proxy credentials never appear in messages.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"
#include "core/config.h"
#include "core/http_endpoint.h"
#include "core/model_client.h"

namespace codex::core {

class HttpConnection;
struct HttpRequest;

namespace internal {
class ResponseSink;
struct Exchange;
}  // namespace internal
namespace http_internal {
struct AttemptResult;
}  // namespace http_internal

struct ClientOptions {
  std::string originator = "codex_exec";  // the "originator" header
  std::string session_id;                 // the "session_id" header; "" = not sent
  std::string user_agent = "codex-cpp/0.1";
  int64_t connect_timeout_ms = 10'000;
  int64_t backoff_base_ms = 200;  // first retry delay; doubles per retry
  std::string ca_cert_file;       // overrides $SSL_CERT_FILE and the system store
};

class ResponsesClient : public ModelClient {
 public:
  // Fails with kInvalidArgument when base_url is not http(s)://host[:port][/path],
  // a proxy variable is malformed, or a named CA file/dir does not exist.
  static Result<std::unique_ptr<ResponsesClient>> Create(const ProviderInfo& provider,
                                                         std::string api_key,
                                                         ClientOptions options = {});
  ~ResponsesClient() override;

  Result<ModelResponse> Stream(std::string_view request_body, StreamObserver& observer,
                               const CancelToken& cancel) override;
  Result<std::string> Compact(std::string_view request_body, const CancelToken& cancel) override;

  const Endpoint& endpoint() const { return endpoint_; }
  // The session the following requests belong to (session_id headers).
  void set_session_id(std::string session_id) { options_.session_id = std::move(session_id); }
  // A sub-agent's requests (core/agent_tools.h), as Codex 0.169 sends them:
  // session ids of the parent, thread-id and x-client-request-id of the agent,
  // `x-openai-subagent: collab_spawn` and `x-codex-parent-thread-id`.
  void set_subagent(std::string parent_id, std::string thread_id) {
    options_.session_id = std::move(parent_id);
    thread_id_ = std::move(thread_id);
  }

 private:
  ResponsesClient(ProviderInfo provider, std::string api_key, ClientOptions options,
                  Endpoint endpoint, std::string ca_file, std::string ca_dir,
                  std::map<std::string, std::string> headers, std::string proxy_user,
                  std::string proxy_password);

  // POSTs to {base_url}{suffix} with retries; `sink` consumes a 2xx body.
  Status Run(std::string_view suffix, std::string_view accept, std::string_view body,
             internal::ResponseSink& sink, StreamObserver* observer, const CancelToken& cancel);
  // One attempt: connect (or reuse the kept-alive connection), send, receive.
  http_internal::AttemptResult RunOnce(std::string_view suffix, std::string_view accept,
                                       std::string_view body, internal::ResponseSink& sink,
                                       const CancelToken& cancel);
  // The kept-alive client, made anew after an exchange that did not end cleanly.
  HttpConnection& Connection();
  HttpRequest BuildRequest(std::string_view suffix, std::string_view accept,
                           std::string_view body) const;
  // What an exchange came to: a cancel, a sink error, a 2xx body's end, a
  // transport failure, else the HTTP error (http_errors.h).
  http_internal::AttemptResult Classify(const internal::Exchange& exchange,
                                        internal::ResponseSink& sink, const std::string& url) const;
  int64_t IdleTimeoutMs() const;
  std::string DisplayUrl(std::string_view suffix) const;

  ProviderInfo provider_;
  std::string api_key_;
  ClientOptions options_;
  Endpoint endpoint_;
  std::string ca_file_;
  std::string ca_dir_;
  std::map<std::string, std::string> headers_;  // provider + env headers, resolved at Create
  std::string proxy_user_;
  std::string proxy_password_;
  std::string query_;                     // "?k=v&..." or ""
  std::string request_id_;                // x-client-request-id of the current call
  std::string thread_id_;                 // a sub-agent's own id ("" = the session's)
  std::unique_ptr<HttpConnection> http_;  // kept-alive connection; null = connect anew
};

}  // namespace codex::core
