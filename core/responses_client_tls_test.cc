// ResponsesClient over HTTPS against a loopback httplib::SSLServer whose
// certificates are generated at test time with the `openssl` CLI: a private
// CA is refused by default and accepted once SSL_CERT_FILE (or SSL_CERT_DIR,
// or ClientOptions::ca_cert_file) names it; a certificate for another host is
// refused even from a trusted CA, by IP address or by host name, and so is
// an expired one. Skips (exit 4) when `openssl` is missing.
#include <httplib.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <thread>

#include "core/model_client.h"
#include "core/responses_client.h"
#include "testing/loopback_http_server.h"
#include "testing/scoped_env.h"
#include "testing/skip.h"
#include "testing/temp_dir.h"

namespace codex::core {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using codex::testing::ScopedEnv;

const std::string kStream =
    "event: response.completed\n"
    "data: {\"type\":\"response.completed\",\"response\":{\"id\":\"resp_tls\"}}\n\n";

// A temporary directory holding a CA and two server certificates signed by it.
class Certificates {
 public:
  Certificates() {
    ok_ = Run("openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
              "-keyout ca.key -out ca.pem -days 2 -subj '/CN=codex test CA' "
              "-addext 'basicConstraints=critical,CA:TRUE' "
              "-addext 'keyUsage=critical,keyCertSign,cRLSign'") &&
          Leaf("server", "IP:127.0.0.1,DNS:localhost") && Leaf("other", "DNS:other.test") &&
          Leaf("expired", "IP:127.0.0.1,DNS:localhost", "-1") &&
          Run("mkdir certs && cp ca.pem certs/ && openssl rehash certs");
  }
  bool ok() const { return ok_; }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

 private:
  bool Run(const std::string& command) {
    const std::string full = "cd '" + dir_.string() + "' && " + command + " >/dev/null 2>&1";
    return std::system(full.c_str()) == 0;
  }
  // `days` -1: a certificate whose validity ended yesterday.
  bool Leaf(const std::string& name, const std::string& san, const std::string& days = "2") {
    {
      std::ofstream ext(dir_ / (name + ".ext"));
      ext << "subjectAltName=" << san << "\nbasicConstraints=CA:FALSE\n";
    }
    return Run("openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout " +
               name + ".key -out " + name + ".csr -subj '/CN=" + name + "'") &&
           Run("openssl x509 -req -in " + name +
               ".csr -CA ca.pem -CAkey ca.key -CAcreateserial "
               "-out " +
               name + ".pem -days " + days + " -extfile " + name + ".ext");
  }

  codex::testing::TempDir tmp_{"codex_tls_test."};
  const fs::path dir_ = tmp_.path();
  bool ok_ = false;
};

class TlsServer {
 public:
  TlsServer(const std::string& cert, const std::string& key) : https_(cert.c_str(), key.c_str()) {
    REQUIRE(https_.server().is_valid());
    https_.server().Post("/v1/responses", [this](const httplib::Request&, httplib::Response& res) {
      ++requests;
      res.set_content(kStream, "text/event-stream");
    });
    REQUIRE(https_.Start());
  }
  std::string base() const { return https_.base("https"); }
  // The same server by host name (the certificate's DNS names, and SNI).
  std::string named_base() const { return "https://localhost:" + std::to_string(https_.port()); }

  std::atomic<int> requests{0};

 private:
  codex::testing::LoopbackHttpServer<httplib::SSLServer> https_;
};

class Observer : public StreamObserver {
 public:
  Status OnOutputItemDone(const Item&) override { return OkStatus(); }
  void OnRetry(std::string_view) override { ++retries; }
  int retries = 0;
};

Result<ModelResponse> StreamOnce(const std::string& base, ClientOptions options, int& retries) {
  ProviderInfo provider;
  provider.id = "tls";
  provider.base_url = base + "/v1";
  provider.request_max_retries = 2;
  options.backoff_base_ms = 10;
  auto client = ResponsesClient::Create(provider, "sk-test", options);
  if (!client.ok()) return client.status();
  Observer observer;
  CancelToken cancel;
  auto r = (*client)->Stream("{}", observer, cancel);
  retries = observer.retries;
  return r;
}

TEST_CASE("HTTPS: verification against the system store, SSL_CERT_FILE and SSL_CERT_DIR") {
  Certificates certs;
  if (!certs.ok())
    codex::testing::SkipTest("could not generate test certificates with the openssl CLI");
  // No proxy may intercept loopback traffic in this test.
  ScopedEnv p1("https_proxy", std::nullopt), p2("HTTPS_PROXY", std::nullopt),
      p3("all_proxy", std::nullopt), p4("ALL_PROXY", std::nullopt);
  TlsServer server(certs.Path("server.pem"), certs.Path("server.key"));
  int retries = 0;

  SECTION("a private CA is refused by default, with a clear error and no retry") {
    ScopedEnv f("SSL_CERT_FILE", std::nullopt), d("SSL_CERT_DIR", std::nullopt);
    auto r = StreamOnce(server.base(), {}, retries);
    INFO(r.status().message());
    REQUIRE(r.status().code() == StatusCode::kUnavailable);
    REQUIRE(r.status().reason() == core::reason::kTls);
    REQUIRE(r.status().message().find("certificate verification failed") != std::string::npos);
    REQUIRE(r.status().message().find("SSL_CERT_FILE") != std::string::npos);
    REQUIRE(retries == 0);
    REQUIRE(server.requests == 0);
  }
  SECTION("SSL_CERT_FILE naming the CA is accepted") {
    ScopedEnv f("SSL_CERT_FILE", certs.Path("ca.pem")), d("SSL_CERT_DIR", std::nullopt);
    auto r = StreamOnce(server.base(), {}, retries);
    REQUIRE(r.ok());
    REQUIRE(r->response_id == "resp_tls");
    REQUIRE(server.requests == 1);
  }
  SECTION("a host name is matched against the certificate's DNS names") {
    ScopedEnv f("SSL_CERT_FILE", certs.Path("ca.pem")), d("SSL_CERT_DIR", std::nullopt);
    auto r = StreamOnce(server.named_base(), {}, retries);
    INFO(r.status().message());
    REQUIRE(r.ok());
  }
  SECTION("SSL_CERT_DIR with a hashed CA is accepted") {
    ScopedEnv f("SSL_CERT_FILE", std::nullopt), d("SSL_CERT_DIR", certs.Path("certs"));
    auto r = StreamOnce(server.base(), {}, retries);
    REQUIRE(r.ok());
  }
  SECTION("ClientOptions::ca_cert_file overrides the environment") {
    ScopedEnv f("SSL_CERT_FILE", "/etc/ssl/certs/ca-certificates.crt");
    ClientOptions options;
    options.ca_cert_file = certs.Path("ca.pem");
    auto r = StreamOnce(server.base(), options, retries);
    REQUIRE(r.ok());
  }
}

// A server whose certificate (`name`.pem, signed by the trusted test CA) the
// client must refuse at the handshake: a kTls error naming `why` (when given),
// no retry, and no request reaching the server.
void RequireRefused(const std::string& name, bool by_name, const std::string& why) {
  Certificates certs;
  if (!certs.ok())
    codex::testing::SkipTest("could not generate test certificates with the openssl CLI");
  ScopedEnv p1("https_proxy", std::nullopt), p2("HTTPS_PROXY", std::nullopt),
      p3("all_proxy", std::nullopt), p4("ALL_PROXY", std::nullopt);
  TlsServer server(certs.Path(name + ".pem"), certs.Path(name + ".key"));
  ScopedEnv f("SSL_CERT_FILE", certs.Path("ca.pem"));
  int retries = 0;
  auto r = StreamOnce(by_name ? server.named_base() : server.base(), {}, retries);
  INFO(r.status().message());
  REQUIRE(r.status().code() == StatusCode::kUnavailable);
  REQUIRE(r.status().reason() == core::reason::kTls);
  if (!why.empty()) REQUIRE(r.status().message().find(why) != std::string::npos);
  REQUIRE(retries == 0);
  REQUIRE(server.requests == 0);
}

TEST_CASE("HTTPS: a trusted certificate for another host name is refused") {
  RequireRefused("other", /*by_name=*/false, "");
}

TEST_CASE("HTTPS: a trusted certificate for another DNS name is refused when asked by name") {
  RequireRefused("other", /*by_name=*/true, "not valid for host localhost");
}

TEST_CASE("HTTPS: an expired certificate from a trusted CA is refused") {
  RequireRefused("expired", /*by_name=*/false, "expired");
}

}  // namespace
}  // namespace codex::core
