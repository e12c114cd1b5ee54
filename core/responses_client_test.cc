// ResponsesClient against real loopback HTTP servers (httplib::Server on
// 127.0.0.1, random ports): retries, errors, drops, idle timeout,
// cancellation, headers, query parameters and proxies.
#include "core/responses_client.h"

#include <httplib.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/model_client.h"
#include "testing/loopback_http_server.h"
#include "testing/scoped_env.h"

namespace codex::core {
namespace {

using namespace std::chrono_literals;
using codex::testing::ScopedEnv;

std::string Ev(const std::string& json) { return "event: x\ndata: " + json + "\n\n"; }

const std::string kCreated = Ev(R"({"type":"response.created","response":{"id":"resp_t"}})");
const std::string kDelta =
    Ev(R"({"type":"response.output_text.delta","item_id":"msg_1","delta":"Hello"})");
const std::string kDone = Ev(
    R"({"type":"response.output_item.done","item":{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"output_text","text":"Hello"}]}})");
const std::string kCompleted = Ev(
    R"({"type":"response.completed","response":{"id":"resp_t","usage":{"input_tokens":10,"input_tokens_details":{"cached_tokens":4},"output_tokens":3,"output_tokens_details":{"reasoning_tokens":1},"total_tokens":13}}})");
const std::string kFullStream = kCreated + kDelta + kDone + kCompleted;

// A loopback server; handlers see `stopping` so stalled ones can end.
class TestServer {
 public:
  TestServer() { REQUIRE(http_.Start()); }
  ~TestServer() {
    stopping = true;
    http_.Stop();
  }
  httplib::Server& server() { return http_.server(); }
  int port() const { return http_.port(); }
  std::string base() const { return http_.base(); }

  void Record(const httplib::Request& req) {
    std::lock_guard<std::mutex> lock(mu_);
    requests_.push_back(req);
  }
  // Answers every request to `path` (recorded) with kFullStream.
  void ServeFullStream(const std::string& path = "/v1/responses");
  std::vector<httplib::Request> requests() {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }
  size_t count() {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_.size();
  }
  // Blocks until `stopping` or 20 s pass (a backstop for a broken client).
  void Stall() {
    for (int i = 0; i < 1000 && !stopping; ++i) std::this_thread::sleep_for(20ms);
  }

  std::atomic<bool> stopping{false};

 private:
  std::mutex mu_;
  std::vector<httplib::Request> requests_;
  codex::testing::LoopbackHttpServer<> http_;  // last: stopped before the state its handlers use
};

void TestServer::ServeFullStream(const std::string& path) {
  server().Post(path, [this](const httplib::Request& req, httplib::Response& res) {
    Record(req);
    res.set_content(kFullStream, "text/event-stream");
  });
}

class Recorder : public StreamObserver {
 public:
  void OnTextDelta(std::string_view, std::string_view delta) override { text += delta; }
  Status OnOutputItemDone(const Item& item) override {
    if (!fail_with.ok()) return fail_with;
    items.push_back(item);
    return OkStatus();
  }
  Status OnBatchEnd() override {
    ++batch_ends;
    items_at_batch_end = items.size();
    return fail_batch_with;
  }
  void OnRetry(std::string_view message) override { retries.emplace_back(message); }

  std::string text;
  std::vector<Item> items;
  std::vector<std::string> retries;
  Status fail_with;
  Status fail_batch_with;
  int batch_ends = 0;
  size_t items_at_batch_end = 0;  // items delivered when the last batch ended
};

// No proxy variables leak in from the environment running the tests.
struct NoProxyEnv {
  ScopedEnv a{"http_proxy", std::nullopt}, b{"HTTP_PROXY", std::nullopt},
      c{"https_proxy", std::nullopt}, d{"HTTPS_PROXY", std::nullopt}, e{"all_proxy", std::nullopt},
      f{"ALL_PROXY", std::nullopt}, g{"no_proxy", std::nullopt}, h{"NO_PROXY", std::nullopt};
};

ProviderInfo Provider(const std::string& base_url) {
  ProviderInfo p;
  p.id = "test";
  p.name = "Test";
  p.base_url = base_url + "/v1";
  p.env_key = "CODEX_TEST_API_KEY";
  return p;
}

std::unique_ptr<ResponsesClient> MakeClient(const ProviderInfo& provider,
                                            std::string key = "sk-test") {
  ClientOptions options;
  options.backoff_base_ms = 20;  // keeps the retry tests quick
  auto client = ResponsesClient::Create(provider, std::move(key), options);
  REQUIRE(client.ok());
  return std::move(client).value();
}

TEST_CASE("ResponsesClient: streams a response; headers and query params arrive") {
  NoProxyEnv no_proxy;
  ScopedEnv env_header("CODEX_TEST_ENV_HEADER", "from-env");
  ScopedEnv unset_header("CODEX_TEST_UNSET_HEADER", std::nullopt);
  TestServer server;
  server.ServeFullStream();
  ProviderInfo provider = Provider(server.base());
  provider.query_params = {{"api-version", "2025-04-01-preview"}, {"x y", "a&b"}};
  provider.http_headers = {{"X-Static", "static-value"}};
  provider.env_http_headers = {{"X-From-Env", "CODEX_TEST_ENV_HEADER"},
                               {"X-Unset", "CODEX_TEST_UNSET_HEADER"}};
  ClientOptions options;
  options.session_id = "0193-session";
  auto client = ResponsesClient::Create(provider, "sk-test", options);
  REQUIRE(client.ok());

  Recorder rec;
  CancelToken cancel;
  const std::string body = R"({"model":"m","input":[],"stream":true})";
  auto r = (*client)->Stream(body, rec, cancel);
  REQUIRE(r.ok());
  REQUIRE(r->response_id == "resp_t");
  REQUIRE(r->usage == TokenUsage{10, 4, 3, 1, 13});
  REQUIRE(r->items.size() == 1);
  REQUIRE(rec.text == "Hello");
  REQUIRE(rec.retries.empty());

  auto reqs = server.requests();
  REQUIRE(reqs.size() == 1);
  const auto& req = reqs[0];
  REQUIRE(req.path == "/v1/responses");
  REQUIRE(req.get_param_value("api-version") == "2025-04-01-preview");
  REQUIRE(req.get_param_value("x y") == "a&b");
  REQUIRE(req.get_header_value("Authorization") == "Bearer sk-test");
  REQUIRE(req.get_header_value("Content-Type") == "application/json");
  REQUIRE(req.get_header_value("Accept") == "text/event-stream");
  REQUIRE(req.get_header_value("X-Static") == "static-value");
  REQUIRE(req.get_header_value("X-From-Env") == "from-env");
  REQUIRE(!req.has_header("X-Unset"));
  REQUIRE(req.get_header_value("originator") == "codex_exec");
  REQUIRE(req.get_header_value("session_id") == "0193-session");
  REQUIRE(req.body == body);
}

TEST_CASE("ResponsesClient: no Authorization header without a key") {
  NoProxyEnv no_proxy;
  TestServer server;
  server.ServeFullStream();
  auto client = MakeClient(Provider(server.base()), "");
  Recorder rec;
  CancelToken cancel;
  REQUIRE(client->Stream("{}", rec, cancel).ok());
  REQUIRE(!server.requests()[0].has_header("Authorization"));
}

TEST_CASE("ResponsesClient: 500 is retried, then the stream succeeds") {
  NoProxyEnv no_proxy;
  TestServer server;
  server.server().Post("/v1/responses", [&](const httplib::Request& req, httplib::Response& res) {
    server.Record(req);
    if (server.count() <= 2) {
      res.status = 500;
      res.set_content(R"({"error":{"message":"boom","type":"server_error"}})", "application/json");
      return;
    }
    res.set_content(kFullStream, "text/event-stream");
  });
  auto client = MakeClient(Provider(server.base()));
  Recorder rec;
  CancelToken cancel;
  auto r = client->Stream("{}", rec, cancel);
  REQUIRE(r.ok());
  REQUIRE(server.count() == 3);
  REQUIRE(rec.retries.size() == 2);
  REQUIRE(rec.retries[0].rfind("Reconnecting 1/4", 0) == 0);
  REQUIRE(rec.retries[1].rfind("Reconnecting 2/4", 0) == 0);
}

TEST_CASE("ResponsesClient: persistent 5xx ends as kUnavailable server_error") {
  NoProxyEnv no_proxy;
  TestServer server;
  server.server().Post("/v1/responses", [&](const httplib::Request& req, httplib::Response& res) {
    server.Record(req);
    res.status = 503;
    res.set_content("upstream overloaded", "text/plain");
  });
  ProviderInfo provider = Provider(server.base());
  provider.request_max_retries = 2;
  auto client = MakeClient(provider);
  Recorder rec;
  CancelToken cancel;
  auto r = client->Stream("{}", rec, cancel);
  REQUIRE(r.status().code() == StatusCode::kUnavailable);
  REQUIRE(r.status().reason() == core::reason::kRetriesExhausted);
  REQUIRE(r.status().message().find("HTTP 503") != std::string::npos);
  REQUIRE(r.status().message().find("upstream overloaded") != std::string::npos);
  REQUIRE(server.count() == 3);
  REQUIRE(rec.retries.size() == 2);
}

TEST_CASE("ResponsesClient: 429 honours Retry-After") {
  NoProxyEnv no_proxy;
  TestServer server;
  std::atomic<bool> always_429{false};
  server.server().Post("/v1/responses", [&](const httplib::Request& req, httplib::Response& res) {
    server.Record(req);
    if (always_429 || server.count() == 1) {
      res.status = 429;
      res.set_header("Retry-After", always_429 ? "3" : "1");
      res.set_content(R"({"error":{"message":"slow down","code":"rate_limit_exceeded"}})",
                      "application/json");
      return;
    }
    res.set_content(kFullStream, "text/event-stream");
  });
  ProviderInfo provider = Provider(server.base());
  {
    auto client = MakeClient(provider);
    Recorder rec;
    CancelToken cancel;
    REQUIRE(client->Stream("{}", rec, cancel).ok());
    REQUIRE(server.count() == 2);
    REQUIRE(rec.retries.size() == 1);
  }
  {
    // Without retries the status carries the server's delay.
    always_429 = true;
    provider.request_max_retries = 0;
    auto client = MakeClient(provider);
    Recorder rec;
    CancelToken cancel;
    auto r = client->Stream("{}", rec, cancel);
    REQUIRE(r.status().code() == StatusCode::kResourceExhausted);
    REQUIRE(r.status().reason() == core::reason::kRetriesExhausted);
    REQUIRE(r.status().retry_after_ms() == 3000);
    REQUIRE(r.status().message().find("slow down") != std::string::npos);
    REQUIRE(server.count() == 3);
  }
}

TEST_CASE("ResponsesClient: a 4xx the client cannot fix by retrying fails at once, classified") {
  struct Row {
    std::string name;
    int status;
    std::string body;
    StatusCode code;
    std::optional<StatusReason> reason;  // none: not asserted
    std::string message;                 // the whole message; "" = not asserted
    std::string message_has;             // a part of it; "" = not asserted
  };
  const std::vector<Row> rows = {
      {"429 insufficient_quota", 429,
       R"({"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}})",
       StatusCode::kResourceExhausted, core::reason::kInsufficientQuota, "", ""},
      // Names the key's variable, never the key.
      {"401", 401, R"({"error":{"message":"Incorrect API key provided"}})",
       StatusCode::kUnauthenticated, std::nullopt,
       "the API key was rejected (HTTP 401); check CODEX_TEST_API_KEY", ""},
      {"other 4xx: kInvalidArgument with the server's message", 400,
       R"({"error":{"message":"Unsupported parameter: 'foo'","type":"invalid_request_error"}})",
       StatusCode::kInvalidArgument, std::nullopt, "", "Unsupported parameter: 'foo'"},
      {"400 context_length_exceeded", 400,
       R"({"error":{"message":"Your input exceeds the context window","code":"context_length_exceeded"}})",
       StatusCode::kResourceExhausted, core::reason::kContextLengthExceeded, "", ""},
  };
  NoProxyEnv no_proxy;
  for (const Row& row : rows) {
    INFO(row.name);
    TestServer server;
    server.server().Post("/v1/responses", [&](const httplib::Request& req, httplib::Response& res) {
      server.Record(req);
      res.status = row.status;
      res.set_content(row.body, "application/json");
    });
    auto client = MakeClient(Provider(server.base()), "sk-wrong-secret");
    Recorder rec;
    CancelToken cancel;
    auto r = client->Stream("{}", rec, cancel);
    CHECK(r.status().code() == row.code);
    if (row.reason) CHECK(r.status().reason() == *row.reason);
    if (!row.message.empty()) CHECK(r.status().message() == row.message);
    if (!row.message_has.empty()) {
      CHECK(r.status().message().find(row.message_has) != std::string::npos);
    }
    CHECK(r.status().message().find("sk-wrong-secret") == std::string::npos);
    CHECK(server.count() == 1);  // not retried
    CHECK(rec.retries.empty());
  }
}

TEST_CASE("ResponsesClient: an unreachable endpoint is kUnavailable after retries") {
  NoProxyEnv no_proxy;
  int port = 0;
  {
    TestServer closed;  // take a free port, then close it
    port = closed.port();
  }
  ProviderInfo provider = Provider("http://127.0.0.1:" + std::to_string(port));
  provider.request_max_retries = 1;
  auto client = MakeClient(provider);
  Recorder rec;
  CancelToken cancel;
  auto r = client->Stream("{}", rec, cancel);
  REQUIRE(r.status().code() == StatusCode::kUnavailable);
  REQUIRE(r.status().reason() == core::reason::kRetriesExhausted);
  REQUIRE(r.status().message().rfind(
              "cannot reach http://127.0.0.1:" + std::to_string(port) + "/v1/responses: ", 0) == 0);
  REQUIRE(r.status().message().find("check base_url in config.toml") != std::string::npos);
  REQUIRE(rec.retries.size() == 1);
}

TEST_CASE("ResponsesClient: a stream dropped after delivery is stream_closed, not retried") {
  NoProxyEnv no_proxy;
  TestServer server;
  server.server().Post("/v1/responses", [&](const httplib::Request& req, httplib::Response& res) {
    server.Record(req);
    res.set_content(kCreated + kDelta + kDone, "text/event-stream");
  });
  auto client = MakeClient(Provider(server.base()));
  Recorder rec;
  CancelToken cancel;
  auto r = client->Stream("{}", rec, cancel);
  REQUIRE(r.status().code() == StatusCode::kUnavailable);
  REQUIRE(r.status().reason() == core::reason::kStreamClosed);
  REQUIRE(r.status().message() == "stream closed before response.completed");
  REQUIRE(rec.items.size() == 1);      // delivered before the drop
  CHECK(rec.items_at_batch_end == 1);  // and its batch ended: an observer holding it commits it
  REQUIRE(server.count() == 1);
}

TEST_CASE("ResponsesClient: every delivered item's batch ends before Stream returns") {
  NoProxyEnv no_proxy;
  TestServer server;
  server.server().Post("/v1/responses", [&](const httplib::Request& req, httplib::Response& res) {
    server.Record(req);
    // The last event without the blank line that ends it: the parser
    // completes it only when the body ends.
    std::string last = kDone;
    while (!last.empty() && last.back() == '\n') last.pop_back();
    res.set_content(kCreated + kDone + last, "text/event-stream");
  });
  auto client = MakeClient(Provider(server.base()));
  Recorder rec;
  CancelToken cancel;
  auto r = client->Stream("{}", rec, cancel);
  INFO(r.status().ToString());
  REQUIRE(rec.items.size() == 2);
  CHECK(rec.batch_ends >= 1);
  CHECK(rec.items_at_batch_end == rec.items.size());
}

TEST_CASE("ResponsesClient: an error ending a batch aborts without retrying") {
  NoProxyEnv no_proxy;
  TestServer server;
  server.ServeFullStream();
  auto client = MakeClient(Provider(server.base()));
  Recorder rec;
  rec.fail_batch_with = DataLossError("cannot commit");
  CancelToken cancel;
  auto r = client->Stream("{}", rec, cancel);
  REQUIRE(r.status().code() == StatusCode::kDataLoss);
  REQUIRE(server.count() == 1);
}

TEST_CASE("ResponsesClient: a connection cut mid-stream is stream_closed") {
  NoProxyEnv no_proxy;
  TestServer server;
  server.server().Post("/v1/responses", [&](const httplib::Request& req, httplib::Response& res) {
    server.Record(req);
    res.set_chunked_content_provider("text/event-stream", [](size_t, httplib::DataSink& sink) {
      const std::string part = kCreated + kDelta;
      sink.write(part.data(), part.size());
      return false;  // abort: the connection is cut
    });
  });
  auto client = MakeClient(Provider(server.base()));
  Recorder rec;
  CancelToken cancel;
  auto r = client->Stream("{}", rec, cancel);
  REQUIRE(r.status().code() == StatusCode::kUnavailable);
  REQUIRE(r.status().reason() == core::reason::kStreamClosed);
  REQUIRE(server.count() == 1);
}

TEST_CASE("ResponsesClient: a stream dropped before any delivery is retried") {
  NoProxyEnv no_proxy;
  TestServer server;
  server.server().Post("/v1/responses", [&](const httplib::Request& req, httplib::Response& res) {
    server.Record(req);
    res.set_content(server.count() == 1 ? kCreated : kFullStream, "text/event-stream");
  });
  auto client = MakeClient(Provider(server.base()));
  Recorder rec;
  CancelToken cancel;
  auto r = client->Stream("{}", rec, cancel);
  REQUIRE(r.ok());
  REQUIRE(server.count() == 2);
  REQUIRE(rec.retries.size() == 1);
  REQUIRE(rec.text == "Hello");
}

TEST_CASE("ResponsesClient: no byte within the idle timeout drops the stream") {
  NoProxyEnv no_proxy;
  TestServer server;
  server.server().Post("/v1/responses", [&](const httplib::Request& req, httplib::Response& res) {
    server.Record(req);
    res.set_chunked_content_provider("text/event-stream", [&](size_t, httplib::DataSink& sink) {
      const std::string part = kCreated + kDelta;
      sink.write(part.data(), part.size());
      server.Stall();
      return false;
    });
  });
  ProviderInfo provider = Provider(server.base());
  provider.stream_idle_timeout_ms = 300;
  auto client = MakeClient(provider);
  Recorder rec;
  CancelToken cancel;
  auto r = client->Stream("{}", rec, cancel);
  REQUIRE(r.status().code() == StatusCode::kUnavailable);
  REQUIRE(r.status().reason() == core::reason::kStreamClosed);
  REQUIRE(r.status().message() == "idle timeout waiting for SSE");
  REQUIRE(rec.text == "Hello");
  REQUIRE(server.count() == 1);
}

TEST_CASE("ResponsesClient: cancellation while the server stalls returns kCancelled") {
  NoProxyEnv no_proxy;
  TestServer server;
  server.server().Post("/v1/responses", [&](const httplib::Request& req, httplib::Response& res) {
    server.Record(req);
    if (req.has_param("stall_headers")) {
      server.Stall();  // never answers
      return;
    }
    res.set_chunked_content_provider("text/event-stream", [&](size_t, httplib::DataSink& sink) {
      sink.write(kDelta.data(), kDelta.size());
      server.Stall();
      return false;
    });
  });
  for (bool before_headers : {false, true}) {
    INFO("before headers: " << before_headers);
    ProviderInfo provider = Provider(server.base());
    if (before_headers) provider.query_params = {{"stall_headers", "1"}};
    auto client = MakeClient(provider);
    Recorder rec;
    CancelToken cancel;
    std::thread canceller([&] {
      std::this_thread::sleep_for(300ms);
      cancel.Cancel();
    });
    auto r = client->Stream("{}", rec, cancel);
    canceller.join();
    REQUIRE(r.status().code() == StatusCode::kCancelled);
    REQUIRE(rec.retries.empty());
    REQUIRE(!server.stopping);  // the server was still stalling: the client gave up by itself
  }
}

TEST_CASE("ResponsesClient: an observer error aborts without retrying") {
  NoProxyEnv no_proxy;
  TestServer server;
  server.ServeFullStream();
  auto client = MakeClient(Provider(server.base()));
  Recorder rec;
  rec.fail_with = DataLossError("cannot commit");
  CancelToken cancel;
  auto r = client->Stream("{}", rec, cancel);
  REQUIRE(r.status().code() == StatusCode::kDataLoss);
  REQUIRE(server.count() == 1);
}

TEST_CASE("ResponsesClient: response.failed in the stream is classified") {
  NoProxyEnv no_proxy;
  TestServer server;
  server.server().Post("/v1/responses", [&](const httplib::Request&, httplib::Response& res) {
    res.set_content(
        kCreated +
            Ev(R"({"type":"response.failed","response":{"id":"r","error":{"code":"rate_limit_exceeded","message":"Please try again in 2.5s."}}})"),
        "text/event-stream");
  });
  auto client = MakeClient(Provider(server.base()));
  Recorder rec;
  CancelToken cancel;
  auto r = client->Stream("{}", rec, cancel);
  REQUIRE(r.status().reason() == core::reason::kRateLimitExceeded);
  REQUIRE(r.status().retry_after_ms() == 2500);
}

TEST_CASE("ResponsesClient: Compact posts JSON and returns the body") {
  NoProxyEnv no_proxy;
  TestServer server;
  const std::string reply =
      R"({"id":"cmp","object":"response.compaction","output":[{"type":"compaction","encrypted_content":"abc"}],"usage":{"input_tokens":1,"output_tokens":1,"total_tokens":2}})";
  std::atomic<bool> not_found{false};
  server.server().Post(
      "/v1/responses/compact", [&](const httplib::Request& req, httplib::Response& res) {
        server.Record(req);
        if (not_found) {
          res.status = 404;
          res.set_content(R"({"error":{"message":"Not found"}})", "application/json");
          return;
        }
        res.set_content(reply, "application/json");
      });
  ProviderInfo provider = Provider(server.base());
  provider.query_params = {{"api-version", "v"}};
  auto client = MakeClient(provider);
  CancelToken cancel;
  auto r = client->Compact(R"({"model":"m","input":[]})", cancel);
  REQUIRE(r.ok());
  REQUIRE(*r == reply);
  auto reqs = server.requests();
  REQUIRE(reqs.size() == 1);
  REQUIRE(reqs[0].path == "/v1/responses/compact");
  REQUIRE(reqs[0].get_header_value("Accept") == "application/json");
  REQUIRE(reqs[0].get_param_value("api-version") == "v");
  REQUIRE(reqs[0].body == R"({"model":"m","input":[]})");

  not_found = true;
  auto missing = client->Compact("{}", cancel);
  REQUIRE(missing.status().code() == StatusCode::kInvalidArgument);
  REQUIRE(missing.status().message().find("HTTP 404") != std::string::npos);
}

TEST_CASE("ResponsesClient::Create rejects bad base URLs and CA files") {
  NoProxyEnv no_proxy;
  for (const char* url : {"ftp://host/v1", "api.openai.com/v1", "http://", "http://h:0/v1",
                          "http://h:99999", "https://user:pw@h/v1", "http://h/v1?x=1"}) {
    INFO(url);
    ProviderInfo p;
    p.id = "bad";
    p.base_url = url;
    auto r = ResponsesClient::Create(p, "", {});
    REQUIRE(r.status().code() == StatusCode::kInvalidArgument);
    REQUIRE(r.status().message().find("base_url") != std::string::npos);
  }
  ProviderInfo ok;
  ok.base_url = "https://api.example.test/v1/";
  auto c = ResponsesClient::Create(ok, "", {});
  REQUIRE(c.ok());
  REQUIRE((*c)->endpoint().port == 443);
  REQUIRE((*c)->endpoint().path_prefix == "/v1");

  ScopedEnv bad_ca("SSL_CERT_FILE", "/nonexistent/ca.pem");
  auto r = ResponsesClient::Create(ok, "", {});
  REQUIRE(r.status().code() == StatusCode::kInvalidArgument);
  REQUIRE(r.status().message().find("SSL_CERT_FILE") != std::string::npos);
}

TEST_CASE("HostMatchesNoProxy") {
  REQUIRE(HostMatchesNoProxy("api.openai.com", "*"));
  REQUIRE(HostMatchesNoProxy("api.openai.com", "localhost, openai.com"));
  REQUIRE(HostMatchesNoProxy("api.openai.com", ".openai.com"));
  REQUIRE(HostMatchesNoProxy("API.OpenAI.com", "*.openai.com"));
  REQUIRE(HostMatchesNoProxy("openai.com", ".openai.com"));
  REQUIRE(HostMatchesNoProxy("127.0.0.1", "127.0.0.1:8080"));
  REQUIRE(HostMatchesNoProxy("::1", "[::1]"));
  REQUIRE(!HostMatchesNoProxy("notopenai.com", "openai.com"));
  REQUIRE(!HostMatchesNoProxy("api.openai.com", ""));
  REQUIRE(!HostMatchesNoProxy("api.openai.com", "example.com,,"));
}

TEST_CASE("ResponsesClient: http_proxy is used, NO_PROXY bypasses it") {
  NoProxyEnv clean;
  // The "proxy" answers requests in absolute form; the origin port is closed,
  // so a success proves the request went through the proxy.
  TestServer proxy;
  proxy.ServeFullStream(".*");
  int closed_port = 0;
  {
    TestServer closed;
    closed_port = closed.port();
  }
  const std::string origin = "http://127.0.0.1:" + std::to_string(closed_port);
  {
    ScopedEnv http_proxy("http_proxy", "http://127.0.0.1:" + std::to_string(proxy.port()));
    auto client = MakeClient(Provider(origin));
    REQUIRE(client->endpoint().proxy_port == proxy.port());
    Recorder rec;
    CancelToken cancel;
    auto r = client->Stream("{}", rec, cancel);
    REQUIRE(r.ok());
    auto reqs = proxy.requests();
    REQUIRE(reqs.size() == 1);
    REQUIRE(reqs[0].target == origin + "/v1/responses");
  }
  {
    ScopedEnv http_proxy("HTTP_PROXY", "127.0.0.1:" + std::to_string(proxy.port()));
    ScopedEnv no("NO_PROXY", "example.com, 127.0.0.1");
    ProviderInfo provider = Provider(origin);
    provider.request_max_retries = 0;
    auto client = MakeClient(provider);
    REQUIRE(client->endpoint().proxy_host.empty());
    Recorder rec;
    CancelToken cancel;
    auto r = client->Stream("{}", rec, cancel);
    REQUIRE(r.status().reason() == core::reason::kRetriesExhausted);  // direct to the closed port
    REQUIRE(proxy.count() == 1);
  }
  {
    ScopedEnv bad("http_proxy", "socks5://127.0.0.1:1080");
    auto r = ResponsesClient::Create(Provider(origin), "", {});
    REQUIRE(r.status().code() == StatusCode::kInvalidArgument);
    REQUIRE(r.status().message().find("http_proxy") != std::string::npos);
  }
}

}  // namespace
}  // namespace codex::core
